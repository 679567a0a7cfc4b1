// Idle footprint: `run` on a stand-in node with no media, waiting IDLE_MS for a site-config. Read from
// /proc/<pid> just before it is stopped: peak RSS (status VmHWM) and CPU time (stat utime+stime for the
// agent itself; + cutime+cstime for the children it waited for — the stand-in lsblk/blkid of every rescan).
// proc(5): utime/stime/cutime/cstime are fields 14-17 of /proc/<pid>/stat, in clock ticks (sysconf CLK_TCK).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BUNDLE_PATH } from '../support/bundle';
import { createStandInNode } from '../support/standin-host';

export const IDLE_MS = 60_000;
/** CPU is also read at this point, so that the steady-state rate leaves out loading the bundle and the first scan. */
const SETTLED_AFTER_MS = 10_000;

export interface IdleResults {
  waitedMs: number;
  peakRssKiB: number;
  agentCpuSeconds: number;
  childrenCpuSeconds: number;
  totalCpuSeconds: number;
  /** CPU time over wall time, in percent (whole wait, start included). */
  agentCpuPercent: number;
  totalCpuPercent: number;
  /** The agent's own CPU from SETTLED_AFTER_MS to the end, over that time, in percent: the cost of waiting. */
  agentSteadyCpuPercent: number;
  steadyWindowMs: number;
  /** Stand-in tool processes the agent started while idle (its rescans). */
  toolCalls: number;
  toolCallsByTool: Record<string, number>;
}

function cpuTicks(pid: number): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const at = (n: number) => Number(fields[n - 3]);
  return { own: at(14) + at(15), children: at(16) + at(17) };
}

export async function measureIdle(): Promise<IdleResults> {
  const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  const node = createStandInNode();
  const child = spawn(process.execPath, [BUNDLE_PATH, 'run', '--root', node.root], { env: node.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const started = Date.now();
    const wait = (ms: number) => Promise.race([exited, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), ms))]);
    const early = await wait(SETTLED_AFTER_MS);
    if (early !== 'waiting') throw new Error(`the idle agent exited (${early}) instead of waiting: ${stderr.slice(-1000)}`);
    const settledTicks = cpuTicks(child.pid!).own;
    const settledAt = Date.now();
    const late = await wait(IDLE_MS - (Date.now() - started));
    if (late !== 'waiting') throw new Error(`the idle agent exited (${late}) instead of waiting: ${stderr.slice(-1000)}`);
    const pid = child.pid!;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    const ticks = cpuTicks(pid);
    const waitedMs = Date.now() - started;
    const steadyWindowMs = Date.now() - settledAt;
    const calls = node.calls();
    const byTool: Record<string, number> = {};
    for (const c of calls) byTool[c.tool] = (byTool[c.tool] ?? 0) + 1;
    const agent = ticks.own / ticksPerSecond;
    const children = ticks.children / ticksPerSecond;
    const pct = (s: number) => Math.round((s / (waitedMs / 1000)) * 10_000) / 100;
    return {
      waitedMs,
      peakRssKiB: Number(hwm?.[1] ?? 0),
      agentCpuSeconds: agent,
      childrenCpuSeconds: children,
      totalCpuSeconds: agent + children,
      agentCpuPercent: pct(agent),
      totalCpuPercent: pct(agent + children),
      agentSteadyCpuPercent: Math.round(((ticks.own - settledTicks) / ticksPerSecond / (steadyWindowMs / 1000)) * 10_000) / 100,
      steadyWindowMs,
      toolCalls: calls.length,
      toolCallsByTool: byTool,
    };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    child.kill('SIGKILL');
    node.cleanup();
  }
}
