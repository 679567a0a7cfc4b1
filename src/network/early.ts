// The early network phase (DESIGN.md section 1 step 3; docs/network.md section 4): at boot, after NetworkManager
// and before nodeip-configuration and ovs-configuration, the site's uplink state is applied under a checkpoint,
// verified, then committed or rolled back. At that moment the NIC's own /etc profile is the active one, so
// NetworkManager's checkpoint covers exactly the profile nmstate changes (real NetworkManager 1.42 + nmstatectl 2.2:
// reference early-apply.md, observations 11-12); configure-ovs then builds br-ex from whichever profile is on disk.
// The ordering is lifecycle-agent's ip-configuration.service (openshift-kni/lifecycle-agent 0e1bf18,
// lca-cli/ipconfig: the IP change applied with nmstatectl at boot, ordered after NetworkManager and before the
// services that read the node's address).
//
// Every change is preceded by its journaled phase (network-early.json in the state directory). A power cut or a kill
// at any point leaves an in-flight phase: the next boot's early phase writes the saved known-good profiles back
// itself — the checkpoint died with the boot — reloads NetworkManager and re-activates them before configure-ovs
// clones them. The known good is taken only when no attempt is in flight (never from a half-applied network).
import { createHash } from 'node:crypto';
import { whyUnreadable, type Host } from '../host/host';
import { isPlainObject } from '../siteconfig/problems';
import type { Logger } from '../log';
import { emitYaml } from '../util/yaml';
import { checkUntilAllPass, connectivityChecks, type CheckOutcome } from '../host/netcheck';
import { nmstateApplyNoCommit, nmstateCommit, nmstateRollback, nmstateShow, NmstateError } from '../host/nmstate';
import { refusalsAgainst, siteUplink, type NmState, type Refusal } from './uplink';
import { BR_EX, parseTopology, type Topology } from './topology';
import { bootAction, configuredGateways, defaultRouteInterface, earlyState, hintAfter, siteInterfaceNames, MAX_NETWORK_ATTEMPTS, EARLY_PHASES, type EarlyPhase, type EarlyRecord } from './early-state';
import { parseSavedProfiles, PROFILE_DIR, profilesDiffer, readProfiles, writeProfilesBack, type SavedProfile } from './profiles';

/** configure-ovs reads the uplink it should use from here (machine-config-operator configure-ovs-network.yaml). */
export const IFACE_HINT_FILE = '/var/lib/ovnk/iface_default_hint';

export const earlyRecordFile = (stateDir: string) => `${stateDir}/network-early.json`;
export const knownGoodFile = (stateDir: string) => `${stateDir}/backups/known-good-profiles.json`;
export const desiredStateFile = (stateDir: string) => `${stateDir}/network-desired.yaml`;
/**
 * sha256 of the last desired state that was verified and committed: outlives the journal of one config. Of
 * emitYaml's text: a digest an agent from before emitYaml committed does not match it, so that network is applied
 * and verified once more (under a checkpoint, as always), never skipped wrongly.
 */
export const committedFile = (stateDir: string) => `${stateDir}/network-committed.sha256`;
export const desiredDigest = (state: NmState) => createHash('sha256').update(emitYaml(state)).digest('hex');

export async function isCommitted(host: Host, stateDir: string, state: NmState): Promise<boolean> {
  return (await host.readTextIfExists(committedFile(stateDir)))?.trim() === desiredDigest(state);
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
  return m ? `${m[1]}: ${m[2]!.split(' | ')[0]!.trim()}` : undefined;
}

/** How long connectivity may take to come up after the change, and the checkpoint that outlives it. */
export function verifyWindows(networkTimeoutMs: number): { verifyMs: number; checkpointSeconds: number } {
  const verifyMs = Math.max(10_000, Math.min(120_000, Math.floor(networkTimeoutMs / 2)));
  return { verifyMs, checkpointSeconds: Math.ceil(verifyMs / 1000) + 60 };
}

