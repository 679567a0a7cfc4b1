// Agent-added latency, concurrency of the waits and API cost, on a scripted simulator timeline: the bundled
// agent's full `run` on one simulated cluster and the BIP-style poller (baseline.ts) on another with the same
// durations, one after the other. Both start kubelet; from there the timeline is the cluster's (API up after
// apiStartup, CSRs as the kubelet files them, rollouts of the given lengths) and whatever else elapses is
// what the driver added by noticing late. All figures are real milliseconds; the simulated equivalents are
// the real ones divided by the time scale.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../src/host/host';
import { DEFAULT_STATE_DIR, STATE_FILES } from '../../src/paths';
import { loadSiteConfig } from '../../src/siteconfig/load';
import type { ResolvedSiteConfig } from '../../src/siteconfig/types';
import { blockerName } from '../../src/steps/settle';
import { startSimulator, type SimDurations, type Simulator } from '../sim/index';
import { DEFAULT_DURATIONS } from '../sim/cluster/options';
import { signedSiteConfigFiles, siteConfigFor, startScenario } from '../support/scenario';
import { siteExtras } from '../integration/reliability/support';
import { runBaseline, BIP_POLL } from './baseline';
import { analyse, recordTimeline, type PathAnalysis, type Timeline } from './timeline';

/** The scripted timeline, in simulated ms: the simulator's own defaults, listed in the report. */
export const TIMELINE: Partial<SimDurations> = Object.fromEntries(
  (['apiStartup', 'csrSigning', 'nodeReady', 'kubeApiserverRollout', 'kubeApiserverRestartOutage', 'openshiftApiserverRollout', 'authenticationRollout', 'consoleRollout', 'ingressRollout', 'machineConfigRollout', 'rebootOutage'] as const).map((k) => [k, DEFAULT_DURATIONS[k]]),
);

/**
 * The kubelet abandons an unsigned CSR after 15 minutes (client-go certificate manager). Scaled, that would be
 * 9 real seconds — shorter than the baseline's 10-second CSR poll — so it is kept at 15 REAL minutes: the
 * drivers poll in real time, and the refiling must not punish them for it.
 */
const CSR_REFILE_REAL_MS = 15 * 60_000;

/** Real ms per simulated ms: the 6-minute kube-apiserver rollout takes 3.6 s, the whole timeline about 6 s. */
export const TIME_SCALE = 0.01;

export interface DriverRun {
  totalMs: number;
  analysis: PathAnalysis;
  timeline: Timeline;
}

export interface LatencyResults {
  timeScale: number;
  timelineSimMs: Partial<SimDurations>;
  /** How long the API start lasted in real ms (apiStartup × scale, unless overridden). */
  apiStartupRealMs: number;
  agent: DriverRun & {
    /** Agent process start → kubelet started (finding the media, validating, the site network). */
    nodeSideMs: number;
    settleStepMs?: number;
    stabilityWindowMs: number;
    steps: Record<string, number | undefined>;
    /** What settle reported waiting for, and when (ms since the run's start; the last entry is "settled"). */
    settleLog: { atMs: number; blocking: string[] }[];
    apiRequests: { total: number; byVerbResource: Record<string, number> };
  };
  baseline: DriverRun & { polls: { api: number; csr: number; clusterVersion: number } };
}

function verbOf(method: string, query: string, hasName: boolean): string {
  if (method === 'GET') return /(^|&)watch=(true|1)/.test(query) ? 'watch' : hasName ? 'get' : 'list';
  return { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[method] ?? method.toLowerCase();
}

/** "list secrets", "update certificatesigningrequests/approval", "get /readyz". */
export function requestKey(r: { method: string; path: string; query: string }): string {
  const parts = r.path.split('/').filter(Boolean);
  if (parts[0] !== 'api' && parts[0] !== 'apis') return `${r.method.toLowerCase()} ${r.path}`;
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, sub] = rest;
  return `${verbOf(r.method, r.query, name !== undefined)} ${resource}${sub ? `/${sub}` : ''}`;
}

function siteYaml(sim: Simulator): string {
  return siteConfigFor(sim, { extraSpec: siteExtras(sim) });
}

