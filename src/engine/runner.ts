// The run loop of `sno-reconfigure run` (DESIGN.md section 1): find a site-config, validate it, run the
// steps in order with every transition journaled, and on a restart resume where the journal says.
import { WrongKindError, type Host } from '../host/host';
import { humanDuration, type Logger } from '../log';
import { createNotifier, type Notifier } from '../host/notify';
import { DONE_MARKER, SERVICE_RESTART_SEC, STATE_FILES } from '../paths';
import { NEW_MEDIA, remedyLines } from '../util/remedy';
import { clusterNameOf, nodeNameOf, readBaseline, type Baseline } from './identity';
import type { LoadedSiteConfig } from '../siteconfig/types';
import type { LastIssued } from '../siteconfig/validation/context';
import type { ValidationProblem as Problem } from '../siteconfig/types';
import { ApiError, ConnectionError } from '../cluster/types';
import { realClock } from './clock';
import { newDetectMemory, refuseLastOffered, waitForSiteConfig, type Candidate, type DetectMemory, type DetectOptions, type MediaProblem, type Offer, type Verdict } from './detect';
import { Journal, type ErrorRecord } from './journal';
import { completeFromMarker, misplacedDoneMarker, readDoneMarker } from './done-marker';
import { readLastIssued, recordIssued } from './last-issued';
import { agentFoldersInPlace, wrongKindProblem } from './agent-folders';
import { ProgressReporter } from './progress';
import { ConfigRejectedError, StepError, type Clock, type Endpoint, type Step, type StepName } from './step';

// A waiting agent (weeks, on a node shipped without media) needs detection, the journal, the banner and status;
// reading a site-config, the steps and the cluster client load when media appear (issue 39: its start and idle
// footprint). esbuild turns each import() below into a module initialised on first use, inside the one file.
const siteIntake = () => import('./site-intake');
const runWork = () => Promise.all([import('./context'), import('./report'), import('./fleet-report')]);

/** The steps of a run, or how to load them (`run` loads them when a site-config is accepted). */
export type StepList = readonly Step[] | (() => Promise<readonly Step[]>);
const stepsOf = async (steps: StepList): Promise<readonly Step[]> => (typeof steps === 'function' ? steps() : steps);

export interface AgentOptions {
  /** The steps of a run, in order (the command that runs the agent picks them). */
  steps: StepList;
  host: Host;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  stateDir: string;
  dropDir: string;
  labels: string[];
  /** Node path of the node-local admin kubeconfig. */
  kubeconfig: string;
  once: boolean;
  dryRun: boolean;
  /** Try again a site-config refused because its network did not verify (`run --retry-network`). */
  retryNetwork?: boolean;
  clock?: Clock;
  rescanMs?: number;
  dropStableMs?: number;
  /** Where the node's router listens (default: the API's host, port 443). */
  ingressEndpoint?: Endpoint;
  /** Plan output of --dry-run. */
  out?: (text: string) => void;
  signal?: AbortSignal;
}

export const EXIT = { ok: 0, failed: 1 } as const;

/**
 * A failed attempt the agent makes again by itself: the run exits 1 and systemd starts it again after the unit's
 * RestartSec= (src/render/unit.ts), so the console says RETRYING with when, not ACTION NEEDED.
 */
function retryHeadline(title: string, attempt: { n: number; of: number }, now: number): { headline: string; when: string } {
  const at = new Date(now + SERVICE_RESTART_SEC * 1000).toISOString().slice(11, 19);
  const [next, of] = [attempt.n + 1, attempt.of];
  return {
    headline: `${title}: attempt ${attempt.n} of ${of} did not succeed; the agent starts attempt ${next} of ${of} by itself at ${at} UTC (in ${SERVICE_RESTART_SEC} s)`,
    when: `the agent starts attempt ${next} of ${of} by itself at ${at} UTC (in ${SERVICE_RESTART_SEC} s)`,
  };
}

/**
 * BENCHMARK-ONLY KNOB: with SNO_RECONFIGURE_SEQUENTIAL_WAITS=1 the agent waits for the cluster to settle after
 * each step that writes to it, one change at a time — the way tools that apply and wait step by step work —
 * so `npm run bench` can measure what waiting for all rollouts at once saves (issue #8). Never set it on a node.
 */