export interface EarlyClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface EarlyOptions {
  host: Host;
  log: Logger;
  stateDir: string;
  /** The accepted site-config's network; undefined when there is none (an in-flight attempt is still restored). */
  network?: { nmstate: NmState; verify: { ping: readonly string[]; resolve: readonly string[] } };
  /** The node's internal addresses (ip/prefix): kept on the uplink's profile after the site's. */
  internal: readonly string[];
  networkTimeoutMs: number;
  clock: EarlyClock;
}

/**
 * From release-4.16 br-ex may be nmstate's own (installed from /etc/nmstate/openshift/*.yml by
 * nmstate-configuration.sh, which touches this file) and configure-ovs then exits at once ("Skipping configure-ovs
 * due to manual network configuration"; machine-config-operator release-4.16 configure-ovs-network.yaml,
 * nmstate-configuration.yaml): configure-ovs would not build br-ex from the NIC's profile the site state changes.
 */
const NMSTATE_OWNS_BR_EX = '/etc/nmstate/openshift/applied';

export const nmstateOwnsBrEx = (host: Host) => host.exists(NMSTATE_OWNS_BR_EX);

/** Why the site's state cannot be applied on this node (uplink.ts refusalsAgainst), and a br-ex that is nmstate's. */
export async function refusalsOnNode(host: Host, state: NmState, topo: Topology, early?: { defaultRouteVia: string | undefined }): Promise<Refusal[]> {
  const owned = (await nmstateOwnsBrEx(host))
    ? [{ message: `this node's ${BR_EX} was set up by nmstate at install (OpenShift 4.16 and later), which the agent cannot move onto the site network`, remedy: 'Call the office: this node needs its site network set another way; nothing was changed.' }]
    : [];
  return [...owned, ...refusalsAgainst(state, topo, early)];
}

export type EarlyOutcome = 'nothing' | 'committed' | 'failed' | 'refused' | 'restored' | 'gave-up';

