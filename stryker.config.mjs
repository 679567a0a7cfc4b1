// StrykerJS over one module at a time (`npm run mutation`, scripts/mutation.mjs picks the module): its command
// runner runs only that module's tests for each mutant, one mutant at a time (the reference machine has 2 cores,
// shared), and incremental mode keeps each module's results in reports/mutation/<module>.json so a second run
// tests only the mutants of code or tests that changed. A measured figure, not a gate: no `thresholds.break`.
import { MUTATION_MODULES, rangesOf, runIdOf } from './scripts/mutation-modules.mjs';

const name = process.env.SNO_MUTATION_MODULE ?? 'csr-policy';
const module = MUTATION_MODULES[name];
if (!module) throw new Error(`SNO_MUTATION_MODULE=${name}: expected one of ${Object.keys(MUTATION_MODULES).join(', ')}`);
// SNO_MUTATION_LINES=189-205 (or 133-172,313-342) narrows the module to those lines (Stryker's file:line-line), on a
// busy machine or for a module whose tests wait at real time.
const lines = process.env.SNO_MUTATION_LINES;
const mutate = lines ? module.mutate.flatMap((file) => rangesOf(lines).map((range) => `${file}:${range}`)) : module.mutate;
const id = runIdOf(name, lines);
// SNO_MUTATION_TESTS=<name pattern> runs only the module's tests of that name (node --test-name-pattern).
const pattern = process.env.SNO_MUTATION_TESTS;

export default {
  testRunner: 'command',
  commandRunner: { command: `node --import tsx --test --test-force-exit --test-reporter=dot ${pattern ? `--test-name-pattern=${JSON.stringify(pattern)} ` : ''}${module.tests.join(' ')}` },
  ...(module.build ? { buildCommand: module.build } : {}),
  mutate,
  // SNO_MUTATION_CONCURRENCY=2 tests two mutants at a time (each its own test process) on an otherwise idle machine.
  concurrency: Number(process.env.SNO_MUTATION_CONCURRENCY ?? 1),
  incremental: true,
  incrementalFile: `reports/mutation/${id}.json`,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${id}.report.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  // A mutant that makes a test hang is killed by Stryker's own limit (a multiple of the run without mutants).
  timeoutMS: 30_000,
  timeoutFactor: 3,
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
  // The sandbox needs the sources, the tests and the scripts; not the build outputs, caches or the reports.
  ignorePatterns: ['dist', 'build', '.cache', 'reports', 'bench-results*.json', 'rpm/out', 'machineconfigs'],
  // Each mutant runs the module's own tests: coverage analysis needs a test runner plugin, the command runner has none.
  coverageAnalysis: 'off',
  plugins: ['@stryker-mutator/*'],
};
