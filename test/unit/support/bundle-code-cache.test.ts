// The suite's code cache for the bundles (scripts/bundle-code-cache.cjs): a bundle started through it answers as
// through Node's own loader; the first start writes the cache, the next reads it (left as it is), and a damaged one
// is refused by V8 and written anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ensureBundle, PROJECT_ROOT, withoutSuitePreloads } from '../../support/bundle';

const PRELOAD = path.join(PROJECT_ROOT, 'scripts', 'bundle-code-cache.cjs');

test('a bundle started through the code cache answers as without it; the cache is written once, read after, and a damaged one is replaced', () => {
  const bundle = ensureBundle();
  const folder = mkdtempSync(path.join(tmpdir(), 'sno-code-cache-'));
  try {
    // Without the suite's own preloads, whatever runs this file.
    const plain = withoutSuitePreloads();
    const run = (args: string[], cached: boolean) =>
      execFileSync(process.execPath, [...(cached ? ['--require', PRELOAD] : []), bundle, ...args], { env: cached ? { ...plain, SNO_BUNDLE_CODE_CACHE: folder } : plain, encoding: 'utf8' });
    const expected = run(['--help'], false);
    assert.match(expected, /sno-reconfigure/);

    assert.equal(run(['--help'], true), expected, 'the first start, compiling');
    const files = readdirSync(folder);
    assert.equal(files.length, 1, `one cache file for the bundle: ${files.join(', ')}`);
    const cacheFile = path.join(folder, files[0]!);
    const written = readFileSync(cacheFile);
    assert.ok(written.length > 10_000, `V8's cache of the bundle (${written.length} bytes)`);
    const { mtimeMs } = statSync(cacheFile);

    assert.equal(run(['--version'], true), run(['--version'], false), 'a start reading the cache');
    assert.equal(statSync(cacheFile).mtimeMs, mtimeMs, 'a cache V8 took is left as it is');

    writeFileSync(cacheFile, Buffer.alloc(written.length, 7));
    assert.equal(run(['--help'], true), expected, 'a start whose cache V8 refuses compiles afresh');
    assert.ok(!readFileSync(cacheFile).equals(Buffer.alloc(written.length, 7)), 'and writes the cache anew');
    assert.deepEqual(readdirSync(folder), files, 'no temporary file is left');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
