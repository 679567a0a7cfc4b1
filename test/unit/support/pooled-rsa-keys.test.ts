// The suite's RSA key pool (scripts/pooled-rsa-keys.cjs): processes take the pool's keys, never one twice; past its
// end a key is generated and kept for the next run; what the pool does not serve (other sizes, PEM output) is
// generated as before; util.promisify and the callback both give a public and a private KeyObject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT, withoutSuitePreloads } from '../../support/bundle';

const PRELOAD = path.join(PROJECT_ROOT, 'scripts', 'pooled-rsa-keys.cjs');

/** What a process asking for one key pair got: its public key's SPKI in base64, its type and its size. */
const ASK = `
const crypto = require('node:crypto');
const { promisify } = require('node:util');
const [how, bits, encoded] = process.argv.slice(1);
const options = { modulusLength: Number(bits), ...(encoded === 'pem' ? { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } } : {}) };
const show = (publicKey, privateKey) => {
  const pub = typeof publicKey === 'string' ? crypto.createPublicKey(publicKey) : publicKey;
  const matches = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).equals(pub.export({ type: 'spki', format: 'der' }));
  process.stdout.write(JSON.stringify({ spki: pub.export({ type: 'spki', format: 'der' }).toString('base64'), type: pub.asymmetricKeyType, bits: pub.asymmetricKeyDetails.modulusLength, matches }));
};
if (how === 'promise') promisify(crypto.generateKeyPair)('rsa', options).then(({ publicKey, privateKey }) => show(publicKey, privateKey));
else crypto.generateKeyPair('rsa', options, (err, publicKey, privateKey) => { if (err) throw err; show(publicKey, privateKey); });
`;

test('processes take the pool’s keys once each, then fresh keys kept for the next run; other requests are generated as before', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-rsa-pool-'));
  try {
    const pool = path.join(dir, 'pool');
    const kept = path.join(dir, 'kept', 'agent-rsa-2048.pem');
    mkdirSync(pool);
    const pooledSpki = [0, 1].map((i) => {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      writeFileSync(path.join(pool, `000${i}.pem`), privateKey.export({ type: 'pkcs1', format: 'pem' }));
      return createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
    });
    const ask = (...args: string[]) =>
      JSON.parse(execFileSync(process.execPath, ['--require', PRELOAD, '-e', ASK, ...args], { env: { ...withoutSuitePreloads(), SNO_TEST_RSA_POOL: pool, SNO_TEST_RSA_POOL_CACHE: kept }, encoding: 'utf8' })) as { spki: string; type: string; bits: number; matches: boolean };

    const other = ask('promise', '1024');
    assert.equal(other.bits, 1024, 'another size is generated as asked');
    const pem = ask('callback', '2048', 'pem');
    assert.ok(!pooledSpki.includes(pem.spki), 'PEM output is generated as before');
    assert.equal(readdirSync(pool).length, 2, 'neither took a key of the pool');

    const first = ask('promise', '2048');
    const second = ask('callback', '2048');
    const fresh = ask('promise', '2048');
    for (const got of [first, second, fresh]) assert.deepEqual({ type: got.type, bits: got.bits, matches: got.matches }, { type: 'rsa', bits: 2048, matches: true });
    assert.deepEqual([first.spki, second.spki].sort(), [...pooledSpki].sort(), 'each key of the pool, once');
    assert.deepEqual(readdirSync(pool), [], 'the pool is used up, no claimed file left');
    assert.ok(!pooledSpki.includes(fresh.spki), 'past the pool, a fresh key');
    const keptPem = readFileSync(kept, 'utf8');
    assert.equal(keptPem.match(/BEGIN RSA PRIVATE KEY/g)?.length, 1, 'the fresh key is kept for the next run');
    assert.equal(createPublicKey(keptPem).export({ type: 'spki', format: 'der' }).toString('base64'), fresh.spki);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
