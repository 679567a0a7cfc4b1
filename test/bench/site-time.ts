// Site time (issue 31): power-on to DONE for the minimal and the full site-config (test/support/site-configs.ts)
// at the simulator's default durations, with the node reboots, kube-apiserver revisions and machine-config pool
// rollouts each run cost, and where the minutes go. The simulated clock runs 100 times faster than real time, so
// a relocation costs seconds here. A site clock is composed from the run's stretches (test/bench/timeline.ts
// analyse): the cluster's at their simulated length, the agent's at their real length (its reactions take the
// same real milliseconds on a node), and the settle stability window at the agent's default.
import { DEFAULT_TIMEOUTS } from '../../src/siteconfig/types';
import { DEFAULT_DURATIONS, type SimDurations } from '../sim/cluster/options';
import { startScenario } from '../support/scenario';
import { countRelocation, fullSiteConfigFiles, minimalSiteConfigFiles, type RelocationCounts } from '../support/site-configs';
import { quickDisplayTools } from './latency';
import { analyse, recordTimeline } from './timeline';

/**
 * Real ms per simulated ms: a 20-minute relocation takes 12 real seconds of cluster time. The simulator's own
 * work (CSR keys, TLS) is magnified by 1/scale into the cluster's stretches, so a smaller scale overstates them.
 */
export const SITE_TIME_SCALE = 0.01;

/** The early network phase at boot with the real programs: apply, ping the gateway, commit (early-apply.md timings, rounded up). */
export const EARLY_PHASE_MS = 2_000;

/** Issue 31's goals for the full site-config. */
export const SITE_GOALS = { minutes: 20, stretchMinutes: 15, reboots: 1, poolRollouts: 1, kubeApiserverRevisions: 1 } as const;

/**
 * Where each default duration comes from. "estimate" marks a figure no upstream source pins down: it is the
 * simulator's assumption, to be replaced by a measurement on hardware.
 */
export const DURATION_SOURCES: Record<keyof SimDurations, string> = {
  apiStartup: 'estimate (kubelet → static pods → kube-apiserver /readyz; hardware-dependent)',
  kubeApiserverRollout: 'estimate (a static-pod revision: revision controller, installer pod, pod replaced)',
  kubeApiserverRestartOutage:
    "estimate; SNO components are sized for an API outage of up to 60 s at a kube-apiserver rollout (openshift/sdn PR #328, library-go PR #1104 leader-election defaults, enhancements CONVENTIONS.md)",
  openshiftApiserverRollout: 'estimate (a Deployment rollout of one replica)',
  authenticationRollout: 'estimate (a Deployment rollout of one replica)',
  consoleRollout: 'estimate (a Deployment rollout of one replica)',
  ingressRollout: 'estimate (router-default Deployment rollout)',
  machineConfigRollout: 'estimate (render, MCD apply, drain skipped on SNO, reboot)',
  rebootOutage: 'estimate (RHCOS reboot to kubelet up; hardware-dependent)',
  csrSigning: 'estimate (kube-controller-manager signer: sub-second)',
  csrRefile: 'client-go util/certificate/certificate_manager.go certificateWaitTimeout = 15 min',
  nodeReady: 'estimate (kubelet registration to Ready)',
  nodeStatusReport: 'kubelet nodeStatusReportFrequency default 5 min',
  nodeMonitorGrace: 'kube-controller-manager node-monitor-grace-period default 40 s',
};

/** Costs OpenShift itself imposes on a relocation, and where that is decided. */
const FORCED_BY: Record<string, string> = {
  'kube-apiserver':
    'forced: the new API certificate enters the observed config, which takes a new static-pod revision (cluster-kube-apiserver-operator pkg/operator/configobservation/apiserver/observe_apiserver.go)',
  'machine-config':
    'forced: files in a rendered config (chrony.conf, proxy.env, the site MachineConfig) reboot the node (machine-config-operator pkg/daemon/update.go calculatePostConfigChangeAction); one update for all, as the pool is held',
};

export interface SiteTimeRow {
  what: string;
  holder: 'agent' | 'cluster';
  /** Site-clock ms from the agent's start. */
  startMs: number;
  ms: number;
  note?: string;
}

