// Step "ssh-key": the site's SSH keys for `core` made permanent, in the MachineConfig the installer creates
// for them (openshift/installer master, pkg/asset/machines/machineconfig/authorizedkeys.go ForAuthorizedKeys:
// `99-<role>-ssh`, label machineconfiguration.openshift.io/role, Ignition 3.2.0, one passwd user `core` whose
// one sshAuthorizedKeys entry is install-config's sshKey — which may hold several lines). factoryKeys
// `replace`: only the site's keys; `keep`: the keys there (line by line) and the site's. Created when the
// cluster was installed without a key.
//
// The MCD applies a change of sshAuthorizedKeys without drain or reboot: only OS image, kernel arguments, FIPS,
// units, kernel type and extensions reboot, and passwd is not a file (machine-config-operator release-4.12…4.16
// pkg/daemon/update.go calculatePostConfigChangeAction); it writes the keys to authorized_keys.d/ignition on
// RHCOS 9, authorized_keys on RHCOS 8 (updateSSHKeys). The pool still renders a new config and goes Updating →
// Updated, which settle waits for; then the finish step removes the early keys (ssh-early.ts).
import { R } from '../cluster/resources';
import type { KubeObject } from '../cluster/types';
import { createOrUpdate } from '../cluster/objects';
import type { Change, Step, StepContext } from '../engine/step';
import { distinctKeys } from '../siteconfig/ssh-keys';
import { notInPlace } from './not-in-place';
import { resilient } from './resilient';
import { MASTER_POOL, recordRollouts } from './rollouts';

export const SSH_MACHINECONFIG = `99-${MASTER_POOL}-ssh`;

interface PasswdUser {
  name?: string;
  sshAuthorizedKeys?: string[];
  [k: string]: unknown;
}

interface MachineConfig extends KubeObject {
  spec?: { config?: { ignition?: { version?: string }; passwd?: { users?: PasswdUser[] }; [k: string]: unknown }; [k: string]: unknown };
}

const coreOf = (mc: MachineConfig | undefined): PasswdUser | undefined => mc?.spec?.config?.passwd?.users?.find((u) => u.name === 'core');

/** The key lines of sshAuthorizedKeys entries (one entry may hold several lines, as the installer writes it). */
export function keyLines(entries: readonly string[] | undefined): string[] {
  return (entries ?? []).flatMap((e) => e.split('\n')).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** The keys core should have: the site's alone (replace), or the present ones and the site's (keep). Pure. */
export function desiredKeys(present: string[], site: string[], factoryKeys: 'replace' | 'keep'): string[] {
  return factoryKeys === 'replace' ? distinctKeys(site) : distinctKeys([...present, ...site]);
}

/** `mc` with core's keys set to `keys`; every other field kept. */
function withKeys(mc: MachineConfig, keys: string[]): MachineConfig {
  const config = mc.spec?.config ?? { ignition: { version: '3.2.0' } };
  const users = config.passwd?.users ?? [];
  const others = users.filter((u) => u.name !== 'core');
  const core: PasswdUser = { ...(coreOf(mc) ?? { name: 'core' }), sshAuthorizedKeys: keys };
  return { ...mc, spec: { ...mc.spec, config: { ...config, passwd: { ...config.passwd, users: [...others, core] } } } };
}

async function assess(ctx: StepContext): Promise<{ keys: string[]; change?: Change } | undefined> {
  const ssh = ctx.site.resolved.ssh;
  if (!ssh) return undefined;
  const mc = await (await ctx.cluster()).get<MachineConfig>(R.machineConfigs, SSH_MACHINECONFIG);
  const present = keyLines(coreOf(mc)?.sshAuthorizedKeys);
  const keys = desiredKeys(present, ssh.authorizedKeys, ssh.factoryKeys);
  if (mc && JSON.stringify(present) === JSON.stringify(keys)) return { keys };
  const dropped = present.filter((k) => !keys.includes(k)).length;
  const detail = `${keys.length} SSH key(s) for core${dropped > 0 ? `, the factory's ${dropped} key(s) removed` : ''}; applied by the machine-config operator without a reboot`;
  return { keys, change: { kind: 'MachineConfig', target: SSH_MACHINECONFIG, action: mc ? 'update' : 'create', detail } };
}

export const sshKeyStep: Step = resilient({
  name: 'ssh-key',
  title: 'Make the SSH keys permanent',

  async plan(ctx) {
    const a = await assess(ctx);
    return a?.change ? [a.change] : [];
  },

  async check(ctx) {
    return (await assess(ctx))?.change === undefined;
  },

  async apply(ctx) {
    const a = await assess(ctx);
    if (!a?.change) return;
    const client = await ctx.cluster();
    await recordRollouts(ctx, client, 'ssh-key', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `MachineConfig ${SSH_MACHINECONFIG}` }]);
    const created: MachineConfig = withKeys({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: SSH_MACHINECONFIG, labels: { 'machineconfiguration.openshift.io/role': MASTER_POOL } } }, a.keys);
    // Re-read on a 409 and recompute from what is there then (keep adds to the keys found at that moment).
    await createOrUpdate<MachineConfig>(client, R.machineConfigs, created, (current) => {
      const ssh = ctx.site.resolved.ssh!;
      return withKeys(current, desiredKeys(keyLines(coreOf(current)?.sshAuthorizedKeys), ssh.authorizedKeys, ssh.factoryKeys));
    });
    ctx.changed(a.change);
    ctx.log.info(`MachineConfig ${SSH_MACHINECONFIG}: ${a.change.detail}`);
  },

  async verify(ctx) {
    if ((await assess(ctx))?.change) throw notInPlace(`the MachineConfig ${SSH_MACHINECONFIG} does not hold the site's SSH keys after the update`, 'that MachineConfig');
  },
});
