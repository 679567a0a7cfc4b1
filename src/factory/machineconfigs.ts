// The master pool's MachineConfigs as the factory left them: recorded by `prepare` at the factory, compared when it
// re-arms a node. The MCO merges every MachineConfig the pool selects into the node's configuration at every later
// site, so one added or changed since the factory — by hand or by an extra manifest at the last site — goes with the
// node to the next, whatever it holds: a file under core's home gives a login as surely as passwd does (the eighteenth
// hostile re-test of issue 36: a key file in store A's MachineConfig logged in at store B). A list of dangerous
// contents is never complete, so what is not the factory's is refused, by name. Not compared: those a controller
// generates from other objects (annotated with its version: machine-config-operator release-4.14…4.16
// pkg/controller/common/constants.go GeneratedByControllerVersionAnnotationKey), and the agent's own: 99-master-ssh and
// 99-master-chrony hold what each site's config says, and its own MachineConfig changes when the office upgrades it.
import { createHash } from 'node:crypto';
import type { ClusterClient, KubeObject } from '../cluster/types';
import type { Host } from '../host/host';
import { StepError } from '../engine/step';
import { STATE_FILES, UNIT_NAME } from '../paths';
import { CHRONY_MACHINECONFIG } from '../steps/chrony';
import { keepFactoryRecord, readFactoryRecord, type FactoryLoginAction } from '../steps/factory-record';
import { MASTER_POOL, poolMachineConfigs } from '../steps/rollouts';
import { SSH_MACHINECONFIG } from '../steps/ssh-key';

/** Name → sha256 of the spec. */
type Recorded = Record<string, string>;
const isRecorded = (v: unknown): v is Recorded => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((h) => typeof h === 'string');

type MachineConfig = KubeObject & { spec?: { config?: { systemd?: { units?: { name?: string }[] } } } };
/** The agent's own MachineConfig (any name `render machineconfig --name` gave it) carries its unit; an upgrade changes it. */
const agents = (mc: MachineConfig) => mc.metadata?.name === SSH_MACHINECONFIG || mc.metadata?.name === CHRONY_MACHINECONFIG || (mc.spec?.config?.systemd?.units ?? []).some((u) => u?.name === UNIT_NAME);

async function present(client: ClusterClient): Promise<Recorded> {
  const mcs = (await poolMachineConfigs<MachineConfig>(client)).filter((mc) => !agents(mc) && !mc.metadata?.annotations?.['machineconfiguration.openshift.io/generated-by-controller-version']);
  return Object.fromEntries(mcs.map((mc) => [mc.metadata!.name!, createHash('sha256').update(JSON.stringify(mc.spec ?? null)).digest('hex')]));
}

/** For `prepare`: the pool's MachineConfigs recorded as the factory's, or those added or changed since refused by name. */
export async function factoryMachineConfigsAtPrepare(host: Host, stateDir: string, client: ClusterClient): Promise<FactoryLoginAction | undefined> {
  const now = await present(client);
  const recorded = await readFactoryRecord(host, stateDir, STATE_FILES.machineConfigsFactory, isRecorded, `MachineConfigs of the pool ${MASTER_POOL}`);
  if (!recorded) return { description: `record the pool ${MASTER_POOL}'s ${Object.keys(now).length} MachineConfigs as the factory's: one added or changed later is refused at re-arming`, apply: () => keepFactoryRecord(host, stateDir, STATE_FILES.machineConfigsFactory, now) };
  const since = Object.keys(now).filter((name) => recorded[name] !== now[name]);
  if (since.length === 0) return undefined;
  const at = `${stateDir}/${STATE_FILES.machineConfigsFactory}`;
  throw new StepError(
    `the MachineConfig ${since.join(', ')} was added or changed since prepare recorded the factory's: the machine-config operator applies it at every next site, whatever it holds (a file can give a login)`,
    'Nothing at the node changes this: call the office.',
    false,
    { office: `delete it (oc delete machineconfig ${since.join(' ')}) or restore the factory's, then run prepare again; if it is the factory's or every site should have it, move the record aside (mv ${at} ${at}.bad) and run prepare again` },
  );
}
