// The repository stands on its own: its committed HEAD, cloned into an empty folder with nothing beside it
// (none of the folders a developer's machine keeps next to the project), builds the bundle and runs `npm run
// demo`'s agent run to completion. The demo reads no input (it inserts the site-config stick itself), so running it with
// stdin closed is its non-interactive mode. Uncommitted work is not what this tests: a clone has only commits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT, withoutSuitePreloads } from '../support/bundle';

function whyNotClonable(): string | undefined {
  if (spawnSync('git', ['--version'], { stdio: 'ignore' }).status !== 0) return 'git is not installed';
  if (spawnSync('git', ['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: PROJECT_ROOT, stdio: 'ignore' }).status !== 0) return 'the project has no commit to clone (HEAD has none, or it is not a git checkout)';
  return undefined;
}

function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Without the suite's preloads: they live in this checkout, not the clone.
    const child = spawn(command, args, { cwd, env: withoutSuitePreloads(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const skip = whyNotClonable();

test('a fresh clone of HEAD with nothing beside it builds the bundle and runs the demo to a finished relocation', { skip: skip ?? false, timeout: 600_000 }, async (t) => {
  const parent = mkdtempSync(path.join(tmpdir(), 'sno-fresh-clone-'));
  t.after(() => rmSync(parent, { recursive: true, force: true }));
  const clone = path.join(parent, 'clone');
  const cloned = await run('git', ['clone', '--no-hardlinks', '--quiet', PROJECT_ROOT, clone], parent, 60_000);
  assert.equal(cloned.code, 0, cloned.output);
  assert.deepEqual(readdirSync(parent), ['clone'], 'the clone has nothing beside it');

  // Dependencies come from the project's own install: what is under test is what the repository reads, and
  // npm ci would only fetch the same locked packages again.
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  const built = await run(process.execPath, ['esbuild.config.mjs'], clone, 120_000);
  assert.equal(built.code, 0, built.output);
  assert.ok(existsSync(path.join(clone, 'dist', 'sno-reconfigure.cjs')), 'the clone built its own dist/sno-reconfigure.cjs');

  // `npm run demo` is ensure-deps, build, then this command.
  const demo = await run(process.execPath, ['--import', 'tsx', 'test/demo/demo.ts'], clone, 480_000);
  assert.equal(demo.code, 0, `the demo in the clone exited with ${demo.code}:\n${demo.output}`);
  assert.match(demo.output, /==> the agent exited with status 0\n/, demo.output);
  assert.match(demo.output, /^\s+Phase:\s+succeeded$/m, demo.output);
  assert.match(demo.output, /==> report \(\/var\/lib\/sno-reconfigure\/report\.json\): succeeded in \d+ s on OpenShift 4\.\d+\.\d+/, demo.output);
  assert.match(demo.output, /==> the stick's site-config\.yaml \(beside it: network\.yaml, pull-secret\.json, registry-ca\.pem, site-config\.yaml\.sig\):\n {4}apiVersion: sno-reconfigure\.io\/v1\n/, 'the demo shows the site-config it inserts');
  assert.deepEqual(readdirSync(parent), ['clone'], 'the demo wrote nothing beside the clone');
});
