// Step "ssh-early": the site's SSH keys for `core`, written first — before the network step — so the node can
// be reached at its new address even when the site's network settings are wrong and the cluster never comes
// up. Image-based install does the same for the same reason (openshift-kni/lifecycle-agent main,
// lca-cli/postpivot/postpivot.go setSSHKey writes authorized_keys.d/ib-early-access; OCPBUGS-31896). RHCOS's
// sshd reads every file of ~/.ssh/authorized_keys.d through ssh-key-dir (coreos/ssh-key-dir, the
// AuthorizedKeysCommand RHCOS configures), so a fragment of our own is enough and touches no file of Ignition's.
//
// RHCOS 8 (OpenShift 4.12) has no ssh-key-dir: its sshd reads ~/.ssh/authorized_keys alone, where Ignition and
// the MCD put core's keys (machine-config-operator release-4.12 pkg/daemon/update.go: authorized_keys.d/ignition
// only on EL9 and FCOS, else authorized_keys). There the keys are appended to that file between two marker
// comment lines, and finish removes exactly those lines. The release is told by /etc/os-release: RHEL_VERSION
// when present, else VERSION_ID (release-4.13 pkg/daemon/osrelease/osrelease.go), on ID rhcos or scos.
//
// The fragment is temporary. Step ssh-key makes the keys permanent in the cluster; when the MCD writes them
// on RHCOS 9 (OpenShift 4.13 on) it deletes every other fragment of authorized_keys.d
// (machine-config-operator release-4.13 pkg/daemon/update.go updateSSHKeys → removeNonIgnitionKeyPathFragments),
// and the finish step removes it in any case once settle saw the pool updated: a key the site rotates later
// through the cluster must not stay valid because of this file. A run that never finishes keeps it, so the
// node stays reachable for whoever has to look at it.
import * as path from 'node:path';
import type { Host } from '../host/host';
import { userIds, type UserIds } from '../host/users';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { notInPlace } from './not-in-place';
import { recordedPassword } from './kubeadmin';
import { recordedKeys } from './ssh-key';
import { recordedMachineConfigs } from './factory-machineconfigs';

const USER = 'core';
/** Relative to core's home; the name says whose it is. */
const FRAGMENT = '.ssh/authorized_keys.d/sno-reconfigure';
/** RHCOS 8's only keys file, relative to core's home. */
const KEYS_FILE = '.ssh/authorized_keys';
const BEGIN = "# sno-reconfigure: the site's early SSH keys, removed once the cluster's keys are on the node";
const END = '# end of sno-reconfigure early SSH keys';

/** True on RHCOS/SCOS 8, whose sshd reads authorized_keys only. */
async function keysFileOnly(host: Host): Promise<boolean> {
  const text = (await host.readTextIfExists('/etc/os-release')) ?? '';
  const field = (key: string) => new RegExp(`^${key}=["']?([^"'\n]*)`, 'm').exec(text)?.[1];
  const version = field('RHEL_VERSION') ?? field('VERSION_ID') ?? '';
  return ['rhcos', 'scos'].includes(field('ID') ?? '') && /^8(\.|$)/.test(version);
}

/** `text` without our marked block (the lines from BEGIN through END). */
function withoutBlock(text: string): string {
  const lines = text.split('\n');
  const start = lines.indexOf(BEGIN);
  const end = lines.indexOf(END, start);
  if (start < 0 || end < 0) return text;
  return [...lines.slice(0, start), ...lines.slice(end + 1)].join('\n');
}

async function coreUser(ctx: StepContext): Promise<UserIds> {
  const user = await userIds(ctx.host, USER);
  if (!user) throw new StepError(`this node has no user ${USER} in /etc/passwd, so the site's SSH keys have nobody to log in as`, 'This is not an RHCOS node as the factory installed it: check the image, or remove spec.ssh from the site-config.');
  return user;
}

/** Where the early keys go on this node. */
export async function earlyKeysPath(ctx: StepContext): Promise<string> {
  return path.posix.join((await coreUser(ctx)).home, (await keysFileOnly(ctx.host)) ? KEYS_FILE : FRAGMENT);
}

const EARLIER = "an earlier site's early SSH keys, which no longer log in";

