// Waiting for a site-config: labelled volumes (rescanned on a short interval and whenever /dev changes —
// mounting makes no inotify event, but the kernel creates device nodes in devtmpfs) and the drop
// directory (watched with inotify, taken only once no process holds a file in it open for writing and nothing
// in it changed for dropStableMs: a file may still be copying). Media that could not be read, or held a config that was refused, are not read again until they
// change or go away.
import { pathKindInWords, whyUnreadable, type Closable, type Host, type PathInfo, type WatchEvent } from '../host/host';
import type { Logger } from '../log';
import { findLabelledVolumes } from '../siteconfig/discovery';
import { copyFromVolume, dropDirIsStable, dropDirLastChange, dropDirNames, dropDirNewestChange, dropDirUnfinished, snapshotInto, MediaError, type CopyResult, type RenamedIn } from '../siteconfig/media';
import type { Clock } from './step';

export interface Candidate {
  kind: 'volume' | 'drop-dir';
  /** Device or directory, for logs and the report. */
  location: string;
  /** The same, as a technician names it in a sentence: "the stick /dev/sdb1 (SITE-CONFIG)". */
  medium: string;
  /** Stable identity while the media stays put: fs UUID or device; the drop directory's path. */
  identity: string;
  /** Changes when the medium behind the identity is replaced (a BMC swapping an image in place). */
  fingerprint: string;
  fetch(toNode: string): Promise<CopyResult>;
}

/** A media problem a technician has to act on: for the banner and `status` as well as the journal. */
export interface MediaProblem {
  message: string;
  /** What the person at the node can do. */
  remedy: string;
  /** What the office must do when that does not help; default: send new media. */
  office?: string;
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
  /** The drop directory must be unchanged this long before it is taken, and read the same twice this far apart. */
  dropStableMs: number;
  /** Re-read refused media that is still attached after this long, even without a sign that it changed. */
  retryRefusedAfterMs: number;
  signal: AbortSignal;
  /** Called on every loop turn: the watchdog's proof of life. */
  alive?: () => void;
  onWaiting?: () => void;
  /** Media that cannot be used, told once per problem. */
  onMediaProblem?: (problem: MediaProblem) => Promise<void>;
  /** What was refused, kept across waits (a refused medium is offered again once it was removed or changed). */
  memory?: DetectMemory;
  /** Where what the watch saw renamed into the drop directory is kept for the next start (node path; none: not kept). */
  dropRenamesFile?: string;
}

export interface DetectMemory {
  /** identity → what we last saw of it (tree digest, or the error) and when. */
  refused: Map<string, { treeDigest?: string; error?: string; fingerprint: string; at: number }>;
  /** Refused media that went away: when it is back, it was re-inserted. */
  returning: Set<string>;
  /** The candidate last offered, so a config refused later (while it ran) is not offered again until its media changes. */
  lastOffered?: { identity: string; treeDigest: string; fingerprint: string };
  /**
   * The sources last compared (volumes and the drop directory: identity and fingerprint of each) and the one kept when
   * they agreed, with the digest they agreed on: not compared again while they stay, and a copy of the kept one that
   * holds anything else was not compared.
   */
  volumes?: { key: string; keep: Candidate[]; agreed?: string };
}

export const newDetectMemory = (): DetectMemory => ({ refused: new Map(), returning: new Set() });

/** The config last offered was refused after it was taken (a step rejected it): its media counts as refused. */
export function refuseLastOffered(memory: DetectMemory, at: number): void {
  if (memory.lastOffered) memory.refused.set(memory.lastOffered.identity, { treeDigest: memory.lastOffered.treeDigest, fingerprint: memory.lastOffered.fingerprint, at });
}

/** How a candidate came to be offered: `reinserted` when its media was refused before and then removed or replaced. */
export interface Offer {
  reinserted: boolean;
}

export type Verdict = 'accepted' | 'refused';

function mediumName(device: string, label: string, fstype: string | undefined): string {
  const kind = fstype === 'iso9660' || fstype === 'udf' ? 'the disc image' : 'the stick';
  return `${kind} ${device} (${label})`;
}

