// Step "network": apply the site network with nmstate under a checkpoint, verify connectivity, commit — or
// roll back so a bad config can never strand the node (DESIGN.md section 1, step 3; docs/network.md).
//
// On an OVN-Kubernetes node the uplink is a port of br-ex: the site's state (the uplink, never br-ex) is applied
// in one state with br-ex released, configure-ovs rebuilds br-ex on the new uplink, the result is verified on that
// final topology and committed. Every failure — a refused or failed verification, an agent killed between apply
// and commit, a reboot in the middle — ends in the one restoreKnownGood: roll the checkpoint back, rebuild br-ex,
// and when br-ex is not back as it was (the checkpoint is gone after a reboot) apply the saved factory uplink and
// rebuild again. The phase is journaled before each change, so a power cut resumes in the right place.
//
// On retry: a committed network is never re-applied for the same desired state (the journal marks the step
// done, and network-committed.sha256 in the state directory outlives the journal of one config).
import { createHash } from 'node:crypto';
import { emitYaml, parseYamlCore } from '../util/yaml';
import { nmstateApply, nmstateApplyNoCommit, nmstateCommit, nmstateRollback, nmstateShow, NmstateError, rerunConfigureOvs } from '../host/nmstate';
import { pingOnce, resolveOnce, type CheckOutcome } from '../host/netcheck';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import { apiIntCheck, installedNamesPlan, publishSiteNames, siteDnsWarnings } from './node-names';
import { retryNetworkCommand } from '../host/banner';
import { NEW_MEDIA } from '../util/remedy';
import { BR_EX, parseTopology, type Topology } from './network/topology';
import { brExAddresses, brExProblems, factoryState, refusalsAgainst, releaseState, siteUplink, staticAddresses, type NmState, type Refusal } from './network/uplink';

/** After this many failed verifications of the same config it is rejected: a technician must correct it. */
export const MAX_NETWORK_ATTEMPTS = 3;
const RETRY_EVERY_MS = 2_000;
/** While verification waits, the journal hears from it this often (the banner and STATUS= every check). */
const LOG_WAIT_EVERY_MS = 30_000;

/** configure-ovs normally takes seconds; past this its run counts as failed (it would retry in 15 minutes). */
const REBUILD_MS = 180_000;

type NetworkPhase = 'applying' | 'restoring' | 'committed' | 'rolled-back';

interface NetworkData {
  phase?: NetworkPhase;
  failures?: number;
  lastVerification?: CheckOutcome[];
}

const desiredFile = (ctx: StepContext) => `${ctx.stateDir}/network-desired.yaml`;
/**
 * sha256 of the last desired state that was verified and committed: outlives the journal of one config. Of
 * emitYaml's text: a digest an agent from before emitYaml committed does not match it, so that agent's network is
 * applied and verified once more (under a checkpoint, as always), never skipped wrongly.
 */
const committedFile = (ctx: StepContext) => `${ctx.stateDir}/network-committed.sha256`;
const desiredDigest = (state: Record<string, unknown>) => createHash('sha256').update(emitYaml(state)).digest('hex');
const backupFile = (ctx: StepContext) => `${ctx.stateDir}/backups/network-before.yaml`;
/** The factory uplink with br-ex released (OVN nodes): what restoreKnownGood applies when the checkpoint is gone. */
const factoryFile = (ctx: StepContext) => `${ctx.stateDir}/backups/network-factory.yaml`;

function interfaceNames(state: Record<string, unknown>): string[] {
  const ifaces = Array.isArray(state.interfaces) ? (state.interfaces as { name?: unknown }[]) : [];
  return ifaces.map((i) => String(i.name ?? '?'));
}

/**
 * nmstate's error kinds that say the desired state itself is wrong: nmstate does not retry them either
 * (nmstate/nmstate rust/src/lib/error.rs, ErrorKind::can_retry covers only PluginFailure, Bug,
 * VerificationError and SrIovVfNotFound). nmstatectl prints them as "NmstateError: <Kind>: <message>".
 */
