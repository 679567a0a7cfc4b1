// Reliability matrix, fuzzed site-configs (issue #8): thousands of deterministic mutations of the valid
// corpus through `sno-reconfigure validate --json` — in-process through the CLI's own dispatch (runCli, the
// code the bundle runs) for speed, and a sample through the built bundle. Whatever the input, validate must
// not crash, must exit 0 or 1 with the contract's report, must name a located error when it says invalid,
// must not echo secrets, and must not change the media it reads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/cli';
import { bareBundleEnv, ensureBundle } from '../../support/bundle';
import { mutate, type Mutant } from './fuzz-mutations';
import { FUZZ_SEED, loadValidCases, MutantTally, validateContractProblems, writeMutant, type FuzzCase, type ValidateOutcome } from './fuzz-support';
import { summaryLine } from './summary';

/** In-process mutants (the brief asks for at least 2,000). */
const IN_PROCESS_MUTANTS = 2000;
/** Concurrent in-process validations, at most: the largest count ≤ this that divides the number of corpus cases. */
const MAX_IN_PROCESS_WORKERS = 4;

/** Each case is owned by one worker (mutant i goes to case i % cases and to worker i % workers). */
function workersFor(caseCount: number): number {
  for (let w = MAX_IN_PROCESS_WORKERS; w > 1; w--) if (caseCount % w === 0) return w;
  return 1;
}
/** Mutants also run through dist/sno-reconfigure.cjs (at least 50): every 40th of the in-process ones. */
const BUNDLE_EVERY = 40;
/**
 * A validation that takes longer than this is reported as hung. The slowest mutants take well under 1 s on an idle
 * machine, but the workers share one event loop and, at load 20–27, 2 cores with two other suites: minutes, then.
 */
const HANG_MS = 5 * 60_000;

let cases: FuzzCase[] = [];
before(async () => {
  cases = await loadValidCases();
});
after(async () => {
  await Promise.all(cases.map((c) => c.prepared.cleanup()));
});

const mutantAt = (i: number): { c: FuzzCase; m: Mutant } => {
  const c = cases[i % cases.length]!;
  return { c, m: mutate(c, FUZZ_SEED, i) };
};

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} hung for ${HANG_MS} ms`)), HANG_MS)))]).finally(() => clearTimeout(timer));
}

async function validateInProcess(location: string, root: string, cwd: string): Promise<ValidateOutcome> {
  let stdout = '';
  let stderr = '';
  try {
    const code = await withTimeout(
      runCli(['validate', location, '--json', '--root', root], { out: (s) => (stdout += s), err: (s) => (stderr += s), env: { ...process.env }, cwd }),
      'validate',
    );
    return { code, stdout, stderr };
  } catch (e) {
    // What main.ts would print as an internal error (and exit 1 with): a crash for this test.
    return { code: null, stdout, stderr: `${stderr}internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` };
  }
}

function validateWithBundle(bundle: string, location: string, root: string): Promise<ValidateOutcome> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bundle, 'validate', location, '--json', '--root', root], { encoding: 'utf8', timeout: HANG_MS, maxBuffer: 64 * 1024 * 1024, env: bareBundleEnv() }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return err.killed ? resolve({ code: null, stdout, stderr: `killed after ${HANG_MS} ms (hung)` }) : reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

test(`validate survives ${IN_PROCESS_MUTANTS} mutations of the valid corpus (in-process, the CLI's own code)`, async () => {
  assert.ok(cases.length >= 12, `the valid corpus has ${cases.length} cases`);
  const IN_PROCESS_WORKERS = workersFor(cases.length);
  const tally = new MutantTally();
  const operators = new Map<string, number>();
  const runMutant = async (i: number) => {
    const { c, m } = mutantAt(i);
    operators.set(m.operator, (operators.get(m.operator) ?? 0) + 1);
    const restore = await writeMutant(c, m);
    try {
      const outcome = await validateInProcess(c.prepared.location, c.prepared.root, c.dir);
      await tally.record(c, m, outcome.code, validateContractProblems(outcome, c.secrets, !m.movesValues));
    } finally {
      await restore();
    }
  };
  // One worker per group of cases: a case's directory holds one mutant at a time; the workers overlap
  // the validator's file I/O.
  await Promise.all(
    Array.from({ length: IN_PROCESS_WORKERS }, async (_, w) => {
      for (let i = w; i < IN_PROCESS_MUTANTS; i += IN_PROCESS_WORKERS) await runMutant(i);
    }),
  );
  summaryLine('fuzz validate (in-process)', { tried: IN_PROCESS_MUTANTS, survived: tally.survived, dataLost: tally.dataLost }, `${tally.invalid} judged invalid, ${IN_PROCESS_MUTANTS - tally.invalid} valid; seed 0x${FUZZ_SEED.toString(16)}; operators ${[...operators].map(([k, v]) => `${k}:${v}`).join(' ')}`);
  assert.deepEqual(tally.failures.slice(0, 15), [], `${tally.failures.length} mutants broke validate`);
  assert.equal(tally.dataLost, 0);
  // The mutations must actually reach the validator's error paths, not just reformat valid files.
  assert.ok(tally.invalid >= IN_PROCESS_MUTANTS * 0.6, `only ${tally.invalid} of ${IN_PROCESS_MUTANTS} mutants were invalid`);
  assert.ok(operators.size >= 25, `only ${operators.size} mutation operators exercised`);
});

test(`the bundle gives the same verdict on every ${BUNDLE_EVERY}th mutant (at least 50), exit 0 or 1, media untouched`, async () => {
  const bundle = ensureBundle();
  const indices = Array.from({ length: Math.ceil(IN_PROCESS_MUTANTS / BUNDLE_EVERY) }, (_, k) => k * BUNDLE_EVERY + (k % BUNDLE_EVERY));
  assert.ok(indices.length >= 50);
  const tally = new MutantTally();
  const work = [...indices];
  const worker = async () => {
    for (let i = work.shift(); i !== undefined; i = work.shift()) {
      const { c, m } = mutantAt(i);
      // A private copy per mutant: the bundle runs concurrently.
      const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-fuzz-bundle-'));
      try {
        const copy: FuzzCase = { ...c, dir: path.join(tmp, 'media') };
        await fs.cp(c.dir, copy.dir, { recursive: true });
        await writeMutant(copy, m);
        const location = path.join(copy.dir, path.relative(c.dir, c.prepared.location));
        const viaBundle = await validateWithBundle(bundle, location, c.prepared.root);
        const problems = validateContractProblems(viaBundle, c.secrets, !m.movesValues);
        const viaSource = await validateInProcess(location, c.prepared.root, copy.dir);
        if (viaSource.code !== viaBundle.code) problems.push(`bundle exit ${viaBundle.code}, source exit ${viaSource.code}`);
        await tally.record(copy, m, viaBundle.code, problems);
      } finally {
        await fs.rm(tmp, { recursive: true, force: true });
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  summaryLine('fuzz validate (bundle)', { tried: indices.length, survived: tally.survived, dataLost: tally.dataLost });
  assert.deepEqual(tally.failures, []);
  assert.equal(tally.survived, indices.length);
});