const WRITING_STEPS: readonly StepName[] = ['domain', 'pull-secret', 'mirrors', 'trust'];
/** A failed run's outcome is tried for this long only: the API may be the very thing that failed. */
const FAILED_RUN_REPORT_BUDGET_MS = 30_000;
const sequentialWaits = (env: NodeJS.ProcessEnv): boolean => env.SNO_RECONFIGURE_SEQUENTIAL_WAITS === '1';

export function describeError(e: unknown): Omit<ErrorRecord, 'at' | 'step'> & { rejected: boolean; retryOnRequest?: boolean; attempt?: StepError['attempt'] } {
  const office = e instanceof StepError && e.office ? { office: e.office } : {};
  if (e instanceof ConfigRejectedError) {
    // A step's refusal of the file speaks to its author: that is the office's part; at the node, the second stick.
    const parts = e.office ? { remedy: e.remedy, office: e.office } : { remedy: INVALID_REMEDY, office: `${NEW_MEDIA} (for them: ${e.remedy})` };
    return { message: e.message, ...parts, rejected: true, retryOnRequest: e.retryOnRequest };
  }
  if (e instanceof StepError) return { message: e.message, remedy: e.remedy, ...office, rejected: false, ...(e.attempt ? { attempt: e.attempt } : {}) };
  if (e instanceof ApiError) return { message: `the API answered ${e.statusCode} ${e.reason}: ${e.message}`, remedy: 'The agent retries after a restart; if it repeats, check the cluster operators (`oc get co`).', rejected: false };
  if (e instanceof ConnectionError) return { message: `the API could not be reached: ${e.message}`, remedy: 'The agent retries after a restart; check that kube-apiserver runs (`crictl ps | grep kube-apiserver`).', rejected: false };
  if (e instanceof WrongKindError) return { ...wrongKindProblem(e), rejected: false };
  return { message: `internal error: ${e instanceof Error ? e.message : String(e)}`, remedy: 'The agent retries after a restart; if it repeats, collect `journalctl -u sno-reconfigure -b` and report it.', rejected: false };
}

/** What considering one site-config found: accepted (with the config), or refused (and whether as invalid). */
interface Consideration {
  verdict: Verdict;
  site?: LoadedSiteConfig;
  /** Refused as invalid (not merely "for another machine"): with --once or --dry-run that is a failure (exit 1). */
  invalid: boolean;
}

interface Intake {
  host: Host;
  log: Logger;
  clock: Clock;
  journal: Journal | undefined;
  reporter: ProgressReporter;
  baseline: Baseline;
  nodeName: string;
  dryRun: boolean;
  retryNetwork: boolean;
  /** Node path of the config of record: the copy a restart resumes from. */
  copyDir: string;
  stateDir: string;
}

/**
 * A config refused only because its network did not verify (a cable, a switch port) is tried again when its
 * media is re-inserted or `run --retry-network` asks; otherwise the verification failure stays on screen.
 * Returns false when it stays refused.
 */
async function retryNetworkIfAsked(env: Intake, site: LoadedSiteConfig, from: string, offer: Offer): Promise<boolean> {
  const j = env.journal?.data;
  if (!j?.retryableDigests?.includes(site.digest)) return true;
  if (!offer.reinserted && !env.retryNetwork) {
    // The failure itself (with its remedy: re-insert, or --retry-network) stays on screen.
    const failure = j.lastError;
    const headline = `the site network of "${site.resolved.name}" did not verify; it is not tried again until the media is re-inserted`;
    env.log.warn({ media: from }, headline);
    await env.reporter.problem(headline, failure ? [failure.message, ...remedyLines(failure.remedy, failure.office)] : []);
    return false;
  }
  const other = (d: string) => d !== site.digest;
  j.rejectedDigests = j.rejectedDigests?.filter(other);
  j.retryableDigests = j.retryableDigests.filter(other);
  delete j.steps.network;
  await env.journal!.save();
  // reporter.phase() logs it too.
  await env.reporter.phase(`retrying the site network of "${site.resolved.name}": ${offer.reinserted ? `${from} was inserted again` : '`run --retry-network` asked for it'}`);
  return true;
}