const CONFIG_ERROR_KINDS = ['InvalidArgument', 'NotImplementedError', 'NotSupportedError', 'KernelIntegerRoundedError', 'DependencyError', 'PolicyError', 'SrIovOperatorOverlap'];

/** The nmstate message when nmstatectl refused the state as wrong (a config error), else undefined. */
export function nmstateConfigError(stderr: string): string | undefined {
  const m = new RegExp(`\\b(${CONFIG_ERROR_KINDS.join('|')}): (.*)`).exec(stderr);
  return m ? `${m[1]}: ${m[2]!.split(" | ")[0]!.trim()}` : undefined;
}

/** How long connectivity may take to come up after the change, and the checkpoint that outlives it. */
export function verifyWindows(networkTimeoutMs: number): { verifyMs: number; checkpointSeconds: number } {
  const verifyMs = Math.max(10_000, Math.min(120_000, Math.floor(networkTimeoutMs / 2)));
  return { verifyMs, checkpointSeconds: Math.ceil(verifyMs / 1000) + 60 };
}

async function verifyConnectivity(ctx: StepContext, windowMs: number): Promise<{ ok: boolean; outcomes: CheckOutcome[] }> {
  const verify = ctx.site.resolved.network?.verify ?? { ping: [], resolve: [] };
  const deadline = ctx.deadline('network verification', windowMs);
  const pending = new Map<string, () => Promise<CheckOutcome>>([
    ...verify.ping.map((ip) => [`ping ${ip}`, () => pingOnce(ctx.host, ip)] as const),
    ...verify.resolve.map((name) => [`resolve ${name}`, () => resolveOnce(ctx.host, name)] as const),
  ]);
  // Built in: kubelet's api-int name must resolve to this node on the new network (src/steps/node-names.ts).
  const builtIn = await apiIntCheck(ctx.host);
  if (builtIn) pending.set(builtIn.key, builtIn.run);
  const results = new Map<string, CheckOutcome>();
  // The first wait is logged at once, then every LOG_WAIT_EVERY_MS: the journal is never silent for the whole window.
  let loggedAt = -Infinity;
  for (;;) {
    for (const [key, check] of pending) {
      const outcome = await check();
      results.set(key, outcome);
      if (outcome.ok) pending.delete(key);
    }
    if (pending.size === 0) return { ok: true, outcomes: [...results.values()] };
    if (deadline.expired()) return { ok: false, outcomes: [...results.values()] };
    const waiting = `verifying the site network: waiting for ${[...pending.keys()].join(', ')} (${deadline.progress()})`;
    ctx.progress.status(waiting);
    if (ctx.clock.now() - loggedAt >= LOG_WAIT_EVERY_MS) {
      loggedAt = ctx.clock.now();
      ctx.log.info(waiting);
    }
    await ctx.clock.sleep(Math.min(RETRY_EVERY_MS, deadline.remainingMs()), ctx.signal);
  }
}

async function readNetwork(ctx: StepContext): Promise<{ text: string; topo: Topology }> {
  const text = await nmstateShow(ctx.host);
  try {
    return { text, topo: parseTopology(text) };
  } catch (e) {
    throw new StepError(`nmstatectl show did not describe this node's network (${(e as Error).message})`, 'Call the office.', false, { cause: e });
  }
}

const internalOf = (ctx: StepContext) => ctx.facts.internalAddresses ?? [];

/** Re-runs configure-ovs and says what is not as `state` describes (empty when br-ex is back as asked). */
async function rebuildBrEx(ctx: StepContext, state: NmState): Promise<{ problems: string[]; topo: Topology }> {
  ctx.progress.status(`rebuilding ${BR_EX} (configure-ovs) on the new uplink`);
  const run = await rerunConfigureOvs(ctx.host, REBUILD_MS);
  const topo = (await readNetwork(ctx)).topo;
  return { problems: [...(run.ok ? [] : [run.detail]), ...brExProblemsNow(ctx, topo, state)], topo };
}

// The state always has an uplink here: the site's passed refusalsAgainst, the factory's is the uplink of br-ex.
const brExProblemsNow = (ctx: StepContext, topo: Topology, state: NmState) => brExProblems(topo, siteUplink(state)!, internalOf(ctx));

