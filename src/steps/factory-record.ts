// What the factory left in the cluster for a login the site-config may change (core's SSH keys, kubeadmin's password),
// recorded in the state directory before the agent first changes it and kept for good (prepare keeps it too): each
// site gets the factory's login and its own, never an earlier site's. A site-config that does not ask for the login
// puts the factory's back (the fourteenth hostile re-test of issue 36: store A's signed key still opened the node at
// store B).
import type { StepContext } from '../engine/step';

/** The record, or undefined before the first change; a damaged one is a sentence with the way out. */
export async function readFactoryRecord<T>(ctx: StepContext, file: string, valid: (v: unknown) => v is T, what: string): Promise<T | undefined> {
  const at = `${ctx.stateDir}/${file}`;
  const text = await ctx.host.readTextIfExists(at);
  if (text === undefined) return undefined;
  try {
    const record: unknown = JSON.parse(text);
    if (valid(record)) return record;
  } catch {
    // Said below, as damaged.
  }
  throw new Error(`the record of ${what} as the factory left it (${at}) is damaged, so what an earlier site added cannot be told apart. Move it aside (mv ${at} ${at}.bad) and start the service again: what the cluster holds now is then taken as the factory's`);
}

/** Written once, before the first change: a power cut after it finds it, and the same factory state, at the next start. */
export async function keepFactoryRecord(ctx: StepContext, file: string, record: unknown): Promise<void> {
  const at = `${ctx.stateDir}/${file}`;
  if (!(await ctx.host.exists(at))) await ctx.host.writeFileAtomic(at, `${JSON.stringify(record)}\n`, 0o600);
}
