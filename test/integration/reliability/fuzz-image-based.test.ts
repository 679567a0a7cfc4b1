// Reliability matrix, fuzzed image-based install media: deterministic mutations of the valid image-based cases
// (cluster-configuration/manifest.json, the JSON of its manifests/, the files beside them) through `validate
// --json`, in-process through the CLI's own dispatch and a sample through the built bundle (the node reads a
// volume with the same code). As for site-configs (fuzz-validate.test.ts): whatever the input, validate must not
// crash, must exit 0 or 1 with the contract's report, must name a located error when it says invalid, and must
// not change the media it reads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { runCli } from '../../../src/cli/cli';
import { bareBundleEnv, ensureBundle } from '../../support/bundle';
import { mutate } from './fuzz-mutations';
import { FUZZ_SEED, loadValidCases, MutantTally, validateContractProblems, writeMutant, type FuzzCase, type ValidateOutcome } from './fuzz-support';
import { summaryLine } from './summary';

/** Few enough to keep the run short; every mutation operator still comes up several times. */
const MUTANTS = 400;
/** Mutants also run through dist/sno-reconfigure.cjs: every 20th. */
const BUNDLE_EVERY = 20;
/** Mutant indices from a region the site-config fuzz tests do not use. */
const FIRST_INDEX = 200_000;
/** A validation that takes longer than this is reported as hung (deadline sized for a loaded machine: load 20–27 on 2 cores). */
const HANG_MS = 5 * 60_000;

let cases: FuzzCase[] = [];
before(async () => {
  cases = await loadValidCases((name) => name.includes('image-based'));
});
after(async () => {
  await Promise.all(cases.map((c) => c.prepared.cleanup()));
});

async function validateInProcess(c: FuzzCase): Promise<ValidateOutcome> {
  let stdout = '';
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  try {
    const run = runCli(['validate', c.prepared.location, '--json', '--root', c.prepared.root], { out: (s) => (stdout += s), err: (s) => (stderr += s), env: { ...process.env }, cwd: c.dir });
    const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`validate hung for ${HANG_MS} ms`)), HANG_MS)));
    return { code: await Promise.race([run, hung]), stdout, stderr };
  } catch (e) {
    return { code: null, stdout, stderr: `${stderr}internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` };
  } finally {
    clearTimeout(timer);
  }
}

function validateWithBundle(bundle: string, c: FuzzCase): Promise<ValidateOutcome> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bundle, 'validate', c.prepared.location, '--json', '--root', c.prepared.root], { encoding: 'utf8', timeout: HANG_MS, maxBuffer: 64 * 1024 * 1024, env: bareBundleEnv() }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return err.killed ? resolve({ code: null, stdout, stderr: `killed after ${HANG_MS} ms (hung)` }) : reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

test(`validate survives ${MUTANTS} mutations of image-based install media (in-process; every ${BUNDLE_EVERY}th also through the bundle)`, async () => {
  assert.ok(cases.length >= 2, `${cases.length} image-based cases in the valid corpus`);
  const bundle = ensureBundle();
  const tally = new MutantTally();
  const operators = new Map<string, number>();
  let mirrorFiles = 0;
  // One case's directory holds one mutant at a time: the cases are fuzzed side by side, each in turn.
  await Promise.all(
    cases.map(async (c, w) => {
      for (let i = w; i < MUTANTS; i += cases.length) {
        const m = mutate(c, FUZZ_SEED, FIRST_INDEX + i);
        operators.set(m.operator, (operators.get(m.operator) ?? 0) + 1);
        if ([...m.files].some(([rel, bytes]) => rel.includes('manifests/') && !c.files.get(rel)!.equals(bytes))) mirrorFiles += 1;
        const restore = await writeMutant(c, m);
        try {
          const outcome = await validateInProcess(c);
          const problems = validateContractProblems(outcome, c.secrets, !m.movesValues);
          if (i % BUNDLE_EVERY === 0) {
            const viaBundle = await validateWithBundle(bundle, c);
            problems.push(...validateContractProblems(viaBundle, c.secrets, !m.movesValues).map((p) => `bundle: ${p}`));
            if (viaBundle.code !== outcome.code) problems.push(`bundle exit ${viaBundle.code}, source exit ${outcome.code}`);
          }
          await tally.record(c, m, outcome.code, problems);
        } finally {
          await restore();
        }
      }
    }),
  );
  summaryLine('fuzz validate (image-based media)', { tried: MUTANTS, survived: tally.survived, dataLost: tally.dataLost }, `${tally.invalid} judged invalid; ${mirrorFiles} mutated manifests/ or extra-manifests/; seed 0x${FUZZ_SEED.toString(16)}`);
  assert.deepEqual(tally.failures.slice(0, 15), [], `${tally.failures.length} mutants broke validate`);
  assert.equal(tally.dataLost, 0);
  assert.ok(tally.invalid >= MUTANTS * 0.5, `only ${tally.invalid} of ${MUTANTS} mutants were invalid`);
  assert.ok(mirrorFiles >= MUTANTS * 0.2, `only ${mirrorFiles} mutants reached manifests/ or extra-manifests/`);
  assert.ok(operators.size >= 20, `only ${operators.size} mutation operators exercised`);
});