/**
 * Back to the network the node had before the attempt (STYLE.md point 8: one undo for every failure path). The
 * phase 'restoring' is journaled first, so a power cut during the restore restores again on the next start.
 */
async function restoreKnownGood(ctx: StepContext): Promise<void> {
  const data = ctx.data as NetworkData;
  data.phase = 'restoring';
  await ctx.save();
  const rolledBack = await nmstateRollback(ctx.host);
  const factoryText = await ctx.host.readTextIfExists(factoryFile(ctx));
  if (factoryText !== undefined) {
    const factory = parseYamlCore(factoryText) as NmState;
    // Without a checkpoint (it expired, or the node rebooted) br-ex is as NetworkManager's timer or the boot left it.
    const afterRollback = rolledBack ? (await rebuildBrEx(ctx, factory)).problems : brExProblemsNow(ctx, (await readNetwork(ctx)).topo, factory);
    if (afterRollback.length > 0) {
      ctx.log.warn(`${BR_EX} is not back as it was at the factory (${afterRollback.join('; ')}); applying the saved factory uplink and rebuilding ${BR_EX}`);
      let problems: string[];
      try {
        await nmstateApply(ctx.host, factoryFile(ctx));
        problems = (await rebuildBrEx(ctx, factory)).problems;
      } catch (e) {
        if (!(e instanceof NmstateError)) throw e;
        problems = [e.message];
      }
      if (problems.length > 0) {
        throw new StepError(
          `the factory network could not be brought back on ${BR_EX}: ${problems.join('; ')}`,
          'Call the office: the node may be unreachable on the network. Do not power it off; the office can read `sno-reconfigure status` and the journal on the console.',
        );
      }
    }
  } else if (!rolledBack && (await ctx.host.exists(backupFile(ctx)))) {
    ctx.log.warn('no nmstate checkpoint left from the interrupted attempt; re-applying the network state saved before the change');
    await nmstateApply(ctx.host, backupFile(ctx));
  }
  data.phase = 'rolled-back';
  await ctx.save();
}

/**
 * From release-4.16 br-ex may be nmstate's own (installed from /etc/nmstate/openshift/*.yml by
 * nmstate-configuration.sh, which touches this file) and configure-ovs then exits at once ("Skipping configure-ovs
 * due to manual network configuration"; machine-config-operator release-4.16 configure-ovs-network.yaml,
 * nmstate-configuration.yaml): re-running it would not rebuild br-ex.
 */
const NMSTATE_OWNS_BR_EX = '/etc/nmstate/openshift/applied';

async function refusalsHere(ctx: StepContext, state: NmState, topo: Topology): Promise<Refusal[]> {
  if (topo.brEx && (await ctx.host.exists(NMSTATE_OWNS_BR_EX))) {
    return [{ message: `this node's ${BR_EX} was set up by nmstate at install (OpenShift 4.16 and later), which the agent cannot move onto the site network`, remedy: 'Call the office: this node needs its site network set another way; nothing was changed.' }];
  }
  return refusalsAgainst(state, topo);
}

async function refuse(ctx: StepContext, state: NmState, topo: Topology): Promise<void> {
  const refusals = await refusalsHere(ctx, state, topo);
  if (refusals.length === 0) return;
  throw new ConfigRejectedError(
    `${refusals.map((r) => r.message).join('; ')}; nothing was changed and the node keeps its previous network`,
    [...new Set(refusals.map((r) => r.remedy))].join(' '),
  );
}

/** Saves what the node has now (known good): the show for SDN nodes, the factory uplink state on OVN nodes. */
async function saveKnownGood(ctx: StepContext, showText: string, topo: Topology): Promise<void> {
  await ctx.host.writeFileAtomic(backupFile(ctx), showText, 0o600);
  const factory = topo.brEx ? factoryState(topo) : undefined;
  if (factory) await ctx.host.writeFileAtomic(factoryFile(ctx), emitYaml(factory), 0o600);
  else await ctx.host.remove(factoryFile(ctx));
}

