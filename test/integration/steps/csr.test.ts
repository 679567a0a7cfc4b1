// The csr step against the simulator's kubelet: it approves the node's own CSRs and returns as soon as the
// node is Ready with both certificates — woken by the approver and the node watch, not by its periodic look.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock } from '../../../src/engine/step';
import { R } from '../../../src/cluster/resources';
import { csrStep } from '../../../src/steps/csr';
import type { CsrApprover } from '../../../src/csr/approver';
import { startSimulator } from '../../sim/index';
import { createHarness } from './harness';

/** A clock whose sleeps end only by abort: a step waiting on it moves on events alone. */
function clockWithoutTimeouts(now: () => number): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now,
    sleep: (ms, signal) =>
      new Promise<void>((_resolve, reject) => {
        sleeps.push(ms);
        const stop = () => reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
        if (signal?.aborted) return stop();
        signal?.addEventListener('abort', stop, { once: true });
      }),
  };
}

describe('csr step', () => {
  test('approves the kubelet\'s client and serving CSRs and returns on their events, without its periodic look', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ timeScale: 0.01 });
    const h = await createHarness(sim, { facts: { kubeletStartedAt: new Date(sim.clock.now()).toISOString() } });
    try {
      sim.startKubelet();
      await sim.waitFor(() => sim.apiUp(), 60_000, 'the API up');
      const clock = clockWithoutTimeouts(() => sim.clock.now());
      const ctx = { ...h.contextFor('csr'), clock };
      await csrStep.apply(ctx);

      // It slept at least once (the kubelet had filed nothing yet), and no sleep ever ran out.
      assert.ok(clock.sleeps.length >= 1, `slept ${clock.sleeps.length} times`);
      const filed = sim.kubelet.filed.map((f) => f.name);
      const approver = ctx.background.get<CsrApprover>('csr-approver');
      assert.deepEqual(approver?.approvedNames(), filed, 'approved exactly what the kubelet filed');
      assert.deepEqual(approver?.issued(), { client: true, serving: true });
      assert.deepEqual(
        h.changes.filter((c) => c.kind === 'CertificateSigningRequest').map((c) => c.target),
        filed,
      );
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });

  test('approves the bootstrap CSR of a node installed before 4.14, whose bootstrap certificate lacks system:serviceaccounts', { timeout: 120_000 }, async () => {
    const sim = await startSimulator({ timeScale: 0.01, version: '4.14.12', installedVersion: '4.13.9' });
    const h = await createHarness(sim, { facts: { kubeletStartedAt: new Date(sim.clock.now()).toISOString() } });
    try {
      sim.startKubelet();
      await sim.waitFor(() => sim.apiUp(), 60_000, 'the API up');
      const ctx = h.contextFor('csr');
      const stranded = new Promise<never>((_resolve, reject) => {
        setTimeout(() => reject(new Error(`the bootstrap CSR was left pending: ${h.logLines.slice(-3).join(' | ')}`)), 60_000).unref();
      });
      await Promise.race([csrStep.apply(ctx), stranded]);
      const client = sim.kubelet.filed.find((f) => f.kind === 'client')!;
      const spec = (await h.client.get(R.csrs, client.name))?.spec as { groups: string[] };
      assert.deepEqual([...spec.groups].sort(), ['system:authenticated', 'system:serviceaccounts:openshift-machine-config-operator']);
      assert.deepEqual(ctx.background.get<CsrApprover>('csr-approver')?.issued(), { client: true, serving: true });
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});
