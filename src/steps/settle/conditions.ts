// What still keeps the cluster from being "settled", from one snapshot of its state (pure, unit-tested):
// ClusterVersion Available and not Progressing, no ClusterOperator Degraded/Progressing/unavailable, the
// node Ready, no pending CSR the agent's own policy would approve for this node (one that the policy leaves
// pending — another node's, a hostile one — is not ours to wait for), pool master updated to its
// target config, and every rollout our steps started has actually begun (its baseline moved).
import type { V1CertificateSigningRequest, V1Node } from '@kubernetes/client-node';
import { decidedState, evaluateCsr, issuedKind, type ExpectedNode } from '../../csr/policy';
import type { KubeObject } from '../../cluster/types';
import { condition, isTrue, type Condition } from '../../cluster/objects';
import { coBaseline, mcpBaseline, MASTER_POOL, type Blocker, type ClusterOperator, type ExpectedRollout, type MachineConfigPool } from '../rollouts';

export type { Blocker };

export interface ClusterSnapshot {
  clusterVersion?: KubeObject & { status?: { conditions?: Condition[] } };
  operators: ClusterOperator[];
  pools: MachineConfigPool[];
  nodes: V1Node[];
  csrs: V1CertificateSigningRequest[];
}


function short(c: Condition | undefined): string {
  const text = [c?.reason, c?.message].filter(Boolean).join(': ');
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function clusterVersionBlockers(snap: ClusterSnapshot): Blocker[] {
  const cv = snap.clusterVersion;
  if (!cv) return [{ key: 'cv', text: 'ClusterVersion "version" not found' }];
  const out: Blocker[] = [];
  if (!isTrue(cv, 'Available')) out.push({ key: 'cv/available', text: `ClusterVersion not Available (${short(condition(cv, 'Available')) || 'no condition'})` });
  if (isTrue(cv, 'Progressing')) out.push({ key: 'cv/progressing', text: `ClusterVersion Progressing (${short(condition(cv, 'Progressing'))})` });
  return out;
}

function operatorBlockers(snap: ClusterSnapshot): Blocker[] {
  const out: Blocker[] = [];
  for (const co of [...snap.operators].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))) {
    const name = co.metadata?.name ?? '?';
    if (isTrue(co, 'Degraded')) {
      const c = condition(co, 'Degraded');
      out.push({ key: `co/${name}/degraded`, text: `${name} Degraded (${short(c)})`, degraded: { name: `cluster operator ${name}`, message: [c?.reason, c?.message].filter(Boolean).join(': ') } });
    }
    if (isTrue(co, 'Progressing')) out.push({ key: `co/${name}/progressing`, text: `${name} (Progressing: ${short(condition(co, 'Progressing'))})` });
    if (condition(co, 'Available') && !isTrue(co, 'Available')) out.push({ key: `co/${name}/available`, text: `${name} not Available (${short(condition(co, 'Available'))})` });
  }
  return out;
}

function nodeBlockers(snap: ClusterSnapshot, nodeName: string | undefined): Blocker[] {
  const node = nodeName ? snap.nodes.find((n) => n.metadata?.name === nodeName) : snap.nodes.length === 1 ? snap.nodes[0] : undefined;
  if (!node) return [{ key: 'node', text: `node ${nodeName ?? '(unknown)'} not registered` }];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? [] : [{ key: 'node/ready', text: `node ${node.metadata?.name} not Ready (${[ready?.reason, ready?.message].filter(Boolean).join(': ') || 'no Ready condition'})` }];
}

function createdAt(csr: V1CertificateSigningRequest): number {
  const t = csr.metadata?.creationTimestamp;
  return t ? new Date(t).getTime() : NaN;
}