/**
 * A re-inserted stick gets a new device node (devtmpfs), even when its filesystem UUID is the same; a BMC
 * image replaced in place has a new UUID, which is a new identity already.
 */
async function deviceFingerprint(host: Host, nodeDevice: string): Promise<string> {
  return String((await host.stat(nodeDevice).catch(() => undefined))?.mtimeMs);
}

const dropDirIdentity = (dropDir: string): string => `drop-dir:${dropDir}`;

export async function listCandidates(opts: Pick<DetectOptions, 'host' | 'labels' | 'dropDir' | 'dropStableMs' | 'clock'>): Promise<Candidate[]> {
  const out: Candidate[] = [];
  for (const v of await findLabelledVolumes(opts.host, opts.labels)) {
    // The filesystem UUID outlives a new device node (a stick pulled and inserted again). Two volumes present with one
    // UUID (sticks cloned from one image) share it: they are compared first, and only agreeing copies go on as one.
    out.push({
      kind: 'volume',
      location: `${v.nodeDevice} (label ${v.label})`,
      medium: mediumName(v.nodeDevice, v.label, v.fstype),
      identity: `volume:${v.uuid ?? v.nodeDevice}`,
      fingerprint: await deviceFingerprint(opts.host, v.nodeDevice),
      fetch: (to: string) => copyFromVolume(opts.host, v.device, to, v.fstype, v.nodeDevice),
    });
  }
  const drop = { kind: 'drop-dir' as const, location: opts.dropDir, medium: `the drop directory ${opts.dropDir}`, identity: dropDirIdentity(opts.dropDir), fingerprint: '' };
  // Something else where the folder belongs (a careless `scp site-config.yaml node:…/site-config.d` after the folder was
  // removed, the eighth hostile re-test of issue 36: an internal error) is a source that cannot be read: it may be today's.
  const there = await opts.host.stat(opts.dropDir).catch(() => undefined);
  if (there !== undefined && there.kind !== 'directory') {
    const what = pathKindInWords(there);
    out.push({ ...drop, fetch: () => Promise.reject(new MediaError(`is ${what}, not a folder, so nothing there can be read`, `Move it away (mv ${opts.dropDir} ${opts.dropDir}.moved), make the folder again (mkdir ${opts.dropDir}), and if it is today's site-config, move it in as ${opts.dropDir}/site-config.yaml.`)) });
  } else if ((await dropDirNames(opts.host, opts.dropDir)).length > 0 && (await dropDirIsStable(opts.host, opts.dropDir, opts.dropStableMs, opts.clock.now()))) {
    out.push({ ...drop, fetch: (to: string) => snapshotInto(opts.host, opts.dropDir, to, { track: true }) });
  }
  return out;
}

/** What one source (a labelled volume, the drop directory) held when the sources were compared: its copy, or why it could not be read. */
type Reading = { source: Candidate; copy: CopyResult } | { source: Candidate; error: MediaError };

function describeReading(r: Reading): string {
  if ('error' in r) return `${r.source.medium}, which cannot be used: it ${r.error.message}`;
  // The names are the media's own text: quoted as JSON, a quote in one cannot end it and start a sentence of its own.
  const sites = r.copy.sites.map((s) => JSON.stringify(s)).join(', ');
  return `${r.source.medium}, which holds ${sites ? `site ${sites}` : r.copy.files === 0 ? 'no site-config file (a folder, or nothing, where it belongs)' : 'a site-config without metadata.name'}`;
}

/** What the technician does to leave only today's source: pull a stick, detach a BMC image, remove a dropped file. */
function leaveOnlyTodays(readings: readonly Reading[]): string {
  const drop = readings.find((r) => r.source.kind === 'drop-dir');
  const volumes = readings.some((r) => r.source.kind === 'volume');
  const pull = 'Pull the media not meant for today (an old image in the BMC: detach it there) and leave only today\'s.';
  if (!drop) return pull;
  const remove = `If the file in ${drop.source.medium} is not today's, remove it from there (every file in ${drop.source.location}); if it is, pull the other media.`;
  return volumes ? `${pull} ${remove}` : remove;
}