/** A refused site-config: nothing at the node corrects a file (it may be signed); another stick may be the right one. */
const INVALID_REMEDY = 'If a second stick or image came for this node, try that one.';
const INVALID_OFFICE = `${NEW_MEDIA} (they check the file with \`sno-reconfigure validate\`)`;

async function refuseInvalid(env: Intake, from: string, problems: Problem[]): Promise<void> {
  const headline = `the site-config on ${from} is invalid — nothing was changed`;
  env.log.error({ media: from, remedy: INVALID_REMEDY, office: INVALID_OFFICE }, headline);
  for (const p of problems) env.log.error({ media: from, path: p.path }, `invalid site-config: ${p.path}: ${p.message}`);
  if (env.journal) {
    env.journal.data.phase = 'invalid-config';
    env.journal.data.lastError = { at: new Date(env.clock.now()).toISOString(), step: 'validate', message: `the site-config on ${from} is invalid (${problems.length} problem(s))`, remedy: INVALID_REMEDY, office: INVALID_OFFICE, problems };
  }
  await env.reporter.problem(headline, [
    ...problems.slice(0, 6).map((p) => `${p.path}: ${p.message}`),
    ...(problems.length > 6 ? [`… and ${problems.length - 6} more (sno-reconfigure status)`] : []),
    ...remedyLines(INVALID_REMEDY, INVALID_OFFICE),
  ]);
}

/**
 * Takes a valid candidate as the config of record: moved into the state directory (the copy is what a
 * restart resumes from) and read back from there. A different config, or a new run after a finished one
 * (the done marker was removed to run again), starts over; every step's check() skips what is in place.
 */
async function takeAsConfigOfRecord(env: Intake, journal: Journal, c: Candidate | undefined, where: string, site: LoadedSiteConfig): Promise<LoadedSiteConfig> {
  const { host } = env;
  // Resuming from our own copy (its digest differs from the journal's): it is the config of record already.
  if (where !== env.copyDir) {
    await host.remove(env.copyDir);
    await host.rename(where, env.copyDir);
  }
  const reloaded = await (await siteIntake()).loadSiteConfig(host.resolve(env.copyDir), { host, ...(await lastIssuedOption(env)) });
  if (reloaded.status !== 'valid' || reloaded.site.digest !== site.digest) throw new Error('the site-config changed while it was being taken into the state directory');
  if (journal.data.digest !== site.digest || journal.data.steps.finish?.state === 'done') {
    // The device as the technician reads it everywhere: "the stick /dev/sdb1 (SITE-CONFIG)".
    journal.startConfig(site.digest, site.resolved.name, c ? { kind: c.kind, location: c.medium, copiedTo: env.copyDir } : undefined, new Date(env.clock.now()));
    // From here on no signed config issued earlier is taken (trust.ts), whatever happens to this run.
    if (site.resolved.issued !== undefined) await recordIssued(host, env.stateDir, site.resolved.issued, site.resolved.name, site.digest);
    env.log.info({ config: site.resolved.name, digest: site.digest, media: c?.location ?? where }, `accepted site-config "${site.resolved.name}" from ${c?.medium ?? where}`);
  }
  journal.data.phase = 'running';
  await journal.save();
  return reloaded.site;
}

/** The last signed config's issue date, for loadSiteConfig (an older signed config is refused). */
async function lastIssuedOption(env: Intake): Promise<{ lastIssued?: LastIssued }> {
  const lastIssued = await readLastIssued(env.host, env.stateDir);
  return lastIssued !== undefined ? { lastIssued } : {};
}

const NOT_HERE_REMEDY = 'Check that this is the stick or image for this node (the label on the box names the store); if another one came, try it.';
const NOT_HERE_OFFICE = 'they must send the site-config for this machine';

