// A time limit on every test (issue 41): loaded with --import by scripts/run-tests.mjs into each test file's
// process. Node 20's --test-timeout limits a whole file's process, and a file cut off by it is reported as the file
// ("test timed out"), not as the test that hung; node:test's own `timeout` option names the test, but only the
// tests that set it. So this gives every test() / it() and every hook that sets no `timeout` of its own a default
// one, sized by the suite the file is in. A test with its own `timeout` keeps it. Suites (describe) get none: their
// tests each have one. A test that hangs then fails as "<its name>: test timed out after N ms", and the runner's
// --test-force-exit ends the file even though the hung test's timers or sockets are still open.
// SNO_TEST_TIMEOUT_MS=<ms> overrides the default for every suite.
import { createRequire, findSourceMap, syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';
import { sep } from 'node:path';
import { compileFunction } from 'node:vm';

const require = createRequire(import.meta.url);
const nodeTest = require('node:test');

// A unit test takes a few seconds at most (the slowest ~20 s, spawning openssl beside a CPU hog); the integration
// and e2e tests run the simulator, systemd and testbed nodes, whose longest single tests take 3–6 min on an idle
// 2-core machine (README "Measured") and about three times that at a load of 5–6 — the tests that take longer set
// their own `timeout`. The limits leave that margin again: they are for hangs, not for speed (`npm run bench` is).
export const DEFAULT_TEST_TIMEOUT_MS = { unit: 5 * 60_000, other: 20 * 60_000 };

export function defaultTimeoutFor(file, env = process.env) {
  const override = Number(env.SNO_TEST_TIMEOUT_MS);
  if (Number.isInteger(override) && override > 0) return override;
  return file && file.includes(`${sep}test${sep}unit${sep}`) ? DEFAULT_TEST_TIMEOUT_MS.unit : DEFAULT_TEST_TIMEOUT_MS.other;
}

const limit = defaultTimeoutFor(process.argv[1]);

/**
 * node:test records where test() was called (the "test at FILE:LINE:COLUMN" of a failure) from the frame that
 * calls it, which would be this file's. So the call is made from a one-line function compiled with the caller's
 * file name, line and column: the report points at the test in its own file, as without this file.
 */
const trampolines = new Map();

/** The call's file, line and column (1-based); in a compiled test file (./test-build.mjs), its source's. */
function sourcePlace(site) {
  const file = site?.getFileName();
  if (!file) return undefined;
  const here = { file, line: site.getLineNumber(), column: site.getColumnNumber() };
  const entry = findSourceMap(file)?.findEntry(here.line - 1, here.column - 1);
  if (!entry?.originalSource) return here;
  return { file: entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : entry.originalSource, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
}
function callFromCaller(original, self, args) {
  const saved = Error.prepareStackTrace;
  Error.prepareStackTrace = (_error, sites) => sites;
  const holder = {};
  Error.captureStackTrace(holder, callFromCaller);
  const site = holder.stack[1];
  Error.prepareStackTrace = saved;
  const place = sourcePlace(site);
  if (!place) return original.apply(self, args);
  const key = `${place.file}:${place.line}:${place.column}`;
  let call = trampolines.get(key);
  if (!call) {
    call = compileFunction('return original.apply(self, args)', ['original', 'self', 'args'], { filename: place.file, lineOffset: place.line - 1, columnOffset: place.column - 1 });
    trampolines.set(key, call);
  }
  return call(original, self, args);
}

/** test(name?, options?, fn?) with `timeout` added to the options when they have none. */
function limitedTest(original) {
  const limited = function (...args) {
    let i = 0;
    const name = typeof args[i] === 'string' ? args[i++] : undefined;
    const options = typeof args[i] === 'object' && args[i] !== null ? args[i++] : {};
    const fn = typeof args[i] === 'function' ? args[i] : undefined;
    const withLimit = options.timeout === undefined ? { ...options, timeout: limit } : options;
    return callFromCaller(original, this, [...(name === undefined ? [] : [name]), withLimit, ...(fn ? [fn] : [])]);
  };
  for (const variant of ['skip', 'todo', 'only']) if (typeof original[variant] === 'function') limited[variant] = original[variant];
  return limited;
}

/** before(fn, options?) and its kin. */
function limitedHook(original) {
  return function (fn, options = {}) {
    return original.call(this, fn, options.timeout === undefined ? { ...options, timeout: limit } : options);
  };
}

nodeTest.test = limitedTest(nodeTest.test);
nodeTest.it = limitedTest(nodeTest.it);
for (const hook of ['before', 'after', 'beforeEach', 'afterEach']) nodeTest[hook] = limitedHook(nodeTest[hook]);
// `import { test } from 'node:test'` reads these named exports: make them the wrapped ones.
syncBuiltinESMExports();

// SNO_TEST_CPU=<file>: each test file's CPU (its own and its waited-for children's, from /proc/self/stat) and its
// process's start and end (ms since 1970) as one JSON line, to find where the suite's CPU goes (issue 37).
if (process.env.SNO_TEST_CPU) {
  const { appendFileSync, readFileSync } = await import('node:fs');
  const { sourceOfCompiled } = await import('./test-build.mjs');
  const { performance } = await import('node:perf_hooks');
  process.on('exit', () => {
    try {
      const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
      const [u, s, cu, cs] = [f[11], f[12], f[13], f[14]].map((x) => Number(x) / 100);
      appendFileSync(process.env.SNO_TEST_CPU, `${JSON.stringify({ file: sourceOfCompiled(process.argv[1]), self: +(u + s).toFixed(2), children: +(cu + cs).toFixed(2), start: Math.round(performance.timeOrigin), end: Date.now() })}\n`);
    } catch (e) {
      console.error(`[tests] SNO_TEST_CPU: ${e.message}`);
    }
  });
}