/**
 * Every present source (labelled volumes: last month's virtual media and today's stick; the drop directory) is
 * used only when all are readable and identical (DESIGN.md section 4, "One source of truth per boot"): a source
 * that cannot be read may be today's, so another one is not taken in its place. The problem names every source
 * and the site each holds, so the technician can tell which one to remove.
 */
export function conflictProblem(readings: readonly Reading[]): MediaProblem | undefined {
  const digests = new Set(readings.flatMap((r) => ('copy' in r ? [r.copy.treeDigest] : [])));
  const unreadable = readings.filter((r): r is Extract<Reading, { error: MediaError }> => 'error' in r);
  if (unreadable.length === 0 && digests.size < 2) return undefined;
  const what =
    unreadable.length > 0
      ? `${readings.length} site-config media are attached and ${unreadable.length === readings.length ? 'none of them can be read' : `${unreadable.length === 1 ? 'one' : unreadable.length} of them cannot be read`}`
      : digests.size === readings.length
        ? `${readings.length} different site-config media are attached`
        : `${readings.length} site-config media are attached, holding ${digests.size} different site-configs`;
  const fix = unreadable.map((r) => `If ${r.source.medium} is today's: ${r.error.remedy}`);
  // The same site named on each, yet different: say where they can differ (the tenth hostile re-test of issue 36: a
  // junk signature beside an identical config read as two copies of one site, with no word of why they differ).
  const sameSite = unreadable.length === 0 && new Set(readings.map((r) => ('copy' in r ? JSON.stringify(r.copy.sites) : ''))).size === 1;
  return {
    message: `${what}, so none of them is used: ${readings.map(describeReading).join('; and ')}${sameSite ? ' (the same site, but their files differ: the site-config itself, its signature, or a file it names)' : ''}`,
    remedy: [leaveOnlyTodays(readings), ...fix].join(' '),
  };
}

/** What identifies the sources as they are now: a change in any of them (a new device, a file dropped) compares them again. */
async function sourcesKey(opts: DetectOptions, sources: readonly Candidate[]): Promise<string> {
  const parts: string[] = [];
  for (const c of sources) parts.push(`${c.identity}${c.fingerprint}${c.kind === 'drop-dir' ? `@${await dropDirLastChange(opts.host, opts.dropDir)}` : ''}`);
  return parts.join(' ');
}

/**
 * Sources are compared before any is taken (conflictProblem). Identical copies are one candidate. While the drop
 * directory holds files that are not settled yet, no volume is taken either: the file being copied may be today's.
 * Returns the candidates left to consider.
 */
async function withoutConflicts(opts: DetectOptions, memory: DetectMemory, candidates: Candidate[], dropUnsettled: boolean): Promise<Candidate[]> {
  if (dropUnsettled) return [];
  if (candidates.length < 2) {
    delete memory.volumes;
    return candidates;
  }
  const key = await sourcesKey(opts, candidates);
  if (memory.volumes?.key !== key) {
    const readings: Reading[] = [];
    for (const source of candidates) {
      readings.push(
        await source.fetch(opts.candidateDir).then(
          (copy) => ({ source, copy }),
          (e: unknown) => (e instanceof MediaError ? { source, error: e } : Promise.reject(e)),
        ),
      );
    }
    const problem = conflictProblem(readings);
    // Agreeing sources: the drop directory's copy is offered (it is read twice before it is taken); else the first volume.
    const agreed = readings.find((r) => 'copy' in r)?.copy.treeDigest;
    memory.volumes = problem ? { key, keep: [] } : { key, keep: [candidates.find((c) => c.kind === 'drop-dir') ?? candidates[0]!], ...(agreed !== undefined && { agreed }) };
    if (problem) {
      opts.log.error({ media: candidates.map((v) => v.location).join(', '), remedy: problem.remedy }, problem.message);
      await opts.onMediaProblem?.(problem);
    }
  }
  return memory.volumes?.keep ?? [];
}

/**
 * Offers every new candidate to `consider` until one is accepted. Returns undefined when `once` and none
 * was accepted in one pass, or when aborted.
 */
