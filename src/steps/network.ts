// Step "network": the site network (DESIGN.md section 1, step 3; docs/network.md).
//
// The change is made at boot by the early network phase (sno-reconfigure-network.service: src/network/early.ts),
// before configure-ovs and nodeip-configuration, where NetworkManager's checkpoint covers the NIC's own profile.
// This step only reads the outcome: committed → done; a failed attempt at boot → reported (attempt n of 3, or
// refused); not attempted yet (media that arrived after boot, or a retry) → "network pending for the next boot"
// journaled, said on the console, and the node reboots once so the early phase does the work. The unit ships in the
// agent's own MachineConfig (src/render/machineconfig.ts), so every node that runs this agent has it: the older path
// that applied the state after boot, under br-ex, is gone (a checkpoint taken then does not cover the NIC's own
// profile: the real-node-network observations 4-6 of issue 35).
//
// On retry: a committed network is never re-applied for the same desired state (network-committed.sha256 in the state
// directory outlives the journal of one config).
import { nmstateShow, NmstateError } from '../host/nmstate';
import { currentAddresses } from '../host/netcheck';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import { apiIntCheck, installedNamesPlan, publishSiteNames, siteDnsWarnings, siteNamesInPlace } from './node-names';
import { retryNetworkCommand } from '../host/banner';
import { NEW_MEDIA } from '../util/remedy';
import { BOOT_ID_FILE } from '../paths';
import { BR_EX, parseTopology, type Topology } from '../network/topology';
import { desiredDigest, isCommitted, knownGoodFile, nmstateConfigError, nmstateOwnsBrEx, readEarlyRecord, refusalsOnNode, verifyWindows, writeEarlyRecord } from '../network/early';
import { configuredGateways, MAX_NETWORK_ATTEMPTS } from '../network/early-state';
import { siteUplink, staticAddresses } from '../network/uplink';

export { MAX_NETWORK_ATTEMPTS, nmstateConfigError, verifyWindows };

interface NetworkData {
  phase?: 'committed' | 'pending-reboot';
  /** The failed boot attempts already reported (the early record counts them). */
  reportedFailures?: number;
  /** The reboot asked for `<digest>:<failures>`; the same again after a reboot means the phase did not run. */
  rebootFor?: string;
  /** The boot that asked for it: the same boot still means no reboot yet (the agent was restarted, not the node). */
  rebootFrom?: string;
}

function interfaceNames(state: Record<string, unknown>): string[] {
  const ifaces = Array.isArray(state.interfaces) ? (state.interfaces as { name?: unknown }[]) : [];
  return ifaces.map((i) => String(i.name ?? '?'));
}

async function readNetwork(ctx: StepContext): Promise<Topology> {
  // NetworkManager down or not answering: a sentence, not an internal error (the sixteenth hostile re-test of issue 36).
  const text = await nmstateShow(ctx.host).catch((e: unknown) => {
    if (!(e instanceof NmstateError)) throw e;
    throw new StepError(`the node's network could not be read (${e.detail})`, 'Restart the node; if this comes back, call the office: NetworkManager is not answering.', true, { cause: e });
  });
  try {
    return parseTopology(text);
  } catch (e) {
    throw new StepError(`nmstatectl show did not describe this node's network (${(e as Error).message})`, 'Call the office.', false, { cause: e });
  }
}

const internalOf = (ctx: StepContext) => ctx.facts.internalAddresses ?? [];

/** How long the step waits for the reboot it asked for before saying the node did not restart. */
const REBOOT_WAIT_MS = 600_000;

/** The addresses the node holds now besides its internal ones (the site's, static or leased), and the one its names get. */
async function heldAddresses(ctx: StepContext): Promise<{ held: string[]; named?: string }> {
  const held = [...new Set((await currentAddresses(ctx.host)).filter((a) => !internalOf(ctx).some((i) => i.replace(/\/\d*$/, '') === a)))];
  return { held, named: held.find((a) => !a.includes(':')) ?? held[0] };
}

