// Step "network": apply the site network with nmstate under a checkpoint, verify connectivity, commit — or
// roll back so a bad config can never strand the node (DESIGN.md section 1, step 3).
//
// On retry: a committed network is never re-applied for the same desired state (the journal marks the step
// done, and network-committed.sha256 in the state directory outlives the journal of one config). If the agent died between `apply --no-commit` and `commit`, the checkpoint is rolled back
// first; when it is gone (the node rebooted, which drops NetworkManager's in-memory checkpoint while the
// new profiles stay on disk) the state saved before the change is re-applied, so every attempt starts from
// the known-good factory network.
import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { nmstateApply, nmstateApplyNoCommit, nmstateCommit, nmstateRollback, nmstateShow, NmstateError } from '../host/nmstate';
import { pingOnce, resolveOnce, type CheckOutcome } from '../host/netcheck';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import { apiIntCheck, publishSiteNames, siteDnsWarnings } from './node-names';
import { retryNetworkCommand } from '../host/banner';
import { NEW_MEDIA } from '../util/remedy';

/** After this many failed verifications of the same config it is rejected: a technician must correct it. */
export const MAX_NETWORK_ATTEMPTS = 3;
const RETRY_EVERY_MS = 2_000;
/** While verification waits, the journal hears from it this often (the banner and STATUS= every check). */
const LOG_WAIT_EVERY_MS = 30_000;

type NetworkPhase = 'backed-up' | 'applying' | 'committed' | 'rolled-back';

interface NetworkData {
  phase?: NetworkPhase;
  failures?: number;
  lastVerification?: CheckOutcome[];
}

const desiredFile = (ctx: StepContext) => `${ctx.stateDir}/network-desired.yaml`;
/** sha256 of the last desired state that was verified and committed: outlives the journal of one config. */
const committedFile = (ctx: StepContext) => `${ctx.stateDir}/network-committed.sha256`;
const desiredDigest = (state: Record<string, unknown>) => createHash('sha256').update(stringify(state)).digest('hex');
const backupFile = (ctx: StepContext) => `${ctx.stateDir}/backups/network-before.yaml`;

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

export const networkStep: Step = {
  name: 'network',
  title: 'Apply the site network',
  nodeOnly: true,

  async plan(ctx): Promise<Change[]> {
    const net = ctx.site.resolved.network;
    if (!net) return [];
    const builtIn = await apiIntCheck(ctx.host);
    const checks = [...net.verify.ping.map((p) => `ping ${p}`), ...net.verify.resolve.map((r) => `resolve ${r}`), ...(builtIn ? [`${builtIn.key} to this node (built in: kubelet's API name)`] : [])];
    return [
      {
        kind: 'network',
        target: interfaceNames(net.nmstate).join(', ') || 'nmstate state',
        action: 'apply',
        detail: `nmstatectl apply with a checkpoint; ${checks.length ? `verify ${checks.join(', ')}` : 'no verification checks given'}; commit, or roll back on failure`,
      },
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
    const { verifyMs, checkpointSeconds } = verifyWindows(ctx.site.resolved.timeouts.network);

    if (data.phase === 'applying') {
      // Interrupted between apply and commit: get back to the known-good state before trying again.
      const rolledBack = await nmstateRollback(ctx.host);
      if (!rolledBack && (await ctx.host.exists(backupFile(ctx)))) {
        ctx.log.warn('no nmstate checkpoint left from the interrupted attempt; re-applying the network state saved before the change');
        await nmstateApply(ctx.host, backupFile(ctx));
      }
      data.phase = 'rolled-back';
      await ctx.save();
    }
    if (!(await ctx.host.exists(backupFile(ctx)))) {
      await ctx.host.writeFileAtomic(backupFile(ctx), await nmstateShow(ctx.host), 0o600);
    }
    await ctx.host.writeFileAtomic(desiredFile(ctx), stringify(net.nmstate), 0o600);
    data.phase = 'applying';
    await ctx.save();

    ctx.progress.extendTimeout(verifyMs + checkpointSeconds * 1000);
    ctx.progress.status(`applying the site network (${interfaceNames(net.nmstate).join(', ')}) with a ${checkpointSeconds}s checkpoint`);
    let outcome: { ok: boolean; outcomes: CheckOutcome[]; applyError?: string };
    try {
      await nmstateApplyNoCommit(ctx.host, desiredFile(ctx), checkpointSeconds);
      await publishSiteNames(ctx);
      outcome = await verifyConnectivity(ctx, verifyMs);
    } catch (e) {
      if (!(e instanceof NmstateError)) throw e;
      const configError = nmstateConfigError(e.outputTail);
      if (configError) {
        // Refused before anything changed: not a link problem, and trying the same state again cannot help.
        await nmstateRollback(ctx.host);
        data.phase = 'rolled-back';
        await ctx.save();
        throw new ConfigRejectedError(
          `nmstate refused the site network in spec.network (${configError}); nothing was changed and the node keeps its previous network`,
          'Nothing at the node changes this: the site-config names the network for another server. If a second stick or image came for this node, try that one.',
          { cause: e, office: `${NEW_MEDIA}: spec.network.nmstate must use this node's interface names (\`ip -br link\` on the node lists them)` },
        );
      }
      outcome = { ok: false, outcomes: [], applyError: e.message };
    }
    data.lastVerification = outcome.outcomes;

    if (outcome.ok) {
      await nmstateCommit(ctx.host);
      data.phase = 'committed';
      await ctx.save();
      await ctx.host.writeFileAtomic(committedFile(ctx), `${desiredDigest(net.nmstate)}\n`, 0o600);
      const verified = outcome.outcomes.map((o) => `${o.kind} ${o.target}: ${o.detail}`).join('; ');
      ctx.changed({ kind: 'network', target: interfaceNames(net.nmstate).join(', '), action: 'apply', detail: verified || 'committed (no verification checks given)' });
      ctx.log.info(`site network applied on ${interfaceNames(net.nmstate).join(', ')} and committed${verified ? `; ${verified}` : ''}`);
      if (net.verify.ping.length + net.verify.resolve.length === 0) ctx.warn('the site network was committed without connectivity checks: spec.network.verify lists none');
      for (const warning of await siteDnsWarnings(ctx)) ctx.warn(warning);
      return;
    }

    await nmstateRollback(ctx.host);
    data.phase = 'rolled-back';
    data.failures = (data.failures ?? 0) + 1;
    await ctx.save();
    const failed = outcome.applyError ? [outcome.applyError] : outcome.outcomes.filter((o) => !o.ok).map((o) => `${o.kind} ${o.target}: ${o.detail}`);
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
