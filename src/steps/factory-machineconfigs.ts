// The master pool's MachineConfigs as the factory left them: recorded by `prepare` at the factory, compared when it
// re-arms a node and by step api before a run's first change in the cluster. The MCO merges every MachineConfig the
// pool selects into the node's configuration at every later site, so one added or changed since the factory — by hand
// or by an extra manifest at the last site — goes with the node to the next, whatever it holds: a file under core's
// home gives a login as surely as passwd does (the eighteenth hostile re-test of issue 36: a key file in store A's
// MachineConfig logged in at store B). A list of dangerous contents is never complete, so what is not the factory's is
// refused, by name, and nothing is exempted for metadata anyone can write (the nineteenth: a copied annotation, the
// agent's unit name, an ownerReference all passed):
// - Compared by content: every MachineConfig of the pool, by the sha256 of its spec.
// - By name alone: a controller's (annotated with its version, machine-config-operator release-4.14…4.16
//   pkg/controller/common/constants.go GeneratedByControllerVersionAnnotationKey; the controller rewrites it when its
//   source changes) and the agent's own MachineConfig (it carries the agent's unit; an upgrade changes it). A new one of
//   either kind is refused like any other, and a recorded one that lost its mark is compared by content again.
// - By what they hold: the agent's 99-master-ssh (core's passwd alone) and 99-master-chrony (its chrony.conf alone),
//   which hold what each site's config says.
import { createHash } from 'node:crypto';
import type { ClusterClient, KubeObject } from '../cluster/types';
import type { Host } from '../host/host';
import { CHRONY_CONF } from '../host/chrony';
import { StepError } from '../engine/step';
import { STATE_FILES, UNIT_NAME } from '../paths';
import { CHRONY_MACHINECONFIG } from './chrony';
import { keepFactoryRecord, readFactoryRecord, type FactoryLoginAction } from './factory-record';
import { MASTER_POOL, poolMachineConfigs } from './rollouts';
import { SSH_MACHINECONFIG } from './ssh-key';

/** Name → sha256 of the spec, or '' for one compared by name alone. */
type Recorded = Record<string, string>;
const isRecorded = (v: unknown): v is Recorded => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((h) => typeof h === 'string');

type MachineConfig = KubeObject & { spec?: Record<string, unknown> & { config?: Record<string, unknown> & { systemd?: { units?: { name?: string }[] }; storage?: { files?: { path?: string }[] } } } };

/** Whether an agent's MachineConfig holds only `keys` of its config, nothing else in its spec, and files only at `file`. */
const holdsOnly = (mc: MachineConfig, keys: string[], file?: string): boolean =>
  Object.entries(mc.spec ?? {}).every(([k, v]) => (k === 'config' ? Object.keys(v ?? {}).every((c) => ['ignition', ...keys].includes(c)) : !v || (Array.isArray(v) && !v.length))) &&
  Object.keys(mc.spec?.config?.storage ?? {}).every((k) => k === 'files') &&
  (mc.spec?.config?.storage?.files ?? []).every((f) => f?.path === file);

/** What the record holds for it, or undefined for the agent's two as they should be (compared by what they hold). */
function valueOf(mc: MachineConfig): string | undefined {
  const name = mc.metadata?.name;
  if (name === SSH_MACHINECONFIG && holdsOnly(mc, ['passwd'])) return undefined;
  if (name === CHRONY_MACHINECONFIG && holdsOnly(mc, ['storage'], CHRONY_CONF)) return undefined;
  if (mc.metadata?.annotations?.['machineconfiguration.openshift.io/generated-by-controller-version'] || (mc.spec?.config?.systemd?.units ?? []).some((u) => u?.name === UNIT_NAME)) return '';
  return createHash('sha256').update(JSON.stringify(mc.spec ?? null)).digest('hex');
}

function present(mcs: MachineConfig[]): Recorded {
  const entries = mcs.map((mc) => [mc.metadata!.name!, valueOf(mc)] as const);
  return Object.fromEntries(entries.filter((e): e is readonly [string, string] => e[1] !== undefined));
}

const readRecord = (host: Host, stateDir: string) => readFactoryRecord(host, stateDir, STATE_FILES.machineConfigsFactory, isRecorded, `MachineConfigs of the pool ${MASTER_POOL}`);

/** The MachineConfigs not as recorded (`skip`: names not to look at); the refusal when there are some. */
function refuseChanged(recorded: Recorded, now: Recorded, skip: (name: string) => boolean, then: string, stateDir: string): void {
  // A recorded one compared by name that lost its mark is compared by content: it differs.
  const since = Object.keys(now).filter((name) => !skip(name) && recorded[name] !== now[name]);
  if (since.length === 0) return;
  const at = `${stateDir}/${STATE_FILES.machineConfigsFactory}`;
  throw new StepError(
    `the MachineConfig ${since.join(', ')} was added or changed since prepare recorded the factory's: the machine-config operator applies it at every next site, whatever it holds (a file can give a login)`,
    'Nothing at the node changes this: call the office.',
    false,
    { office: `delete it (oc delete machineconfig ${since.join(' ')}; for one a controller generated, what it comes from: its ownerReferences name it) or restore the factory's, then ${then}; to keep it for every site, move the record aside (mv ${at} ${at}.bad) and run prepare again` },
  );
}

/** For `prepare`: the pool's MachineConfigs recorded as the factory's, or those added or changed since refused by name. */
export async function factoryMachineConfigsAtPrepare(host: Host, stateDir: string, client: ClusterClient): Promise<FactoryLoginAction | undefined> {
  const now = present(await poolMachineConfigs(client));
  const recorded = await readRecord(host, stateDir);
  if (!recorded) return { description: `record the pool ${MASTER_POOL}'s ${Object.keys(now).length} MachineConfigs as the factory's: one added or changed later is refused at re-arming`, apply: () => keepFactoryRecord(host, stateDir, STATE_FILES.machineConfigsFactory, now) };
  refuseChanged(recorded, now, () => false, 'run prepare again', stateDir);
  return undefined;
}

/**
 * For step api, where the factory recorded them: one added after `prepare` re-armed the node is refused before the run
 * changes anything in the cluster (the nineteenth). Not a new one this site-config's own extra manifests write, nor a new
 * controller's (a re-run finds them, and the controllers' of its own manifests). One the factory recorded by content is
 * always compared, whatever the run's manifests or its marks say: a manifest merged into it, or one that replaces it but
 * leaves fields it does not name, keeps what the last site added (the twentieth and twenty-first re-tests, X6, F1), and
 * anyone can write a controller's mark (X7).
 */
export async function refuseChangedMachineConfigs(host: Host, stateDir: string, mcs: KubeObject[], ownManifests: string[]): Promise<void> {
  const recorded = await readRecord(host, stateDir);
  if (!recorded) return;
  const now = present(mcs);
  refuseChanged(recorded, now, (name) => !recorded[name] && (ownManifests.includes(name) || now[name] === ''), 'restart the service', stateDir);
}

/** Read first by step ssh-early: a damaged record stops the run before the network moves (the twentieth, X1). */
export const recordedMachineConfigs = readRecord;
