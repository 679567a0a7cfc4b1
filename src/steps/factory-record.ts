// What the factory left in the cluster for a login the site-config may change (core's SSH keys, kubeadmin's password),
// recorded in the state directory — by `prepare` at the factory, or before the agent first changes it — and kept for
// good: each site gets the factory's login and its own, never an earlier site's. A site-config that does not ask for
// the login puts the factory's back, and `prepare` does when it re-arms the node (the fourteenth and fifteenth hostile
// re-tests of issue 36: store A's signed key still opened the node at store B; a key added by hand at store A too).
import type { Host } from '../host/host';
import { StepError } from '../engine/step';

/** The record, or undefined when none was made yet; a damaged one is a sentence with the way out. */
export async function readFactoryRecord<T>(host: Host, stateDir: string, file: string, valid: (v: unknown) => v is T, what: string): Promise<T | undefined> {
  const at = `${stateDir}/${file}`;
  try {
    // A folder, an unreadable file or a symlink that leads nowhere is damaged too: taken for none or moved aside, the
    // record would be made anew from an earlier site's logins (the sixteenth and eighteenth hostile re-tests of issue 36).
    const text = await host.readTextIfExists(at);
    if (text === undefined && (await host.stat(at)) === undefined) return undefined;
    const record: unknown = JSON.parse(text!);
    if (valid(record)) return record;
  } catch {
    // Said below, as damaged.
  }
  throw new StepError(
    `the record of ${what} as the factory left it (${at}) is damaged, so what an earlier site added cannot be told apart from the factory's`,
    'Nothing at the node changes this: call the office.',
    false,
    { office: `at the factory, make sure the cluster holds only the factory's ${what}, move the record aside (mv ${at} ${at}.bad) and run prepare again: it records them anew` },
  );
}

/** What `prepare` does for one login: record it, or put the factory's back (`rollsOut`: through the pool, waited for). */
export interface FactoryLoginAction {
  description: string;
  apply: () => Promise<void>;
  rollsOut?: true;
}

/** Written once: a power cut after it finds it, and the same factory state, at the next start. */
export async function keepFactoryRecord(host: Host, stateDir: string, file: string, record: unknown): Promise<void> {
  const at = `${stateDir}/${file}`;
  if (!(await host.exists(at))) await host.writeFileAtomic(at, `${JSON.stringify(record)}\n`, 0o600);
}