export interface SiteTimeRun {
  name: 'minimal' | 'full';
  /** Agent start → DONE on the site clock (simulated ms). */
  totalMs: number;
  counts: RelocationCounts;
  rows: SiteTimeRow[];
  /**
   * Media that arrive after boot: the network step reboots the node once so the early network phase applies the
   * site network before configure-ovs (docs/network.md section 4). Site time + one reboot (rebootOutage) + the
   * early phase at that boot (its real-program cost: reference early-apply.md, apply 0.1-0.2 s, commit 0.02 s, a
   * gateway ping; counted as EARLY_PHASE_MS).
   */
  mediaAfterBootMs: number;
  /** Each rollout (last start to its done), simulated ms, and which one the run waited for last. */
  rollouts: { operator: string; ms: number; last: boolean }[];
}

export interface SiteTimeResults {
  timeScale: number;
  durationsSimMs: SimDurations;
  durationSources: typeof DURATION_SOURCES;
  stabilityWindowMs: number;
  runs: SiteTimeRun[];
  goals: typeof SITE_GOALS;
}

async function relocate(name: SiteTimeRun['name']): Promise<SiteTimeRun> {
  const s = await startScenario({ sim: { timeScale: SITE_TIME_SCALE } });
  try {
    quickDisplayTools(s.node.bin);
    // The agent's shortest stability window (1 s, real); the site clock counts the default in its place.
    const stabilityRealMs = 1000;
    const files = name === 'full' ? fullSiteConfigFiles(s.sim, s.node.root, '1s') : minimalSiteConfigFiles(s.sim, '1s');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', files);
    const t0 = Date.now();
    const rec = recordTimeline(s.sim, t0);
    const counter = countRelocation(s.sim);
    const run = await s.run(['--once'], { timeoutMs: 600_000 });
    const endReal = Date.now() - t0;
    rec.stop();
    counter.stop();
    if (run.code !== 0) throw new Error(`the ${name} relocation failed (${run.code})\n${run.stdout.slice(-3000)}`);
    const a = analyse(rec.timeline, endReal);
    const rows: SiteTimeRow[] = [];
    let at = 0;
    const push = (what: string, holder: SiteTimeRow['holder'], ms: number, note?: string) => {
      rows.push({ what, holder, startMs: at, ms, ...(note ? { note } : {}) });
      at += ms;
    };
    push('media found, site-config validated, site network applied, kubelet started', 'agent', rec.timeline.kubeletStarted ?? 0, 'stand-in host tools (nmstatectl, systemctl)');
    // Up to the serving certificate: one chain, each stretch waiting for the one before.
    const chain = a.segments.filter((seg) => !seg.name.startsWith('serving issued') && !seg.name.startsWith('the last-finishing') && !seg.name.startsWith('rollouts done'));
    for (const seg of chain) push(seg.name, seg.holder === 'cluster' ? 'cluster' : 'agent', seg.holder === 'cluster' ? seg.ms / SITE_TIME_SCALE : seg.ms, seg.detail);
    // Then the writes (the agent's real time) start the rollouts, which run at once: each from its start on the
    // site clock for its simulated length; the run waits for the one that ends last.
    const servingIssued = Math.max(...rec.timeline.csrs.filter((c) => c.kind === 'serving' && c.issued !== undefined).map((c) => c.issued!));
    const writesAt = at;
    const spans = a.rollouts.map((r) => {
      const start = rec.timeline.rollouts.filter((e) => e.operator === r.operator && e.phase === 'start').map((e) => e.at).pop() ?? servingIssued;
      const from = writesAt + Math.max(0, start - servingIssued);
      return { operator: r.operator, from, ms: r.ms / SITE_TIME_SCALE };
    });
    const lastWrite = Math.max(writesAt, ...spans.map((x) => x.from));
    const end = Math.max(lastWrite, ...spans.map((x) => x.from + x.ms));
    const last = spans.find((x) => x.from + x.ms === end)?.operator;
    rows.push({ what: 'the writes: domain, pull secret, mirrors, trust, proxy, SSH, NTP, labels, kubeadmin, manifests; pool released', holder: 'agent', startMs: writesAt, ms: lastWrite - writesAt });
    for (const x of spans) {
      const why = FORCED_BY[x.operator];
      const note = [x.operator === last ? 'ends last: the run waits for it' : '', why ?? ''].filter(Boolean).join('; ');
      rows.push({ what: `rollout: ${x.operator}`, holder: 'cluster', startMs: x.from, ms: x.ms, ...(note ? { note } : {}) });
    }
    at = end;
    const tail = a.segments[a.segments.length - 1]!;
    push('rollouts done → settle noticed, finish', 'agent', Math.max(0, tail.ms - stabilityRealMs));
    push('settle stability window (timeouts.settleStability default)', 'agent', DEFAULT_TIMEOUTS.settleStability, 'src/siteconfig/types.ts DEFAULT_TIMEOUTS');
    return {
      name,
      totalMs: at,
      mediaAfterBootMs: at + DEFAULT_DURATIONS.rebootOutage + EARLY_PHASE_MS,
      counts: { ...counter.counts },
      rows,
      rollouts: spans.map((x) => ({ operator: x.operator, ms: x.ms, last: x.operator === last })),
    };
  } finally {
    await s.cleanup();
  }
}

