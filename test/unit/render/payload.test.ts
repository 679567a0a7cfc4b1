// The MachineConfig's loader and brotli payload (src/render/payload.ts): the loader runs the bundle as if the
// bundle were the file node was started with, and a missing or damaged payload is a sentence, not a stack.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { CODE_CACHE_AFTER_MS, CODE_CACHE_SUFFIX, compressBundle, renderLoader } from '../../../src/render/payload';

// What the agent's bundle relies on from its CommonJS module: a #! line, process.argv, __filename, __dirname,
// require of builtins, module.exports, the exit code and uncaught errors.
const STAND_IN = Buffer.from(
  [
    '#!/usr/bin/env node',
    "'use strict';",
    "const path = require('node:path');",
    'module.exports = 42;',
    "if (process.argv[2] === 'throw') throw new Error('the bundle failed');",
    // A process that lives past CODE_CACHE_AFTER_MS, as the service does: the one start that writes the code cache.
    "if (process.argv[3] === 'linger') setTimeout(() => undefined, Number(process.argv[4]));",
    "process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), filename: __filename, dirname: __dirname, base: path.basename(__filename), main: require.main === module, exports: module.exports }) + '\\n');",
    'process.exitCode = 3;',
    '',
  ].join('\n'),
);

describe('the MachineConfig payload and its loader', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'sno-payload-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const run = (file: string, ...args: string[]) => spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', cwd: dir });

  test('brotli gives the bundle back, and the same bytes every time (examples compare byte for byte)', () => {
    const once = compressBundle(STAND_IN);
    assert.deepEqual(brotliDecompressSync(once), STAND_IN);
    assert.deepEqual(compressBundle(STAND_IN), once);
  });

  // Which input block size packs a bundle smallest changes unpredictably from build to build (2026-11-28: up to ~250
  // bytes of base64 in the MachineConfig); the payload is the smallest of them, and a new bundle is compressed anew.
  test('the payload is the smallest of the encoder block sizes, for each bundle given', () => {
    // Code, base64 and words in turns (a fixed pseudo-random sequence): one where 16 packs smaller than the encoder's choice.
    let x = 4;
    const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
    const words = ['node', 'site', 'network', 'the', 'office', 'call', 'refuses', 'MachineConfig'];
    const turn = () => [() => Array.from({ length: 50 }, () => `const v${next() % 500} = "the agent ${next() % 97}";`).join('\n'), () => Buffer.from(Array.from({ length: 1500 }, () => next() % 256)).toString('base64'), () => Array.from({ length: 80 }, () => words[next() % 8]).join(' ')][next() % 3]!();
    const bundle = Buffer.from(Array.from({ length: 60 }, turn).join('\n'));
    const sizes = [0, 16, 17, 18, 19, 20, 21, 22, 23, 24].map((bits) => brotliCompressSync(bundle, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: bundle.length, ...(bits ? { [constants.BROTLI_PARAM_LGBLOCK]: bits } : {}) } }).length);
    assert.ok(Math.min(...sizes) < sizes[0]!, `a bundle where the encoder's own choice is not the smallest: ${sizes.join(' ')}`);
    const payload = compressBundle(bundle);
    assert.equal(payload.length, Math.min(...sizes));
    assert.deepEqual(brotliDecompressSync(payload), bundle);
    assert.deepEqual(brotliDecompressSync(compressBundle(STAND_IN)), STAND_IN, 'not the last bundle\'s payload');
  });

  test('the loader runs the bundle as node would run the bundle itself at the loader\'s path', () => {
    const direct = path.join(dir, 'direct', 'sno-reconfigure.cjs');
    const loaded = path.join(dir, 'loaded', 'sno-reconfigure.cjs');
    for (const d of [direct, loaded]) spawnSync('mkdir', ['-p', path.dirname(d)]);
    writeFileSync(direct, STAND_IN);
    writeFileSync(loaded, renderLoader());
    writeFileSync(`${loaded}.br`, compressBundle(STAND_IN));
    const a = run(direct, 'status', '--json');
    const b = run(loaded, 'status', '--json');
    assert.equal(a.status, 3, a.stderr);
    assert.equal(b.status, 3, b.stderr);
    assert.equal(b.stderr, '');
    assert.deepEqual(JSON.parse(b.stdout), { ...(JSON.parse(a.stdout) as object), argv: [loaded, 'status', '--json'], filename: loaded, dirname: path.dirname(loaded) });
    assert.deepEqual(JSON.parse(b.stdout), { argv: [loaded, 'status', '--json'], filename: loaded, dirname: path.dirname(loaded), base: 'sno-reconfigure.cjs', main: true, exports: 42 });
    const thrown = run(loaded, 'throw');
    assert.notEqual(thrown.status, 0);
    assert.match(thrown.stderr, /the bundle failed/, 'the bundle\'s own errors pass through');
  });

  test('a missing or damaged payload: one sentence that says what is wrong and whom to call, exit 1', () => {
    const loader = path.join(dir, 'broken', 'sno-reconfigure.cjs');
    spawnSync('mkdir', ['-p', path.dirname(loader)]);
    writeFileSync(loader, renderLoader());
    const missing = run(loader, '--version');
    assert.equal(missing.status, 1);
    assert.equal(missing.stdout, '');
    assert.equal(missing.stderr, `sno-reconfigure cannot start: ${loader}.br, the agent itself, is missing or damaged (ENOENT). The sno-reconfigure MachineConfig installs it: call the office.\n`);
    writeFileSync(`${loader}.br`, compressBundle(STAND_IN).subarray(0, 40));
    const damaged = run(loader, '--version');
    assert.equal(damaged.status, 1);
    assert.match(damaged.stderr, /^sno-reconfigure cannot start: .*sno-reconfigure\.cjs\.br, the agent itself, is missing or damaged \(\w+\)\. The sno-reconfigure MachineConfig installs it: call the office\.\n$/);
  });

  describe('V8\'s code cache beside the loader (issue 39)', () => {
    const install = (name: string, bundle = STAND_IN) => {
      const loader = path.join(dir, name, 'sno-reconfigure.cjs');
      spawnSync('mkdir', ['-p', path.dirname(loader)]);
      writeFileSync(loader, renderLoader());
      writeFileSync(`${loader}.br`, compressBundle(bundle));
      return loader;
    };
    const lingering = ['status', 'linger', String(CODE_CACHE_AFTER_MS + 1_000)];
    const expected = (loader: string, args: string[]) => ({ argv: [loader, ...args], filename: loader, dirname: path.dirname(loader), base: 'sno-reconfigure.cjs', main: true, exports: 42 });
    /** Runs the loader (`linger`: long enough to write the cache) and checks the bundle ran as itself. */
    const runsAsTheBundle = (loader: string, linger = false) => {
      const args = linger ? lingering : ['status'];
      const r = run(loader, ...args);
      assert.equal(r.status, 3, r.stderr);
      assert.equal(r.stderr, '');
      assert.deepEqual(JSON.parse(r.stdout), expected(loader, args));
    };
    const header = (cache: string) => readFileSync(cache).subarray(0, readFileSync(cache).indexOf(10) + 1).toString();

    test('a start that lives past CODE_CACHE_AFTER_MS writes it (root only), named after the payload, Node and the CPU; later starts read it and leave it be', () => {
      const loader = install('cache-first');
      const cache = `${loader}${CODE_CACHE_SUFFIX}`;
      runsAsTheBundle(loader);
      assert.ok(!existsSync(cache), 'a short command does not pay for writing it');
      runsAsTheBundle(loader, true);
      assert.ok(existsSync(cache), 'the service (a long start) writes it');
      assert.equal(statSync(cache).mode & 0o777, 0o600);
      const digest = createHash('sha256').update(readFileSync(`${loader}.br`)).digest('hex');
      assert.equal(header(cache), `${digest} ${process.version} ${process.arch}\n`);
      assert.ok(readFileSync(cache).length > header(cache).length + 16, 'V8 data follows the header');
      const before = statSync(cache);
      runsAsTheBundle(loader);
      runsAsTheBundle(loader, true);
      const after = statSync(cache);
      assert.equal(after.ino, before.ino, 'a cache that fits is used, not written again');
      assert.equal(after.mtimeMs, before.mtimeMs);
    });

    test('a cache of another payload or another Node, or one V8 refuses (damaged), is ignored and written anew', () => {
      const loader = install('cache-stale');
      const cache = `${loader}${CODE_CACHE_SUFFIX}`;
      runsAsTheBundle(loader, true);
      const good = readFileSync(cache);
      const tag = header(cache);
      for (const [what, bytes] of [
        ['another payload', Buffer.concat([Buffer.from(`${'0'.repeat(64)} ${process.version} ${process.arch}\n`), good.subarray(tag.length)])],
        ['another Node', Buffer.concat([Buffer.from(tag.replace(process.version, 'v0.0.1')), good.subarray(tag.length)])],
        ['damaged data', Buffer.concat([Buffer.from(tag), Buffer.alloc(good.length - tag.length, 0x5a)])],
        ['cut short', good.subarray(0, tag.length + 20)],
        ['empty', Buffer.alloc(0)],
      ] as const) {
        writeFileSync(cache, bytes);
        runsAsTheBundle(loader);
        runsAsTheBundle(loader, true);
        assert.equal(header(cache), tag, `${what}: written anew for this payload and Node`);
        assert.notDeepEqual(readFileSync(cache), bytes, `${what}: not left as it was`);
        // V8's own check: the new cache is accepted at the next start, so it is not written again.
        const rewritten = statSync(cache);
        runsAsTheBundle(loader, true);
        assert.equal(statSync(cache).mtimeMs, rewritten.mtimeMs, `${what}: the cache written anew is the one V8 takes`);
      }
    });

    test('a cache that cannot be written (read-only directory, a directory in its place) changes nothing for the run', () => {
      const loader = install('cache-unwritable');
      mkdirSync(`${loader}${CODE_CACHE_SUFFIX}`);
      runsAsTheBundle(loader, true);
      rmSync(`${loader}${CODE_CACHE_SUFFIX}`, { recursive: true });
      chmodSync(path.dirname(loader), 0o555);
      try {
        // Root writes through mode bits; a non-root run (a technician's `status`) cannot: both must run the bundle.
        runsAsTheBundle(loader, true);
      } finally {
        chmodSync(path.dirname(loader), 0o755);
      }
    });

    test('the bundle\'s own errors pass through with the cache read back', () => {
      const loader = install('cache-throw');
      runsAsTheBundle(loader, true);
      assert.ok(existsSync(`${loader}${CODE_CACHE_SUFFIX}`));
      const again = run(loader, 'throw');
      assert.notEqual(again.status, 0);
      assert.match(again.stderr, /the bundle failed/, 'and with the cache read back');
    });
  });
});
