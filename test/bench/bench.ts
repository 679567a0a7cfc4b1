// `npm run bench` (issue #8): size, startup, idle footprint, agent-added latency against a poll-based
// baseline, concurrent vs sequential rollout waits, API cost. Writes bench-results.json at the project root
// and prints a table with each figure beside its budget or goal. Never part of `npm test`: figures are
// reported, not asserted. Takes about four minutes on two cores.
//   tsx test/bench/bench.ts [--skip-idle] [--skip-real-api-wait] [--site-time-only] [--out FILE]
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBundle, PROJECT_ROOT } from '../support/bundle';
import { IDLE_MS, measureIdle, type IdleResults } from './idle';
import { BIP_POLL, measureLatency, measureSequentialAgent, TIME_SCALE, type LatencyResults } from './latency';
import { measureSize, type SizeResults } from './size';
import { measureStartup, type StartupResults } from './startup';
import { renderReport } from './report';
import { measureSiteTime, renderSiteTime, type SiteTimeResults } from './site-time';

/** Goals (the brief of issue #8) beside the budgets of DESIGN.md. */
export const GOALS = {
  agentAddedLatencyMs: 1000,
  /** "near zero CPU" while idle: under 1 % of one core, agent and children together. */
  idleCpuPercent: 1,
  /** Peak RSS of `run` waiting for media (issue 39): a node can be shipped without media and wait for weeks. */
  idleRssMiB: 48,
} as const;

/** The API start at a realistic length (60 s real, not scaled), to see the API wait's own overhead. */
export const REAL_API_WAIT_MS = 60_000;

export interface BenchResults {
  date: string;
  node: string;
  platform: string;
  cpus: number;
  /** 1-minute load average before and after: figures taken on a busy machine read high (startup above all). */
  loadAverage: { before: number; after: number };
  size: SizeResults;
  startup: StartupResults;
  idle?: IdleResults;
  latency: LatencyResults;
  /** The same timeline, the agent's waits forced one after another (SNO_RECONFIGURE_SEQUENTIAL_WAITS=1). */
  sequentialAgent: LatencyResults['agent'];
  latencyRealApiWait?: LatencyResults;
  /** Power-on to DONE for the minimal and the full site-config (issue 31). */
  siteTime?: SiteTimeResults;
  goals: typeof GOALS;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'skip-idle': { type: 'boolean' }, 'skip-real-api-wait': { type: 'boolean' }, 'site-time-only': { type: 'boolean' }, out: { type: 'string' } } });
  ensureBundle();
  if (values['site-time-only']) {
    process.stdout.write(renderSiteTime(await measureSiteTime()));
    return;
  }
  const out = path.resolve(values.out ?? path.join(PROJECT_ROOT, 'bench-results.json'));
  const log = (s: string) => process.stderr.write(`bench: ${s}\n`);

  const { cpus, loadavg } = await import('node:os');
  const loadBefore = loadavg()[0]!;
  log('size');
  const size = await measureSize();
  log('startup (20 runs each after warm-up)');
  const startup = await measureStartup();
  log(`latency on the scripted timeline (time scale ${TIME_SCALE}), agent, then the baseline`);
  const latency = await measureLatency();
  // Alone: on two cores a parallel run would slow it down and flatter the concurrent figure.
  log('the same timeline, the agent\'s waits forced one after another');
  const sequentialAgent = await measureSequentialAgent();
  // One after the other: the idle agent's rescans (Node stand-ins, ~0.1 s CPU each) on two cores would show
  // up as a few hundred ms in a sub-second latency figure.
  if (!values['skip-real-api-wait']) log(`latency with a ${REAL_API_WAIT_MS / 1000} s API start`);
  const latencyRealApiWait = values['skip-real-api-wait'] ? undefined : await measureLatency({ apiStartup: REAL_API_WAIT_MS / TIME_SCALE });
  if (!values['skip-idle']) log(`idle footprint (${IDLE_MS / 1000} s)`);
  const idle = values['skip-idle'] ? undefined : await measureIdle();
  log('site time: the minimal and the full site-config');
  const siteTime = await measureSiteTime();

  const results: BenchResults = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    loadAverage: { before: Math.round(loadBefore * 100) / 100, after: Math.round(loadavg()[0]! * 100) / 100 },
    size,
    startup,
    ...(idle ? { idle } : {}),
    latency,
    sequentialAgent,
    ...(latencyRealApiWait ? { latencyRealApiWait } : {}),
    siteTime,
    goals: GOALS,
  };
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(renderReport(results, BIP_POLL));
  process.stdout.write(renderSiteTime(siteTime));
  process.stdout.write(`\nresults: ${out}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
