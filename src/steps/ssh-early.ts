// Step "ssh-early": the site's SSH keys for `core`, written first — before the network step — so the node can
// be reached at its new address even when the site's network settings are wrong and the cluster never comes
// up. Image-based install does the same for the same reason (openshift-kni/lifecycle-agent main,
// lca-cli/postpivot/postpivot.go setSSHKey writes authorized_keys.d/ib-early-access; OCPBUGS-31896). RHCOS's
// sshd reads every file of ~/.ssh/authorized_keys.d through ssh-key-dir (coreos/ssh-key-dir, the
// AuthorizedKeysCommand RHCOS configures), so a fragment of our own is enough and touches no file of Ignition's.
//
// The fragment is temporary. Step ssh-key makes the keys permanent in the cluster; when the MCD writes them
// on RHCOS 9 (OpenShift 4.13 on) it deletes every other fragment of authorized_keys.d
// (machine-config-operator release-4.13 pkg/daemon/update.go updateSSHKeys → removeNonIgnitionKeyPathFragments),
// and the finish step removes it in any case once settle saw the pool updated: a key the site rotates later
// through the cluster must not stay valid because of this file. A run that never finishes keeps it, so the
// node stays reachable for whoever has to look at it.
import * as path from 'node:path';
import { userIds, type UserIds } from '../host/users';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { notInPlace } from './not-in-place';

const USER = 'core';
/** Relative to core's home; the name says whose it is. */
const FRAGMENT = '.ssh/authorized_keys.d/sno-reconfigure';

async function coreUser(ctx: StepContext): Promise<UserIds> {
  const user = await userIds(ctx.host, USER);
  if (!user) throw new StepError(`this node has no user ${USER} in /etc/passwd, so the site's SSH keys have nobody to log in as`, 'This is not an RHCOS node as the factory installed it: check the image, or remove spec.ssh from the site-config.');
  return user;
}

/** Where the early keys go on this node. */
export async function earlyKeysPath(ctx: StepContext): Promise<string> {
  return path.posix.join((await coreUser(ctx)).home, FRAGMENT);
}

async function pending(ctx: StepContext): Promise<{ file: string; content: string; change?: Change } | undefined> {
  const ssh = ctx.site.resolved.ssh;
  if (!ssh) return undefined;
  const file = await earlyKeysPath(ctx);
  const content = `${ssh.authorizedKeys.join('\n')}\n`;
  if ((await ctx.host.readTextIfExists(file)) === content) return { file, content };
  const later = ssh.factoryKeys === 'replace' ? "; the factory's key keeps working until the cluster has rolled out the site's keys (step ssh-key)" : '';
  return { file, content, change: { kind: 'file', target: file, action: 'write', detail: `${ssh.authorizedKeys.length} SSH key(s) of the site can log in as ${USER}, before the network changes${later}` } };
}

/** Removes the early keys (the finish step, once the cluster's keys are on the node). True when there was a file. */
export async function removeEarlyKeys(ctx: StepContext): Promise<boolean> {
  const user = await userIds(ctx.host, USER);
  const file = user && path.posix.join(user.home, FRAGMENT);
  if (!file || !(await ctx.host.exists(file))) return false;
  await ctx.host.remove(file);
  return true;
}

export const sshEarlyStep: Step = {
  name: 'ssh-early',
  title: 'Let the site log in over SSH',
  nodeOnly: true,

  async plan(ctx) {
    const p = await pending(ctx);
    return p?.change ? [p.change] : [];
  },

  async check(ctx) {
    const p = await pending(ctx);
    return p?.change === undefined;
  },

  async apply(ctx) {
    const p = await pending(ctx);
    if (!p?.change) return;
    const { uid, gid } = await coreUser(ctx);
    // ssh refuses keys in a directory or file others can write (StrictModes): 0700 directories and a 0600
    // file, owned by core, as the MCD writes them (pkg/daemon/update.go atomicallyWriteSSHKey).
    for (const dir of [path.posix.dirname(path.posix.dirname(p.file)), path.posix.dirname(p.file)]) {
      if (await ctx.host.exists(dir)) continue;
      await ctx.host.mkdirp(dir, 0o700);
      await ctx.host.chown(dir, uid, gid);
    }
    await ctx.host.writeFileAtomic(p.file, p.content, 0o600);
    await ctx.host.chown(p.file, uid, gid);
    ctx.changed(p.change);
    ctx.log.info(`${p.change.detail} (${p.file})`);
  },

  async verify(ctx) {
    if ((await pending(ctx))?.change) throw notInPlace(`the site's SSH keys are not in ${await earlyKeysPath(ctx)} after writing them`, 'that file');
  },
};
