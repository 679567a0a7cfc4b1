// Step "chrony": the site's time sources made permanent, the way OpenShift documents it — a MachineConfig
// `99-<role>-chrony` that writes /etc/chrony.conf (OpenShift docs "Configuring chrony time service"; the
// same text the clock step already gave chronyd, host/chrony.ts). The MCO merges a pool's MachineConfigs in
// name order and a later file of the same path wins (machine-config-operator release-4.12…4.16
// pkg/controller/common/helpers.go MergeMachineConfigs), so a MachineConfig sorting after ours that writes the
// file too would quietly keep its sources: the step refuses that and names it.
//
// The MCD reboots the node for a changed file that is not on its short list of reloads (release-4.12…4.16
// pkg/daemon/update.go calculatePostConfigChangeAction; NodeDisruptionPolicy, which could restart chronyd
// instead, is GA only from 4.17): one reboot at the site, which settle waits through. The clock is right
// before it, from the clock step.
import { R } from '../cluster/resources';
import type { KubeObject } from '../cluster/types';
import { createOrUpdate } from '../cluster/objects';
import { CHRONY_CONF, chronyConf } from '../host/chrony';
import { IGNITION_VERSION, ignitionFile, type IgnitionFile } from '../cluster/ignition';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { notInPlace } from './not-in-place';
import { resilient } from './resilient';
import { MASTER_POOL, recordRollouts } from './rollouts';

export const CHRONY_MACHINECONFIG = `99-${MASTER_POOL}-chrony`;

interface MachineConfig extends KubeObject {
  spec?: { config?: { storage?: { files?: IgnitionFile[] }; [k: string]: unknown }; [k: string]: unknown };
}

const writesChrony = (mc: MachineConfig): boolean => (mc.spec?.config?.storage?.files ?? []).some((f) => f.path === CHRONY_CONF);

function wanted(ctx: StepContext): MachineConfig {
  return {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: { name: CHRONY_MACHINECONFIG, labels: { 'machineconfiguration.openshift.io/role': MASTER_POOL } },
    spec: { config: { ignition: { version: IGNITION_VERSION }, storage: { files: [ignitionFile(CHRONY_CONF, chronyConf(ctx.site.resolved.ntp!), { mode: 0o644 })] } } },
  };
}

async function assess(ctx: StepContext): Promise<{ mc: MachineConfig; change?: Change } | undefined> {
  const ntp = ctx.site.resolved.ntp;
  if (!ntp) return undefined;
  const mcs = (await (await ctx.cluster()).list<MachineConfig>(R.machineConfigs, { labelSelector: `machineconfiguration.openshift.io/role=${MASTER_POOL}` })).items;
  const later = mcs.filter((m) => (m.metadata?.name ?? '') > CHRONY_MACHINECONFIG && writesChrony(m)).map((m) => m.metadata!.name!);
  if (later.length > 0) {
    throw new StepError(
      `the MachineConfig ${later.join(', ')} also writes ${CHRONY_CONF} and comes after ${CHRONY_MACHINECONFIG} in name order, so the cluster would keep its time sources instead of the site's`,
      `Delete it or remove ${CHRONY_CONF} from it (oc delete machineconfig ${later[0]}), or remove spec.ntp from the site-config to keep those sources; then restart the service.`,
      false,
    );
  }
  const mc = wanted(ctx);
  const current = mcs.find((m) => m.metadata?.name === CHRONY_MACHINECONFIG);
  const file = (m: MachineConfig | undefined) => JSON.stringify(m?.spec?.config?.storage?.files?.find((f) => f.path === CHRONY_CONF) ?? null);
  if (current && file(current) === file(mc)) return { mc };
  const detail = `${CHRONY_CONF} with the site's time sources ${[...ntp.servers, ...ntp.pools].join(', ')}; the node reboots once to apply it (the clock is already right)`;
  return { mc, change: { kind: 'MachineConfig', target: CHRONY_MACHINECONFIG, action: current ? 'update' : 'create', detail } };
}

export const chronyStep: Step = resilient({
  name: 'chrony',
  title: 'Make the NTP servers permanent',

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
    await recordRollouts(ctx, client, 'chrony', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `MachineConfig ${CHRONY_MACHINECONFIG}` }]);
    // The name is the documented one for exactly this file: a factory's 99-master-chrony (perhaps Ignition 2.2)
    // gets the site's config in place of its own; its labels and annotations stay.
    await createOrUpdate<MachineConfig>(client, R.machineConfigs, a.mc, (current) => ({ ...current, spec: { ...current.spec, config: a.mc.spec!.config! } }));
    ctx.changed(a.change);
    ctx.log.info(`MachineConfig ${CHRONY_MACHINECONFIG}: ${a.change.detail}`);
  },

  async verify(ctx) {
    if ((await assess(ctx))?.change) throw notInPlace(`the MachineConfig ${CHRONY_MACHINECONFIG} does not hold the site's time sources after the update`, 'that MachineConfig');
  },
});
