// npm test's static checks, typecheck and lint, side by side: each is one busy core for 30-60 s, and one after the
// other they left the second core idle for about half a minute of every run. Each one's output is printed whole
// when it ends, typecheck's first; any failure fails the run before a test starts.
import { spawn } from 'node:child_process';

const checks = [
  ['typecheck', 'tsc', ['--noEmit', '-p', 'tsconfig.json']],
  ['lint', 'eslint', ['--max-warnings', '0', '.']],
];

const runs = checks.map(
  ([name, bin, args]) =>
    new Promise((resolve) => {
      const child = spawn(`node_modules/.bin/${bin}`, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const output = [];
      child.stdout.on('data', (d) => output.push(d));
      child.stderr.on('data', (d) => output.push(d));
      child.on('error', (e) => resolve({ name, code: 1, output: `${name}: ${e.message}\n` }));
      child.on('close', (code, signal) => resolve({ name, code: code ?? 1, signal, output: Buffer.concat(output).toString() }));
    }),
);
let failed = false;
for (const run of runs) {
  const { name, code, signal, output } = await run;
  process.stdout.write(output);
  if (code !== 0) {
    failed = true;
    console.error(`npm test: ${name} failed (${signal ? `killed by ${signal}` : `exit ${code}`})`);
  }
}
process.exit(failed ? 1 : 0);
