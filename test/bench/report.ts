// The readable side of `npm run bench`: one table per measurement, each figure beside its budget or goal.
import type { BenchResults } from './bench';
import { QUICK_DISPLAY_TOOLS, type LatencyResults } from './latency';
import type { SizeResults } from './size';
import { CACHED_STARTUP_RATIO_BUDGET, STARTUP_RATIO_BUDGET, type StartupResults } from './startup';

const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function table(title: string, header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
  return [`\n${title}`, line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

const signedMs = (ms: number) => `${ms < 0 ? '−' : '+'}${Math.abs(ms).toFixed(1)} ms`;
const verdict = (value: number, limit: number) => (value <= limit ? 'ok' : 'OVER');

function latencyTable(title: string, l: LatencyResults, goalMs: number, poll: { apiMs: number; csrMs: number; clusterVersionMs: number }): string {
  const a = l.agent.analysis;
  const b = l.baseline.analysis;
  const simS = (ms: number) => `${((ms / l.timeScale) / 1000 / 60).toFixed(1)} min sim`;
  const reacting = a.addedMs - l.agent.stabilityWindowMs;
  const rows: string[][] = [
    ['kubelet start → done (the cluster phase)', sec(a.clusterPhaseMs), sec(b.clusterPhaseMs), ''],
    ['critical path of the timeline', sec(a.criticalPathMs), sec(b.criticalPathMs), `${simS(a.criticalPathMs)} (agent's run)`],
    ['ADDED by the driver (cluster phase − critical path)', sec(a.addedMs), sec(b.addedMs), ''],
    ['  agent: of which the settle stability window', sec(l.agent.stabilityWindowMs), '–', 'timeouts.settleStability: a wait the site-config asks for (1 s minimum), not a reaction'],
    ['  agent: ADDED BY REACTING (the rest)', sec(reacting), '', `goal < ${sec(goalMs)}: ${verdict(reacting, goalMs)}`],
  ];
  const names = [...new Set([...a.segments, ...b.segments].map((s) => s.name))];
  for (const n of names) {
    const sa = a.segments.find((s) => s.name === n);
    const sb = b.segments.find((s) => s.name === n);
    const holder = (sa ?? sb)!.holder;
    const detail = (x: typeof sa) => (x ? `${sec(x.ms)}${x.detail ? ` (${x.detail})` : ''}` : '–');
    rows.push([`  ${holder === 'driver' ? 'driver ' : 'cluster'} | ${n}`, detail(sa), detail(sb), '']);
  }
  rows.push(['agent: process start → kubelet started (media, validation, site network)', sec(l.agent.nodeSideMs), '–', 'not in the comparison']);
  rows.push(['agent: host tools', 'stand-ins', '–', `${QUICK_DISPLAY_TOOLS.join(' and ')} exit at once like the real ones (~7 ms); systemctl is the Node stand-in (~150 ms a call)`]);
  const lastDone = Math.max(0, ...l.agent.timeline.rollouts.filter((x) => x.phase === 'done').map((x) => x.at));
  const blockers = l.agent.settleLog.filter((e) => e.blocking.length > 0);
  const lastBlocked = blockers[blockers.length - 1];
  const settled = l.agent.settleLog.find((e) => e.blocking.length === 0);
  if (lastBlocked && settled && lastDone) {
    rows.push(['agent: last thing settle waited for', `${sec(lastBlocked.atMs - lastDone)} after the last rollout`, '', lastBlocked.blocking.join('; ').slice(0, 160)]);
    rows.push(['agent: settle said "settled"', `${sec(settled.atMs - lastDone)} after the last rollout`, '', '']);
  }
  rows.push(['ratio agent / baseline (added)', `${(a.addedMs / Math.max(1, b.addedMs)).toFixed(2)}×`, '', '']);
  rows.push(['baseline polls (api / csr / cluster version)', '', `${l.baseline.polls.api} / ${l.baseline.polls.csr} / ${l.baseline.polls.clusterVersion}`, `every ${poll.apiMs / 1000} / ${poll.csrMs / 1000} / ${poll.clusterVersionMs / 1000} s`]);
  return table(`${title} — time scale ${l.timeScale} (1 real s = ${(1 / l.timeScale / 60).toFixed(2)} simulated min); API start ${sec(l.apiStartupRealMs)} real`, ['', 'agent', 'baseline (BIP polls)', 'note'], rows);
}

/** The Size, Bundle by part and Startup tables (also alone: `npm run bench:bundle`). */
export function bundleReport(s: SizeResults, st?: StartupResults): string {
  const a = s.agentInMachineConfig;
  const budget = s.budgets.agentInMachineConfigBytes;
  let out = table('Size', ['figure', 'measured', 'budget', ''], [
    ['bundle (dist/sno-reconfigure.cjs)', kib(s.bundleRawBytes), '', ''],
    ['gzip -9 of the bundle', kib(s.bundleGzipBytes), '', ''],
    ['base64(gzip(bundle)): what the MachineConfig carried until 2026-11-26', kib(s.bundleBase64GzipBytes), '', 'for comparison'],
    ['brotli -11 of the bundle', kib(s.bundleBrotliBytes), '', ''],
    ['base64(brotli(bundle))', kib(s.bundleBase64BrotliBytes), '', ''],
    ['the MachineConfig carries: base64 of the brotli payload + loader', `${kib(a.totalBytes)} (${kib(a.payloadBytes)} + ${kib(a.loaderBytes)})`, kib(budget), verdict(a.totalBytes, budget)],
    ['MachineConfig, runtime host', kib(s.machineConfigHostBytes), kib(s.budgets.machineConfigBytes), verdict(s.machineConfigHostBytes, s.budgets.machineConfigBytes)],
    ['MachineConfig, runtime podman', kib(s.machineConfigPodmanBytes), kib(s.budgets.machineConfigBytes), verdict(s.machineConfigPodmanBytes, s.budgets.machineConfigBytes)],
  ]);
  const rawTotal = s.bundleParts.reduce((sum, p) => sum + p.bytes, 0);
  const shown = s.bundleParts.filter((p) => p.bytes >= 1024);
  const rest = s.bundleParts.filter((p) => p.bytes < 1024);
  const share = (bytes: number, of: number) => kib((bytes / rawTotal) * of);
  out += table(
    'Bundle by part — minified bytes each npm package or src/ folder adds (esbuild metafile); the last two columns share the\n  compressed total in proportion, an estimate',
    ['part', 'raw', 'share', '≈ base64(brotli)', '≈ base64(gzip)'],
    [
      ...shown.map((p) => [p.part, kib(p.bytes), `${((p.bytes / rawTotal) * 100).toFixed(1)} %`, share(p.bytes, s.bundleBase64BrotliBytes), share(p.bytes, s.bundleBase64GzipBytes)]),
      [`${rest.length} parts under 1 KiB`, kib(rest.reduce((sum, p) => sum + p.bytes, 0)), '', '', ''],
    ],
  );
  if (!st) return out;
  out += table(`Startup — median of ${st.runs} after warm-up, the four alternating`, ['figure', 'measured', 'budget', ''], [
    ['node empty.js', `${st.emptyNodeMedianMs.toFixed(1)} ms`, '', ''],
    ['node dist/sno-reconfigure.cjs --version (RPM, workstation)', `${st.bundleVersionMedianMs.toFixed(1)} ms, ${st.ratio.toFixed(2)}×`, `${STARTUP_RATIO_BUDGET}×`, `${verdict(st.ratio, STARTUP_RATIO_BUDGET)}: ${signedMs(st.bundleVersionMedianMs - st.emptyNodeMedianMs)} to load the bundle`],
    ['the MachineConfig\'s loader + brotli payload, --version, first start (no code cache)', `${st.loaderVersionMedianMs.toFixed(1)} ms, ${st.loaderRatio.toFixed(2)}×`, `${STARTUP_RATIO_BUDGET}×`, `${verdict(st.loaderRatio, STARTUP_RATIO_BUDGET)}: ${signedMs(st.loaderVersionMedianMs - st.bundleVersionMedianMs)} for the loader and writing the cache`],
    ['the same, every later start (V8 code cache beside it)', `${st.cachedLoaderVersionMedianMs.toFixed(1)} ms, ${st.cachedLoaderRatio.toFixed(2)}×`, `${CACHED_STARTUP_RATIO_BUDGET}×`, `${verdict(st.cachedLoaderRatio, CACHED_STARTUP_RATIO_BUDGET)}: ${signedMs(st.cachedLoaderVersionMedianMs - st.loaderVersionMedianMs)} against the first start`],
  ]);
  return out;
}

export function renderReport(r: BenchResults, poll: { apiMs: number; csrMs: number; clusterVersionMs: number }): string {
  let out = `sno-reconfigure bench — ${r.date}, Node ${r.node}, ${r.platform}, ${r.cpus} CPUs, load average ${r.loadAverage.before} before / ${r.loadAverage.after} after\n`;
  out += bundleReport(r.size, r.startup);
  if (r.idle) {
    const i = r.idle;
    out += table(`Idle footprint — run waiting ${sec(i.waitedMs)} for media (stand-in node, no media)`, ['figure', 'measured', 'goal', ''], [
      ['peak RSS of the agent (VmHWM)', `${(i.peakRssKiB / 1024).toFixed(1)} MiB`, `≤ ${r.goals.idleRssMiB} MiB`, verdict(i.peakRssKiB / 1024, r.goals.idleRssMiB)],
      ['CPU, the agent itself (whole wait, start included)', `${i.agentCpuSeconds.toFixed(2)} s (${i.agentCpuPercent.toFixed(2)} %)`, '', ''],
      [`CPU, the agent itself, steady state (last ${sec(i.steadyWindowMs)})`, `${i.agentSteadyCpuPercent.toFixed(2)} %`, `< ${r.goals.idleCpuPercent} %`, verdict(i.agentSteadyCpuPercent, r.goals.idleCpuPercent)],
      ['CPU, children (rescans)', `${i.childrenCpuSeconds.toFixed(2)} s`, '', `${i.toolCalls} tool runs: ${Object.entries(i.toolCallsByTool).map(([k, v]) => `${k}×${v}`).join(', ')}`],
      ['CPU, agent + children', `${i.totalCpuSeconds.toFixed(2)} s (${i.totalCpuPercent.toFixed(2)} %)`, '', i.toolCalls ? `${((i.childrenCpuSeconds / i.toolCalls) * 1000).toFixed(0)} ms CPU per tool run: the stand-ins are Node scripts (real lsblk/blkid take a few ms)` : ''],
    ]);
  }
  out += latencyTable('Agent-added latency, full flow', r.latency, r.goals.agentAddedLatencyMs, poll);
  if (r.latencyRealApiWait) out += latencyTable('Agent-added latency with a real-length API start', r.latencyRealApiWait, r.goals.agentAddedLatencyMs, poll);
  const a = r.latency.agent;
  const seq = r.sequentialAgent;
  const simMin = (ms: number) => `${((ms / r.latency.timeScale) / 60_000).toFixed(1)} min`;
  // From the serving certificate (the cluster steps begin) to the agent's end: the writes and the waits.
  const changesPhase = (x: LatencyResults['agent']) => x.totalMs - Math.max(...x.timeline.csrs.filter((c) => c.kind === 'serving' && c.issued !== undefined).map((c) => c.issued!));
  out += table(
    'Concurrency — the same timeline, the agent as it is (all writes, then one wait for every rollout) and with its waits\n  forced one after another (SNO_RECONFIGURE_SEQUENTIAL_WAITS=1: settle after each writing step)',
    ['figure', 'concurrent', 'sequential', 'simulated (concurrent / sequential)'],
    [
      ...a.analysis.rollouts.map((x) => [`  rollout ${x.operator}`, sec(x.ms), '', simMin(x.ms)]),
      ['sum of the rollouts', sec(a.analysis.rolloutSumMs), sec(seq.analysis.rolloutSumMs), `${simMin(a.analysis.rolloutSumMs)} / ${simMin(seq.analysis.rolloutSumMs)}`],
      ['first rollout start → last done', sec(a.analysis.rolloutSpanMs), sec(seq.analysis.rolloutSpanMs), `${simMin(a.analysis.rolloutSpanMs)} / ${simMin(seq.analysis.rolloutSpanMs)}`],
      ['serving certificate issued → the agent done (writes + waits)', sec(changesPhase(a)), sec(changesPhase(seq)), `${simMin(changesPhase(a))} / ${simMin(changesPhase(seq))}`],
      ['the whole run (agent process start → end)', sec(a.totalMs), sec(seq.totalMs), ''],
      ['saved by waiting concurrently', sec(seq.totalMs - a.totalMs), '', simMin(seq.totalMs - a.totalMs)],
    ],
  );
  out += table(`API cost — requests by the agent during the full flow: ${a.apiRequests.total}`, ['verb resource', 'requests'], Object.entries(a.apiRequests.byVerbResource).map(([k, v]) => [k, String(v)]));
  return out;
}
