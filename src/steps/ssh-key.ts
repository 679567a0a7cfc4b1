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
import type { ClusterClient, KubeObject } from '../cluster/types';
import type { Host } from '../host/host';
import { createOrUpdate } from '../cluster/objects';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { distinctKeys } from '../siteconfig/ssh-keys';
import { notInPlace } from './not-in-place';
import { STATE_FILES } from '../paths';
import { keepFactoryRecord, readFactoryRecord, type FactoryLoginAction } from './factory-record';
import { resilient } from './resilient';
import { MASTER_POOL, poolMachineConfigs, recordRollouts } from './rollouts';

export const SSH_MACHINECONFIG = `99-${MASTER_POOL}-ssh`;

interface PasswdUser {
  name?: string;
  sshAuthorizedKeys?: string[];
  [k: string]: unknown;
}

interface MachineConfig extends KubeObject {
  spec?: { config?: { ignition?: { version?: string }; passwd?: { users?: PasswdUser[] }; [k: string]: unknown }; [k: string]: unknown };
}

/** core's entry; none where passwd is not as Ignition has it (the MCO renders no such config: it gives no login). */
const coreOf = (mc: MachineConfig | undefined): PasswdUser | undefined => {
  const users: unknown = mc?.spec?.config?.passwd?.users;
  return Array.isArray(users) ? (users as (PasswdUser | null)[]).find((u) => u?.name === 'core') ?? undefined : undefined;
};

/** The key lines of sshAuthorizedKeys entries (one entry may hold several lines, as the installer writes it). */
export function keyLines(entries: readonly string[] | undefined): string[] {
  return (Array.isArray(entries) ? entries : []).flatMap((e) => (typeof e === 'string' ? e.split('\n') : [])).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** The keys core should have: the site's alone (replace), or the factory's and the site's (keep). Pure. */
export function desiredKeys(factory: string[], site: string[], factoryKeys: 'replace' | 'keep'): string[] {
  return factoryKeys === 'replace' ? distinctKeys(site) : distinctKeys([...factory, ...site]);
}

/**
 * `mc` with core's keys set to `keys` and its password the factory's (none, unless the factory set one: the sixteenth
 * hostile re-test of issue 36 found a password added by hand at store A kept at store B); every other field kept.
 */
function withKeys(mc: MachineConfig, keys: string[], factory: FactoryKeys): MachineConfig {
  const config = mc.spec?.config ?? { ignition: { version: '3.2.0' } };
  const users = config.passwd?.users ?? [];
  const others = users.filter((u) => u.name !== 'core');
  const { passwordHash: _present, ...core } = coreOf(mc) ?? { name: 'core' };
  Object.assign(core, { sshAuthorizedKeys: keys }, factory.passwordHash === undefined ? {} : { passwordHash: factory.passwordHash });
  return { ...mc, spec: { ...mc.spec, config: { ...config, passwd: { ...config.passwd, users: [...others, core] } } } };
}

interface FactoryKeys {
  keys: string[];
  /** core's password hash in 99-master-ssh, when the factory set one. */
  passwordHash?: string;
}
const isFactoryKeys = (v: unknown): v is FactoryKeys => Array.isArray((v as FactoryKeys | null)?.keys) && (v as FactoryKeys).keys.every((k) => typeof k === 'string') && ['string', 'undefined'].includes(typeof (v as FactoryKeys).passwordHash);
/** What 99-master-ssh holds for core now, as a record of the factory's would say it. */
const asFound = (mc: MachineConfig | undefined): FactoryKeys => {
  const core = coreOf(mc);
  return { keys: keyLines(core?.sshAuthorizedKeys), ...(typeof core?.passwordHash === 'string' ? { passwordHash: core.passwordHash } : {}) };
};
const WHAT = "core's SSH keys";

/**
 * Refuses when another master MachineConfig gives core SSH keys or a password. The MCO merges every MachineConfig of
 * the pool into one config, in name order, with Ignition's merge, users joined by name (machine-config-operator
 * release-4.14…4.16 pkg/controller/common/helpers.go MergeMachineConfigs), so such a login reaches the node beside
 * 99-master-ssh, and neither the site-config nor `prepare` could take it back: one made by hand at store A logged in
 * at store B (the seventeenth hostile re-test of issue 36, Q3).
 */
export function refuseOtherCoreLogins(mcs: MachineConfig[], then: string): void {
  const core = (mc: MachineConfig) => coreOf(mc) ?? {};
  const others = mcs.filter((mc) => mc.metadata?.name !== SSH_MACHINECONFIG && (keyLines(core(mc).sshAuthorizedKeys).length > 0 || core(mc).passwordHash !== undefined)).map((mc) => mc.metadata!.name!);
  if (others.length === 0) return;
  throw new StepError(
    `the MachineConfig ${others.join(', ')} gives core SSH keys or a password besides ${SSH_MACHINECONFIG}: the machine-config operator adds them to the node, where no site-config can take them back`,
    'Nothing at the node changes this: call the office.',
    false,
    { office: `core's logins belong in ${SSH_MACHINECONFIG}, which holds the factory's and each site's own: delete ${others.length === 1 ? 'it' : 'them'} (oc delete machineconfig ${others.join(' ')}) — a key the factory wants kept goes in ${SSH_MACHINECONFIG} at the factory — then ${then}` },
  );
}

/**
 * The refusal above where the agent keeps core's logins: step api asks it before the run's first change in the cluster,
 * of the pool's MachineConfigs it read once for this and the factory's record (factory-machineconfigs.ts).
 */
export async function refuseOtherCoreLoginsEarly(ctx: StepContext, mcs: KubeObject[]): Promise<void> {
  if (ctx.site.resolved.ssh || (await recordedKeys(ctx.host, ctx.stateDir))) refuseOtherCoreLogins(mcs, 'restart the service');
}

/** The record (factory-record.ts), its entries as key lines (a hand-edited one may hold several in one entry). */
export async function recordedKeys(host: Host, stateDir: string): Promise<FactoryKeys | undefined> {
  const recorded = await readFactoryRecord(host, stateDir, STATE_FILES.sshKeysFactory, isFactoryKeys, WHAT);
  return recorded && { ...recorded, keys: keyLines(recorded.keys) };
}

/** The change of 99-master-ssh that gives core `keys`, said with what it removes; none when it holds them. */
function keysChange(mc: MachineConfig | undefined, keys: string[], factory: FactoryKeys, headline: string): Change | undefined {
  const present = keyLines(coreOf(mc)?.sshAuthorizedKeys);
  const password = coreOf(mc)?.passwordHash !== factory.passwordHash;
  if (JSON.stringify(present) === JSON.stringify(keys) && !password && (mc || keys.length === 0)) return undefined;
  const dropped = present.filter((k) => !keys.includes(k));
  const ofFactory = dropped.filter((k) => factory.keys.includes(k)).length;
  const ofEarlierSite = dropped.length - ofFactory;
  const removed = [...(ofFactory > 0 ? [`the factory's ${ofFactory} key(s) removed`] : []), ...(ofEarlierSite > 0 ? [`${ofEarlierSite} key(s) of an earlier site removed`] : []), ...(password ? ["core's password the factory's again"] : [])];
  return { kind: 'MachineConfig', target: SSH_MACHINECONFIG, action: mc ? 'update' : 'create', detail: `${headline}${removed.length ? `, ${removed.join(', ')}` : ''}; applied by the machine-config operator without a reboot` };
}

async function writeKeys(client: ClusterClient, keys: string[], factory: FactoryKeys): Promise<void> {
  const created: MachineConfig = withKeys({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: SSH_MACHINECONFIG, labels: { 'machineconfiguration.openshift.io/role': MASTER_POOL } } }, keys, factory);
  // On a 409 the keys go onto the MachineConfig as it is then: they are the factory's and the site's, whatever it held.
  await createOrUpdate<MachineConfig>(client, R.machineConfigs, created, (current) => withKeys(current, keys, factory));
}