/** Looks at the site-config at `where` (a candidate's copy, or our own copy when resuming `resumeDigest`). */
async function considerSiteConfig(env: Intake, c: Candidate | undefined, where: string, resumeDigest?: string, offer: Offer = { reinserted: false }): Promise<Consideration> {
  const { host, log, journal } = env;
  const { loadSiteConfig, problemsOf } = await siteIntake();
  const result = await loadSiteConfig(host.resolve(where), { host, ...(await lastIssuedOption(env)) });
  const from = c?.medium ?? where;
  if (result.status === 'valid' && c && !(await retryNetworkIfAsked(env, result.site, from, offer))) return { verdict: 'refused', invalid: true };
  if (result.status === 'not-for-this-machine') {
    const message = `the site-config on ${from} is not for this machine`;
    log.warn({ media: from, reasons: result.reasons, remedy: NOT_HERE_REMEDY, office: NOT_HERE_OFFICE }, message);
    if (journal) {
      // `status` lists why, as the banner does.
      journal.data.lastError = { at: new Date(env.clock.now()).toISOString(), step: 'validate', message, remedy: NOT_HERE_REMEDY, office: NOT_HERE_OFFICE, problems: result.reasons.map((r) => ({ path: 'spec.match', message: r })) };
      await journal.save();
    }
    await env.reporter.problem(message, [...result.reasons.slice(0, 5), ...remedyLines(NOT_HERE_REMEDY, NOT_HERE_OFFICE)], 'waiting');
    return { verdict: 'refused', invalid: false };
  }
  // A problem about the copy as a whole names the directory it was read from: the agent's own copy
  // (candidate/, /run/sno-reconfigure/dry-run-<pid>), which means nothing at the node; name the media instead.
  const copy = host.resolve(where);
  const problems = problemsOf(result, { baseline: env.baseline, nodeName: env.nodeName, now: env.clock.now(), ...(journal?.data.rejectedDigests ? { rejectedDigests: journal.data.rejectedDigests } : {}) }).map((p) => ({ ...p, path: p.path.split(copy).join(from), message: p.message.split(copy).join(from) }));
  if (problems.length > 0) {
    await refuseInvalid(env, from, problems);
    return { verdict: 'refused', invalid: true };
  }
  if (result.status !== 'valid') return { verdict: 'refused', invalid: false };
  const site = result.site;
  for (const w of site.warnings) log.warn({ path: w.path }, `site-config warning: ${w.path}: ${w.message}`);
  if ((resumeDigest !== undefined && site.digest === resumeDigest) || env.dryRun || !journal) return { verdict: 'accepted', site, invalid: false };
  return { verdict: 'accepted', site: await takeAsConfigOfRecord(env, journal, c, where, site), invalid: false };
}

/** Finding, validating and taking a site-config: shared by `run` and the early network phase at boot. */
interface IntakeSetup {
  journal: Journal | undefined;
  notifier: Notifier;
  reporter: ProgressReporter;
  baseline: Baseline;
  nodeName: string;
  copyDir: string;
  candidateDir: string;
  detectOptions: DetectOptions & { memory: DetectMemory };
  /** Looks for a config (resuming the one in progress, unless a different valid one is offered). */
  find(once: boolean, waitingBanner: boolean): Promise<{ accepted?: LoadedSiteConfig; refusedInvalid: boolean; mediaProblem: boolean }>;
}

