// nmstatectl through the host seam. The checkpoint protocol: `apply --no-commit --timeout N` makes
// NetworkManager take a checkpoint that rolls itself back after N seconds unless `commit` comes first;
// `rollback` restores it at once (nmstatectl(8); nmstate "checkpoint" docs).
import type { Host, CommandResult } from './host';

export class NmstateError extends Error {
  constructor(readonly verb: string, readonly result: CommandResult) {
    super(`nmstatectl ${verb} failed (exit ${result.code}): ${lastLines(result.stderr || result.stdout)}`);
    this.name = 'NmstateError';
  }
}

function lastLines(text: string, n = 6): string {
  return text.trim().split('\n').slice(-n).join(' | ') || 'no output';
}

export async function nmstateShow(host: Host): Promise<string> {
  const res = await host.run('nmstatectl', ['show'], { timeoutMs: 60_000 });
  if (res.code !== 0) throw new NmstateError('show', res);
  return res.stdout;
}

/** Applies `stateFile` (a node path) with a checkpoint that auto-rolls back after `timeoutSeconds`. */
export async function nmstateApplyNoCommit(host: Host, stateFile: string, timeoutSeconds: number): Promise<void> {
  const args = ['apply', '--no-commit', '--timeout', String(timeoutSeconds), host.toolPath(stateFile)];
  const res = await host.run('nmstatectl', args, { timeoutMs: (timeoutSeconds + 120) * 1000 });
  if (res.code !== 0) throw new NmstateError('apply', res);
}

/** Applies and commits at once (used to restore a saved state). */
export async function nmstateApply(host: Host, stateFile: string): Promise<void> {
  const res = await host.run('nmstatectl', ['apply', host.toolPath(stateFile)], { timeoutMs: 300_000 });
  if (res.code !== 0) throw new NmstateError('apply', res);
}

export async function nmstateCommit(host: Host): Promise<void> {
  const res = await host.run('nmstatectl', ['commit'], { timeoutMs: 60_000 });
  if (res.code !== 0) throw new NmstateError('commit', res);
}

/** Returns false when there was no checkpoint to roll back to (it expired, or the node rebooted). */
export async function nmstateRollback(host: Host): Promise<boolean> {
  const res = await host.run('nmstatectl', ['rollback'], { timeoutMs: 120_000 });
  return res.code === 0;
}
