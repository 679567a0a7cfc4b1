// npm test's static checks, typecheck and lint. Run on their own (`node scripts/check.mjs`) they go side by side and
// the exit status says whether both passed. Under `npm test` ./run-tests.mjs starts them beside the test files at the
// lowest CPU priority (`lowPriority`): the tests leave a quarter of the 2 cores idle in their first minutes (files that
// wait on systemd and the simulated cluster), which the checks' 60 s of CPU fill instead of the 30 s of wall time
// they took before the first test.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';

const CHECKS = [
  ['typecheck', 'tsc', ['--noEmit', '-p', 'tsconfig.json']],
  ['lint', 'eslint', ['--max-warnings', '0', '.']],
];

/** Starts both checks; each promise settles with the check's outcome and its whole output. */
export function startChecks({ lowPriority = false } = {}) {
  return CHECKS.map(
    ([name, bin, args]) =>
      new Promise((resolve) => {
        const started = Date.now();
        const child = spawn(`node_modules/.bin/${bin}`, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        if (lowPriority && child.pid !== undefined) {
          try {
            setPriority(child.pid, 19);
          } catch {
            // It only yields the CPU to the tests; without it the check runs at their priority.
          }
        }
        const output = [];
        child.stdout.on('data', (d) => output.push(d));
        child.stderr.on('data', (d) => output.push(d));
        const seconds = () => Math.round((Date.now() - started) / 1000);
        child.on('error', (e) => resolve({ name, failed: true, seconds: seconds(), output: `${name}: ${e.message}\n` }));
        child.on('close', (code, signal) =>
          resolve({ name, failed: code !== 0, seconds: seconds(), why: signal ? `killed by ${signal}` : `exit ${code}`, output: Buffer.concat(output).toString() }),
        );
      }),
  );
}

/** Prints a finished check's output, and a line saying whether it failed. */
export function report({ name, failed, why, seconds, output }) {
  process.stdout.write(output);
  if (failed) console.error(`npm test: ${name} failed (${why})`);
  else console.error(`[checks] ${name} passed (${seconds} s)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let failed = false;
  for (const run of startChecks()) {
    const result = await run;
    report(result);
    failed ||= result.failed;
  }
  process.exit(failed ? 1 : 0);
}
