// Reliability matrix, hostile CSRs (issue #8): while the agent runs, every kind of CSR a strict approver
// must refuse (test/sim/cluster/hostile.ts: other nodes, system:masters, extra SANs, wrong signer, usages or
// requestor, malformed PEM) is filed — as the csr step starts, and again as the next step starts, while the
// approver keeps running in the background. None may be approved or denied (left pending, DESIGN.md
// section 5); the kubelet's own CSRs and the node's own renewal are approved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import type { StepName } from '../../../src/engine/step';
import { HOSTILE_CSR_KINDS, type InjectedCsr } from '../../sim/index';
import { parseLogs } from '../../support/scenario';
import { agentSteps, convergenceProblems, newScenario, stepStartLine } from './support';
import { summaryLine } from './summary';

interface CsrView {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string; reason?: string }[]; certificate?: string };
}

const decided = (csr: CsrView | undefined, type: 'Approved' | 'Denied') => Boolean(csr?.status?.conditions?.some((c) => c.type === type && c.status === 'True'));

test('hostile CSRs filed during the run are never approved (nor denied); the node\'s own are approved', async () => {
  const s = await newScenario({ poweredOn: true });
  try {
    const steps = agentSteps();
    const rounds: StepName[] = ['csr', ...steps.slice(steps.indexOf('csr') + 1, steps.indexOf('csr') + 2).filter((x) => x !== 'finish')];
    const injected: { round: StepName; csr: InjectedCsr }[] = [];
    const child = s.spawnRun();
    let out = '';
    const pendingRounds = [...rounds];
    let injecting = Promise.resolve();
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      while (pendingRounds.length > 0 && out.includes(stepStartLine(pendingRounds[0]!))) {
        const round = pendingRounds.shift()!;
        injecting = injecting.then(async () => {
          for (const kind of HOSTILE_CSR_KINDS) injected.push({ round, csr: await s.sim.injectHostileCsr(kind) });
        });
      }
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    await injecting;
    assert.equal(code, 0, `${out.slice(-3000)}\n${stderr}`);
    assert.deepEqual(pendingRounds, [], 'every injection round happened');
    assert.deepEqual(convergenceProblems(s), []);

    const csrs = new Map((s.sim.store.list(R.csrs) as unknown as CsrView[]).map((c) => [c.metadata.name, c]));
    const logs = parseLogs(out);
    const problems: string[] = [];
    let hostileFiled = 0;
    let handled = 0;
    let approvedHostile = 0;
    for (const { round, csr } of injected) {
      if (csr.rejected) {
        handled += 1; // the API server itself refused it (malformed PEM): nothing to approve
        continue;
      }
      const stored = csrs.get(csr.name!);
      if (csr.legitimate) {
        // The node's own renewal: approved while the approver is sure to be watching (the csr step).
        if (round === 'csr' && !decided(stored, 'Approved')) problems.push(`${csr.kind} (${csr.name}, legitimate) was not approved`);
        else handled += 1;
        continue;
      }
      hostileFiled += 1;
      const wrong = [
        ...(decided(stored, 'Approved') ? [`${csr.kind} (${csr.name}) was APPROVED`] : []),
        ...(decided(stored, 'Denied') ? [`${csr.kind} (${csr.name}) was denied (must be left pending)`] : []),
        ...(stored?.status?.certificate ? [`${csr.kind} (${csr.name}) got a certificate`] : []),
      ];
      if (decided(stored, 'Approved')) approvedHostile += 1;
      if (wrong.length === 0) handled += 1;
      problems.push(...wrong);
    }
    // The kubelet's own client and serving CSRs, approved with the agent's reason.
    const own = s.sim.kubelet.filed;
    for (const kind of ['client', 'serving'] as const) {
      const mine = own.filter((f) => f.kind === kind).map((f) => csrs.get(f.name));
      if (!mine.some((c) => c?.status?.conditions?.some((x) => x.type === 'Approved' && x.reason === 'SNOReconfigureApprove'))) problems.push(`the kubelet's ${kind} CSR was not approved`);
    }
    // Refusals are logged with their reason (the csr step's round at least: its CSRs are seen by the watch).
    const leftPending = new Set(logs.filter((l) => /^left CSR \S+ pending /.test(String(l.msg))).map((l) => String(l.csr)));
    const kubeletSigners = ['kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving'];
    for (const { round, csr } of injected) {
      if (round === 'csr' && !csr.rejected && !csr.legitimate && kubeletSigners.includes(csr.signerName) && !leftPending.has(csr.name!)) problems.push(`${csr.kind} (${csr.name}) left pending without a logged reason`);
    }
    // "data lost" here: a hostile CSR approved — a credential handed out that the policy forbids.
    summaryLine('hostile CSRs', { tried: injected.length, survived: handled, dataLost: approvedHostile }, `${HOSTILE_CSR_KINDS.length} kinds × ${rounds.length} rounds (${rounds.join(', ')}); ${hostileFiled} hostile stored, ${injected.filter((i) => i.csr.rejected).length} refused by the API server, approved hostile: ${approvedHostile}`);
    assert.deepEqual(problems, []);
    assert.ok(hostileFiled >= (HOSTILE_CSR_KINDS.length - 2) * rounds.length, `${hostileFiled} hostile CSRs were stored`);
  } finally {
    await s.cleanup();
  }
});
