// report.json: what a support engineer reads after the fact — which config, what changed where, how long
// each step took, the warnings, and where the hand-off kubeconfig is.
import type { JournalData } from './journal';
import type { Change, StepName } from './step';
import { formatDuration } from '../siteconfig/duration';
import type { Host } from '../host/host';
import { STATE_FILES } from '../paths';

export interface ReportStep {
  name: StepName;
  title: string;
  state: string;
  attempts: number;
  alreadyDone: boolean;
  /** The site-config does not ask for this step's change (shown as "not requested", not "already in place"). */
  notRequested?: boolean;
  startedAt?: string;
  endedAt?: string;
  durationMs?: number;
}

export type CertificateExpiry = NonNullable<JournalData['facts']['certificates']>[number];

/** "the API certificate (api.sno1.example.com) expires 2028-03-01": one line per certificate, soonest first. */
export function certificateLines(certs: readonly CertificateExpiry[]): string[] {
  return [...certs]
    .sort((a, b) => Date.parse(a.notAfter) - Date.parse(b.notAfter))
    .map((c) => `${c.role} certificate (${c.names.join(', ')}) expires ${c.notAfter.slice(0, 10)}${c.source === 'issued' ? '' : ' (provided by the site)'}`);
}

/** chronyd's threshold (`makestep 1.0 3`): a smaller offset is slewed away, a larger one is a wrong clock. */
export const CLOCK_STEP_THRESHOLD_S = 1;

/** The clock step's finding as a sentence (the journal, `status`); `sources` are the site's NTP servers. */
export function clockLine(c: NonNullable<JournalData['facts']['clock']>, sources?: string): string {
  if (!c.synchronised) return `The node's clock is not synchronised${sources ? ` with the site's NTP servers (${sources})` : ' with an NTP server'}; it keeps its own time`;
  const corrected = c.correctedSeconds ?? 0;
  const fixed = Math.abs(corrected) >= CLOCK_STEP_THRESHOLD_S ? `; it was ${formatDuration(Math.round(Math.abs(corrected) * 1000))} ${corrected > 0 ? 'behind' : 'ahead'} and was set right` : '';
  return `The node's clock is synchronised with ${c.source ?? 'its NTP source'}, ${Math.abs(c.offsetSeconds ?? 0).toFixed(3)} s from NTP time${fixed}`;
}

export interface Report {
  result: 'succeeded' | 'failed' | 'in-progress';
  siteConfig: { name?: string; digest?: string; source?: JournalData['source'] };
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
  /** How many times the agent started on this config (reboots, restarts after failures). */
  starts: number;
  node: { name?: string; addresses?: string[]; clock?: JournalData['facts']['clock'] };
  cluster: { name?: string; oldBaseDomain?: string; newBaseDomain?: string; version?: string; apiUrl?: string; consoleUrl?: string };
  /** The admin kubeconfig for the new API name (state directory, mode 0600). */
  kubeconfig?: string;
  /** The certificates serving the new names and when each expires. */
  certificates?: CertificateExpiry[];
  /** When that kubeconfig's client certificate expires (absent for a token). */
  kubeconfigExpires?: string;
  steps: ReportStep[];
  changes: Change[];
  warnings: string[];
  lastError?: JournalData['lastError'];
}

/** One step as the report and `status` show it. */
export function stepSummary(j: JournalData, name: StepName, title: string): ReportStep {
  const r = j.steps[name];
  return {
    name,
    title,
    state: r?.state ?? 'pending',
    attempts: r?.attempts ?? 0,
    alreadyDone: r?.alreadyDone ?? false,
    ...(r?.notRequested ? { notRequested: true } : {}),
    ...(r?.startedAt ? { startedAt: r.startedAt } : {}),
    ...(r?.endedAt ? { endedAt: r.endedAt } : {}),
    ...(r?.durationMs !== undefined ? { durationMs: r.durationMs } : {}),
  };
}

export function buildReport(j: JournalData, titles: readonly { name: StepName; title: string }[], newBaseDomain: string | undefined, now: Date): Report {
  const cluster = j.facts.clusterName;
  const finishedAt = j.phase === 'succeeded' ? (j.finishedAt ?? now.toISOString()) : undefined;
  return {
    result: j.phase === 'succeeded' ? 'succeeded' : j.phase === 'failed' ? 'failed' : 'in-progress',
    siteConfig: { name: j.configName, digest: j.digest, source: j.source },
    startedAt: j.startedAt,
    ...(finishedAt ? { finishedAt } : {}),
    ...(j.startedAt ? { durationMs: (finishedAt ? Date.parse(finishedAt) : now.getTime()) - Date.parse(j.startedAt) } : {}),
    starts: j.starts,
    node: { name: j.facts.nodeName, addresses: j.facts.nodeAddresses, ...(j.facts.clock ? { clock: j.facts.clock } : {}) },
    cluster: {
      name: cluster,
      oldBaseDomain: j.facts.oldBaseDomain,
      newBaseDomain,
      version: j.facts.clusterVersion,
      ...(cluster && newBaseDomain ? { apiUrl: `https://api.${cluster}.${newBaseDomain}:6443`, consoleUrl: `https://console-openshift-console.apps.${cluster}.${newBaseDomain}` } : {}),
    },
    ...(j.facts.newApiKubeconfig ? { kubeconfig: j.facts.newApiKubeconfig } : {}),
    ...(j.facts.newApiKubeconfigExpires ? { kubeconfigExpires: j.facts.newApiKubeconfigExpires } : {}),
    ...(j.facts.certificates?.length ? { certificates: j.facts.certificates } : {}),
    steps: titles.map(({ name, title }) => stepSummary(j, name, title)),
    changes: j.changes,
    warnings: j.warnings,
    ...(j.lastError ? { lastError: j.lastError } : {}),
  };
}

/**
 * Writes report.json. Something else in its place (a folder, a link, a device) is moved aside as
 * report.json.corrupt first (issue 36, C4: a folder there failed the finish step with EISDIR, an "internal error");
 * returns the sentence saying so, for the journal and the banner.
 */
export async function writeReportFile(host: Host, stateDir: string, report: Report): Promise<string | undefined> {
  const file = `${stateDir}/${STATE_FILES.report}`;
  const info = await host.stat(file);
  let movedAside: string | undefined;
  if (info !== undefined && info.kind !== 'file') {
    await host.remove(`${file}.corrupt`);
    await host.rename(file, `${file}.corrupt`);
    const what = info.kind === 'directory' ? 'a folder' : info.kind === 'symlink' ? 'a symbolic link' : (info.special ?? 'not a file');
    movedAside = `the agent's report ${file} was ${what}, not a file: it was moved aside as ${STATE_FILES.report}.corrupt and the report written anew`;
  }
  await host.writeFileAtomic(file, `${JSON.stringify(report, null, 2)}\n`, 0o644);
  return movedAside;
}