/** The minimal, then the full relocation, one after the other (a second simulator on the same loop adds noise). */
export async function measureSiteTime(): Promise<SiteTimeResults> {
  const runs = [await relocate('minimal'), await relocate('full')];
  return { timeScale: SITE_TIME_SCALE, durationsSimMs: DEFAULT_DURATIONS, durationSources: DURATION_SOURCES, stabilityWindowMs: DEFAULT_TIMEOUTS.settleStability, runs, goals: SITE_GOALS };
}

const min = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;
const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

function table(title: string, header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  return [`\n${title}`, line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

export function renderSiteTime(r: SiteTimeResults): string {
  const g = r.goals;
  const ok = (v: number, limit: number) => (v <= limit ? 'ok' : 'OVER');
  let out = table(
    `Site time — agent start to DONE at the simulator's default durations (time scale ${r.timeScale}); the server's firmware and RHCOS boot before the agent starts are not included`,
    ['site-config', 'site time', 'media after boot', 'reboots', 'pool rollouts', 'kube-apiserver revisions', 'goal'],
    r.runs.map((x) => [
      x.name,
      min(x.totalMs),
      `${min(x.mediaAfterBootMs)} (+1 reboot for the early network phase)`,
      `${x.counts.reboots} (${ok(x.counts.reboots, g.reboots)})`,
      `${x.counts.poolRollouts} (${ok(x.counts.poolRollouts, g.poolRollouts)})`,
      `${x.counts.kubeApiserverRevisions} (${ok(x.counts.kubeApiserverRevisions, g.kubeApiserverRevisions)})`,
      `≤ ${g.minutes} min (stretch ${g.stretchMinutes}): ${x.totalMs <= g.stretchMinutes * 60_000 ? 'ok, stretch met' : ok(x.totalMs, g.minutes * 60_000)}`,
    ]),
  );
  for (const x of r.runs) {
    out += table(
      `Where the minutes go — ${x.name} site-config (each stretch waits for the one before; the rollouts run at once, the run waits for the last)`,
      ['from', 'lasts', 'held by', 'stretch', 'note'],
      x.rows.map((row) => [clock(row.startMs), clock(row.ms), row.holder, row.what, row.note ?? '']),
    );
    out += table(`Rollouts of the ${x.name} site-config, concurrent (simulated)`, ['rollout', 'lasts', ''], x.rollouts.map((o) => [o.operator, min(o.ms), o.last ? 'finished last: the run waited for it' : '']));
  }
  out += table(
    'The simulator\'s default durations and where each figure comes from',
    ['duration', 'default', 'source'],
    (Object.keys(r.durationsSimMs) as (keyof SimDurations)[]).map((k) => [k, min(r.durationsSimMs[k]), r.durationSources[k]]),
  );
  return out;
}
