// Every test file's report reaches the runner whole, or the run fails naming the file. Loaded with --import by
// scripts/run-tests.mjs into each test file's process.
// Node 20's --test-force-exit calls process.exit as soon as the file's report stream ends, before its last frames
// (the last tests' verdicts, the file's closing counts) are written to stdout: with several files at a time the
// runner then reports fewer tests than ran, at exit code 0 (nodejs/node#64833, open; here a fresh-clone `npm test`
// reported 32 of a file's 51 tests, and 6 files of 300 tests run six at a time beside three busy loops lost 3 to 10
// verdicts in 3 of 5 runs). So process.exit here waits until the file's closing frame (the root's "duration_ms"
// diagnostic, the last thing a file's process writes: node lib/internal/test_runner/harness.js, v20.x) has been
// written, then writes FILE_END_LINE with the file's own count of its tests, which the reporter (./test-reporter.mjs)
// expects from every file and compares with the verdicts that reached it (the runner can lose frames on its side too:
// nodejs/node#64857; a fresh-clone run counted fewer tests than a file ran, at exit code 0, with the end line whole).
// A file whose closing frame is not written within FLUSH_LIMIT_MS exits without it, and the run fails by its name.
// The reporter imports FILE_END_LINE from here: the patch applies only in a file's process (NODE_TEST_CONTEXT is set
// by the runner for its children).
export const FILE_END_LINE = 'sno-test-file-reported-whole';
const FLUSH_LIMIT_MS = 10_000;

/** The v8-serialized frame of the root's last diagnostic: the strings are stored as they are (one byte a char). */
const isClosingFrame = (chunk) => Buffer.isBuffer(chunk) && chunk.includes('test:diagnostic') && chunk.includes('duration_ms ');

function exitOnlyOnceReported() {
  const realExit = process.exit;
  const realWrite = process.stdout.write;
  let closingWritten = false;
  let whenWritten;
  let leaving = false;
  let testsCounted = '';

  process.stdout.write = function writeNoticingTheEnd(chunk, ...rest) {
    // The file's own count of its tests (the root's "tests N" diagnostic), sent with the end line: frames the runner
    // loses on its side (nodejs/node#64857) show as fewer verdicts than that.
    if (Buffer.isBuffer(chunk) && chunk.includes('test:diagnostic')) testsCounted = /tests (\d+)/.exec(chunk.toString('latin1'))?.[1] ?? testsCounted;
    if (closingWritten || !isClosingFrame(chunk)) return realWrite.call(this, chunk, ...rest);
    const at = rest.findIndex((arg) => typeof arg === 'function');
    const theirs = at >= 0 ? rest[at] : undefined;
    return realWrite.call(this, chunk, ...(at >= 0 ? rest.slice(0, at) : rest), (error) => {
      closingWritten = true;
      whenWritten?.();
      theirs?.(error);
    });
  };

  process.exit = function exitOnceReported(code) {
    // A test's own process.exit ends the process at once, as without this file; only the runner's waits (its caller is
    // the runner's own code: node:internal/test_runner/test, the report stream's end).
    if (leaving || !/node:internal\/test_runner/.test((new Error().stack ?? '').split('\n')[2] ?? '')) return realExit.call(process, code);
    leaving = true;
    const leave = () => realWrite.call(process.stdout, `\n${FILE_END_LINE} ${testsCounted}\n`, () => realExit.call(process, code));
    if (closingWritten) return leave();
    whenWritten = leave;
    setTimeout(() => realExit.call(process, code), FLUSH_LIMIT_MS);
  };
}

if (process.env.NODE_TEST_CONTEXT) exitOnlyOnceReported();
