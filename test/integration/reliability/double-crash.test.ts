// Two power cuts in a row (issue 41): a store whose power fails, and fails again while the node is recovering from
// the first cut. The agent is SIGKILLed right after its N-th journal save (the SNO_RECONFIGURE_CRASH_AT_SAVE
// failpoint, src/engine/journal.ts), then the restarted agent right after its own M-th save — M = 1 is the cut
// during the very first thing the resumed run records — then restarted until done. The end state must be the
// one of crash.test.ts: converged (the pool unpaused included), nothing duplicated, the network committed once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convergenceProblems, duplicateProblems, networkProblems, newScenario, runUntilDone } from './support';

// An early (network, kubelet) and a middle (csr, domain) transition of the first run.
const CUTS: [first: number, second: number][] = [[4, 1], [12, 2]];

for (const [first, second] of CUTS) {
  test(`a power cut at journal save ${first}, another at save ${second} of the restarted run: the next start converges`, { timeout: 15 * 60_000 }, async () => {
    const s = await newScenario();
    try {
      const cut1 = await s.run([], { timeoutMs: 600_000, env: { SNO_RECONFIGURE_CRASH_AT_SAVE: String(first) } });
      assert.equal(cut1.signal, 'SIGKILL', `the first run was not cut (exit ${cut1.code})\n${cut1.stdout.slice(-2000)}`);
      const cut2 = await s.run([], { timeoutMs: 600_000, env: { SNO_RECONFIGURE_CRASH_AT_SAVE: String(second) } });
      assert.equal(cut2.signal, 'SIGKILL', `the restarted run was not cut (exit ${cut2.code})\n${cut2.stdout.slice(-2000)}`);
      await runUntilDone(s);
      assert.deepEqual(convergenceProblems(s), []);
      assert.deepEqual(duplicateProblems(s.sim), []);
      assert.deepEqual(networkProblems(s.node.nmstateHistory()), []);
    } finally {
      await s.cleanup();
    }
  });
}
