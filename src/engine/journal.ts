// The journal: the run's durable memory in the state directory. Written atomically (temp file, fsync,
// rename) at every transition, so a power cut at any moment leaves the previous or the next state and a
// restart resumes from it (DESIGN.md section 1).
import { whyUnreadable, type Host } from '../host/host';
import { STATE_FILES } from '../paths';
import type { Change, RunFacts, StepName } from './step';

export type RunPhase =
  /** No site-config found yet. */
  | 'waiting'
  /** A site-config was found but is invalid, or is not for this machine: waiting for a corrected one. */
  | 'invalid-config'
  | 'running'
  | 'failed'
  | 'succeeded';

export type StepState = 'pending' | 'running' | 'done' | 'failed';

export interface StepRecord {
  state: StepState;
  attempts: number;
  startedAt?: string;
  endedAt?: string;
  durationMs?: number;
  /** true when check() found the change already in place. */
  alreadyDone?: boolean;
  /** true when the site-config does not ask for what the step does (no spec.network, no mirrors …). */
  notRequested?: boolean;
  lastError?: ErrorRecord;
  /** The step's own progress data (ctx.data). */
  data: Record<string, unknown>;
  /** The last progress line of this step. */
  status?: string;
}

export interface ErrorRecord {
  at: string;
  step?: StepName | 'detect' | 'validate';
  message: string;
  /** What the person at the node can do. */
  remedy?: string;
  /** What the office must do when that does not help (src/util/remedy.ts). */
  office?: string;
  /** Every problem of an invalid config, with its field path. */
  problems?: { path: string; message: string }[];
}

export interface JournalData {
  version: 1;
  phase: RunPhase;
  /** sha256 of the site-config in use (with every file it references). */
  digest?: string;
  configName?: string;
  /** Where the config came from (device, drop directory) and where its copy is. */
  source?: { kind: 'volume' | 'drop-dir' | 'path'; location: string; copiedTo: string };
  startedAt?: string;
  updatedAt: string;
  finishedAt?: string;
  /** How many times `run` started on this config (boots, restarts). */
  starts: number;
  steps: Partial<Record<StepName, StepRecord>>;
  facts: RunFacts;
  changes: Change[];
  warnings: string[];
  lastError?: ErrorRecord;
  /** A human line: what the agent is doing or waiting for now. */
  status?: string;
  /** Digests of configs rejected after they were tried (e.g. the network never verified): not retried. */
  rejectedDigests?: string[];
  /** Of those, the ones refused only because the site network did not verify: re-inserting the media, or `run --retry-network`, tries them again. */
  retryableDigests?: string[];
}

export function emptyJournal(now: Date): JournalData {
  return { version: 1, phase: 'waiting', updatedAt: now.toISOString(), starts: 0, steps: {}, facts: {}, changes: [], warnings: [] };
}

export function journalPath(stateDir: string): string {
  return `${stateDir}/${STATE_FILES.journal}`;
}

/**
 * The journal is a node file like any other: a bad block or a hand edit can damage it. Its message is a sentence
 * for the technician (status shows it; the run starts a new journal and says so), never a parser's text.
 */
export class JournalUnreadableError extends Error {
  override name = 'JournalUnreadableError';
}

function unreadable(stateDir: string, why: string, cause: unknown): JournalUnreadableError {
  return new JournalUnreadableError(`the agent's journal ${journalPath(stateDir)} is damaged (${why}), so the progress it recorded cannot be read`, { cause });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'string');
const optional = (v: unknown, check: (x: unknown) => boolean): boolean => v === undefined || check(v);
const isErrorRecord = (v: unknown): boolean =>
  isObject(v) && typeof v.message === 'string' && optional(v.problems, (p) => Array.isArray(p) && p.every((x) => isObject(x) && typeof x.path === 'string' && typeof x.message === 'string'));

/**
 * The journal's shape, down to what status and the runner read without checking again (the third hostile re-test
 * of issue 36: a lastError or a digest list of another type was a TypeError at every start).
 */
function isJournal(d: unknown): d is JournalData {
  return (
    isObject(d) && d.version === 1 && isObject(d.facts) && Array.isArray(d.changes) && isStrings(d.warnings) &&
    isObject(d.steps) && Object.values(d.steps).every((r) => isObject(r) && typeof r.state === 'string' && optional(r.lastError, isErrorRecord)) &&
    optional(d.lastError, isErrorRecord) && optional(d.rejectedDigests, isStrings) && optional(d.retryableDigests, isStrings) &&
    ['digest', 'configName', 'status', 'phase'].every((k) => optional(d[k], (x) => typeof x === 'string'))
  );
}

