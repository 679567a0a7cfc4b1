// The done marker (DONE_MARKER) is a run's commit point: the finish step writes it after the final report,
// and the unit's `ConditionPathExists=!` keeps the service from ever starting again. A power cut right after
// it leaves the journal one save behind (phase "running", step "finish" running) — and the agent never starts
// again to catch up. So whoever reads the journal (`status`; `run` started by hand) takes the marker's word.
import { pathKindInWords, type Host } from '../host/host';
import { DONE_MARKER } from '../paths';
import type { JournalData } from './journal';

export interface DoneMarker {
  finishedAt: string;
  /** The site-config's name and digest. */
  siteConfig: string;
  digest: string;
}

export async function writeDoneMarker(host: Host, marker: DoneMarker): Promise<void> {
  await host.writeFileAtomic(DONE_MARKER, `${JSON.stringify(marker)}\n`, 0o644);
}

/**
 * What stands where the done marker belongs, when it is not a file: a folder, a link or a special file there keeps the
 * service from starting just as the marker does (systemd's ConditionPathExists=! asks only whether the path exists),
 * so it is said with the way out rather than read as "done". undefined: the marker, or nothing.
 */
export async function misplacedDoneMarker(host: Host, markerPath = DONE_MARKER): Promise<string | undefined> {
  const info = await host.stat(markerPath).catch(() => undefined);
  if (info === undefined) return undefined;
  // An empty file is a marker made by hand (touch), as bootstrap-in-place's is; a file with something else in it is
  // not the agent's (the tenth hostile re-test of issue 36: `null` there read as "reconfigured").
  if (info.kind === 'file' && (info.size === 0 || (await readDoneMarker(host, markerPath)) !== undefined)) return undefined;
  const what = info.kind === 'file' ? 'a file that is not the agent\'s done marker (it holds no record of a finished run)' : `${pathKindInWords(info)}, not the agent's done marker (a file it writes once the node is reconfigured)`;
  return `${markerPath} is ${what}, and while anything is there the service does not start; if this node has not been reconfigured at this site, move it aside (mv ${markerPath} ${markerPath}.bad) and start the service (systemctl start sno-reconfigure)`;
}

/** The marker, or undefined when there is none or it is not one of ours (then it proves nothing). */
export async function readDoneMarker(host: Host, markerPath = DONE_MARKER): Promise<DoneMarker | undefined> {
  const text = await host.readTextIfExists(markerPath).catch(() => undefined);
  if (!text) return undefined;
  try {
    const m = JSON.parse(text) as Partial<DoneMarker>;
    return typeof m.digest === 'string' && typeof m.finishedAt === 'string' ? { finishedAt: m.finishedAt, siteConfig: String(m.siteConfig ?? ''), digest: m.digest } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Brings a journal that fell one save behind its marker up to date: the finish step done, the run succeeded.
 * Returns false (and changes nothing) when the journal is current or the marker is another config's.
 */
export function completeFromMarker(j: JournalData, marker: DoneMarker): boolean {
  if (j.phase === 'succeeded' || j.digest !== marker.digest) return false;
  const finish = (j.steps.finish ??= { state: 'pending', attempts: 1, data: {} });
  finish.state = 'done';
  finish.endedAt ??= marker.finishedAt;
  delete finish.lastError;
  j.phase = 'succeeded';
  j.finishedAt = marker.finishedAt;
  delete j.lastError;
  delete j.status;
  return true;
}
