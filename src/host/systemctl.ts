// systemctl through the host seam.
import type { Host, CommandResult } from './host';
import { EARLY_NETWORK_UNIT, EARLY_NETWORK_UNIT_PATH, UNIT_NAME } from '../paths';

/** Throws a CommandError unless systemctl exits 0. */
export function systemctl(host: Host, args: string[], timeoutMs = 120_000): Promise<CommandResult> {
  return host.runChecked('systemctl', args, { timeoutMs });
}

/** `is-active`/`is-enabled` answer through their output and exit code; never throws. */
export async function unitQuery(host: Host, verb: 'is-active' | 'is-enabled', unit: string): Promise<string> {
  const res = await host.run('systemctl', [verb, unit], { timeoutMs: 30_000 });
  return res.stdout.trim() || (res.code === 0 ? 'unknown' : `unknown (exit ${res.code})`);
}

/**
 * The agent's units: the service, and the early network phase where the MachineConfig ships it. `prepare` arms both
 * and `finish` disarms both: an early phase left armed after a relocation would apply the next stick's network at boot
 * with no agent to carry on (the twentieth hostile re-test of issue 36, X3b: prepare cut off after the done marker).
 */
export async function agentUnits(host: Host): Promise<string[]> {
  return (await host.exists(EARLY_NETWORK_UNIT_PATH)) ? [UNIT_NAME, EARLY_NETWORK_UNIT] : [UNIT_NAME];
}
