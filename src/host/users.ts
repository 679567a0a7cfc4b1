// A local user's ids, from the node's /etc/passwd (RHCOS creates `core` there at first boot: Ignition's
// passwd.users, coreos/ignition docs "Users and groups"). Read as a file so it works under --root and in tests.
import type { Host } from './host';

export interface UserIds {
  uid: number;
  gid: number;
  home: string;
}

/** The user's uid, primary gid and home directory, or undefined when /etc/passwd has no such user. */
export async function userIds(host: Host, name: string): Promise<UserIds | undefined> {
  const passwd = (await host.readTextIfExists('/etc/passwd')) ?? '';
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid, , home] = line.split(':');
    if (user === name && uid && gid && home) return { uid: Number(uid), gid: Number(gid), home };
  }
  return undefined;
}
