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

/** Applies and commits at once (used to restore a saved state). */
export async function nmstateApply(host: Host, stateFile: string): Promise<void> {
  await nmstatectl(host, ['apply', host.toolPath(stateFile)], 300_000);
}

export async function nmstateCommit(host: Host): Promise<void> {
  await nmstatectl(host, ['commit'], 60_000);
}

/** Returns false when there was no checkpoint to roll back to (it expired, or the node rebooted). */
export async function nmstateRollback(host: Host): Promise<boolean> {
  const res = await host.run('nmstatectl', ['rollback'], { timeoutMs: 120_000 });
  return res.code === 0;
}

/**
 * Re-runs configure-ovs (`ovs-configuration.service`, Type=oneshot: `restart` returns when the script is done).
 * With br-ex gone it rebuilds the bridge on the interface that carries the default route, from that interface's
 * profile (machine-config-operator templates/common/_base/files/configure-ovs-network.yaml, release-4.12 …
 * release-4.16: "Bridge br-ex is not active, restoring previous configuration before proceeding"). Bounded: from
 * release-4.14 a failed run sleeps and retries every 15 minutes (RETRY="${RETRY-15m}") inside the same start.
 */
export async function rerunConfigureOvs(host: Host, timeoutMs: number): Promise<{ ok: boolean; detail: string }> {
  const res = await host.run('systemctl', ['restart', OVS_CONFIGURATION_UNIT], { timeoutMs });
  const said = (res.stderr.trim() || res.stdout.trim()).split('\n').pop() ?? '';
  return { ok: res.code === 0, detail: res.code === 0 ? 'done' : `${OVS_CONFIGURATION_UNIT} did not rebuild br-ex (${said || `exit ${res.code ?? res.signal}`})` };
}

export const OVS_CONFIGURATION_UNIT = 'ovs-configuration.service';
