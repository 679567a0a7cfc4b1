// What the simulated cluster did during a run, on the real clock (ms since the run's start): kubelet start,
// API up, the kubelet's CSRs filed / approved / issued, rollouts started and done. From it: the timeline's
// critical path — the time the cluster itself needs, whoever drives it — and the waits attributed to the
// driver (the agent, or the baseline poller).
import { R } from '../../src/cluster/resources';
import type { KubeObject } from '../../src/cluster/types';
import type { Simulator } from '../sim/index';

export interface CsrEvents {
  name: string;
  kind: 'client' | 'serving';
  filed: number;
  approved?: number;
  issued?: number;
}

export interface RolloutEvent {
  operator: string;
  phase: 'start' | 'done';
  at: number;
}

export interface Timeline {
  kubeletStarted?: number;
  apiUp?: number;
  nodeReady?: number;
  csrs: CsrEvents[];
  rollouts: RolloutEvent[];
  reboots: { phase: string; at: number }[];
}

export interface Recorder {
  timeline: Timeline;
  stop(): void;
}

interface Condition {
  type: string;
  status: string;
}

/** Starts recording the simulator's events; `t0` is the real Date.now() the times are relative to. */
export function recordTimeline(sim: Simulator, t0: number): Recorder {
  const timeline: Timeline = { csrs: [], rollouts: [], reboots: [] };
  const now = () => Date.now() - t0;
  const onLog = (line: string) => {
    if (timeline.kubeletStarted === undefined && /kubelet: started/.test(line)) timeline.kubeletStarted = now();
  };
  const onApi = (e: { up: boolean }) => {
    if (e.up && timeline.apiUp === undefined && timeline.kubeletStarted !== undefined) timeline.apiUp = now();
  };
  const onKubelet = (e: { phase: string; kind?: 'client' | 'serving'; name?: string }) => {
    if (e.phase === 'csr-filed' && e.name && e.kind) timeline.csrs.push({ name: e.name, kind: e.kind, filed: now() });
  };
  const onRollout = (e: { operator: string; phase: 'start' | 'done' }) => timeline.rollouts.push({ operator: e.operator, phase: e.phase, at: now() });
  const onReboot = (e: { phase: string }) => timeline.reboots.push({ phase: e.phase, at: now() });
  sim.events.on('log', onLog);
  sim.events.on('api', onApi);
  sim.events.on('kubelet', onKubelet);
  sim.events.on('rollout', onRollout);
  sim.events.on('reboot', onReboot);
  const unsubscribe = sim.store.subscribe((e) => {
    if (e.resource.plural === R.csrs.plural) {
      const csr = e.object as KubeObject & { status?: { conditions?: Condition[]; certificate?: string } };
      const rec = timeline.csrs.find((c) => c.name === csr.metadata?.name);
      if (!rec) return;
      if (rec.approved === undefined && csr.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True')) rec.approved = now();
      if (rec.issued === undefined && csr.status?.certificate) rec.issued = now();
    } else if (e.resource.plural === R.nodes.plural && timeline.nodeReady === undefined) {
      const ready = (e.object as { status?: { conditions?: Condition[] } }).status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'True' && timeline.kubeletStarted !== undefined) timeline.nodeReady = now();
    }
  });
  return {
    timeline,
    stop() {
      sim.events.off('log', onLog);
      sim.events.off('api', onApi);
      sim.events.off('kubelet', onKubelet);
      sim.events.off('rollout', onRollout);
      sim.events.off('reboot', onReboot);
      unsubscribe();
    },
  };
}

/** One stretch of the run: who held it (the cluster working, or the driver reacting) and how long. */
export interface Segment {
  name: string;
  holder: 'cluster' | 'driver';
  ms: number;
  /** e.g. which rollout finished last. */
  detail?: string;
}

export interface PathAnalysis {
  /** From kubelet start to the driver's end. */
  clusterPhaseMs: number;
  /** What the timeline needs at the least: the cluster's own stretches on the critical path. */
  criticalPathMs: number;
  /** clusterPhaseMs − criticalPathMs: what the driver added by reacting late. */
  addedMs: number;
  segments: Segment[];
  /** Every rollout, from its last start to its done, and their sum (what one-after-another waits would take). */
  rollouts: { operator: string; ms: number }[];
  rolloutSumMs: number;
  /** First rollout start → last rollout done. */
  rolloutSpanMs: number;
}