const pickAddress = (cidrs: string[]) => (cidrs.find((a) => !a.includes(':')) ?? cidrs[0])?.replace(/\/\d*$/, '');

export const networkStep: Step = {
  name: 'network',
  title: 'Apply the site network',
  nodeOnly: true,

  async plan(ctx): Promise<Change[]> {
    const net = ctx.site.resolved.network;
    if (!net) return [];
    const topo = (await readNetwork(ctx)).topo;
    const refusals = await refusalsHere(ctx, net.nmstate, topo);
    if (refusals.length > 0) throw new Error(refusals.map((r) => `${r.message}. ${r.remedy}`).join(' '));
    const builtIn = await apiIntCheck(ctx.host);
    const checks = [...net.verify.ping.map((p) => `ping ${p}`), ...net.verify.resolve.map((r) => `resolve ${r}`), ...(builtIn ? [`${builtIn.key} to this node (built in: kubelet's API name)`] : [])];
    const uplink = siteUplink(net.nmstate);
    const how = topo.brEx && uplink
      ? `nmstatectl apply with a checkpoint, ${BR_EX} released from ${topo.brEx.uplink ?? '?'} and rebuilt by configure-ovs on ${uplink.name}${staticAddresses(uplink).length ? ` holding ${staticAddresses(uplink).join(', ')}` : ' (address by DHCP)'}`
      : 'nmstatectl apply with a checkpoint';
    return [
      {
        kind: 'network',
        target: interfaceNames(net.nmstate).join(', ') || 'nmstate state',
        action: 'apply',
        detail: `${how}; ${checks.length ? `verify ${checks.join(', ')}` : 'no verification checks given'}; commit, or roll back to the network it has now${topo.brEx ? ` (${BR_EX} included)` : ''} on failure`,
      },
      ...[await installedNamesPlan(ctx)].filter((c): c is Change => c !== undefined),
      // Asked now, from here: at the site the run asks again after the change and reports what it finds.
      ...(await siteDnsWarnings(ctx)).map((warning): Change => ({ kind: 'DNS', target: 'the site DNS servers in spec.network', action: 'leave', detail: warning })),
    ];
  },

  async check(ctx) {
    const net = ctx.site.resolved.network;
    if (!net || (ctx.data as NetworkData).phase === 'committed') return true;
    // The same state verified and committed by an earlier run (a re-run, or another config with the same network).
    return (await ctx.host.readTextIfExists(committedFile(ctx)))?.trim() === desiredDigest(net.nmstate);
  },

  async apply(ctx) {
    const net = ctx.site.resolved.network!;
    const data = ctx.data as NetworkData;
    const { verifyMs, checkpointSeconds: verifySeconds } = verifyWindows(ctx.site.resolved.timeouts.network);

    if (data.phase === 'applying' || data.phase === 'restoring') {
      // Killed or powered off between apply and commit: back to the known-good network before trying again.
      ctx.log.warn('the previous attempt at the site network was interrupted before it was committed; bringing back the network the node had before it');
      await restoreKnownGood(ctx);
    }
    const { text: showText, topo } = await readNetwork(ctx);
    await refuse(ctx, net.nmstate, topo);
    await saveKnownGood(ctx, showText, topo);
    const ovn = topo.brEx !== undefined;
    const uplink = siteUplink(net.nmstate);
    await ctx.host.writeFileAtomic(desiredFile(ctx), emitYaml(ovn ? releaseState(net.nmstate, topo) : net.nmstate), 0o600);
    data.phase = 'applying';
    await ctx.save();

    const checkpointSeconds = verifySeconds + (ovn ? Math.ceil(REBUILD_MS / 1000) : 0);
    ctx.progress.extendTimeout(verifyMs + checkpointSeconds * 1000);
    ctx.progress.status(`applying the site network (${interfaceNames(net.nmstate).join(', ')}) with a ${checkpointSeconds}s checkpoint`);
    let failed: string[] = [];
    let outcomes: CheckOutcome[] = [];
    let held: string[] = [];
    try {
      await nmstateApplyNoCommit(ctx.host, desiredFile(ctx), checkpointSeconds);
      if (ovn) {
        const rebuilt = await rebuildBrEx(ctx, net.nmstate);
        failed = rebuilt.problems;
        held = brExAddresses(rebuilt.topo, internalOf(ctx));
      }
      if (failed.length === 0) {
        await publishSiteNames(ctx, pickAddress(held));
        const verified = await verifyConnectivity(ctx, verifyMs);
        outcomes = verified.outcomes;
        if (!verified.ok) failed = outcomes.filter((o) => !o.ok).map((o) => `${o.kind} ${o.target}: ${o.detail}`);
      }
    } catch (e) {
      if (!(e instanceof NmstateError)) throw e;
      const configError = nmstateConfigError(e.outputTail);
      if (configError) {
        // Refused before anything changed (nmstate validates before it takes the checkpoint): not a link problem,
        // and trying the same state again cannot help.
        await nmstateRollback(ctx.host);
        data.phase = 'rolled-back';
        await ctx.save();
        throw new ConfigRejectedError(
          `nmstate refused the site network in spec.network (${configError}); nothing was changed and the node keeps its previous network`,
          'Nothing at the node changes this: the site-config names the network for another server. If a second stick or image came for this node, try that one.',
          { cause: e, office: `${NEW_MEDIA}: spec.network.nmstate must use this node's interface names (\`ip -br link\` on the node lists them)` },
        );
      }
      failed = [e.message];
    }
    data.lastVerification = outcomes;

    if (failed.length === 0) {
      await nmstateCommit(ctx.host);
      data.phase = 'committed';
      await ctx.save();
      await ctx.host.writeFileAtomic(committedFile(ctx), `${desiredDigest(net.nmstate)}\n`, 0o600);
      const verified = outcomes.map((o) => `${o.kind} ${o.target}: ${o.detail}`).join('; ');
      const where = ovn ? `${BR_EX} on ${uplink?.name ?? '?'} holding ${held.join(', ') || 'no address'}` : interfaceNames(net.nmstate).join(', ');
      ctx.changed({ kind: 'network', target: interfaceNames(net.nmstate).join(', '), action: 'apply', detail: `${ovn ? `${where}; ` : ''}${verified || 'committed (no verification checks given)'}` });
      ctx.log.info(`site network applied (${where}) and committed${verified ? `; ${verified}` : ''}`);
      if (net.verify.ping.length + net.verify.resolve.length === 0) ctx.warn('the site network was committed without connectivity checks: spec.network.verify lists none');
      for (const warning of await siteDnsWarnings(ctx)) ctx.warn(warning);
      return;
    }

    await restoreKnownGood(ctx);
    data.failures = (data.failures ?? 0) + 1;
    await ctx.save();
    const message = `the site network did not verify and was rolled back (attempt ${data.failures} of ${MAX_NETWORK_ATTEMPTS}): ${failed.join('; ')}`;
    const remedy = 'Check that the network cable is in and the switch port is on (its link light); the node is back on its previous network.';
    const office = `${NEW_MEDIA} if the address, gateway, VLAN or DNS servers in spec.network are wrong for this site`;
    if (data.failures >= MAX_NETWORK_ATTEMPTS) {
      // A cable, a switch port or a gateway that was down is no fault of the file: the same config may be tried again.
      throw new ConfigRejectedError(message, `${remedy} Then re-insert the media, or ${retryNetworkCommand()}, to try it again.`, { retryOnRequest: true, office });
    }
    throw new StepError(message, remedy, true, { office, attempt: { n: data.failures, of: MAX_NETWORK_ATTEMPTS } });
  },

  async verify(ctx) {
    const net = ctx.site.resolved.network;
    if (net && (ctx.data as NetworkData).phase !== 'committed' && (await ctx.host.readTextIfExists(committedFile(ctx)))?.trim() !== desiredDigest(net.nmstate)) {
      throw new StepError('the site network is not committed', 'See the previous errors of the network step.');
    }
  },
};
