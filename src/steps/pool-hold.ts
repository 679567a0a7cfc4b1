// Steps "pool-hold" and "pool-release": the master pool is paused while the cluster steps write its inputs (pull
// secret, mirrors, proxy, the SSH, chrony and site MachineConfigs), then unpaused, so the node takes them all in
// one update with at most one reboot. Without it, each burst of writes renders a config of its own (the render
// controller renders 5 s after a change), and a config rendered while the node is updating waits for that update
// to finish, then costs an update and a reboot of its own (machine-config-operator release-4.14
// pkg/controller/render/render_controller.go renderDelay; pkg/controller/node/node_controller.go
// getAllCandidateMachines). The pool keeps rendering while paused; only the node update waits (syncMachineConfigPool:
// a paused pool syncs its status only), and OpenShift's documented way to batch node changes is this pause.
//
// A pause must not outlive the run: it also holds back the kube-apiserver-to-kubelet CA rotation (OpenShift 4.10
// docs, "Pausing the machine config pools"). The pool carries an annotation saying the agent paused it; a run
// that stops on a failure unpauses it (`release`), and a restarted run pauses it again while it still writes.
//
// The pool is held only when the run will write one of its inputs: a re-run of an applied config, whose steps
// all find their change in place, leaves the pool alone (two writes to the pool for nothing, issue 37). What each
// step will write is what its own plan says, read before the first of them writes.
import { R } from '../cluster/resources';
import { rideOutApiOutages } from '../cluster/retry';
import type { ClusterClient } from '../cluster/types';
import type { Change, Step, StepContext } from '../engine/step';
import type { ResolvedSiteConfig } from '../siteconfig/types';
import { chronyStep } from './chrony';
import { manifestsStep } from './manifests';
import { mirrorsStep } from './mirrors';
import { notInPlace } from './not-in-place';
import { proxyStep } from './proxy';
import { pullSecretStep } from './pull-secret';
import { resilient } from './resilient';
import { MASTER_POOL, type MachineConfigPool } from './rollouts';
import { sshKeyStep } from './ssh-key';

export const HELD_BY = 'sno-reconfigure.io/paused-by-agent';

interface Pool extends MachineConfigPool {
  spec?: MachineConfigPool['spec'] & { paused?: boolean };
}

async function pool(client: ClusterClient): Promise<Pool | undefined> {
  return client.get<Pool>(R.machineConfigPools, MASTER_POOL);
}

const isMachineConfig = (kind: string) => kind === 'MachineConfig';

/** The steps that write the master pool's inputs: when the site-config asks each, and which of its changes are inputs. */
const POOL_INPUT_STEPS: readonly { step: Step; asked: (s: ResolvedSiteConfig) => boolean; input: (c: Change) => boolean }[] = [
  { step: pullSecretStep, asked: (s) => s.pullSecret !== undefined, input: () => true },
  { step: mirrorsStep, asked: (s) => s.imageDigestMirrors.length + (s.imageTagMirrors?.length ?? 0) > 0, input: () => true },
  { step: proxyStep, asked: (s) => s.proxy !== undefined, input: () => true },
  { step: sshKeyStep, asked: (s) => s.ssh !== undefined, input: () => true },
  { step: chronyStep, asked: (s) => s.ntp !== undefined, input: () => true },
  { step: manifestsStep, asked: (s) => (s.extraManifests ?? []).some((m) => isMachineConfig(m.object.kind)), input: (c) => isMachineConfig(c.kind) },
];

/** Whether the site-config writes an input of the master pool (a config without one has nothing to hold for). */
export const writesPoolInputs = (s: ResolvedSiteConfig): boolean => POOL_INPUT_STEPS.some((i) => i.asked(s));

/** Whether this run will write an input of the pool: a step the site-config asks plans a change to one. */
async function willWritePoolInputs(ctx: StepContext): Promise<boolean> {
  for (const i of POOL_INPUT_STEPS) {
    if (!i.asked(ctx.site.resolved)) continue;
    if ((await i.step.plan(ctx)).some((c) => c.action !== 'leave' && i.input(c))) return true;
  }
  return false;
}

/**
 * Paused by this agent: the pool says so, or the journal does (an annotation on the pool can be removed by anyone
 * who writes the pool; the journal cannot — issue 36, finding 3: a manifest replacing the pool dropped it).
 */
