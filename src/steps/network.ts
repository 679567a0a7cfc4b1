// Step "network": the site network (DESIGN.md section 1, step 3; docs/network.md).
//
// On a node whose MachineConfig ships the early network phase (sno-reconfigure-network.service: src/network/early.ts)
// the change is made at boot, before configure-ovs and nodeip-configuration, where NetworkManager's checkpoint covers
// the NIC's own profile. This step only reads the outcome: committed → done; a failed attempt at boot → reported
// (attempt n of 3, or refused); not attempted yet (media that arrived after boot, or a retry) → "network pending for
// the next boot" journaled, said on the console, and the node reboots once so the early phase does the work.
//
// Without that unit (the stand-in nodes of the integration suite) the step applies the state after boot, with br-ex
// released and rebuilt by configure-ovs under one checkpoint, as before the early phase existed. Every failure — a
// refused or failed verification, an agent killed between apply and commit, a reboot in the middle — ends in the
// one restoreKnownGood; the phase is journaled before each change, so a power cut resumes in the right place.
//
// On retry: a committed network is never re-applied for the same desired state (the journal marks the step
// done, and network-committed.sha256 in the state directory outlives the journal of one config).
import { emitYaml, parseYamlCore } from '../util/yaml';
import { nmstateApply, nmstateApplyNoCommit, nmstateCommit, nmstateRollback, nmstateShow, NmstateError, rerunConfigureOvs } from '../host/nmstate';
import { checkUntilAllPass, connectivityChecks, currentAddresses, type CheckOutcome } from '../host/netcheck';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import { apiIntCheck, installedNamesPlan, publishSiteNames, siteDnsWarnings } from './node-names';
import { retryNetworkCommand } from '../host/banner';
import { EARLY_NETWORK_UNIT_PATH } from '../paths';
import { NEW_MEDIA } from '../util/remedy';
import { BR_EX, parseTopology, type Topology } from '../network/topology';
import { committedFile as committedFileIn, desiredDigest, isCommitted, nmstateConfigError, readEarlyRecord, verifyWindows, earlyRecordFile } from '../network/early';
import { configuredGateways, MAX_NETWORK_ATTEMPTS } from '../network/early-state';
import { brExAddresses, brExProblems, factoryState, refusalsAgainst, releaseState, siteUplink, staticAddresses, type NmState, type Refusal } from '../network/uplink';

export { MAX_NETWORK_ATTEMPTS, nmstateConfigError, verifyWindows };
/** While verification waits, the journal hears from it this often (the banner and STATUS= every check). */
const LOG_WAIT_EVERY_MS = 30_000;

/** configure-ovs normally takes seconds; past this its run counts as failed (it would retry in 15 minutes). */
const REBUILD_MS = 180_000;

type NetworkPhase = 'applying' | 'restoring' | 'committed' | 'rolled-back' | 'pending-reboot';

interface NetworkData {
  phase?: NetworkPhase;
  failures?: number;
  lastVerification?: CheckOutcome[];
  /** Early phase: the failed boot attempts already reported (the early record counts them). */
  reportedFailures?: number;
  /** Early phase: the reboot asked for `<digest>:<failures>`; the same again means the phase did not run. */
  rebootFor?: string;
}

const desiredFile = (ctx: StepContext) => `${ctx.stateDir}/network-desired.yaml`;
const committedFile = (ctx: StepContext) => committedFileIn(ctx.stateDir);
const backupFile = (ctx: StepContext) => `${ctx.stateDir}/backups/network-before.yaml`;
/** The factory uplink with br-ex released (OVN nodes): what restoreKnownGood applies when the checkpoint is gone. */
const factoryFile = (ctx: StepContext) => `${ctx.stateDir}/backups/network-factory.yaml`;

function interfaceNames(state: Record<string, unknown>): string[] {
  const ifaces = Array.isArray(state.interfaces) ? (state.interfaces as { name?: unknown }[]) : [];
  return ifaces.map((i) => String(i.name ?? '?'));
}

async function verifyConnectivity(ctx: StepContext, windowMs: number): Promise<{ ok: boolean; outcomes: CheckOutcome[] }> {
  const verify = ctx.site.resolved.network?.verify ?? { ping: [], resolve: [] };
  const deadline = ctx.deadline('network verification', windowMs);
  const checks = connectivityChecks(ctx.host, verify.ping, verify.resolve);
  // Built in: kubelet's api-int name must resolve to this node on the new network (src/steps/node-names.ts).
  const builtIn = await apiIntCheck(ctx.host);
  if (builtIn) checks.set(builtIn.key, builtIn.run);
  // The first wait is logged at once, then every LOG_WAIT_EVERY_MS: the journal is never silent for the whole window.
  let loggedAt = -Infinity;
  return checkUntilAllPass(checks, deadline, (ms) => ctx.clock.sleep(ms, ctx.signal), (pending) => {
    const waiting = `verifying the site network: waiting for ${pending.join(', ')} (${deadline.progress()})`;
    ctx.progress.status(waiting);
    if (ctx.clock.now() - loggedAt >= LOG_WAIT_EVERY_MS) {
      loggedAt = ctx.clock.now();
      ctx.log.info(waiting);
    }
  });
}

