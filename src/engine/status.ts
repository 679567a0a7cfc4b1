// `sno-reconfigure status`: the current or last run as a technician reads it — phase, each step's state
// and timing, the last error with what to do, and where the report is.
import type { Host } from '../host/host';
import { retryNetworkCommand } from '../host/banner';
import { STATE_FILES } from '../paths';
import { formatDuration } from '../siteconfig/duration';
import { mediaTrustLine, readMediaTrust } from '../siteconfig/signature';
import { readJournal, type JournalData } from './journal';
import { completeFromMarker, misplacedDoneMarker, readDoneMarker } from './done-marker';
import { certificateLines, clockLine, stepSummary, type CertificateExpiry, type ReportStep } from './report';
import type { StepName } from './step';
import { screenJson, screenLine } from '../util/screen-text';
import { remedyLines } from '../util/remedy';

export interface StatusView {
  phase: JournalData['phase'] | 'not-started' | 'done';
  status?: string;
  /** Which site-config media this node accepts (signed by its trusted keys, or unsigned), in a sentence. */
  media: string;
  siteConfig?: { name?: string; digest?: string; source?: JournalData['source'] };
  startedAt?: string;
  finishedAt?: string;
  starts?: number;
  steps: (ReportStep & { status?: string; error?: string })[];
  lastError?: JournalData['lastError'];
  warnings: string[];
  /** The agent paused the master pool and has not released it yet (the run holds it, or was cut off holding it). */
  poolHeld?: boolean;
  certificates?: CertificateExpiry[];
  clock?: JournalData['facts']['clock'];
  report?: string;
  journal: string;
  /**
   * Set when the site-config was refused only because its network did not verify (a cable, a switch port):
   * how to try it again on this node's runtime. The config itself may be fine.
   */
  retryNetwork?: string;
}

/** `steps`: the run's steps in order (their names and titles). */
export async function readStatus(host: Host, stateDir: string, doneMarker: string, steps: readonly { name: StepName; title: string }[], env: NodeJS.ProcessEnv = process.env): Promise<StatusView> {
  const journalFile = `${stateDir}/${STATE_FILES.journal}`;
  const j = await readJournal(host, stateDir, { keepCorruptCopy: false });
  const marker = await readDoneMarker(host, doneMarker);
  if (j && marker) completeFromMarker(j, marker);
  const reportFile = `${stateDir}/${STATE_FILES.report}`;
  const report = (await host.exists(reportFile)) ? reportFile : undefined;
  const media = mediaTrustLine(await readMediaTrust(host));
  const misplaced = await misplacedDoneMarker(host, doneMarker);
  if (!j) {
    const done = misplaced === undefined && (await host.exists(doneMarker));
    return { phase: done ? 'done' : 'not-started', media, steps: [], warnings: misplaced ? [misplaced] : [], journal: journalFile, ...(report ? { report } : {}) };
  }
  return {
    phase: j.phase,
    media,
    ...(j.status ? { status: j.status } : {}),
    siteConfig: { name: j.configName, digest: j.digest, source: j.source },
    ...(j.startedAt ? { startedAt: j.startedAt } : {}),
    ...(j.finishedAt ? { finishedAt: j.finishedAt } : {}),
    starts: j.starts,
    steps: steps.filter(({ name }) => j.steps[name] || j.phase === 'running' || j.phase === 'failed').map(({ name, title }) => {
      const r = j.steps[name];
      return {
        ...stepSummary(j, name, title),
        ...(r?.state === 'running' && r.status ? { status: r.status } : {}),
        ...(r?.lastError ? { error: r.lastError.message } : {}),
      };
    }),
    ...(j.lastError ? { lastError: j.lastError } : {}),
    warnings: misplaced ? [misplaced, ...j.warnings] : j.warnings,
    ...(j.facts.poolHeld ? { poolHeld: true } : {}),
    ...(j.facts.certificates?.length ? { certificates: j.facts.certificates } : {}),
    ...(j.facts.clock ? { clock: j.facts.clock } : {}),
    ...(report ? { report } : {}),
    journal: journalFile,
    ...(j.phase === 'invalid-config' && j.digest && j.retryableDigests?.includes(j.digest) ? { retryNetwork: `re-insert the media, or ${retryNetworkCommand(env)}` } : {}),
  };
}

const PHASE_TEXT: Record<StatusView['phase'], string> = {
  'not-started': 'not started: no run has been recorded on this node',
  waiting: 'waiting for a site-config',
  'invalid-config': 'waiting for a corrected site-config (the one found was refused)',
  running: 'running',
  failed: 'failed (the service retries after a pause)',
  succeeded: 'succeeded',
  done: 'done (this node was reconfigured; the service is disabled)',
};

