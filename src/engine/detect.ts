// Waiting for a site-config: labelled volumes (rescanned on a short interval and whenever /dev changes —
// mounting makes no inotify event, but the kernel creates device nodes in devtmpfs) and the drop
// directory (watched with inotify, taken only once nothing in it changed for dropStableMs: a file may still
// be copying). Media that could not be read, or held a config that was refused, are not read again until they
// change or go away.
import type { Closable, Host } from '../host/host';
import type { Logger } from '../log';
import { findLabelledVolumes } from '../siteconfig/discovery';
import { copyFromVolume, dropDirIsStable, snapshotInto, MediaError, type CopyResult } from '../siteconfig/media';
import type { Clock } from './step';

export interface Candidate {
  kind: 'volume' | 'drop-dir';
  /** Device or directory, for logs and the report. */
  location: string;
  /** Stable identity while the media stays put: fs UUID or device; the drop directory's path. */
  identity: string;
  fetch(toNode: string): Promise<CopyResult>;
}

export interface DetectOptions {
  host: Host;
  log: Logger;
  clock: Clock;
  labels: string[];
  dropDir: string;
  /** Where a candidate is copied before it is validated (node path). */
  candidateDir: string;
  rescanMs: number;
  /** The drop directory must be unchanged this long before it is taken. */
  dropStableMs: number;
  /** Re-read refused media that is still attached after this long (a BMC may swap an image in place). */
  retryRefusedAfterMs: number;
  signal: AbortSignal;
  /** Called on every loop turn: the watchdog's proof of life. */
  alive?: () => void;
  onWaiting?: () => void;
}

export type Verdict = 'accepted' | 'refused';

export async function listCandidates(opts: Pick<DetectOptions, 'host' | 'labels' | 'dropDir' | 'dropStableMs' | 'clock'>): Promise<Candidate[]> {
  const out: Candidate[] = (await findLabelledVolumes(opts.host, opts.labels)).map((v) => ({
    kind: 'volume' as const,
    location: `${v.device} (label ${v.label})`,
    identity: `volume:${v.uuid ?? v.device}`,
    fetch: (to: string) => copyFromVolume(opts.host, v.device, to, v.fstype),
  }));
  if ((await opts.host.listDir(opts.dropDir)).length > 0 && (await dropDirIsStable(opts.host, opts.dropDir, opts.dropStableMs, opts.clock.now()))) {
    out.push({ kind: 'drop-dir', location: opts.dropDir, identity: `drop-dir:${opts.dropDir}`, fetch: (to: string) => snapshotInto(opts.host, opts.dropDir, to) });
  }
  return out;
}

/**
 * Offers every new candidate to `consider` until one is accepted. Returns undefined when `once` and none
 * was accepted in one pass, or when aborted.
 */
export async function waitForSiteConfig(
  opts: DetectOptions & { once: boolean },
  consider: (candidate: Candidate, copy: CopyResult) => Promise<Verdict>,
): Promise<Candidate | undefined> {
  /** identity → what we last saw of it (tree digest, or the error) and when. */
  const refused = new Map<string, { treeDigest?: string; at: number }>();
  const wake = createWaker(opts);
  try {
    while (!opts.signal.aborted) {
      opts.alive?.();
      const candidates = await listCandidates(opts);
      const present = new Set(candidates.map((c) => c.identity));
      // Media that went away is forgotten: re-inserting it is a new attempt.
      for (const id of refused.keys()) if (!present.has(id)) refused.delete(id);
      for (const c of candidates) {
        const prior = refused.get(c.identity);
        if (prior && c.kind === 'volume' && opts.clock.now() - prior.at < opts.retryRefusedAfterMs) continue;
        let copy: CopyResult;
        try {
          copy = await c.fetch(opts.candidateDir);
        } catch (e) {
          if (!(e instanceof MediaError)) throw e;
          if (!prior) opts.log.error({ media: c.location, remedy: e.remedy }, `site-config media unreadable: ${e.message}`);
          refused.set(c.identity, { at: opts.clock.now() });
          continue;
        }
        if (prior?.treeDigest === copy.treeDigest) {
          refused.set(c.identity, { ...prior, at: opts.clock.now() });
          continue;
        }
        if ((await consider(c, copy)) === 'accepted') return c;
        refused.set(c.identity, { treeDigest: copy.treeDigest, at: opts.clock.now() });
      }
      if (opts.once) return undefined;
      opts.onWaiting?.();
      await wake.wait(opts.rescanMs);
    }
    return undefined;
  } finally {
    await wake.close();
  }
}

interface Waker {
  wait(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Resolves a wait early when the drop directory or /dev changes. */
function createWaker(opts: DetectOptions): Waker {
  let poke: (() => void) | undefined;
  const trigger = () => poke?.();
  // A directory that is not there (no udev, or a test root) is not watched: the interval rescan covers it.
  const watchers = ['/dev', '/dev/disk/by-label'].map((dir) => opts.host.watchDir(dir, trigger)).filter((w): w is Closable => w !== undefined);
  // A change in the drop directory wakes the scan at once, and again once it can have been quiet for
  // dropStableMs (a copy still running keeps pushing that second look back), so a finished copy is taken
  // without waiting for the next rescan. Without inotify the rescan interval still finds it.
  let settled: ReturnType<typeof setTimeout> | undefined;
  const dropChanged = () => {
    trigger();
    clearTimeout(settled);
    settled = setTimeout(trigger, opts.dropStableMs + 50);
    settled.unref();
  };
  const drop = opts.host.watchDir(opts.dropDir, dropChanged, { recursive: true });
  return {
    wait: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => {
          poke = undefined;
          opts.signal.removeEventListener('abort', done);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, ms);
        poke = done;
        opts.signal.addEventListener('abort', done, { once: true });
      }),
    close: async () => {
      for (const w of watchers) w.close();
      drop?.close();
      clearTimeout(settled);
    },
  };
}
