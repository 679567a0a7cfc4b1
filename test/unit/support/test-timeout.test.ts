// The runner's own promises (scripts/run-tests.mjs), each run here on test files of its own in a temp directory:
// - every test has a time limit (issue 41): a test that hangs — a "retry forever", a wait nobody ends — fails under
//   its own name instead of stalling `npm test` (the file's tests hang in the ways the suite's bugs did);
// - every file's report reaches the counts whole, or the run fails naming the file (scripts/test-file-end.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const HANGING_FILE = `import { describe, test } from 'node:test';
test('finishes at once', () => {});
test('retries forever, a timer keeping the process alive', async () => {
  for (;;) await new Promise((resolve) => setTimeout(resolve, 50));
});
describe('a suite', () => {
  test('waits for an answer that never comes', () => new Promise(() => { setInterval(() => {}, 1000); }));
});
test('takes longer than the default but sets its own limit', { timeout: 60_000 }, () => new Promise((resolve) => setTimeout(resolve, 3_000)));
`;

/** The runner on `file`, the whole process group killed if it outlives `budgetMs` (the hang this guards against). */
function runTests(file: string, env: NodeJS.ProcessEnv, budgetMs: number): Promise<{ code: number | null; out: string; killed: boolean }> {
  // NODE_TEST_CONTEXT marks this file's process as a test runner's child: the runner run here must not inherit it.
  const { NODE_TEST_CONTEXT: _child, ...inherited } = process.env;
  const child = spawn(process.execPath, ['scripts/run-tests.mjs', file], { cwd: REPO, env: { ...inherited, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    process.kill(-child.pid!, 'SIGKILL');
  }, budgetMs);
  return new Promise((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    resolve({ code, out, killed });
  }));
}

/** The runner on test files of its own (name → source), in a temp directory removed afterwards. */
async function runTestFiles(files: Record<string, string>, env: NodeJS.ProcessEnv, budgetMs: number): Promise<{ code: number | null; out: string; killed: boolean }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-test-runner-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    return await runTests(dir, env, budgetMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a hanging test fails by its name after its time limit, the others pass, and the run ends', { timeout: 5 * 60_000 }, async () => {
  // 2 s per test here; the file's backstop far above what the file needs.
  const res = await runTestFiles({ 'hangs.test.ts': HANGING_FILE }, { SNO_TEST_TIMEOUT_MS: '2000', SNO_TEST_CONCURRENCY: '1', SNO_TEST_FILE_TIMEOUT_MS: String(10 * 60_000) }, 3 * 60_000);
  assert.equal(res.killed, false, `the run stalled and was killed after 3 min:\n${res.out}`);
  assert.equal(res.code, 1, res.out);
  for (const name of ['retries forever, a timer keeping the process alive', 'waits for an answer that never comes']) {
    assert.match(res.out, new RegExp(`✖ ${name} \\(\\d+(\\.\\d+)?ms\\)\\n\\s+'test timed out after 2000ms'`), `${name} did not fail by its name:\n${res.out}`);
  }
  assert.match(res.out, /✔ finishes at once/);
  assert.match(res.out, /✔ takes longer than the default but sets its own limit/);
  assert.match(res.out, /ℹ pass 2\n/);
  // A failure still points at the test in its own file, not at the file that sets the limits.
  assert.match(res.out, /test at [^\n]*hangs\.test\.ts:\d+:\d+/);
  assert.doesNotMatch(res.out, /test at [^\n]*test-timeout\.mjs/);
});

test('a file whose process exits before its report is written out fails the run by its name', { timeout: 3 * 60_000 }, async () => {
  // The shape of nodejs/node#64833: the process exits with 0 while its last verdicts are still unwritten.
  const res = await runTestFiles({ 'cut-short.test.ts': `import { after, test } from 'node:test';
for (let i = 0; i < 20; i++) test(\`quick \${i}\`, () => {});
after(() => { (process as unknown as { reallyExit(code: number): never }).reallyExit(0); });
` }, { SNO_TEST_CONCURRENCY: '1' }, 2 * 60_000);
  assert.equal(res.killed, false, res.out);
  assert.equal(res.code, 1, res.out);
  assert.match(res.out, /✖ 1 test file\(s\) ended before their whole report reached the runner[^\n]*\n\s+[^\n]*cut-short\.test\.ts\n/);
  assert.match(res.out, /ℹ fail 1\n/);
});

test('files run several at a time report every test they ran', { timeout: 3 * 60_000 }, async () => {
  // Six files of 300 quick tests with long names, six at a time: the shape that lost verdicts before.
  const names = Array.from({ length: 300 }, (_, i) => `test('${i} ${'x'.repeat(500)}', () => {});`).join('\n');
  const res = await runTestFiles(Object.fromEntries(Array.from({ length: 6 }, (_, f) => [`many-${f}.test.ts`, `import { test } from 'node:test';\n${names}\n`])), { SNO_TEST_CONCURRENCY: '6' }, 2 * 60_000);
  assert.equal(res.killed, false, res.out);
  // Every verdict, or a failed run naming the file: the runner can still lose frames on its side (nodejs/node#64857),
  // which the file's own count in its end line shows. Never a short count at exit code 0.
  if (res.code === 0) {
    assert.match(res.out, /ℹ tests 1800\n/, res.out.slice(-2500));
    assert.match(res.out, /ℹ pass 1800\n/);
  } else {
    assert.match(res.out, /✖ \d+ test file\(s\) ended before their whole report reached the runner[^\n]*\n\s+[^\n]*many-\d\.test\.ts\n/, res.out.slice(-2500));
  }
});

test("a test's own process.exit ends its file at once, and the run fails naming the file", { timeout: 3 * 60_000 }, async () => {
  const res = await runTestFiles({ 'exits.test.ts': `import { test } from 'node:test';
test('before', () => {});
test('exits', () => { process.exit(0); });
test('after', () => {});
` }, { SNO_TEST_CONCURRENCY: '1' }, 2 * 60_000);
  assert.equal(res.killed, false, res.out);
  assert.equal(res.code, 1, res.out);
  assert.doesNotMatch(res.out, /after/, 'nothing runs after the exit');
  assert.match(res.out, /ended before their whole report reached the runner, [^\n]*\(a test that called process\.exit[^\n]*\n\s+[^\n]*exits\.test\.ts\n/);
});

// Frames lost on the runner's side (nodejs/node#64857) leave the end line whole but fewer verdicts than the file's own
// count in it: the run fails by the file's name. Here the file's end line claims more tests than it ran.
test('a file whose verdicts fall short of its own count of its tests fails the run by its name', { timeout: 3 * 60_000 }, async () => {
  const res = await runTestFiles({ 'short.test.ts': `import { after, test } from 'node:test';
import { writeSync } from 'node:fs';
test('one', () => {});
test('two', () => {});
after(() => { writeSync(1, '\\nsno-test-file-reported-whole 5\\n'); (process as unknown as { reallyExit(code: number): never }).reallyExit(0); });
` }, { SNO_TEST_CONCURRENCY: '1' }, 2 * 60_000);
  assert.equal(res.killed, false, res.out);
  assert.equal(res.code, 1, res.out);
  assert.match(res.out, /✖ 1 test file\(s\) ended before their whole report reached the runner[^\n]*\n\s+[^\n]*short\.test\.ts\n/);
});
