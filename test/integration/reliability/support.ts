// What the scenario-based reliability tests share: the time scale they run at, running the agent until it
// completes (the way systemd's Restart=on-failure would), and the end-state checks — converged, nothing
// duplicated in the cluster, the network committed exactly once.
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { R } from '../../../src/cluster/resources';
import type { KubeObject, ResourceType } from '../../../src/cluster/types';
import type { StepName } from '../../../src/engine/step';
import { DEFAULT_STATE_DIR, DONE_MARKER, STATE_FILES } from '../../../src/paths';
import { STEPS } from '../../../src/steps/index';
import { HELD_BY } from '../../../src/steps/pool-hold';
import type { Simulator } from '../../sim/index';
import { signedSiteConfigFiles, siteConfigFor, startScenario, type AgentRun, type Scenario } from '../../support/scenario';

/**
 * Simulated ms per real ms of the reliability scenarios: a 2-minute API start takes 240 ms, a 6-minute
 * kube-apiserver rollout 720 ms, so a full run stays within seconds. Faults are given in real time and
 * converted with it.
 */
export const TIME_SCALE = 0.002;
export const simMs = (realMs: number): number => Math.round(realMs / TIME_SCALE);

/** The steps the agent runs today, in order (whatever src/steps/index.ts wires). */
export function agentSteps(): StepName[] {
  return STEPS.map((s) => s.name);
}

/** Steps that talk to the cluster (and so can meet API faults). */
export const CLUSTER_STEPS: readonly StepName[] = ['api', 'csr', 'domain', 'pull-secret', 'mirrors', 'trust', 'settle'];

/** The log line the runner writes when a step starts (ProgressReporter.phase: `"msg":"<title>"`). */
export const stepStartLine = (step: StepName): string => `"msg":${JSON.stringify(titleOf(step))}`;

/** A step's title as the agent logs it. */
export function titleOf(step: StepName): string {
  const found = STEPS.find((s) => s.name === step);
  if (!found) throw new Error(`no step ${step}`);
  return found.title;
}

/**
 * `poweredOn`: the node then boots with the stick in, so its early network phase commits the site network before the
 * agent starts and one start of the agent runs every step; otherwise the stick is there for the agent's first start,
 * which asks for the reboot that applies the network (the scenario plays it).
 */
export async function newScenario(opts: { timeScale?: number; poweredOn?: boolean } = {}): Promise<Scenario> {
  const s = await startScenario({ sim: { timeScale: opts.timeScale ?? TIME_SCALE } });
  // Signed: a registry CA needs signed media (src/siteconfig/trust.ts).
  s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: siteExtras(s.sim) }) }));
  if (opts.poweredOn) s.node.powerCycle();
  return s;
}

/**
 * Everything the agent changes in the cluster, so that every step has something to do: a pull secret to
 * merge, image mirrors and a registry CA (the domain change is always there). The stability window is the
 * shortest the schema accepts, to keep runs short.
 */
export function siteExtras(sim: Simulator): Record<string, unknown> {
  return {
    pullSecret: { auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('store42:not-a-real-password').toString('base64'), email: 'ops@store42.example.com' } } },
    imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }],
    additionalTrustBundle: sim.signers.lbSigner.certPem,
    timeouts: { settleStability: '1s' },
  };
}

/** Runs the agent until it exits 0, restarting it after a failure as systemd would; at most `maxStarts`. */
export async function runUntilDone(s: Scenario, maxStarts = 4, env: NodeJS.ProcessEnv = {}): Promise<{ runs: AgentRun[]; last: AgentRun }> {
  const runs: AgentRun[] = [];
  for (let i = 0; i < maxStarts; i++) {
    const run = await s.run([], { timeoutMs: 600_000, env });
    runs.push(run);
    if (run.code === 0) return { runs, last: run };
  }
  const last = runs[runs.length - 1]!;
  throw new Error(`the agent did not complete in ${maxStarts} starts (last exit ${last.code} ${last.signal ?? ''})\n${last.stdout.slice(-3000)}\n${last.stderr.slice(-1500)}`);
}

interface Condition {
  type: string;
  status: string;
}