async function pending(ctx: StepContext): Promise<{ file: string; content: string; change?: Change } | undefined> {
  // The records of the factory's logins are read first: a damaged one stops the run here, with the network as it was,
  // not at its step once the node has moved (the seventeenth hostile re-test of issue 36, M3).
  await Promise.all([recordedKeys(ctx.host, ctx.stateDir), recordedPassword(ctx.host, ctx.stateDir), recordedMachineConfigs(ctx.host, ctx.stateDir)]);
  const ssh = ctx.site.resolved.ssh;
  // Without spec.ssh, early keys left by an earlier site's run that never finished go before anything else (the
  // fifteenth hostile re-test of issue 36: store A's key still logged in while store B's run failed at its network).
  if (!ssh) return (await earlyKeysLeft(ctx.host)) ? { file: '', content: '', change: { kind: 'file', target: `the early SSH keys of ${USER}`, action: 'delete', detail: EARLIER } } : undefined;
  const file = await earlyKeysPath(ctx);
  const keys = `${ssh.authorizedKeys.join('\n')}\n`;
  const existing = await ctx.host.readTextIfExists(file);
  let content = keys;
  if (await keysFileOnly(ctx.host)) {
    const kept = withoutBlock(existing ?? '');
    content = `${kept}${kept === '' || kept.endsWith('\n') ? '' : '\n'}${BEGIN}\n${keys}${END}\n`;
  }
  if (existing === content) return { file, content };
  const later = ssh.factoryKeys === 'replace' ? "; the factory's key keeps working until the cluster has rolled out the site's keys (step ssh-key)" : '';
  return { file, content, change: { kind: 'file', target: file, action: 'write', detail: `${ssh.authorizedKeys.length} SSH key(s) of the site can log in as ${USER}, before the network changes${later}` } };
}

/** Whether early keys are on the node: our fragment, or on RHCOS 8 our marked lines. */
export const earlyKeysLeft = (host: Host): Promise<boolean> => removeEarlyKeys(host, true);

/**
 * Removes the early keys (the finish step, once the cluster's keys are on the node; the next site's first step and
 * `prepare`, an earlier site's). True when there were some; `lookOnly` removes nothing.
 */
export async function removeEarlyKeys(host: Host, lookOnly = false): Promise<boolean> {
  const user = await userIds(host, USER);
  if (!user) return false;
  if (await keysFileOnly(host)) {
    // Only our marked lines go; the MCD may have rewritten the file with the cluster's keys already.
    const file = path.posix.join(user.home, KEYS_FILE);
    const text = await host.readTextIfExists(file);
    if (text === undefined || withoutBlock(text) === text) return false;
    if (!lookOnly) await host.writeFileAtomic(file, withoutBlock(text), 0o600, { uid: user.uid, gid: user.gid });
    return true;
  }
  const file = path.posix.join(user.home, FRAGMENT);
  if (!(await host.exists(file))) return false;
  if (!lookOnly) await host.remove(file);
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
    if (p.change.action === 'delete') {
      await removeEarlyKeys(ctx.host);
      ctx.changed(p.change);
      ctx.log.info(`removed ${EARLIER}`);
      return;
    }
    const { uid, gid } = await coreUser(ctx);
    // ssh refuses keys in a directory or file others can write (StrictModes): 0700 directories and a 0600
    // file, owned by core, as the MCD writes them (pkg/daemon/update.go atomicallyWriteSSHKey).
    for (const dir of [path.posix.dirname(path.posix.dirname(p.file)), path.posix.dirname(p.file)]) {
      if (await ctx.host.exists(dir)) continue;
      await ctx.host.mkdirp(dir, 0o700);
      await ctx.host.chown(dir, uid, gid);
    }
    // Owned by core before it takes the name: sshd (StrictModes) and a watcher never see a root-owned key file.
    await ctx.host.writeFileAtomic(p.file, p.content, 0o600, { uid, gid });
    ctx.changed(p.change);
    ctx.log.info(`${p.change.detail} (${p.file})`);
  },

  async verify(ctx) {
    if ((await pending(ctx))?.change) throw notInPlace(`the site's SSH keys are not in ${await earlyKeysPath(ctx)} after writing them`, 'that file');
  },
};