export function renderStatus(v: StatusView, now = Date.now()): string {
  // Refused only for its network (a cable): say what the banner says, not "waiting for a corrected site-config".
  const phase = v.retryNetwork ? `waiting: the site network did not verify in 3 attempts (the site-config may be fine); to try it again, ${v.retryNetwork}` : PHASE_TEXT[v.phase];
  const lines = [`Phase:       ${phase}`];
  if (v.status) lines.push(`Now:         ${v.status}`);
  lines.push(`Media:       ${v.media}`);
  // Said whenever the journal shows the hold (issue 36: a pool left paused blocks certificate rotation): a run cut off
  // while holding it leaves it paused until the agent's next start has written what remains (pool-hold.ts resume).
  if (v.poolHeld) lines.push("Pool:        the master MachineConfigPool is paused by the agent while it changes what the pool rolls out; the agent unpauses it when that is done, or, if the run was cut off, once its next start has written what remains (systemctl restart sno-reconfigure, if the service is not running)");
  if (v.siteConfig?.name) lines.push(`Site-config: ${v.siteConfig.name}${v.siteConfig.digest ? ` (sha256 ${v.siteConfig.digest.slice(0, 12)}…)` : ''}${v.siteConfig.source ? ` from ${v.siteConfig.source.location}` : ''}`);
  if (v.startedAt) lines.push(`Started:     ${v.startedAt}${v.starts && v.starts > 1 ? ` (${v.starts} starts)` : ''}${v.finishedAt ? `, finished ${v.finishedAt}` : ` (${formatDuration(now - Date.parse(v.startedAt))} ago)`}`);
  if (v.steps.length) {
    lines.push('', 'Steps:');
    const width = Math.max(...v.steps.map((s) => s.title.length));
    for (const s of v.steps) {
      const timing = s.durationMs !== undefined ? formatDuration(s.durationMs) : '';
      const extra = [s.notRequested ? 'not requested' : s.alreadyDone ? 'already in place' : '', s.attempts > 1 ? `${s.attempts} attempts` : '', s.status ?? '', s.error ? `error: ${s.error}` : ''].filter(Boolean).join('; ');
      lines.push(`  ${s.state.padEnd(7)} ${s.title.padEnd(width)} ${timing.padStart(7)}${extra ? `  ${extra}` : ''}`);
    }
  }
  if (v.lastError && v.phase !== 'succeeded') {
    lines.push('', `Last error (${v.lastError.at}${v.lastError.step ? `, ${v.lastError.step}` : ''}): ${v.lastError.message}`);
    for (const p of v.lastError.problems ?? []) lines.push(`  - ${p.path}: ${p.message}`);
    lines.push(...remedyLines(v.lastError.remedy, v.lastError.office));
  }
  if (v.clock) lines.push('', `Clock (${v.clock.checkedAt}): ${clockLine(v.clock)}.`);
  if (v.certificates?.length) {
    lines.push('', 'Certificates:', ...certificateLines(v.certificates).map((l) => `  ${l}`));
    if (v.certificates.some((c) => c.source === 'issued')) lines.push('  Renew the issued ones before then with `sno-reconfigure renew-certificates` (it renews at 80 % of their lifetime).');
  }
  if (v.warnings.length) lines.push('', 'Warnings:', ...v.warnings.map((w) => `  - ${w}`));
  lines.push('', `Journal: ${v.journal}`);
  if (v.report) lines.push(`Report:  ${v.report}`);
  // One line each, whatever a name from the media or the cluster holds (src/util/screen-text.ts).
  return `${lines.map((l) => screenLine(l)).join('\n')}\n`;
}

/** `status --json`: the view as valid JSON that shows no control character on a terminal. */
export function statusJson(v: StatusView): string {
  return `${screenJson(JSON.stringify(v, null, 2))}\n`;
}

/**
 * `status`'s exit code, for scripts (the command-line contract): 0 the node is reconfigured, 1 the last run
 * failed, its site-config was refused, or the media found cannot be used (unreadable, no site-config on it,
 * not for this machine: a person must act, as for a refused config), STATUS_EXIT_PENDING while there is
 * nothing to judge yet (waiting for a site-config with none found so far, or a run in progress).
 */
export const STATUS_EXIT_PENDING = 3;

export function statusExitCode(phase: StatusView['phase'], lastError?: StatusView['lastError']): number {
  switch (phase) {
    case 'succeeded':
    case 'done':
      return 0;
    case 'failed':
    case 'invalid-config':
      return 1;
    case 'waiting':
      return lastError ? 1 : STATUS_EXIT_PENDING;
    case 'not-started':
    case 'running':
      return STATUS_EXIT_PENDING;
  }
}
