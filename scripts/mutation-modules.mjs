// The modules `npm run mutation` measures (issue 41): where a bug hurts most — the CSR approval rules, what the
// node trusts of a site-config, the engine's journal and media detection, the pool hold — each with the tests
// that exercise it, so one mutant costs one small test run, not the suite.
export const MUTATION_MODULES = {
  'csr-policy': { mutate: ['src/csr/policy.ts'], tests: ['test/unit/csr/policy.test.ts'] },
  'csr-approver': { mutate: ['src/csr/approver.ts'], tests: ['test/unit/csr/approver.test.ts'] },
  'siteconfig-signature': { mutate: ['src/siteconfig/signature.ts'], tests: ['test/unit/siteconfig/signature.test.ts'] },
  'siteconfig-sealed': { mutate: ['src/siteconfig/sealed.ts'], tests: ['test/unit/siteconfig/sealed.test.ts'] },
  'siteconfig-trust': { mutate: ['src/siteconfig/trust.ts', 'src/siteconfig/nmstate-unsigned.ts'], tests: ['test/unit/siteconfig/trust.test.ts', 'test/unit/siteconfig/nmstate-unsigned.test.ts'] },
  'network-early': { mutate: ['src/network/early.ts', 'src/network/early-state.ts'], tests: ['test/unit/network/early-phase.test.ts', 'test/unit/network/early-state.test.ts'] },
  'engine-journal': { mutate: ['src/engine/journal.ts'], tests: ['test/unit/engine/journal-status.test.ts', 'test/unit/engine/runner-interrupt.test.ts'] },
  'engine-detect': { mutate: ['src/engine/detect.ts'], tests: ['test/unit/engine/detect.test.ts'] },
  // The pool hold: its unit tests, and the bundled agent against the simulator killed and restarted around the hold
  // (the sandbox builds the bundle once: all mutants are in it, switched by Stryker's environment variable): about 12 s
  // a mutant. run-manifests.test.ts (extra manifests that touch the held pool) would add 40 s a mutant.
  'pool-hold': { mutate: ['src/steps/pool-hold.ts'], tests: ['test/unit/steps/pool-hold.test.ts', 'test/integration/reliability/pool-restart.test.ts'], build: 'node esbuild.config.mjs' },
};

/**
 * The ranges of SNO_MUTATION_LINES (`189-202`, or several: `133-172,313-342`) as Stryker's `file:from-to` patterns,
 * and the name a narrowed run's incremental file and report carry.
 */
export const rangesOf = (lines) => (lines ? lines.split(',').map((r) => r.trim()).filter(Boolean) : []);
export const runIdOf = (name, lines) => (lines ? `${name}.lines-${rangesOf(lines).join('_')}` : name);

/** Stryker's statuses of a mutant the tests killed, and of a valid one they did not: the score is killed / (both). */
export const KILLED = ['Killed', 'Timeout'];
export const NOT_KILLED = ['Survived', 'NoCoverage'];

/** The score of `killed` of `valid` mutants, as the docs give it ("-" for none). */
export function scoreOf(killed, valid) {
  return valid ? ((100 * killed) / valid).toFixed(1) : '-';
}
