// RSA 2048 keys from a pool for the Node processes the test suite starts (scripts/run-tests.mjs preloads this file with
// NODE_OPTIONS=--require): the agent generates the domain step's three serving keys at every relocation, 60–250 ms of
// CPU each on the 2-core reference machine, and the suite relocates a few hundred times. The keys are kept between
// runs of the suite (~/.cache/sno-reconfigure/agent-rsa-2048.pem, like the simulator's own pool: test/sim/key-pool.ts)
// and laid out one file each for this run (SNO_TEST_RSA_POOL); a process claims a key by renaming its file, so no key
// is handed out twice in a run, across all processes. Past the pool's end keys are generated as before and kept for the
// next run. Only crypto.generateKeyPair('rsa', { modulusLength: 2048 }) asking for KeyObjects (what src/certs/keys.ts
// calls) is served: what the agent gets is the same kind of key, fresh to this run. The agent on a node never loads
// this file.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');

const folder = process.env.SNO_TEST_RSA_POOL;
const keep = process.env.SNO_TEST_RSA_POOL_CACHE;
/** Keys past this many are not kept: the pool's file stays under 1 MB. */
const KEEP_AT_MOST = 512;

/** A key of the pool this process now owns, or undefined when none is left. */
function claim() {
  let names;
  try {
    names = fs.readdirSync(folder).filter((n) => n.endsWith('.pem'));
  } catch {
    return undefined;
  }
  // Each process starts at another place, so that processes claiming at once rarely try the same file.
  const start = names.length ? process.pid % names.length : 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[(start + i) % names.length];
    const claimed = path.join(folder, `${name}.${process.pid}.claimed`);
    try {
      fs.renameSync(path.join(folder, name), claimed);
    } catch {
      continue;
    }
    try {
      const privateKey = crypto.createPrivateKey(fs.readFileSync(claimed, 'utf8'));
      fs.rmSync(claimed, { force: true });
      return { publicKey: crypto.createPublicKey(privateKey), privateKey };
    } catch {
      continue;
    }
  }
  return undefined;
}

function keepForNextRun(privateKey) {
  try {
    if ((fs.statSync(keep, { throwIfNoEntry: false })?.size ?? 0) > KEEP_AT_MOST * 1700) return;
    fs.mkdirSync(path.dirname(keep), { recursive: true });
    // One write of under 2 KB with O_APPEND: appenders running at once do not interleave on a local filesystem.
    fs.appendFileSync(keep, privateKey.export({ type: 'pkcs1', format: 'pem' }));
  } catch {
    // Only the next run's keygen.
  }
}

if (folder && keep) {
  const generate = crypto.generateKeyPair;
  const generateAsPromise = promisify(generate);
  const served = (type, options) => type === 'rsa' && options?.modulusLength === 2048 && options.publicKeyEncoding === undefined && options.privateKeyEncoding === undefined;
  const pooled = (type, options) => {
    if (!served(type, options)) return generateAsPromise(type, options);
    const key = claim();
    if (key) return Promise.resolve(key);
    return generateAsPromise(type, options).then((fresh) => {
      keepForNextRun(fresh.privateKey);
      return fresh;
    });
  };
  const generateKeyPair = function generateKeyPair(type, options, callback) {
    if (typeof callback !== 'function' || !served(type, options)) return generate.call(this, type, options, callback);
    pooled(type, options).then(({ publicKey, privateKey }) => callback(null, publicKey, privateKey), callback);
  };
  // util.promisify(generateKeyPair) resolves with { publicKey, privateKey }, as Node's own does.
  generateKeyPair[promisify.custom] = pooled;
  crypto.generateKeyPair = generateKeyPair;
  // `import { generateKeyPair } from 'node:crypto'` in the test files (compiled as ES modules) sees it too.
  require('node:module').syncBuiltinESMExports();
}