/** The end state of a successful run: report succeeded, node Ready, kubelet active, done marker. Returns what is missing. */
export function convergenceProblems(s: Scenario): string[] {
  const problems: string[] = [];
  const reportFile = path.join(s.node.root, DEFAULT_STATE_DIR, STATE_FILES.report);
  if (!existsSync(reportFile)) problems.push('no report');
  else if ((JSON.parse(readFileSync(reportFile, 'utf8')) as { result?: string }).result !== 'succeeded') problems.push('the report does not say succeeded');
  const node = s.sim.store.get(R.nodes, s.sim.options.nodeName) as { status?: { conditions?: Condition[] } } | undefined;
  if (node?.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') problems.push('the node is not Ready');
  if (s.node.units()['kubelet.service']?.active !== 'active') problems.push(`kubelet is ${s.node.units()['kubelet.service']?.active ?? 'unknown'}`);
  if (!existsSync(path.join(s.node.root, DONE_MARKER))) problems.push('no done marker');
  // A paused master pool holds back every node update and the kubelet CA rotation for good (src/steps/pool-hold.ts).
  const pool = s.sim.store.get(R.machineConfigPools, 'master') as { spec?: { paused?: boolean }; metadata?: { annotations?: Record<string, string> } } | undefined;
  if (pool?.spec?.paused === true) problems.push('the machine-config pool master is left paused');
  if (pool?.metadata?.annotations?.[HELD_BY] !== undefined) problems.push(`the machine-config pool master still carries ${HELD_BY}`);
  return problems;
}

/** Objects the agent writes, by kind and namespace: a resumed run must leave exactly as many as an uninterrupted one. */
const INVENTORIED: { name: string; type: ResourceType }[] = [
  { name: 'Secret', type: R.secrets },
  { name: 'ConfigMap', type: R.configMaps },
  { name: 'Route', type: R.routes },
  { name: 'ImageDigestMirrorSet', type: R.imageDigestMirrorSets },
  { name: 'ImageTagMirrorSet', type: R.imageTagMirrorSets },
  { name: 'ImageContentSourcePolicy', type: R.imageContentSourcePolicies },
  { name: 'MachineConfig', type: R.machineConfigs },
];

export type Inventory = Record<string, number>;

export function inventory(sim: Simulator): Inventory {
  const counts: Inventory = {};
  for (const { name, type } of INVENTORIED) {
    for (const o of sim.store.list(type)) {
      // Rendered MachineConfigs belong to the MCO (one per pool update), not to the agent.
      if (type === R.machineConfigs && o.metadata?.name?.startsWith('rendered-')) continue;
      const key = `${name} ${o.metadata?.namespace ?? '(cluster)'}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }
  return counts;
}

const stable = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : x));

/** Duplicates in the cluster: secrets with the same content in a namespace, routes with the same host, mirror objects with the same spec or source. */
export function duplicateProblems(sim: Simulator): string[] {
  const problems: string[] = [];
  const groups = (objs: KubeObject[], key: (o: KubeObject) => string | undefined) => {
    const m = new Map<string, string[]>();
    for (const o of objs) {
      const k = key(o);
      if (k !== undefined) m.set(k, [...(m.get(k) ?? []), `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`]);
    }
    return [...m.values()].filter((names) => names.length > 1);
  };
  for (const names of groups(sim.store.list(R.secrets), (o) => (o.type === 'kubernetes.io/service-account-token' ? undefined : `${o.metadata?.namespace} ${o.type} ${stable(o.data ?? {})}`))) {
    problems.push(`secrets with the same content: ${names.join(', ')}`);
  }
  for (const names of groups(sim.store.list(R.routes), (o) => (o.spec as { host?: string } | undefined)?.host)) problems.push(`routes with the same host: ${names.join(', ')}`);
  const mirrorObjects = [...sim.store.list(R.imageDigestMirrorSets), ...sim.store.list(R.imageTagMirrorSets), ...sim.store.list(R.imageContentSourcePolicies)];
  for (const names of groups(mirrorObjects, (o) => `${o.kind} ${stable(o.spec ?? {})}`)) problems.push(`mirror objects with the same spec: ${names.join(', ')}`);
  const sources = new Map<string, string[]>();
  for (const o of mirrorObjects) {
    const spec = (o.spec ?? {}) as Record<string, { source?: string }[] | undefined>;
    for (const entry of [...(spec.imageDigestMirrors ?? []), ...(spec.imageTagMirrors ?? []), ...(spec.repositoryDigestMirrors ?? [])]) {
      if (entry.source) sources.set(`${o.kind} ${entry.source}`, [...(sources.get(`${o.kind} ${entry.source}`) ?? []), o.metadata?.name ?? '?']);
    }
  }
  for (const [source, names] of sources) if (names.length > 1) problems.push(`mirror source ${source} configured ${names.length} times (${names.join(', ')})`);
  return problems;
}

/**
 * The network change committed exactly once, and every `apply --no-commit` before the commit undone
 * (rolled back, or the saved state re-applied) before the next attempt.
 */
export function networkProblems(history: string[]): string[] {
  const commits = history.filter((h) => h === 'commit').length;
  if (commits !== 1) return [`${commits} nmstate commits (expected exactly 1): ${history.join(', ')}`];
  const problems: string[] = [];
  const commitAt = history.indexOf('commit');
  history.forEach((h, i) => {
    if (h !== 'apply --no-commit') return;
    const next = history.slice(i + 1).find((x) => ['apply --no-commit', 'commit', 'rollback', 'apply'].includes(x));
    const lastBeforeCommit = !history.slice(i + 1, commitAt).includes('apply --no-commit') && i < commitAt;
    if (lastBeforeCommit ? next !== 'commit' : next !== 'rollback' && next !== 'apply') {
      problems.push(`apply --no-commit #${i} is followed by ${next ?? 'nothing'}: ${history.join(', ')}`);
    }
  });
  return problems;
}

/** Differences between two inventories ("Route openshift-console: 3 vs 2"). */
export function inventoryDiff(got: Inventory, want: Inventory): string[] {
  const keys = new Set([...Object.keys(got), ...Object.keys(want)]);
  return [...keys].filter((k) => got[k] !== want[k]).map((k) => `${k}: ${got[k] ?? 0} (uninterrupted run: ${want[k] ?? 0})`);
}

/** Preload that counts an agent process's journal saves (count-journal-saves.cjs). */
export const COUNT_SAVES_PRELOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'count-journal-saves.cjs');