const heldByUs = (p: Pool | undefined, ctx: StepContext) => p?.spec?.paused === true && (p.metadata?.annotations?.[HELD_BY] === 'true' || ctx.facts.poolHeld === true);

/** Pauses the pool, saying so on it; a pool someone else paused is left as it is. */
async function hold(ctx: StepContext): Promise<void> {
  const client = await ctx.cluster();
  const p = await pool(client);
  if (!p || p.spec?.paused) {
    if (p && !heldByUs(p, ctx)) ctx.warn(`The machine-config pool ${MASTER_POOL} was already paused before this run: the node takes the site's machine configuration only once it is unpaused (\`oc patch mcp ${MASTER_POOL} --type merge -p '{"spec":{"paused":false}}'\`).`);
    return;
  }
  // Journaled before the pause: a power cut between the two leaves a fact that release() clears, never a pool paused unknown.
  ctx.facts.poolHeld = true;
  await ctx.save();
  await client.patch(R.machineConfigPools, MASTER_POOL, { metadata: { annotations: { [HELD_BY]: 'true' } }, spec: { paused: true } }, 'merge');
  ctx.log.info(`machine-config pool ${MASTER_POOL} paused while the site's machine configuration is written, so the node applies it in one update`);
}

/**
 * Unpauses the pool if this agent paused it, and saves that it no longer holds it (a failed run's release is saved by
 * nothing else: status would go on saying the pool is paused). A pool someone unpaused meanwhile loses the agent's
 * annotation too, or a later pause of theirs would be taken for the agent's own.
 */
async function release(ctx: StepContext): Promise<void> {
  const client = await ctx.cluster();
  const p = await pool(client);
  if (heldByUs(p, ctx)) {
    await client.patch(R.machineConfigPools, MASTER_POOL, { metadata: { annotations: { [HELD_BY]: null } }, spec: { paused: false } }, 'merge');
    ctx.log.info(`machine-config pool ${MASTER_POOL} unpaused: the node now applies the site's machine configuration`);
  } else if (p && p.spec?.paused !== true && p.metadata?.annotations?.[HELD_BY] !== undefined) {
    await client.patch(R.machineConfigPools, MASTER_POOL, { metadata: { annotations: { [HELD_BY]: null } } }, 'merge');
  }
  if (ctx.facts.poolHeld === undefined) return;
  delete ctx.facts.poolHeld;
  await ctx.save();
}

export const poolHoldStep: Step = resilient({
  name: 'pool-hold',
  title: 'Hold node updates while the machine configuration is written',
  plan: async () => [],
  check: async (ctx) => !writesPoolInputs(ctx.site.resolved) || !(await willWritePoolInputs(ctx)),
  apply: hold,
  verify: async () => {},
  // A restarted run that still has inputs to write holds the pool again (a failed run released it).
  resume: async (ctx) => {
    if (!ctx.facts.poolReleased && writesPoolInputs(ctx.site.resolved) && (await willWritePoolInputs(ctx))) await hold(ctx);
  },
  // A pool left paused blocks certificate rotation, and after a refusal the agent may wait days for new media: a
  // brief API outage at the failure (a run failed on the API, or a loaded node) is ridden out as the steps do.
  onRunFailed: async (ctx) => {
    await rideOutApiOutages(() => release(ctx), {
      timer: ctx.clock,
      signal: ctx.signal,
      onRetry: (err, delayMs) => ctx.log.warn({ err: (err as Error).message, retryInMs: delayMs }, `the machine-config pool ${MASTER_POOL} could not be unpaused yet; trying again`),
    }).catch((e: unknown) => ctx.log.warn({ err: (e as Error).message }, `the machine-config pool ${MASTER_POOL} could not be unpaused after the failure; it is unpaused when the run is tried again`));
  },
});

export const poolReleaseStep: Step = resilient({
  name: 'pool-release',
  title: 'Let the node apply the machine configuration',
  plan: async () => [],
  // Done only when the journal no longer claims the pool either: a pool someone unpaused meanwhile still has the claim cleared.
  check: async (ctx) => ctx.facts.poolHeld !== true && !heldByUs(await pool(await ctx.cluster()), ctx),
  apply: release,
  verify: async (ctx) => {
    if (heldByUs(await pool(await ctx.cluster()), ctx)) throw notInPlace(`the machine-config pool ${MASTER_POOL} is still paused after unpausing it`, 'that pool');
    ctx.facts.poolReleased = true;
  },
});