/** `keepCorruptCopy`: copy an unreadable journal aside before failing (the run does; `status` changes nothing). */
export async function readJournal(host: Host, stateDir: string, opts: { keepCorruptCopy?: boolean } = {}): Promise<JournalData | undefined> {
  let text: string | undefined;
  try {
    text = await host.readTextIfExists(journalPath(stateDir));
  } catch (e) {
    // Not a file (a folder, EISDIR) or not readable: it is moved aside whole as the copy (issue 36, C1: left in
    // place, every start failed to write the new journal over it, and said a copy had been kept when none was).
    if (opts.keepCorruptCopy !== false) {
      await host.remove(`${journalPath(stateDir)}.corrupt`);
      await host.rename(journalPath(stateDir), `${journalPath(stateDir)}.corrupt`);
    }
    throw unreadable(stateDir, whyUnreadable(e), e);
  }
  if (text === undefined) return undefined;
  let why: string;
  try {
    const data = JSON.parse(text) as unknown;
    if (isJournal(data)) return data;
    why = 'it is not a journal of this agent version';
  } catch {
    why = 'it is not complete JSON';
  }
  // An atomic rename cannot leave a torn file; a damaged one means a bad block or an edit. Keep a copy for support.
  // Whatever stands at the copy's name goes first (a folder there made the copy itself fail: an internal error).
  if (opts.keepCorruptCopy !== false) {
    await host.remove(`${journalPath(stateDir)}.corrupt`);
    await host.writeFileAtomic(`${journalPath(stateDir)}.corrupt`, text, 0o600);
  }
  throw unreadable(stateDir, why, undefined);
}

/**
 * TEST-ONLY FAILPOINT: with SNO_RECONFIGURE_CRASH_AT_SAVE=N in the environment the agent SIGKILLs itself
 * right after the N-th successful journal save of this process — a power cut at exactly that journal
 * transition (test/integration/reliability/crash.test.ts walks N = 1, 2, 3, …). Never set it on a node.
 * Read once when the module loads: unset (or not a positive integer) it costs one comparison per save.
 */
const CRASH_AT_SAVE = crashAtSaveFrom(process.env.SNO_RECONFIGURE_CRASH_AT_SAVE);
let savesThisProcess = 0;

function crashAtSaveFrom(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9]\d*$/.test(value)) return undefined;
  return Number(value);
}

/** Holds the journal in memory and persists every change atomically. */
export class Journal {
  constructor(
    private readonly host: Host,
    readonly stateDir: string,
    public data: JournalData,
  ) {}

  /**
   * A damaged journal is kept aside (journal.json.corrupt) and a new one started, with a warning that says so:
   * every step checks what is already in place, so starting over converges; failing instead would have systemd
   * restart the agent into the same damaged file for ever.
   */
  static async open(host: Host, stateDir: string, now = new Date()): Promise<Journal> {
    await host.mkdirp(stateDir, 0o700);
    try {
      return new Journal(host, stateDir, (await readJournal(host, stateDir)) ?? emptyJournal(now));
    } catch (e) {
      if (!(e instanceof JournalUnreadableError)) throw e;
      const fresh = new Journal(host, stateDir, emptyJournal(now));
      fresh.recovered = `${e.message}; a copy was kept as ${STATE_FILES.journal}.corrupt and a new journal started: the agent continues with the site-config it finds, and every step checks what is already in place`;
      fresh.data.warnings.push(fresh.recovered);
      return fresh;
    }
  }

  /** Set when this journal replaced a damaged one: the sentence saying so (journal, banner, status). */
  recovered?: string;

  async save(): Promise<void> {
    this.data.updatedAt = new Date().toISOString();
    await this.host.writeFileAtomic(journalPath(this.stateDir), `${JSON.stringify(this.data, null, 2)}\n`, 0o600);
    if (CRASH_AT_SAVE !== undefined && ++savesThisProcess === CRASH_AT_SAVE) process.kill(process.pid, 'SIGKILL');
  }

  step(name: StepName): StepRecord {
    let rec = this.data.steps[name];
    if (!rec) {
      rec = { state: 'pending', attempts: 0, data: {} };
      this.data.steps[name] = rec;
    }
    return rec;
  }

  /** A different config after a partial run: start over from validation (every step is idempotent). */
  startConfig(digest: string, configName: string, source: JournalData['source'], now: Date): void {
    const rejected = this.data.rejectedDigests;
    this.data = {
      ...emptyJournal(now),
      phase: 'running',
      digest,
      configName,
      source,
      startedAt: now.toISOString(),
      ...(rejected ? { rejectedDigests: rejected } : {}),
      ...(this.data.retryableDigests ? { retryableDigests: this.data.retryableDigests } : {}),
    };
  }
}