export async function waitForSiteConfig(
  opts: DetectOptions & { once: boolean },
  consider: (candidate: Candidate, copy: CopyResult, offer: Offer) => Promise<Verdict>,
): Promise<Candidate | undefined> {
  const memory = opts.memory ?? newDetectMemory();
  const { refused } = memory;
  const wake = createWaker(opts);
  try {
    while (!opts.signal.aborted) {
      opts.alive?.();
      await wake.follow();
      const listed = await listCandidates(opts);
      const present = new Set(listed.map((c) => c.identity));
      // A drop directory a writer is at work in (or one touched, or the same file copied over itself) is left
      // out of `listed` until it is stable again, but it did not go away: only emptying it is a re-insertion.
      // Otherwise whether the same refused config is offered again would hang on when a scan happened to look.
      if ((await dropDirNames(opts.host, opts.dropDir)).length > 0) present.add(dropDirIdentity(opts.dropDir));
      // Media that went away is forgotten: re-inserting it is a new attempt.
      for (const id of refused.keys()) {
        if (present.has(id)) continue;
        refused.delete(id);
        memory.returning.add(id);
      }
      // Files in the drop directory that are not yet offered (a copy at work, or just finished): every source is
      // read before any is used, so the volumes wait for it too.
      const dropUnsettled = !listed.some((c) => c.kind === 'drop-dir') && (await dropDirNewestChange(opts.host, opts.dropDir, opts.clock.now())) > 0;
      for (const c of await withoutConflicts(opts, memory, listed, dropUnsettled)) {
        const prior = refused.get(c.identity);
        // A new device node, UUID or size: the stick was re-inserted or the image replaced (a /dev event woke us).
        const replaced = prior !== undefined && prior.fingerprint !== c.fingerprint;
        if (prior && c.kind === 'volume' && !replaced && opts.clock.now() - prior.at < opts.retryRefusedAfterMs) continue;
        let copy: CopyResult;
        try {
          copy = await c.fetch(opts.candidateDir);
          if (c.kind === 'drop-dir') {
            // Never a prefix: the same bytes read twice, dropStableMs apart, no file's mtime moved in between, and
            // still no process holding a file open for writing (a stalled copy changes or stays open meanwhile).
            const changed = await dropDirNewestChange(opts.host, opts.dropDir, opts.clock.now());
            await opts.clock.sleep(opts.dropStableMs, opts.signal).catch(() => undefined);
            const again = await c.fetch(opts.candidateDir);
            if (again.treeDigest !== copy.treeDigest || (await dropDirNewestChange(opts.host, opts.dropDir, opts.clock.now())) !== changed) continue;
            if (again.reads?.some((r) => !r.steady) || (await opts.host.openForWriting(opts.dropDir)).length > 0) continue;
            // The sources as they are now, not as they were before the two reads (the ninth hostile re-test of issue 36:
            // a stick inserted meanwhile was never read): any change is compared first, at the next turn.
            if ((await sourcesKey(opts, await listCandidates(opts))) !== (await sourcesKey(opts, listed))) continue;
            copy = again;
            // A file written in place may be closed and appended to again after any pause: only a rename into the
            // drop directory, or a signature the node verifies (it fails on a prefix), says the writer has finished.
            const inPlace = dropDirUnfinished(again.reads ?? [], await wake.renamedIn());
            // signature.ts (node:crypto) loads here, not while the agent waits (issue 39).
            if (inPlace.length > 0 && !(await (await import('../siteconfig/signature')).loadTrustedKeys(opts.host)).required) {
              const problem = writtenInPlaceProblem(c, opts.dropDir, inPlace);
              if (prior?.error !== problem.message) {
                opts.log.error({ media: c.location, remedy: problem.remedy }, problem.message);
                await opts.onMediaProblem?.(problem);
              }
              // No tree digest: the same bytes renamed in are offered.
              refused.set(c.identity, { error: problem.message, fingerprint: c.fingerprint, at: opts.clock.now() });
              continue;
            }
          }
        } catch (e) {
          if (!(e instanceof MediaError)) throw e;
          const problem = { message: `${c.medium} ${e.message}`, remedy: e.remedy };
          if (prior?.error !== problem.message) {
            opts.log.error({ media: c.location, remedy: e.remedy }, problem.message);
            await opts.onMediaProblem?.(problem);
          }
          refused.set(c.identity, { error: problem.message, fingerprint: c.fingerprint, at: opts.clock.now() });
          continue;
        }
        // The hostile re-test's race: a config renamed into the drop directory after the sources were compared is read
        // here; the next turn compares the sources again (their key holds the drop directory's latest change).
        if (memory.volumes?.agreed !== undefined && copy.treeDigest !== memory.volumes.agreed) continue;
        const returned = memory.returning.delete(c.identity);
        const reinserted = replaced || returned;
        if (prior?.treeDigest === copy.treeDigest && !reinserted) {
          refused.set(c.identity, { ...prior, fingerprint: c.fingerprint, at: opts.clock.now() });
          continue;
        }
        memory.lastOffered = { identity: c.identity, treeDigest: copy.treeDigest, fingerprint: c.fingerprint };
        if ((await consider(c, copy, { reinserted })) === 'accepted') return c;
        refused.set(c.identity, { treeDigest: copy.treeDigest, fingerprint: c.fingerprint, at: opts.clock.now() });
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

/** Files written straight into the drop directory on a node that takes unsigned media: what to do instead. */
function writtenInPlaceProblem(c: Candidate, dropDir: string, names: string[]): MediaProblem {
  const shown = names.sort().slice(0, 5).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');
  // Renaming the top-level entry away and back shows a file in a folder finished too (media.ts dropDirUnfinished).
  const first = names[0]?.split('/')[0] ?? 'site-config.yaml';
  return {
    message: `${c.medium} holds ${shown}, which it did not see renamed in (written in place, copied straight under the final name, or left there from before), so the agent cannot tell whether the copy has finished; it is not used`,
    remedy: `Copy the files to a folder beside it on the same disk (for example ${dropDir.replace(/\/[^/]*$/, '')}/incoming/) and move them in with mv; a file or folder already complete can be renamed away and back: mv ${dropDir}/${first} ${dropDir}/${first}.part && mv ${dropDir}/${first}.part ${dropDir}/${first}`,
    office: 'they can explain the copy: write the files elsewhere, then rename them into the drop directory',
  };
}

interface Waker {
  wait(ms: number): Promise<void>;
  close(): Promise<void>;
  /** The names at the top of the drop directory the watch saw renamed in, as they were then (once its events are handled). */
  renamedIn(): Promise<ReadonlyMap<string, RenamedIn>>;
  /** Watches the drop directory there is now, if it is not the one watched (made, or removed and made again). */
  follow(): Promise<void>;
}

/**
 * What was renamed into the drop directory (media.ts dropDirUnfinished): a top-level name's 'rename' event (created,
 * moved in or out) records its inode and change time, any other event ('change': written, mode or links set) forgets
 * it. Its own watch, not the recursive one: Node 20's recursive watch on Linux polls files and reports a write in place
 * as 'rename' and a rename as 'change' (measured with node v20.20.2); the plain inotify watch tells them apart.
 * The stat is started in the event's callback, before anything queued: a stat taken late (behind a backlog of saves)
 * would record changes made after the rename as part of it (the second hostile re-test of issue 36 did that with a
 * burst of 2,000 renames). The record is saved once a burst is handled, and kept in the state directory, so a config
 * renamed in before a restart or a reboot (the early network phase reads it at boot) is still known finished.
 */
function watchRenamesIn(opts: DetectOptions, onEvent: () => void): { follow(): Promise<void>; current(): Promise<ReadonlyMap<string, RenamedIn>>; close(): Promise<void> } {
  const renamed = new Map<string, RenamedIn>();
  const file = opts.dropRenamesFile;
  let unsaved = false;
  let queue: Promise<unknown> = loadRenames(opts, renamed);
  const then = (work: () => Promise<unknown>) => {
    queue = queue.then(work).catch(() => undefined);
  };
  let saveFailed = false;
  const save = async () => {
    if (file === undefined || !unsaved) return;
    unsaved = false;
    await opts.host.writeFileAtomic(file, `${JSON.stringify(Object.fromEntries(renamed))}\n`, 0o600).then(() => (saveFailed = false), (e: unknown) => {
      if (saveFailed) return;
      saveFailed = true;
      opts.log.warn({ path: file, error: whyUnreadable(e) }, `the agent cannot keep its record of files renamed into the drop directory ${opts.dropDir} (${whyUnreadable(e)}), so after its next start a file there from unsigned media has to be renamed in again`);
    });
  };
  // The drop directory's own events (moved away or removed) carry its own name (libuv uv__inotify_read: the watched
  // path's basename when the event names no entry), never an entry's: an entry of that name cannot be told finished.
  const ownName = opts.dropDir.slice(opts.dropDir.lastIndexOf('/') + 1);
  const onEntry = (event: WatchEvent, name: string | undefined) => {
    onEvent();
    if (name === undefined || name.includes('/')) return;
    const heardAt = Date.now();
    const looked = event === 'rename' && name !== ownName ? opts.host.stat(`${opts.dropDir}/${name}`).catch(() => undefined) : undefined;
    then(async () => {
      const info = await looked;
      if (info !== undefined && (info.kind === 'file' || info.kind === 'directory') && toldRenamedIn(info, heardAt)) renamed.set(name, { ino: info.ino, ctimeMs: info.ctimeMs });
      else if (!renamed.delete(name)) return;
      unsaved = true;
      // Saved once the events that came with this one are handled.
      setImmediate(() => then(save));
    });
  };
  const folderIno = async () => {
    const info = await opts.host.stat(opts.dropDir).catch(() => undefined);
    return info?.kind === 'directory' ? info.ino : undefined;
  };
  // Made at once, before anything is read: a rename right after the start is seen.
  let watch = opts.host.watchDir(opts.dropDir, onEntry);
  // The inode of the folder the watch is on, learnt at the first turn (undefined: none watched).
  let watchedIno: number | undefined;
  let first = true;
  let warned = false;
  // The watch follows the drop directory there is now: a folder removed and made again, or made after the start, is
  // watched anew (a watch stays on the folder it was made on; the third hostile re-test of issue 36 renamed files
  // into a new one unseen). What was recorded of the old folder is forgotten.
  const follow = async () => {
    const ino = await folderIno();
    if (first) {
      first = false;
      if (watch !== undefined) watchedIno = ino;
    }
    if (ino === watchedIno && (watch !== undefined || ino === undefined)) return;
    watch?.close();
    watch = ino === undefined ? undefined : opts.host.watchDir(opts.dropDir, onEntry);
    if (watchedIno !== undefined && ino !== watchedIno && renamed.size > 0) {
      renamed.clear();
      unsaved = true;
    }
    // Replaced again while the watch was made: the next turn watches the newest.
    watchedIno = watch === undefined || (await folderIno()) === ino ? ino : undefined;
    // inotify refused on a drop directory that is there (the node's fs.inotify.max_user_instances reached): no rename can
    // be seen, so no unsigned file in it can be told finished; the periodic rescan still finds everything else, and
    // every turn tries the watch again.
    if (ino !== undefined && watch === undefined && !warned) {
      warned = true;
      opts.log.warn({ path: opts.dropDir }, `the drop directory ${opts.dropDir} cannot be watched now, so a file renamed into it cannot be told complete and is not used from unsigned media until it can be; sticks, virtual media and signed files are not affected`);
    }
  };
  return {
    follow: async () => {
      then(follow);
      await queue;
    },
    current: async () => {
      then(save);
      await queue;
      return renamed;
    },
    close: async () => {
      watch?.close();
      then(save);
      await queue;
    },
  };
}

/**
 * How late a file's event may be heard and still tell a file made in place: the watch's stat then shows it as it was
 * made, and whatever is written to it later is an event of its own, which forgets the record. Later — the agent's event
 * loop held by other work, or inotify's queue overflowing, which libuv drops without a word (uv__inotify_read skips an
 * event of no watch) — the stat shows whatever was written in place meanwhile (issue 36, d6).
 */
const PROMPT_EVENT_MS = 1_000;

/**
 * Whether a 'rename' event (libuv reports an entry made in place and one moved in alike) can be taken as a rename in:
 * - something other than a write came last to the entry: a rename moves only the change time (xfs_rename and
 *   ext4_rename set the moved inode's ctime, not its mtime), while a write, or a new or removed entry in a folder,
 *   moves both;
 * - or, for a file, the event was heard promptly after the file was made (PROMPT_EVENT_MS). Not for a folder: what is
 *   written inside it is no event of the top-level watch, so a folder made in place is never a rename in.
 * Else it may be a prefix written in place: not taken, and the console's remedy (rename it away and back) settles it.
 * A writer that renames within the clock tick of its last write meets that remedy too when the folder, or a file made
 * over a second earlier, is what it renames.
 */
function toldRenamedIn(info: PathInfo, heardAt: number): boolean {
  if (info.ctimeMs > info.mtimeMs) return true;
  return info.kind === 'file' && info.birthtimeMs > 0 && Math.abs(heardAt - info.birthtimeMs) <= PROMPT_EVENT_MS;
}

/** The record kept by an earlier start; a damaged or unreadable one is said and started afresh (the files it named wait for a rename in). */
async function loadRenames(opts: DetectOptions, into: Map<string, RenamedIn>): Promise<void> {
  if (opts.dropRenamesFile === undefined) return;
  let kept: Record<string, RenamedIn> | undefined;
  let problem = 'is damaged';
  try {
    kept = parseRenames(await opts.host.readTextIfExists(opts.dropRenamesFile));
  } catch (e) {
    problem = `cannot be read (${whyUnreadable(e)})`;
  }
  if (kept === undefined) {
    opts.log.warn({ path: opts.dropRenamesFile }, `the agent's record of files renamed into the drop directory ${opts.dropDir} ${problem} and was started afresh; a file already there from unsigned media is used once it is renamed in again (the console says how)`);
    return;
  }
  for (const [name, r] of Object.entries(kept)) into.set(name, r);
}

/** The kept record: { name: { ino, ctimeMs } }, each entry checked (the file is the node's, but damage is possible); undefined when damaged. */
function parseRenames(text: string | undefined): Record<string, RenamedIn> | undefined {
  const out: Record<string, RenamedIn> = {};
  if (text === undefined) return out;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  for (const [name, r] of Object.entries(data as Record<string, unknown>)) {
    const { ino, ctimeMs } = (r ?? {}) as Record<string, unknown>;
    if (name !== '__proto__' && !name.includes('/') && typeof ino === 'number' && typeof ctimeMs === 'number') out[name] = { ino, ctimeMs };
  }
  return out;
}

/** Resolves a wait early when the drop directory or /dev changes. */
function createWaker(opts: DetectOptions): Waker {
  let poke: (() => void) | undefined;
  const trigger = () => poke?.();
  // A directory that is not there (no udev, or a test root) is not watched: the interval rescan covers it.
  const watchers = ['/dev', '/dev/disk/by-label'].map((dir) => opts.host.watchDir(dir, () => trigger())).filter((w): w is Closable => w !== undefined);
  // A change in the drop directory wakes the scan at once, and again once it can have been quiet for
  // dropStableMs (a copy still running keeps pushing that second look back), so a finished copy is taken
  // without waiting for the next rescan. Without inotify the rescan interval still finds it.
  // Only the drop directory's top level is watched: Node 20's recursive watch on Linux reads the whole tree again at
  // every event, synchronously (9,000 entries held the event loop 71 s in the third hostile re-test of issue 36).
  // Files are renamed in at the top (the writer contract); a change inside a folder is found by the rescan.
  let settled: ReturnType<typeof setTimeout> | undefined;
  const dropChanged = () => {
    trigger();
    clearTimeout(settled);
    settled = setTimeout(trigger, opts.dropStableMs + 50);
    settled.unref();
  };
  const renames = watchRenamesIn(opts, dropChanged);
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
    renamedIn: () => renames.current(),
    follow: () => renames.follow(),
    close: async () => {
      for (const w of watchers) w.close();
      await renames.close();
      clearTimeout(settled);
    },
  };
}
