// Runs the test files with Node's built-in runner, compiled by ./test-build.mjs. Node 20's `--test` takes no globs,
// so the files are collected here. Optional arguments narrow to suites (unit, integration, e2e), folders or files
// (test/unit/csr, test/unit/csr/policy.test.ts).
// Every test has a time limit (./test-timeout.mjs, issue 41), and every file one more as a backstop.
// The runner's closing lines (# pass / # fail) are the counts CI reads; the reporter (./test-reporter.mjs, the
// spec reporter's) prints the ten slowest test files just before them.
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { compileTests } from './test-build.mjs';

const suites = process.argv.slice(2).length ? process.argv.slice(2) : ['unit', 'integration', 'e2e'];
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p);
  }
};
for (const suite of suites) {
  const named = [suite, join('test', suite)].find((p) => { try { statSync(p); return true; } catch { return false; } });
  if (named === undefined) continue;
  if (statSync(named).isDirectory()) walk(named);
  else files.push(named);
}
if (files.length === 0) {
  console.error(`no test files under ${suites.map((s) => `test/${s}`).join(', ')}`);
  process.exit(1);
}
// The longest files start first (test/durations.json: each file's wall time in a full run, refreshed with
// SNO_TEST_TIMES=test/durations.json npm test). A file not listed yet starts with the longest: it may be one. Node 20's
// runner starts files in the order of their paths whatever order they are given in (so until 2026-11-27 they ran
// in path order: test/e2e first): ./test-build.mjs names each compiled file by its place in this order.
const durations = (() => {
  try {
    return JSON.parse(readFileSync(fileURLToPath(new URL('../test/durations.json', import.meta.url)), 'utf8'));
  } catch {
    return {};
  }
})();
const expected = (file) => durations[relative(process.cwd(), file)] ?? Infinity;
files.sort((a, b) => expected(b) - expected(a));
// Four files at a time on the 2-core reference machine: the longest files (the testbed's network and podman
// scenarios, media on loop devices) mostly wait on systemd, NetworkManager and reboots, and at three at a time,
// started first, they left about a third of a core idle for the run's first nine minutes (a model of the run from each
// file's CPU and wall time: 902 s at three, 768 s at four, 744 s at five). Measured 2026-11-27 with the files compiled
// (./test-build.mjs): 1464 s of CPU at three, 1541 s at four; earlier, with tsx and stand-ins that started Node, four
// cost 18 % more CPU than three and ran longer. The tests' deadlines are sized for a loaded machine (issue 31).
// SNO_TEST_CONCURRENCY overrides it.
const concurrency = process.env.SNO_TEST_CONCURRENCY ?? '4';
// inotify instances are counted per user (fs.inotify.max_user_instances, 128 by default) and every testbed node and
// agent is root's: each node's systemd (its path units, its own watches), journald, logind, dbus and NetworkManager,
// and each agent's drop-directory watch hold one or more. With four files at a time six nodes and the agents beside
// them used all 128 (with three, under load): systemd failed its path units ("Failed to create inotify object: Too many open files") and an
// agent could not watch its drop directory. A machine running the suite as root gets 1024, said once.
const INOTIFY_INSTANCES = '/proc/sys/fs/inotify/max_user_instances';
try {
  const now = Number(readFileSync(INOTIFY_INSTANCES, 'utf8'));
  if (process.getuid?.() === 0 && now < 1024) {
    writeFileSync(INOTIFY_INSTANCES, '1024\n');
    console.error(`[tests] fs.inotify.max_user_instances raised from ${now} to 1024 (testbed nodes and agents watch files as root)`);
  }
} catch (e) {
  console.error(`[tests] fs.inotify.max_user_instances left as it is: ${e.message}`);
}
// Each test's own limit (./test-timeout.mjs) names the test that hung. A file's limit catches what a test's cannot:
// code that never yields to the event loop (a synchronous loop, a promise chain that never sleeps), where no timer
// fires; the file is then reported by its path. It is above the longest file's sum of test limits (the network
// retry's 40 min). SNO_TEST_FILE_TIMEOUT_MS overrides it.
const fileTimeout = process.env.SNO_TEST_FILE_TIMEOUT_MS ?? String(60 * 60_000);
// --test-force-exit can cut a file's report short (./test-file-end.mjs waits for it, and the reporter checks it).
const limits = ['--import', fileURLToPath(new URL('./test-timeout.mjs', import.meta.url)), '--import', fileURLToPath(new URL('./test-file-end.mjs', import.meta.url)), '--test-force-exit', `--test-timeout=${fileTimeout}`];
// The files run compiled (./test-build.mjs: without the tsx loader, 0.5–3 s less CPU a file), with source maps so
// that stack traces and test places name the sources.
const { compiled, outdir, remove } = await compileTests(files);
// Every Node process the tests start reads the bundles' compiled code from V8's code cache (./bundle-code-cache.cjs),
// and takes its RSA 2048 keys from a pool kept between runs (./pooled-rsa-keys.cjs), laid out here one file a key: each
// is claimed once in a run. Both live in this run's own folder, made afresh and removed with it: a test that runs the
// runner (test/unit/support/test-timeout.test.ts) must not lay the suite's pool out again midway, handing its keys out
// a second time.
const codeCache = join(outdir, 'code-cache');
const rsaPool = join(outdir, 'rsa-pool');
const rsaKept = process.env.SNO_TEST_RSA_POOL_CACHE ?? join(process.env.HOME || homedir(), '.cache', 'sno-reconfigure', 'agent-rsa-2048.pem');
mkdirSync(rsaPool, { recursive: true });
const keptKeys = (() => {
  try {
    return readFileSync(rsaKept, 'utf8').match(/-----BEGIN RSA PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+?-----END RSA PRIVATE KEY-----\n/g) ?? [];
  } catch {
    return [];
  }
})();
keptKeys.forEach((pem, i) => writeFileSync(join(rsaPool, `${String(i).padStart(4, '0')}.pem`), pem, { mode: 0o600 }));
const preload = (file) => `--require ${JSON.stringify(fileURLToPath(new URL(file, import.meta.url)))}`;
const env = {
  ...process.env,
  NODE_OPTIONS: [process.env.NODE_OPTIONS, preload('./bundle-code-cache.cjs'), preload('./pooled-rsa-keys.cjs')].filter(Boolean).join(' '),
  SNO_BUNDLE_CODE_CACHE: codeCache,
  SNO_TEST_RSA_POOL: rsaPool,
  SNO_TEST_RSA_POOL_CACHE: rsaKept,
};
const res = spawnSync(process.execPath, ['--enable-source-maps', ...limits, '--test', `--test-concurrency=${concurrency}`, `--test-reporter=${fileURLToPath(new URL('./test-reporter.mjs', import.meta.url))}`, ...compiled], { stdio: 'inherit', env });
remove();
process.exit(res.status ?? 1);