async function readNetwork(ctx: StepContext): Promise<{ text: string; topo: Topology }> {
  // NetworkManager down or not answering: a sentence, not an internal error (the sixteenth hostile re-test of issue 36).
  const text = await nmstateShow(ctx.host).catch((e: unknown) => {
    if (!(e instanceof NmstateError)) throw e;
    throw new StepError(`the node's network could not be read (${e.detail})`, 'Restart the node; if this comes back, call the office: NetworkManager is not answering.', true, { cause: e });
  });
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

/** The node runs the early network phase at boot (its MachineConfig ships the unit). */
const hasEarlyPhase = (ctx: StepContext) => ctx.host.exists(EARLY_NETWORK_UNIT_PATH);

/** How long the step waits for the reboot it asked for before saying the node did not restart. */
const REBOOT_WAIT_MS = 600_000;

/** The site network committed (by the early phase at boot): what the run reports, and the local names. */
async function finishCommitted(ctx: StepContext): Promise<void> {
  const net = ctx.site.resolved.network!;
  const data = ctx.data as NetworkData;
  data.phase = 'committed';
  await ctx.save();
  const held = [...new Set((await currentAddressesOf(ctx)).filter((a) => !internalOf(ctx).some((i) => i.replace(/\/\d*$/, '') === a)))];
  await publishSiteNames(ctx, held.find((a) => !a.includes(':')) ?? held[0]);
  const where = siteUplink(net.nmstate)?.name ?? interfaceNames(net.nmstate).join(', ');
  ctx.changed({ kind: 'network', target: interfaceNames(net.nmstate).join(', '), action: 'apply', detail: `applied at boot on ${where} before configure-ovs, verified and committed${held.length ? `; the node holds ${held.join(', ')}` : ''}` });
  ctx.log.info(`the site network on ${where} was applied at boot, verified and committed`);
  if (net.verify.ping.length + net.verify.resolve.length === 0) ctx.warn('the site network was committed without connectivity checks besides its gateway: spec.network.verify lists none');
  for (const warning of await siteDnsWarnings(ctx)) ctx.warn(warning);
}

const currentAddressesOf = (ctx: StepContext) => currentAddresses(ctx.host);

/**
 * The early path: read what the boot's early phase did with this config; report a failed attempt; else journal
 * "pending for the next boot", say so, and reboot once (src/network/early.ts does the work at that boot).
 */
async function applyAtBoot(ctx: StepContext): Promise<void> {
  const net = ctx.site.resolved.network!;
  const data = ctx.data as NetworkData;
  if (await isCommitted(ctx.host, ctx.stateDir, net.nmstate)) return finishCommitted(ctx);
  const digest = desiredDigest(net.nmstate);
  const rec = await readEarlyRecord(ctx.host, ctx.stateDir);
  const mine = rec?.digest === digest ? rec : undefined;
  if (mine && data.reportedFailures === undefined && data.rebootFor === undefined && (mine.refused || mine.failures >= MAX_NETWORK_ATTEMPTS)) {
    // Offered again after its refusal (re-inserted, or `run --retry-network`): the runner dropped this step's
    // record, so the early phase's count starts over. Not after the reboot this step asked for (rebootFor): that
    // boot's refusal is the outcome to report (the fourteenth hostile re-test of issue 36 was told the phase never ran).
    mine.failures = 0;
    delete mine.refused;
    await ctx.host.writeFileAtomic(earlyRecordFile(ctx.stateDir), `${JSON.stringify(mine)}\n`, 0o600);
  }
  const office = `${NEW_MEDIA} if the address, gateway, VLAN or DNS servers in spec.network are wrong for this site`;
  if (mine?.refused) {
    data.reportedFailures = mine.failures;
    await ctx.save();
    throw new ConfigRejectedError(`${mine.lastFailure ?? 'nmstate refused the site network'}; nothing was kept and the node keeps its previous network`, 'Nothing at the node changes this: the site-config names the network for another server. If a second stick or image came for this node, try that one.', { office: `${NEW_MEDIA}: spec.network.nmstate must use this node's interface names (\`ip -br link\` on the node lists them)` });
  }
  if (mine && mine.failures > (data.reportedFailures ?? 0)) {
    data.reportedFailures = mine.failures;
    await ctx.save();
    const message = `the site network did not verify at boot and was rolled back (attempt ${mine.failures} of ${MAX_NETWORK_ATTEMPTS}): ${mine.lastFailure ?? 'see the journal of sno-reconfigure-network'}`;
    const remedy = 'Check that the network cable is in and the switch port is on (its link light); the node is back on its previous network.';
    if (mine.failures >= MAX_NETWORK_ATTEMPTS) {
      throw new ConfigRejectedError(message, `${remedy} Then re-insert the media, or ${retryNetworkCommand()}, to try it again.`, { retryOnRequest: true, office });
    }
    throw new StepError(`${message}; the next attempt is made at the next boot`, remedy, true, { office, attempt: { n: mine.failures, of: MAX_NETWORK_ATTEMPTS } });
  }
  const rebootFor = `${digest}:${mine?.failures ?? 0}`;
  if (data.rebootFor === rebootFor) {
    throw new StepError('the node restarted, but the site network was not applied at boot (sno-reconfigure-network.service did not run or did not finish)', 'Call the office: they read `journalctl -b -u sno-reconfigure-network` on the console.', false);
  }
  data.rebootFor = rebootFor;
  data.phase = 'pending-reboot';
  await ctx.save();
  const headline = `the site network of "${ctx.site.resolved.name}" is applied at the next boot: the node restarts now, once, and carries on by itself (about 2 minutes)`;
  ctx.log.warn(`network pending for the next boot: ${headline}`);
  ctx.progress.status(headline);
  await ctx.progress.banner({ headline, tone: 'waiting', lines: ['Leave the node on and the media in: nothing to do.'] });
  const reboot = await ctx.host.run('systemctl', ['reboot'], { timeoutMs: 60_000 });
  if (reboot.code !== 0) {
    throw new StepError(`the node could not be restarted for the site network (systemctl reboot: ${reboot.stderr.trim().split('\n').pop() || `exit ${reboot.code}`})`, 'Restart the node (power button, or `systemctl reboot` on the console); the site network is applied at that boot.', true);
  }
  // systemd stops this run for the reboot (the run resumes here at the next start and finds the outcome).
  await ctx.clock.sleep(REBOOT_WAIT_MS, ctx.signal);
  throw new StepError('the node did not restart for the site network', 'Restart the node (power button, or `systemctl reboot` on the console); the agent carries on after the boot.', true);
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
    const target = interfaceNames(net.nmstate).join(', ') || 'nmstate state';
    if (await hasEarlyPhase(ctx)) {
      const gateways = configuredGateways(net.nmstate).map((g) => `ping ${g} (the configured gateway)`);
      const committed = await isCommitted(ctx.host, ctx.stateDir, net.nmstate);
      return [
        {
          kind: 'network',
          target,
          action: committed ? 'leave' : 'apply',
          detail: committed
            ? 'already applied and committed at an earlier boot'
            : `at the next boot, before configure-ovs and nodeip-configuration (the node reboots once for it when the media came after boot): the network profiles saved as known good, nmstatectl apply with a checkpoint on ${uplink?.name ?? target}${uplink && staticAddresses(uplink).length ? ` holding ${staticAddresses(uplink).join(', ')}` : ''}, the old default route removed and the internal IP kept after the site address; verify ${[...gateways, ...checks].join(', ') || 'nothing (no checks given)'}; commit, or bring the known-good profiles back; configure-ovs then builds ${BR_EX} from the result`,
        },
        ...[await installedNamesPlan(ctx)].filter((c): c is Change => c !== undefined),
        ...(await siteDnsWarnings(ctx)).map((warning): Change => ({ kind: 'DNS', target: 'the site DNS servers in spec.network', action: 'leave', detail: warning })),
      ];
    }
    const how = topo.brEx && uplink
      ? `nmstatectl apply with a checkpoint, ${BR_EX} released from ${topo.brEx.uplink ?? '?'} and rebuilt by configure-ovs on ${uplink.name}${staticAddresses(uplink).length ? ` holding ${staticAddresses(uplink).join(', ')}` : ' (address by DHCP)'}`
      : 'nmstatectl apply with a checkpoint';
    return [
      {
        kind: 'network',
        target,
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
    // Early phase: apply() reads and reports what the boot did, committed or not.
    if (await hasEarlyPhase(ctx)) return false;
    // The same state verified and committed by an earlier run (a re-run, or another config with the same network).
    return isCommitted(ctx.host, ctx.stateDir, net.nmstate);
  },

  async apply(ctx) {
    if (await hasEarlyPhase(ctx)) return applyAtBoot(ctx);
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
    if (net && (ctx.data as NetworkData).phase !== 'committed' && !(await isCommitted(ctx.host, ctx.stateDir, net.nmstate))) {
      throw new StepError('the site network is not committed', 'See the previous errors of the network step.');
    }
  },
};