export async function readEarlyRecord(host: Host, stateDir: string): Promise<EarlyRecord | undefined> {
  // A record cut off mid-write cannot happen (atomic writes); an unreadable or damaged one (not a file, not JSON, not
  // the record the agent writes) is treated as an attempt in flight: the known good comes back first.
  let data: unknown;
  try {
    const text = await host.readTextIfExists(earlyRecordFile(stateDir));
    if (text === undefined) return undefined;
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const r = isPlainObject(data) ? data : {};
  const valid = typeof r.digest === 'string' && EARLY_PHASES.includes(r.phase as EarlyPhase) && Number.isInteger(r.failures) && (r.failures as number) >= 0
    && (r.lastFailure === undefined || typeof r.lastFailure === 'string') && (r.refused === undefined || typeof r.refused === 'boolean');
  return valid ? (r as unknown as EarlyRecord) : { digest: '', phase: 'applying', failures: 0 };
}

/** The record written whole (atomically): by the phase before each change, and by the run's step when it reports. */
export const writeEarlyRecord = (host: Host, stateDir: string, rec: EarlyRecord) => host.writeFileAtomic(earlyRecordFile(stateDir), `${JSON.stringify(rec)}\n`, 0o600);

async function journal(o: EarlyOptions, rec: EarlyRecord, phase: EarlyPhase): Promise<void> {
  rec.phase = phase;
  await writeEarlyRecord(o.host, o.stateDir, rec);
}

/**
 * Back to the known good: `nmstatectl rollback` while the checkpoint lives (same boot), then the saved profiles
 * compared by content with what is on disk; whatever differs is written back by the agent, NetworkManager reloads
 * them and re-activates the NIC profiles. Phase `restoring` first, so a cut during the restore restores again.
 */
export async function restoreKnownGood(o: EarlyOptions, rec: EarlyRecord): Promise<void> {
  await journal(o, rec, 'restoring');
  const rolledBack = await nmstateRollback(o.host);
  const saved = await readKnownGood(o);
  if (saved !== undefined) {
    const changed = await writeProfilesBack(o.host, saved);
    if (changed.length > 0) {
      o.log.warn(`${rolledBack ? 'after the rollback ' : ''}the network profiles ${changed.join(', ')} in ${PROFILE_DIR} were not as before the attempt; the agent wrote the saved ones back and asks NetworkManager to use them`);
      await reactivate(o, saved.filter((p) => changed.includes(p.name)));
    }
    const left = profilesDiffer(saved, await readProfiles(o.host));
    if (left.length > 0) throw new Error(`the saved network profiles ${left.join(', ')} could not be written back`);
  }
  await journal(o, rec, 'rolled-back');
}

/** The known good saved before the attempt; undefined (said) when none was saved or the copy is damaged. */
async function readKnownGood(o: EarlyOptions): Promise<SavedProfile[] | undefined> {
  let problem: string;
  try {
    const text = await o.host.readTextIfExists(knownGoodFile(o.stateDir));
    if (text === undefined) {
      o.log.warn('no known-good network profiles were saved before the interrupted attempt; the node keeps what NetworkManager has on disk');
      return undefined;
    }
    const saved = parseSavedProfiles(text);
    if (saved !== undefined) return saved;
    problem = 'it is not the list of profiles the agent writes';
  } catch (e) {
    problem = whyUnreadable(e);
  }
  o.log.warn(`the agent's copy of the network profiles the node had before the attempt is damaged (${problem}), so it cannot be written back: the node keeps what NetworkManager has on disk; if the node has no network after this boot, call the office`);
  return undefined;
}

/** `nmcli connection load` of each written profile, a reload for deleted ones, then `connection up` by id (nmcli(1)). */
async function reactivate(o: EarlyOptions, written: readonly SavedProfile[]): Promise<void> {
  const say = (what: string, res: { code: number | null; stderr: string }) => {
    if (res.code !== 0) o.log.warn(`NetworkManager did not ${what} (nmcli exit ${res.code ?? 'by signal'}); it uses the restored profiles at the next boot at the latest`);
  };
  say('reload its profiles', await o.host.run('nmcli', ['connection', 'reload'], { timeoutMs: 30_000 }));
  for (const p of written) {
    const id = /^id=(.+)$/m.exec(Buffer.from(p.content, 'base64').toString('utf8'))?.[1]?.trim();
    if (!id) continue;
    say(`bring up the profile ${id}`, await o.host.run('nmcli', ['connection', 'up', 'id', id], { timeoutMs: 90_000 }));
  }
}

async function verify(o: EarlyOptions, gateways: readonly string[], windowMs: number): Promise<{ ok: boolean; outcomes: CheckOutcome[] }> {
  const v = o.network!.verify;
  const deadline = o.clock.now() + windowMs;
  const window = { expired: () => o.clock.now() >= deadline, remainingMs: () => deadline - o.clock.now() };
  // The journal hears from the wait at once, then every 30 s: never silent for the whole window (issue 27).
  let loggedAt = -Infinity;
  return checkUntilAllPass(connectivityChecks(o.host, [...gateways, ...v.ping], v.resolve), window, (ms) => o.clock.sleep(ms), (pending) => {
    if (o.clock.now() - loggedAt < 30_000) return;
    loggedAt = o.clock.now();
    o.log.info(`verifying the site network: waiting for ${pending.join(', ')} (${Math.ceil(window.remainingMs() / 1000)} s left)`);
  });
}

const describe = (outcomes: CheckOutcome[]) => outcomes.filter((x) => !x.ok).map((x) => `${x.kind} ${x.target}: ${x.detail}`);

/** One boot's early phase. Returns what it did; the record in the state directory says the rest. */
export async function earlyNetwork(o: EarlyOptions): Promise<{ outcome: EarlyOutcome; record?: EarlyRecord }> {
  const { host, log, stateDir } = o;
  const net = o.network;
  const digest = net ? desiredDigest(net.nmstate) : undefined;
  let rec = await readEarlyRecord(host, stateDir);
  let action = bootAction(rec, digest);
  // Committed by an earlier record (a re-run, or another config with the same network): nothing to apply.
  if (action === 'apply' && net && (await isCommitted(host, stateDir, net.nmstate))) action = 'nothing';
  if (action === 'nothing') return { outcome: 'nothing', ...(rec ? { record: rec } : {}) };
  if (action === 'restore-only' || action === 'restore-then-apply') {
    log.warn(`the last attempt at the site network was cut off (phase ${rec!.phase}) before it was committed; bringing back the network the node had before it`);
    await restoreKnownGood(o, rec!);
    if (action === 'restore-only') return { outcome: 'restored', record: rec! };
  }
  if (action === 'give-up') {
    log.warn(`the site network of this site-config was not applied at this boot: ${rec!.refused ? 'nmstate refused it' : `it failed ${rec!.failures} times`} (${rec!.lastFailure ?? 'see the earlier messages'}); the node keeps its previous network`);
    return { outcome: 'gave-up', record: rec! };
  }
  const site = net!.nmstate;
  const failures = rec?.digest === digest ? rec!.failures : 0;
  rec = { digest: digest!, phase: 'saved', failures };

  const topo = parseTopology(await nmstateShow(host));
  const refusals = await refusalsOnNode(host, site, topo, { defaultRouteVia: defaultRouteInterface(topo) });
  if (refusals.length > 0) {
    rec.refused = true;
    rec.lastFailure = `${refusals.map((r) => r.message).join('; ')}. ${[...new Set(refusals.map((r) => r.remedy))].join(' ')}`;
    await journal(o, rec, 'rolled-back');
    log.error(`the site network was not applied: ${rec.lastFailure}`);
    return { outcome: 'refused', record: rec };
  }
  // Known good: what is on disk now, with no attempt in flight (a cut one was restored just above).
  await host.writeFileAtomic(knownGoodFile(stateDir), `${JSON.stringify(await readProfiles(host))}\n`, 0o600);
  await journal(o, rec, 'saved');
  const state = earlyState(site, topo, o.internal);
  await host.writeFileAtomic(desiredStateFile(stateDir), emitYaml(state), 0o600);
  const { verifyMs, checkpointSeconds } = verifyWindows(o.networkTimeoutMs);
  const names = siteInterfaceNames(site).join(', ');

  await journal(o, rec, 'applying');
  log.info(`applying the site network (${names}) with a ${checkpointSeconds}-second checkpoint, before configure-ovs builds br-ex`);
  let failed: string[] = [];
  try {
    await nmstateApplyNoCommit(host, desiredStateFile(stateDir), checkpointSeconds);
    await journal(o, rec, 'verifying');
    const checked = await verify(o, configuredGateways(state), verifyMs);
    if (!checked.ok) failed = describe(checked.outcomes);
  } catch (e) {
    if (!(e instanceof NmstateError)) throw e;
    const configError = nmstateConfigError(e.outputTail);
    if (configError) {
      rec.refused = true;
      rec.lastFailure = `nmstate refused the site network in spec.network (${configError})`;
    }
    failed = [e.message];
  }

  if (failed.length === 0) {
    await journal(o, rec, 'committing');
    try {
      await nmstateCommit(host);
    } catch (e) {
      // A commit that failed or hung leaves the checkpoint to NetworkManager's timer: a failed attempt like any other,
      // restored from the known good below, never a boot that stops here.
      if (!(e instanceof NmstateError)) throw e;
      failed = [e.message];
    }
  }
  if (failed.length === 0) {
    await host.writeFileAtomic(committedFile(stateDir), `${digest}\n`, 0o600);
    const hint = hintAfter(await host.readTextIfExists(IFACE_HINT_FILE), site);
    if (hint) {
      await host.mkdirp(IFACE_HINT_FILE.replace(/\/[^/]+$/, ''), 0o755);
      await host.writeFileAtomic(IFACE_HINT_FILE, `${hint}\n`, 0o644);
    }
    delete rec.lastFailure;
    await journal(o, rec, 'committed');
    // refusalsAgainst refused a site without an uplink above.
    log.info(`site network applied on ${siteUplink(site)!.name} and committed; configure-ovs builds br-ex from it now and at every boot`);
    return { outcome: 'committed', record: rec };
  }
  await restoreKnownGood(o, rec);
  rec.failures += 1;
  rec.lastFailure ??= failed.join('; ');
  await journal(o, rec, 'rolled-back');
  log.error(`the site network did not verify and was rolled back (attempt ${rec.failures} of ${MAX_NETWORK_ATTEMPTS}): ${rec.lastFailure}; the node is back on its previous network`);
  return { outcome: rec.refused ? 'refused' : 'failed', record: rec };
}