async function openIntake(opts: Pick<AgentOptions, 'host' | 'log' | 'env' | 'stateDir' | 'dropDir' | 'labels' | 'dryRun' | 'retryNetwork' | 'rescanMs' | 'dropStableMs'>, clock: Clock, signal: AbortSignal): Promise<IntakeSetup> {
  const { host, log } = opts;
  const journal = opts.dryRun ? undefined : await Journal.open(host, opts.stateDir);
  if (journal?.recovered) {
    log.error(journal.recovered);
    await journal.save();
  }
  const notifier: Notifier = createNotifier({ host, log, env: opts.env ?? process.env });
  const reporter = new ProgressReporter(host, journal, notifier, log, clock.now, !opts.dryRun);
  const factoryBaseline = await readBaseline(host, log);
  const clusterName = await clusterNameOf(host, factoryBaseline);
  const baseline: Baseline = { ...factoryBaseline, ...(clusterName ? { clusterName } : {}) };
  const nodeName = await nodeNameOf(host, baseline);
  const copyDir = `${opts.stateDir}/${STATE_FILES.siteConfigCopy}`;
  const candidateDir = opts.dryRun ? `/run/sno-reconfigure/dry-run-${process.pid}` : `${opts.stateDir}/candidate`;
  const intake: Intake = { host, log, clock, journal, reporter, baseline, nodeName, dryRun: opts.dryRun, retryNetwork: opts.retryNetwork ?? false, copyDir, stateDir: opts.stateDir };

  let accepted: LoadedSiteConfig | undefined;
  let lastRefusedInvalid = false;
  const consider = async (c: Candidate | undefined, where: string, resumeDigest?: string, offer?: Offer): Promise<Verdict> => {
    const found = await considerSiteConfig(intake, c, where, resumeDigest, offer);
    lastRefusedInvalid = found.invalid;
    if (found.site) accepted = found.site;
    return found.verdict;
  };

  /** Media that cannot be used reaches the banner and `status`, not only the journal. */
  let mediaProblem = false;
  const onMediaProblem = async (problem: MediaProblem): Promise<void> => {
    mediaProblem = true;
    const office = problem.office ?? NEW_MEDIA;
    if (journal) {
      journal.data.lastError = { at: new Date(clock.now()).toISOString(), step: 'detect', message: problem.message, remedy: problem.remedy, office };
      await journal.save();
    }
    await reporter.problem(problem.message, remedyLines(problem.remedy, office), 'waiting');
  };

  const detectOptions = {
    host,
    log,
    clock,
    labels: opts.labels,
    dropDir: opts.dropDir,
    candidateDir,
    ...(opts.dryRun ? {} : { dropRenamesFile: `${opts.stateDir}/${STATE_FILES.dropDirRenames}` }),
    rescanMs: opts.rescanMs ?? 5_000,
    dropStableMs: opts.dropStableMs ?? 2_000,
    retryRefusedAfterMs: 60_000,
    signal,
    alive: () => notifier.alive(),
    onMediaProblem,
    memory: newDetectMemory(),
  };

  const find = async (once: boolean, waitingBanner: boolean) => {
    accepted = undefined;
    const inProgress = journal && (journal.data.phase === 'running' || journal.data.phase === 'failed') && journal.data.digest && (await host.exists(`${copyDir}/.`));
    if (inProgress) {
      // Restarted mid-run. A different, valid config on new media wins; otherwise resume from our copy.
      await waitForSiteConfig({ ...detectOptions, once: true }, async (c, _copy, offer) => {
        const verdict = await consider(c, candidateDir, undefined, offer);
        return verdict === 'accepted' && accepted?.digest !== journal!.data.digest ? 'accepted' : 'refused';
      });
      if (!accepted) {
        const verdict = await consider(undefined, copyDir, journal!.data.digest);
        if (verdict === 'accepted') log.info({ config: journal!.data.configName, starts: journal!.data.starts + 1 }, `resuming site-config "${journal!.data.configName}" from the journal`);
      }
    }
    if (!accepted) {
      if (journal && journal.data.phase !== 'invalid-config') {
        journal.data.phase = 'waiting';
        await journal.save();
      }
      const refusal = journal?.data.phase === 'invalid-config' ? journal.data.lastError : undefined;
      if (refusal && refusal.step !== 'validate') {
        // A step refused the config while it ran: its failure stays on screen, with what to do.
        await reporter.problem(refusal.message, remedyLines(refusal.remedy, refusal.office));
      } else if (waitingBanner) {
        const insert = `Insert a USB stick or virtual media labelled ${opts.labels.map((l) => l.toUpperCase()).join(' or ')}, or copy it to ${opts.dropDir}.`;
        await reporter.phase('waiting for the site-config', { tone: 'waiting', lines: journal?.recovered ? [`Note: ${journal.recovered}.`, insert] : [insert] });
      }
      await waitForSiteConfig({ ...detectOptions, once }, (c, _copy, offer) => consider(c, candidateDir, undefined, offer));
    }
    return { ...(accepted ? { accepted } : {}), refusedInvalid: lastRefusedInvalid, mediaProblem };
  };
  return { journal, notifier, reporter, baseline, nodeName, copyDir, candidateDir, detectOptions, find };
}