function csrBlockers(snap: ClusterSnapshot, expected: ExpectedNode | undefined): Blocker[] {
  if (!expected?.name) return [];
  // Issued certificates of this node, per kind, by CSR creation time.
  const issued = snap.csrs.map((csr) => ({ kind: issuedKind(csr, expected), at: createdAt(csr) })).filter((i) => i.kind);
  // A pending CSR the kubelet replaced with a newer one that was approved and issued (it files a new CSR
  // when one goes unanswered too long) is abandoned: nothing waits for it, so it must not block.
  const superseded = (csr: V1CertificateSigningRequest, kind: string) => issued.some((i) => i.kind === kind && i.at > createdAt(csr));
  return snap.csrs
    .filter((csr) => {
      if (decidedState(csr)) return false;
      const decision = evaluateCsr(csr, expected);
      return decision.approve && !superseded(csr, decision.kind);
    })
    .map((csr) => ({ key: `csr/${csr.metadata?.name}`, text: `CSR ${csr.metadata?.name} of node ${expected.name} waiting for approval` }));
}

export function poolBlockers(pool: MachineConfigPool | undefined, name = MASTER_POOL): Blocker[] {
  if (!pool) return [{ key: `mcp/${name}`, text: `machine-config pool ${name} not found` }];
  const out: Blocker[] = [];
  if (isTrue(pool, 'Degraded')) {
    const c = condition(pool, 'NodeDegraded')?.status === 'True' ? condition(pool, 'NodeDegraded') : condition(pool, 'RenderDegraded')?.status === 'True' ? condition(pool, 'RenderDegraded') : condition(pool, 'Degraded');
    out.push({ key: `mcp/${name}/degraded`, text: `machine-config pool ${name} Degraded (${short(c)})`, degraded: { name: `machine-config pool ${name}`, message: [c?.reason, c?.message].filter(Boolean).join(': ') } });
  }
  const target = pool.spec?.configuration?.name;
  const current = pool.status?.configuration?.name;
  const generationSeen = (pool.status?.observedGeneration ?? 0) >= (pool.metadata?.generation ?? 0);
  const updated = isTrue(pool, 'Updated') && !isTrue(pool, 'Updating') && generationSeen && (!target || target === current);
  if (!updated) {
    const counts = pool.status?.machineCount !== undefined ? ` ${pool.status.updatedMachineCount ?? 0}/${pool.status.machineCount} updated` : '';
    out.push({ key: `mcp/${name}/updating`, text: `machine-config pool ${name} (Updating${counts}${target ? ` to ${target}` : ''})` });
  }
  return out;
}

/** Whether the operator has reacted since the rollout was recorded (its baseline moved). */
export function rolloutStarted(r: ExpectedRollout, snap: ClusterSnapshot): boolean {
  if (r.kind === 'clusteroperator') {
    const co = snap.operators.find((o) => o.metadata?.name === r.name);
    if (!co) return true;
    return coBaseline(co) !== r.baseline;
  }
  const pool = snap.pools.find((p) => p.metadata?.name === r.name);
  return !pool || mcpBaseline(pool) !== r.baseline;
}

export function rolloutBlockers(rollouts: ExpectedRollout[], snap: ClusterSnapshot): Blocker[] {
  return rollouts
    .filter((r) => !rolloutStarted(r, snap))
    .map((r) => ({ key: `rollout/${r.id}`, text: `${r.kind === 'clusteroperator' ? r.name : `machine-config pool ${r.name}`} to start rolling out (${r.reason})`, notStarted: r }));
}

export interface EvaluateOptions {
  nodeName?: string;
  expectedNode?: ExpectedNode;
  /** Rollouts still awaited (the caller drops those past their grace). */
  rollouts: ExpectedRollout[];
}

export function clusterBlockers(snap: ClusterSnapshot, opts: EvaluateOptions): Blocker[] {
  return [
    ...clusterVersionBlockers(snap),
    ...rolloutBlockers(opts.rollouts, snap),
    ...operatorBlockers(snap),
    ...poolBlockers(snap.pools.find((p) => p.metadata?.name === MASTER_POOL)),
    ...nodeBlockers(snap, opts.nodeName),
    ...csrBlockers(snap, opts.expectedNode),
  ];
}