async function resolvedSite(yaml: string): Promise<ResolvedSiteConfig> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-bench-site-'));
  try {
    // Signed for a node whose root is the folder itself (its trusted key written there), as the run's media are.
    for (const [name, text] of Object.entries(signedSiteConfigFiles(dir, { 'site-config.yaml': yaml }))) writeFileSync(path.join(dir, name), text);
    const res = await loadSiteConfig(dir, { host: new LocalHost({ root: dir }) });
    if (res.status !== 'valid') throw new Error(`the bench's site-config is not valid: ${JSON.stringify(res)}`);
    return res.site.resolved;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `systemd-notify` and `agetty --reload` as the real tools behave for timing (a few ms, measured 7 ms here):
 * the Node stand-ins take ~150 ms to start, which the run would otherwise count as the agent's. Nothing in
 * the bench reads their calls. systemctl stays the stand-in (it starts the simulated kubelet), so the finish
 * step's `systemctl disable` still costs a Node start — about what a real one with its daemon-reload takes.
 */
export const QUICK_DISPLAY_TOOLS = ['systemd-notify', 'agetty'] as const;

export function quickDisplayTools(binDir: string): void {
  for (const tool of QUICK_DISPLAY_TOOLS) {
    const file = path.join(binDir, tool);
    rmSync(file, { force: true });
    writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  }
}

async function agentRun(durations: Partial<SimDurations>, opts: { sequentialWaits?: boolean } = {}): Promise<LatencyResults['agent']> {
  const s = await startScenario({ sim: { timeScale: TIME_SCALE, durations } });
  try {
    quickDisplayTools(s.node.bin);
    // The registry CA and the tag mirrors of siteExtras need signed media (src/siteconfig/trust.ts).
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteYaml(s.sim) }));
    s.sim.api.clearRequests();
    const t0 = Date.now();
    const rec = recordTimeline(s.sim, t0);
    // src/engine/runner.ts: settle after each writing step, one change at a time.
    const run = await s.run([], { timeoutMs: 600_000, ...(opts.sequentialWaits ? { env: { SNO_RECONFIGURE_SEQUENTIAL_WAITS: '1' } } : {}) });
    const totalMs = Date.now() - t0;
    rec.stop();
    if (run.code !== 0) throw new Error(`the agent's run failed (${run.code})\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-1000)}`);
    const journal = JSON.parse(readFileSync(path.join(s.node.root, DEFAULT_STATE_DIR, STATE_FILES.journal), 'utf8')) as { steps: Record<string, { durationMs?: number }> };
    const byVerbResource: Record<string, number> = {};
    const mine = s.sim.api.requests.filter((r) => r.user === 'system:admin');
    for (const r of mine) byVerbResource[requestKey(r)] = (byVerbResource[requestKey(r)] ?? 0) + 1;
    const site = await resolvedSite(siteYaml(s.sim));
    // settle logs each thing it starts and stops waiting for (src/steps/settle.ts BlockerLog): replay them.
    const settleLog: { atMs: number; blocking: string[] }[] = [];
    const waitingFor = new Set<string>();
    for (const l of run.logs.filter((x) => x.step === 'settle')) {
      const atMs = Date.parse(String(l.time)) - t0;
      if (l.msg.startsWith('waiting for ')) waitingFor.add(l.msg.slice('waiting for '.length));
      else if (l.msg.startsWith('no longer waiting for ')) waitingFor.delete([...waitingFor].find((w) => blockerName(w) === l.msg.slice('no longer waiting for '.length)) ?? '');
      else if (!l.msg.startsWith('cluster settled')) continue;
      settleLog.push({ atMs, blocking: l.msg.startsWith('cluster settled') ? [] : [...waitingFor] });
    }
    return {
      totalMs,
      analysis: analyse(rec.timeline, totalMs),
      timeline: rec.timeline,
      nodeSideMs: rec.timeline.kubeletStarted ?? 0,
      settleStepMs: journal.steps.settle?.durationMs,
      stabilityWindowMs: site.timeouts.settleStability,
      steps: Object.fromEntries(Object.entries(journal.steps).map(([k, v]) => [k, v.durationMs])),
      settleLog,
      apiRequests: { total: mine.length, byVerbResource: Object.fromEntries(Object.entries(byVerbResource).sort((a, b) => b[1] - a[1])) },
    };
  } finally {
    await s.cleanup();
  }
}

async function baselineRun(durations: Partial<SimDurations>): Promise<LatencyResults['baseline']> {
  const sim = await startSimulator({ timeScale: TIME_SCALE, durations });
  try {
    const site = await resolvedSite(siteYaml(sim));
    const t0 = Date.now();
    const rec = recordTimeline(sim, t0);
    const res = await runBaseline(sim, site);
    rec.stop();
    return { totalMs: res.endMs, analysis: analyse(rec.timeline, res.endMs), timeline: rec.timeline, polls: res.polls };
  } finally {
    await sim.stop();
  }
}

/** The agent on the bench's timeline with its waits forced one after another (the concurrency comparison). */
export async function measureSequentialAgent(): Promise<LatencyResults['agent']> {
  return agentRun({ ...TIMELINE, csrRefile: CSR_REFILE_REAL_MS / TIME_SCALE }, { sequentialWaits: true });
}

/**
 * The agent and the baseline on the same timeline, one after the other: each simulator runs in this process,
 * and a second one on the same event loop (CSR keys, TLS handshakes) showed up as tenths of a second of noise
 * in the agent's sub-second figure.
 */
export async function measureLatency(overrides: Partial<SimDurations> = {}): Promise<LatencyResults> {
  const durations = { ...TIMELINE, csrRefile: CSR_REFILE_REAL_MS / TIME_SCALE, ...overrides };
  const agent = await agentRun(durations);
  const baseline = await baselineRun(durations);
  return { timeScale: TIME_SCALE, timelineSimMs: durations, apiStartupRealMs: (durations.apiStartup ?? 0) * TIME_SCALE, agent, baseline };
}

export { BIP_POLL };