/**
 * The early network phase's intake (`sno-reconfigure early-network`, at boot): the site-config `run` would take
 * now — the one in progress, or valid media present at boot — found, validated and taken by the same code and trust
 * decisions as `run` (never waiting). undefined when there is none, or the node was reconfigured already.
 */
export async function siteConfigAtBoot(opts: Pick<AgentOptions, 'host' | 'log' | 'env' | 'stateDir' | 'dropDir' | 'labels'>, clock: Clock = realClock): Promise<{ site?: LoadedSiteConfig; internalAddresses: string[] } | undefined> {
  if (await opts.host.exists(DONE_MARKER)) return undefined;
  const abort = new AbortController();
  const intake = await openIntake({ ...opts, dryRun: false, retryNetwork: false, dropStableMs: 0 }, clock, abort.signal);
  try {
    const found = await intake.find(true, false);
    return { ...(found.accepted ? { site: found.accepted } : {}), internalAddresses: intake.baseline.internalAddresses ?? [] };
  } finally {
    await intake.reporter.flush();
    await intake.notifier.close();
  }
}

export async function runAgent(opts: AgentOptions): Promise<number> {
  const { host, log } = opts;
  const clock = opts.clock ?? realClock;
  const abort = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, abort.signal]) : abort.signal;

  // The agent's folders first: even a node reconfigured already has its journal read below (the thirteenth hostile
  // re-test of issue 36: a file where the state directory belongs was an internal error there).
  if (!opts.dryRun && !(await agentFoldersInPlace(host, log, opts.stateDir, opts.dropDir))) return EXIT.failed;
  if (!opts.dryRun && (await host.exists(DONE_MARKER))) {
    const misplaced = await misplacedDoneMarker(host);
    if (misplaced !== undefined) {
      log.error({ path: DONE_MARKER }, misplaced);
      return EXIT.failed;
    }
    await reportAlreadyDone(host, log, opts.stateDir);
    return EXIT.ok;
  }
  const { journal, notifier, reporter, baseline, nodeName, candidateDir, detectOptions, find } = await openIntake(opts, clock, signal);

  if (!opts.dryRun) {
    await notifier.ready('starting');
    notifier.startWatchdog();
  }

  const onSignal = () => abort.abort(new Error('stopped by a signal'));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    for (;;) {
      const { accepted, refusedInvalid, mediaProblem } = await find(opts.once || opts.dryRun, true);
      if (!accepted) {
        if (signal.aborted) {
          log.info('stopped while waiting for a site-config');
          return EXIT.ok;
        }
        if (opts.dryRun) {
          // A plan of nothing is not a success: the one asking (a person, a script) expected media to be there.
          log.error(`no site-config found: insert the media labelled ${opts.labels.map((l) => l.toUpperCase()).join(' or ')} or copy it to ${opts.dropDir}, then plan again`);
          return EXIT.failed;
        }
        log.info('no usable site-config found');
        return refusedInvalid || mediaProblem || journal?.data.phase === 'invalid-config' ? EXIT.failed : EXIT.ok;
      }
      const steps = await stepsOf(opts.steps);
      if (opts.dryRun) return await printPlan({ ...opts, steps }, accepted, nodeName, baseline, clock, signal);
      let outcome: Awaited<ReturnType<typeof executeSteps>>;
      try {
        outcome = await executeSteps({ ...opts, steps, clock, signal }, journal!, reporter, notifier, accepted, { nodeName, baseline });
      } catch (e) {
        if (!signal.aborted) throw e;
        // systemctl stop, a reboot or a shutdown: normal, and the journal says where the run resumes.
        const running = steps.find((st) => journal!.data.steps[st.name]?.state === 'running');
        log.info(`stopped${running ? ` during "${running.title}"` : ''}; the run resumes there at the next start`);
        return EXIT.ok;
      }
      if (outcome === 'rejected') {
        // Not offered again from the same media until it is re-inserted or changed.
        refuseLastOffered(detectOptions.memory, clock.now());
        continue;
      }
      return outcome === 'succeeded' ? EXIT.ok : EXIT.failed;
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    if (opts.dryRun) await host.remove(candidateDir);
    await reporter.flush();
    await notifier.close();
  }
}

