// nmstatectl through the host seam. The checkpoint protocol: `apply --no-commit --timeout N` makes
// NetworkManager take a checkpoint that rolls itself back after N seconds unless `commit` comes first;
// `rollback` restores it at once (nmstatectl(8); nmstate "checkpoint" docs).
import { CommandError } from './command-error';
import type { CommandResult, Host } from './host';

/** A failed nmstatectl call: the network step tells these (a state nmstate refused) from every other failure. */
export class NmstateError extends CommandError {
  constructor(verb: string, args: readonly string[], result: CommandResult) {
    // Named by its verb only: the state file's path means nothing to the technician reading the message.
    super('nmstatectl', args, result, { shown: `nmstatectl ${verb}` });
    this.name = 'NmstateError';
  }
}

async function nmstatectl(host: Host, args: readonly string[], timeoutMs: number): Promise<CommandResult> {
  const res = await host.run('nmstatectl', args, { timeoutMs });
  if (res.code !== 0) throw new NmstateError(args[0]!, args, res);
  return res;
}

export async function nmstateShow(host: Host): Promise<string> {
  return (await nmstatectl(host, ['show'], 60_000)).stdout;
}

/** Applies `stateFile` (a node path) with a checkpoint that auto-rolls back after `timeoutSeconds`. */
export async function nmstateApplyNoCommit(host: Host, stateFile: string, timeoutSeconds: number): Promise<void> {
  await nmstatectl(host, ['apply', '--no-commit', '--timeout', String(timeoutSeconds), host.toolPath(stateFile)], (timeoutSeconds + 120) * 1000);
}

export async function nmstateCommit(host: Host): Promise<void> {
  await nmstatectl(host, ['commit'], 60_000);
}

/** Returns false when there was no checkpoint to roll back to (it expired, or the node rebooted). */
export async function nmstateRollback(host: Host): Promise<boolean> {
  const res = await host.run('nmstatectl', ['rollback'], { timeoutMs: 120_000 });
  return res.code === 0;
}

