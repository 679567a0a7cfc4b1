// The MachineConfig's loader and brotli payload (src/render/payload.ts): the loader runs the bundle as if the
// bundle were the file node was started with, and a missing or damaged payload is a sentence, not a stack.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { compressBundle, renderLoader } from '../../../src/render/payload';

// What the agent's bundle relies on from its CommonJS module: a #! line, process.argv, __filename, __dirname,
// require of builtins, module.exports, the exit code and uncaught errors.
const STAND_IN = Buffer.from(
  [
    '#!/usr/bin/env node',
    "'use strict';",
    "const path = require('node:path');",
    'module.exports = 42;',
    "if (process.argv[2] === 'throw') throw new Error('the bundle failed');",
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
});
