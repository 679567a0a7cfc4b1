// `npm run mutation [module …]`: StrykerJS over the modules of scripts/mutation-modules.mjs (all of them without
// arguments), one after the other, each with its own tests and incremental file (stryker.config.mjs). Prints each
// module's score; the surviving mutants are in Stryker's clear-text report above it and in
// reports/mutation/<module>.report.json.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { KILLED, MUTATION_MODULES, NOT_KILLED, runIdOf, scoreOf } from './mutation-modules.mjs';

// `--force` re-tests every mutant: the command runner reports one result for all of a module's tests, so incremental
// mode sees a changed source line but not a changed test (after adding tests, run with --force).
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const names = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const wanted = names.length ? names : Object.keys(MUTATION_MODULES);
const unknown = wanted.filter((m) => !(m in MUTATION_MODULES));
if (unknown.length) {
  console.error(`unknown module ${unknown.join(', ')}: expected one of ${Object.keys(MUTATION_MODULES).join(', ')}`);
  process.exit(2);
}
const scores = [];
for (const name of wanted) {
  const res = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs', ...flags], { stdio: 'inherit', env: { ...process.env, SNO_MUTATION_MODULE: name } });
  if (res.status !== 0) {
    console.error(`mutation testing of ${name} did not complete (exit ${res.status})`);
    process.exit(1);
  }
  const id = runIdOf(name, process.env.SNO_MUTATION_LINES);
  const report = JSON.parse(readFileSync(`reports/mutation/${id}.report.json`, 'utf8'));
  const mutants = Object.values(report.files).flatMap((f) => f.mutants);
  const count = (status) => mutants.filter((m) => m.status === status).length;
  const killed = mutants.filter((m) => KILLED.includes(m.status)).length;
  const valid = killed + mutants.filter((m) => NOT_KILLED.includes(m.status)).length;
  scores.push(`${id}: ${scoreOf(killed, valid)} % (${killed} of ${valid} mutants killed, ${count('Survived')} survived; ${count('CompileError') + count('RuntimeError')} invalid, ${count('Ignored')} ignored)`);
}
console.log(`\nMutation score per module (${new Date().toISOString().slice(0, 10)}):\n${scores.map((s) => `  ${s}`).join('\n')}`);
