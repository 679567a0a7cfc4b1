// The built bundle (dist/sno-reconfigure.cjs) gives the same verdicts and error paths as the source for the
// whole site-config corpus, with the contract's exit codes and --json shape (DESIGN.md section 3).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { LocalHost } from '../../src/host/host';
import { loadSiteConfig } from '../../src/siteconfig/load';
import { bareBundleEnv, ensureBundle } from '../support/bundle';
import { listCases, normalizeLocationPaths, outcomeOf, prepareCase, unmetExpectations, type CaseKind, type Outcome, type PreparedCase } from '../unit/siteconfig/corpus';

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

let bundle = '';

function runBundle(args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bundle, ...args], { encoding: 'utf8', timeout: 5 * 60_000, env: bareBundleEnv() }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

function isProblemList(v: unknown): v is Array<{ path: string; message: string }> {
  return Array.isArray(v) && v.every((p) => typeof p === 'object' && p !== null && Object.keys(p).sort().join(',') === 'message,path' && typeof (p as { path: unknown }).path === 'string' && typeof (p as { message: unknown }).message === 'string');
}

const cleanups: Array<() => Promise<void>> = [];
before(() => {
  bundle = ensureBundle();
});
after(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

for (const kind of ['valid', 'invalid'] as CaseKind[]) {
  describe(`bundle vs source: ${kind} site-configs`, { concurrency: 4 }, () => {
    for (const name of listCases(kind)) {
      test(name, async () => {
        const c: PreparedCase = await prepareCase(kind, name);
        cleanups.push(c.cleanup);
        const source = normalizeLocationPaths(outcomeOf(await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) })), c.location);
        // The corpus judges each case for the machine under its root, as a node does: --this-machine.
        const run = await runBundle(['validate', c.location, '--json', '--this-machine', '--root', c.root]);
        assert.equal(run.stderr, '', 'nothing on stderr');
        assert.equal(run.code, c.expect.status === 'valid' ? 0 : 1, `exit code for ${c.expect.status}`);
        const report = JSON.parse(run.stdout) as Record<string, unknown>;
        assert.equal(typeof report.valid, 'boolean');
        assert.ok(isProblemList(report.errors), 'errors: [{path, message}]');
        assert.ok(isProblemList(report.warnings), 'warnings: [{path, message}]');
        assert.equal(report.valid, c.expect.status === 'valid');
        assert.equal(report.status, source.status);
        const bundled: Outcome = normalizeLocationPaths(
          {
            status: report.status as Outcome['status'],
            errors: report.status === 'not-for-this-machine' ? [] : (report.errors as Outcome['errors']),
            warnings: report.warnings as Outcome['warnings'],
            reasons: report.status === 'not-for-this-machine' ? (report.errors as Outcome['errors']).map((e) => `${e.path}: ${e.message.replace(/^not for this machine: /, '')}`) : [],
          },
          c.location,
        );
        assert.deepEqual(bundled.errors, source.errors, 'same errors, same order');
        assert.deepEqual(bundled.warnings, source.warnings, 'same warnings');
        assert.deepEqual(bundled.reasons, source.reasons, 'same reasons');
        assert.deepEqual(unmetExpectations({ ...bundled, ...(source.name ? { name: source.name } : {}) }, c.expect), []);
      });
    }
  });
}

test('the bundle: usage errors exit 2, --help exits 0', async () => {
  const missing = await runBundle(['validate']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing PATH/);
  const unknown = await runBundle(['validate', '.', '--frobnicate']);
  assert.equal(unknown.code, 2);
  const help = await runBundle(['validate', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage: sno-reconfigure validate PATH/);
  const listed = await runBundle(['--help']);
  assert.match(listed.stdout, /\n {2}validate +validate a site-config/);
});