/** The site network committed (by the early phase at boot): what the run reports, and the local names. */
async function finishCommitted(ctx: StepContext): Promise<void> {
  const net = ctx.site.resolved.network!;
  const data = ctx.data as NetworkData;
  // Before kubelet: its api-int name must resolve to this node on the site network (src/steps/node-names.ts). Asked
  // here, after the boot, where the node's DNS answers as it will for kubelet; the early phase checks the link.
  const apiInt = await apiIntCheck(ctx.host);
  const resolved = await apiInt?.run();
  if (resolved && !resolved.ok) {
    throw new StepError(
      `the site network was committed at boot, but ${apiInt!.key}: ${resolved.detail}`,
      'Nothing at the node changes this; the agent tries again, in case the store\'s DNS is being fixed.',
      true,
      { office: `the store's DNS must answer ${apiInt!.key.replace(/^resolve /, '')} with this node's address, or the node must be prepared again with its node-local DNS` },
    );
  }
  const { held, named } = await heldAddresses(ctx);
  await publishSiteNames(ctx, named);
  // After the names: a run cut off before this finds the step to do again, names and all (F4).
  data.phase = 'committed';
  await ctx.save();
  const rec = await readEarlyRecord(ctx.host, ctx.stateDir);
  if (rec?.digest === desiredDigest(net.nmstate)) await writeEarlyRecord(ctx.host, ctx.stateDir, { ...rec, reported: true });
  const where = siteUplink(net.nmstate)?.name ?? interfaceNames(net.nmstate).join(', ');
  ctx.changed({ kind: 'network', target: interfaceNames(net.nmstate).join(', '), action: 'apply', detail: `applied at boot on ${where} before configure-ovs, verified and committed${held.length ? `; the node holds ${held.join(', ')}` : ''}${resolved ? `; ${apiInt!.key}: ${resolved.detail}` : ''}` });
  ctx.log.info(`the site network on ${where} was applied at boot, verified and committed`);
  if (net.verify.ping.length + net.verify.resolve.length === 0) ctx.warn('the site network was committed without connectivity checks besides its gateway: spec.network.verify lists none');
  for (const warning of await siteDnsWarnings(ctx)) ctx.warn(warning);
}


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
    await writeEarlyRecord(ctx.host, ctx.stateDir, mine);
  }
  const office = `${NEW_MEDIA} if the address, gateway, VLAN or DNS servers in spec.network are wrong for this site`;
  if (mine?.refused) {
    data.reportedFailures = mine.failures;
    await ctx.save();
    const refusal = `${(mine.lastFailure ?? 'nmstate refused the site network').replace(/\.$/, '')}; nothing was kept and the node keeps its previous network`;
    // A br-ex nmstate owns is the node's, not the file's: no new media helps (the twenty-first hostile re-test, F5).
    if (await nmstateOwnsBrEx(ctx.host)) throw new StepError(refusal, 'Call the office: this node needs its site network set another way.', false);
    throw new ConfigRejectedError(refusal, 'Nothing at the node changes this: the site-config names the network for another server. If a second stick or image came for this node, try that one.', { office: `${NEW_MEDIA}: spec.network.nmstate must use this node's interface names (\`ip -br link\` on the node lists them)` });
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
  // Refused here, before a reboot that could not help (a name the node lacks, a br-ex that is nmstate's).
  const refusals = await refusalsOnNode(ctx.host, net.nmstate, await readNetwork(ctx));
  if (refusals.length > 0) {
    throw new ConfigRejectedError(`${refusals.map((r) => r.message).join('; ')}; nothing was changed and the node keeps its previous network`, [...new Set(refusals.map((r) => r.remedy))].join(' '));
  }
  const rebootFor = `${digest}:${mine?.failures ?? 0}`;
  const boot = (await ctx.host.readTextIfExists(BOOT_ID_FILE))?.trim();
  // A boot ID that cannot be read is no proof of the same boot: the office, not a reboot at every start (F6).
  if (data.rebootFor === rebootFor && (boot === undefined || data.rebootFrom !== boot)) {
    throw new StepError('the node restarted, but the site network was not applied at boot (sno-reconfigure-network.service did not run or did not finish)', 'Call the office: they read `journalctl -b -u sno-reconfigure-network` on the console.', false);
  }
  // The early phase keeps the known good there: a file in its place stops the run now, not the phase at boot.
  await ctx.host.mkdirp(knownGoodFile(ctx.stateDir).replace(/\/[^/]+$/, ''), 0o700);
  data.rebootFor = rebootFor;
  data.rebootFrom = boot;
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

export const networkStep: Step = {
  name: 'network',
  title: 'Apply the site network',
  nodeOnly: true,

  async plan(ctx): Promise<Change[]> {
    const net = ctx.site.resolved.network;
    if (!net) return [];
    const refusals = await refusalsOnNode(ctx.host, net.nmstate, await readNetwork(ctx));
    if (refusals.length > 0) throw new Error(refusals.map((r) => `${r.message}. ${r.remedy}`).join(' '));
    const builtIn = await apiIntCheck(ctx.host);
    const checks = [...configuredGateways(net.nmstate).map((g) => `ping ${g} (the configured gateway)`), ...net.verify.ping.map((p) => `ping ${p}`), ...net.verify.resolve.map((r) => `resolve ${r}`)];
    const uplink = siteUplink(net.nmstate);
    const target = interfaceNames(net.nmstate).join(', ') || 'nmstate state';
    const committed = await isCommitted(ctx.host, ctx.stateDir, net.nmstate);
    return [
      {
        kind: 'network',
        target,
        action: committed ? 'leave' : 'apply',
        detail: committed
          ? 'already applied and committed at an earlier boot'
          : `at the next boot, before configure-ovs and nodeip-configuration (the node reboots once for it when the media came after boot): the network profiles saved as known good, nmstatectl apply with a checkpoint on ${uplink?.name ?? target}${uplink && staticAddresses(uplink).length ? ` holding ${staticAddresses(uplink).join(', ')}` : ''}, the old default route removed and the internal IP kept after the site address; verify ${checks.join(', ') || 'nothing (no checks given)'}; commit, or bring the known-good profiles back; configure-ovs then builds ${BR_EX} from the result${builtIn ? `; after that boot, before kubelet: ${builtIn.key} to this node (built in: kubelet's API name)` : ''}`,
      },
      ...[await installedNamesPlan(ctx)].filter((c): c is Change => c !== undefined),
      // Asked now, from here: at the site the run asks again after the change and reports what it finds.
      ...(await siteDnsWarnings(ctx)).map((warning): Change => ({ kind: 'DNS', target: 'the site DNS servers in spec.network', action: 'leave', detail: warning })),
    ];
  },

  async check(ctx) {
    const net = ctx.site.resolved.network;
    if (!net || (ctx.data as NetworkData).phase === 'committed') return true;
    // Committed at an earlier boot and the site's names published for it (a re-run); else apply() reads and reports
    // what the boot did.
    if (!(await isCommitted(ctx.host, ctx.stateDir, net.nmstate))) return false;
    const rec = await readEarlyRecord(ctx.host, ctx.stateDir);
    if (rec?.digest === desiredDigest(net.nmstate) && !rec.reported) return false;
    return siteNamesInPlace(ctx, (await heldAddresses(ctx)).named);
  },

  apply: applyAtBoot,

  async verify(ctx) {
    const net = ctx.site.resolved.network;
    if (net && (ctx.data as NetworkData).phase !== 'committed' && !(await isCommitted(ctx.host, ctx.stateDir, net.nmstate))) {
      throw new StepError('the site network is not committed', 'See the previous errors of the network step.');
    }
  },
};
