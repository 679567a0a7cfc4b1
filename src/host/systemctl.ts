// systemctl through the host seam.
import type { Host, CommandResult } from './host';

export class SystemctlError extends Error {
  constructor(readonly args: string[], readonly result: CommandResult) {
    super(`systemctl ${args.join(' ')} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim() || 'no output'}`);
    this.name = 'SystemctlError';
  }
}

export async function systemctl(host: Host, args: string[], timeoutMs = 120_000): Promise<CommandResult> {
  const res = await host.run('systemctl', args, { timeoutMs });
  if (res.code !== 0) throw new SystemctlError(args, res);
  return res;
}

/** `is-active`/`is-enabled` answer through their output and exit code; never throws. */
export async function unitQuery(host: Host, verb: 'is-active' | 'is-enabled', unit: string): Promise<string> {
  const res = await host.run('systemctl', [verb, unit], { timeoutMs: 30_000 });
  return res.stdout.trim() || (res.code === 0 ? 'unknown' : `unknown (exit ${res.code})`);
}