/**
 * The kubelet's CSRs of one kind: the first it filed (from then on the cluster waits for the driver) and the
 * one whose certificate it used — the last filed that was issued; a request left unsigned for csrRefile is
 * abandoned and filed again, so slow approval shows as driver time, not as cluster time.
 */
function kubeletCsrs(t: Timeline, kind: 'client' | 'serving', before = Infinity): { first: CsrEvents; used: CsrEvents } {
  const filed = t.csrs.filter((x) => x.kind === kind && x.filed < before).sort((a, b) => a.filed - b.filed);
  const used = filed.filter((x) => x.issued !== undefined && x.approved !== undefined).pop();
  if (!filed[0] || !used) throw new Error(`the timeline has no approved and issued ${kind} CSR: ${JSON.stringify(t.csrs)}`);
  return { first: filed[0], used };
}

/**
 * Splits the run into the cluster's stretches and the driver's reactions, along the chain
 *   kubelet start → (API start, kubelet bootstrap) → client CSR filed → [approve] → (signing, registration,
 *   node Ready, serving CSR) → serving CSR filed → [approve] → (signing) → serving issued → [write the
 *   changes] → (the last rollout to finish) → rollouts done → [notice, finish] → end.
 */
export function analyse(t: Timeline, endMs: number): PathAnalysis {
  if (t.kubeletStarted === undefined) throw new Error('the timeline has no kubelet start');
  const serving = kubeletCsrs(t, 'serving');
  const client = kubeletCsrs(t, 'client', serving.first.filed);
  const segments: Segment[] = [
    { name: 'API start + kubelet bootstrap → client CSR filed', holder: 'cluster', ms: client.first.filed - t.kubeletStarted },
    { name: 'client CSR filed → approved', holder: 'driver', ms: client.used.approved! - client.first.filed, ...(client.used !== client.first ? { detail: 'the kubelet filed again' } : {}) },
    { name: 'signing, registration, node Ready → serving CSR filed', holder: 'cluster', ms: serving.first.filed - client.used.approved! },
    { name: 'serving CSR filed → approved', holder: 'driver', ms: serving.used.approved! - serving.first.filed, ...(serving.used !== serving.first ? { detail: 'the kubelet filed again' } : {}) },
    { name: 'serving CSR signed', holder: 'cluster', ms: serving.used.issued! - serving.used.approved! },
  ];
  // Per operator: its last start before its last done (a newer revision supersedes the one in progress).
  const rollouts: { operator: string; start: number; done: number }[] = [];
  for (const op of new Set(t.rollouts.map((r) => r.operator))) {
    const done = t.rollouts.filter((r) => r.operator === op && r.phase === 'done').map((r) => r.at);
    if (done.length === 0) continue;
    const lastDone = Math.max(...done);
    const start = Math.max(...t.rollouts.filter((r) => r.operator === op && r.phase === 'start' && r.at <= lastDone).map((r) => r.at));
    rollouts.push({ operator: op, start, done: lastDone });
  }
  let after = serving.used.issued!;
  if (rollouts.length > 0) {
    const last = rollouts.reduce((a, b) => (b.done > a.done ? b : a));
    segments.push({ name: 'serving issued → the last-finishing rollout started (the writes)', holder: 'driver', ms: last.start - serving.used.issued!, detail: last.operator });
    segments.push({ name: 'the last-finishing rollout', holder: 'cluster', ms: last.done - last.start, detail: last.operator });
    after = last.done;
  }
  segments.push({ name: rollouts.length ? 'rollouts done → end (settle noticed, stability window, finish)' : 'serving issued → end', holder: 'driver', ms: endMs - after });
  const clusterPhaseMs = endMs - t.kubeletStarted;
  const criticalPathMs = segments.filter((s) => s.holder === 'cluster').reduce((a, s) => a + s.ms, 0);
  const perOperator = rollouts.map((r) => ({ operator: r.operator, ms: r.done - r.start }));
  return {
    clusterPhaseMs,
    criticalPathMs,
    addedMs: clusterPhaseMs - criticalPathMs,
    segments,
    rollouts: perOperator,
    rolloutSumMs: perOperator.reduce((a, r) => a + r.ms, 0),
    rolloutSpanMs: rollouts.length ? Math.max(...rollouts.map((r) => r.done)) - Math.min(...rollouts.map((r) => r.start)) : 0,
  };
}
