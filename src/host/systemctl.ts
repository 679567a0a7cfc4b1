// systemctl through the host seam.
import type { Host, CommandResult } from './host';

/** Throws a CommandError unless systemctl exits 0. */
export function systemctl(host: Host, args: string[], timeoutMs = 120_000): Promise<CommandResult> {
  return host.runChecked('systemctl', args, { timeoutMs });
}

/** `is-active`/`is-enabled` answer through their output and exit code; never throws. */
export async function unitQuery(host: Host, verb: 'is-active' | 'is-enabled', unit: string): Promise<string> {
  const res = await host.run('systemctl', [verb, unit], { timeoutMs: 30_000 });
  return res.stdout.trim() || (res.code === 0 ? 'unknown' : `unknown (exit ${res.code})`);
}