/** `factory`: the record (made from what is there when there is none yet); `target`: core's entry to write. */
async function assess(ctx: StepContext): Promise<{ keys: string[]; factory: FactoryKeys; target: FactoryKeys; change?: Change } | undefined> {
  const ssh = ctx.site.resolved.ssh;
  const recorded = await recordedKeys(ctx.host, ctx.stateDir);
  if (!ssh && !recorded) return undefined;
  const mc = await (await ctx.cluster()).get<MachineConfig>(R.machineConfigs, SSH_MACHINECONFIG);
  const present = keyLines(coreOf(mc)?.sshAuthorizedKeys);
  const factory = recorded ?? asFound(mc);
  // Unsigned media take logins away and add none: without spec.ssh they remove an earlier site's keys, and give back
  // no factory key a signed `replace` removed (the fifteenth hostile re-test).
  const unsigned = !ssh && ctx.site.resolved.issued === undefined;
  const keys = ssh ? desiredKeys(factory.keys, ssh.authorizedKeys, ssh.factoryKeys) : unsigned ? present.filter((k) => factory.keys.includes(k)) : factory.keys;
  // Likewise core's password: unsigned media keep the factory's only where it still is (the seventeenth re-test).
  const target: FactoryKeys = unsigned && coreOf(mc)?.passwordHash !== factory.passwordHash ? { keys: factory.keys } : factory;
  const change = keysChange(mc, keys, target, ssh ? `${keys.length} SSH key(s) for core` : `core's SSH keys back to the factory's ${keys.length}`);
  return { keys, factory, target, ...(change ? { change } : {}) };
}

/**
 * For `prepare`, re-arming the node: core's keys back to the factory's, or, when none were recorded yet (a node at the
 * factory, or one prepared by an agent from before 2026-11-28), the keys there now recorded as the factory's.
 */
export async function factoryKeysAtPrepare(host: Host, stateDir: string, client: ClusterClient): Promise<FactoryLoginAction | undefined> {
  const recorded = await recordedKeys(host, stateDir);
  refuseOtherCoreLogins(await poolMachineConfigs(client), 'run prepare again');
  const mc = await client.get<MachineConfig>(R.machineConfigs, SSH_MACHINECONFIG);
  if (!recorded) {
    const found = asFound(mc);
    return { description: `record core's ${found.keys.length} SSH key(s) in ${SSH_MACHINECONFIG} as the factory's: every site gets them and its own, never an earlier site's`, apply: () => keepFactoryRecord(host, stateDir, STATE_FILES.sshKeysFactory, found) };
  }
  const change = keysChange(mc, recorded.keys, recorded, `core's SSH keys in the MachineConfig ${SSH_MACHINECONFIG} back to the factory's ${recorded.keys.length}`);
  return change && { description: change.detail!, apply: () => writeKeys(client, recorded.keys, recorded), rollsOut: true };
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
    await keepFactoryRecord(ctx.host, ctx.stateDir, STATE_FILES.sshKeysFactory, a.factory);
    await recordRollouts(ctx, client, 'ssh-key', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `MachineConfig ${SSH_MACHINECONFIG}` }]);
    await writeKeys(client, a.keys, a.target);
    ctx.changed(a.change);
    ctx.log.info(`MachineConfig ${SSH_MACHINECONFIG}: ${a.change.detail}`);
  },

  async verify(ctx) {
    if ((await assess(ctx))?.change) throw notInPlace(`the MachineConfig ${SSH_MACHINECONFIG} does not hold the site's SSH keys after the update`, 'that MachineConfig');
  },
});