/** The node was reconfigured already; a run cut off right after the done marker is completed in the journal. */
async function reportAlreadyDone(host: Host, log: Logger, stateDir: string): Promise<void> {
  const marker = await readDoneMarker(host);
  const journal = marker && (await Journal.open(host, stateDir));
  if (marker && journal && completeFromMarker(journal.data, marker)) {
    await journal.save();
    log.info({ marker: DONE_MARKER, config: marker.siteConfig }, 'the last run was cut off right after its done marker; the journal now records it as succeeded');
  }
  // A cut right after the marker left the relocation open (finish.ts): closed here, before anyone removes the marker.
  // Loaded here only: it reads the network's record names, which a waiting agent does not load (issue 39).
  if (marker) await (await import('./relocation-end')).closeRelocation(host, stateDir);
  log.info({ marker: DONE_MARKER }, 'this node was already reconfigured; nothing to do (remove the marker to run again)');
}

interface RunIdentity {
  nodeName: string;
  baseline: Baseline;
}

async function executeSteps(
  opts: AgentOptions & { steps: readonly Step[]; clock: Clock; signal: AbortSignal },
  journal: Journal,
  reporter: ProgressReporter,
  notifier: Notifier,
  site: LoadedSiteConfig,
  id: RunIdentity,
): Promise<'succeeded' | 'failed' | 'rejected'> {
  const { host, log, clock } = opts;
  // Step-by-step waits and a paused pool exclude each other: the first wait would be for the paused pool.
  const steps = sequentialWaits(opts.env ?? process.env) ? opts.steps.filter((s) => s.name !== 'pool-hold') : opts.steps;
  const [{ Background, clusterOnce, endpointsOf, makeContext }, { buildReport }, { fleetReportObjects, publishFleetReport }] = await runWork();
  const background = new Background();
  const cluster = clusterOnce(host, opts.kubeconfig, log);
  const j = journal.data;
  j.starts += 1;
  j.phase = 'running';
  j.facts.nodeName ??= id.nodeName;
  if (id.baseline.internalAddresses) j.facts.internalAddresses = id.baseline.internalAddresses;
  try {
    j.facts.endpoints ??= await endpointsOf(cluster, opts.ingressEndpoint);
  } catch {
    // No readable kubeconfig yet: the api step reports that with what to do.
  }
  await journal.save();
  await reporter.phase(`applying site-config "${site.resolved.name}"`);
  const report = () => buildReport(j, steps, site.resolved.baseDomain, new Date(clock.now()));
  const base = { host, log, site, stateDir: opts.stateDir, kubeconfig: opts.kubeconfig, clock, signal: opts.signal, cluster, background, report };
  try {
    // Slow work that changes nothing (key generation) starts once the site network is in place, for the steps still
    // ahead, while kubelet and the API come up: a run that stops at the network — the failure a site sees most —
    // would have thrown it away (about 0.6 s of CPU for the domain step's three RSA keys), beside the network's
    // verification. An early start is an optimisation only, so a failure here is logged and the step does the
    // work itself when its turn comes.
    const prepareFrom = steps.findIndex((s) => s.name === 'network') + 1;
    const prepareAhead = (ahead: readonly Step[]) => {
      for (const step of ahead) {
        if (journal.step(step.name).state === 'done' || !step.prepare) continue;
        try {
          step.prepare(makeContext(step, base, journal, reporter, notifier));
        } catch (e) {
          log.debug({ step: step.name, err: (e as Error).message }, 'preparing the step ahead of time failed');
        }
      }
    };
    for (const [i, step] of steps.entries()) {
      if (i === prepareFrom) prepareAhead(steps.slice(i));
      notifier.alive();
      const rec = journal.step(step.name);
      const ctx = makeContext(step, base, journal, reporter, notifier);
      if (rec.state === 'done') {
        await step.resume?.(ctx);
        continue;
      }
      rec.state = 'running';
      rec.attempts += 1;
      rec.startedAt = new Date(clock.now()).toISOString();
      delete rec.lastError;
      await journal.save();
      await reporter.phase(step.title);
      const started = clock.now();
      try {
        rec.alreadyDone = await step.check(ctx);
        // A step that still had something to change was not idle, whatever the site-config asks (ssh-key puts the factory's keys back).
        if (step.requested && !step.requested(site.resolved) && rec.alreadyDone) rec.notRequested = true;
        if (!rec.alreadyDone) await step.apply(ctx);
        await step.verify(ctx);
      } catch (e) {
        if (opts.signal.aborted) throw e;
        const err = describeError(e);
        const at = new Date(clock.now()).toISOString();
        rec.state = 'failed';
        rec.lastError = { at, step: step.name, message: err.message, remedy: err.remedy, ...(err.office ? { office: err.office } : {}) };
        j.lastError = rec.lastError;
        if (err.rejected) {
          (j.rejectedDigests ??= []).push(site.digest);
          if (err.retryOnRequest) (j.retryableDigests ??= []).push(site.digest);
          j.phase = 'invalid-config';
        } else {
          j.phase = 'failed';
        }
        await journal.save();
        const retry = !err.rejected && err.attempt && err.attempt.n < err.attempt.of ? retryHeadline(step.title, err.attempt, clock.now()) : undefined;
        log.child({ step: step.name }).error({ remedy: err.remedy, office: err.office }, `${step.title} failed: ${err.message}${retry ? `; ${retry.when}` : ''}`);
        if (retry) await reporter.problem(retry.headline, [err.message, ...remedyLines(err.remedy, err.office)], 'retrying');
        else await reporter.problem(`${step.title} failed`, [err.message, ...remedyLines(err.remedy, err.office)]);
        for (const done of steps.filter((x) => x.onRunFailed && journal.step(x.name).state === 'done')) await done.onRunFailed!(makeContext(done, base, journal, reporter, notifier));
        // Only once the API has answered in this run: before that, trying would only delay the failure's banner.
        if (journal.step('api').state === 'done') {
          await publishFleetReport(cluster, fleetReportObjects(report(), err.rejected ? 'refused' : 'failed', new Date(clock.now())), { timer: clock, signal: opts.signal, log, budgetMs: FAILED_RUN_REPORT_BUDGET_MS });
        }
        return err.rejected ? 'rejected' : 'failed';
      }
      if (sequentialWaits(opts.env ?? process.env) && WRITING_STEPS.includes(step.name) && !rec.alreadyDone) {
        const settle = steps.find((s) => s.name === 'settle');
        if (settle) await settle.apply(makeContext(settle, base, journal, reporter, notifier));
      }
      rec.state = 'done';
      rec.endedAt = new Date(clock.now()).toISOString();
      rec.durationMs = clock.now() - started;
      await journal.save();
      log.child({ step: step.name }).info({ durationMs: rec.durationMs, alreadyDone: rec.alreadyDone }, `${step.title} — ${rec.notRequested ? 'not requested by the site-config' : rec.alreadyDone ? 'already in place, nothing to change' : `done in ${humanDuration(rec.durationMs)}`}`);
    }
    j.phase = 'succeeded';
    j.finishedAt = new Date(clock.now()).toISOString();
    delete j.lastError;
    // `status` says what is so now, not the title of the last step.
    j.status = `site-config "${site.resolved.name}" applied: reconfiguration complete`;
    await journal.save();
    log.info({ config: site.resolved.name }, `site-config "${site.resolved.name}" applied: reconfiguration complete`);
    reporter.finalStatus(`site-config "${site.resolved.name}" applied`);
    return 'succeeded';
  } finally {
    await background.stopAll();
    await cluster.close();
  }
}

async function printPlan(opts: AgentOptions & { steps: readonly Step[] }, site: LoadedSiteConfig, nodeName: string, baseline: Baseline, clock: Clock, signal: AbortSignal): Promise<number> {
  const out = opts.out ?? ((s: string) => process.stdout.write(s));
  const { renderPlan } = await import('./plan');
  out(await renderPlan({ host: opts.host, log: opts.log, site, steps: opts.steps, stateDir: opts.stateDir, clock, signal, kubeconfig: opts.kubeconfig, nodeName, baseline, ...(opts.ingressEndpoint ? { ingressEndpoint: opts.ingressEndpoint } : {}) }));
  return EXIT.ok;
}

