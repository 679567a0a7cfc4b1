// Watch with resume: the newline-delimited JSON event stream of `?watch=1` (one JSON object per line,
// split anywhere across chunks), following resourceVersion — including BOOKMARKs
// (allowWatchBookmarks) — so that a dropped or server-timed-out stream resumes where it was. A 410 Gone
// (HTTP or an ERROR event, reason Expired/Gone) means the version left etcd's window: LIST again, hand
// the listed objects over as ADDED and watch from the list's resourceVersion (what client-go's reflector
// does). Connection failures and 5xx/429 back off and retry until the signal aborts.
import { StringDecoder } from 'node:string_decoder';
import type { V1Status } from '@kubernetes/client-node';
import type { Logger } from '../log';
import { abortableSleep, backoffDelay, type Backoff, type Sleep } from '../util/backoff';
import { retryAfterMs } from './retry';
import { ApiError, ConnectionError, isGone, type KubeObject, type ObjectList, type WatchEvent, type WatchEventType } from './types';

export interface WatchDeps {
  list(): Promise<ObjectList<KubeObject>>;
  /** Opens the stream from `resourceVersion` (GET ...?watch=1&...). */
  open(resourceVersion: string, timeoutSeconds: number): Promise<AsyncIterable<Buffer | string>>;
  log?: Logger;
  sleep?: Sleep;
  /** Overrides of DEFAULT_WATCH_BACKOFF (tests shorten it). */
  backoff?: Partial<Backoff>;
  /** Server-side watch duration before it closes the stream (default 5-10 min, randomized like client-go). */
  timeoutSeconds?: () => number;
  /** What the watch is of, for logs. */
  what: string;
}

/**
 * The agent watches its own node's kube-apiserver, which restarts with every new revision (the domain step's
 * certificate causes one): a refused connection costs it nothing, and the backoff's cap is how late the
 * agent may notice that the API is back — with 30 s, up to 30 s added to every run (issue #8). So: 100 ms
 * doubling to 0.5 s with equal jitter (a handful of watches, two refused connections a second each during an outage).
 */
export const DEFAULT_WATCH_BACKOFF: Backoff = { initialMs: 100, factor: 2, jitter: 0.5, maxMs: 500 };

const EVENT_TYPES = new Set<WatchEventType>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

class Expired extends Error {}

export async function runWatch<T extends KubeObject>(
  deps: WatchDeps,
  startVersion: string | undefined,
  signal: AbortSignal,
  onEvent: (event: WatchEvent<T>) => void | Promise<void>,
): Promise<void> {
  const sleep = deps.sleep ?? abortableSleep;
  const backoff: Backoff = { ...DEFAULT_WATCH_BACKOFF, ...deps.backoff };
  const timeoutSeconds = deps.timeoutSeconds ?? (() => 300 + Math.floor(Math.random() * 300));
  let rv = startVersion;
  let failures = 0;

  const relist = async () => {
    const listed = await deps.list();
    for (const object of listed.items) {
      if (signal.aborted) return;
      await onEvent({ type: 'ADDED', object: object as T });
    }
    rv = listed.resourceVersion;
  };

  while (!signal.aborted) {
    try {
      if (!rv) await relist();
      if (signal.aborted || !rv) break;
      const stream = await deps.open(rv, timeoutSeconds());
      failures = 0;
      let delivered = false;
      const decoder = new StringDecoder('utf8');
      let pending = '';
      const handleLine = async (line: string) => {
        if (line.trim() === '') return;
        const event = parseEvent(line, deps.what);
        if (event.type === 'ERROR') {
          const status = event.object as V1Status;
          if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') throw new Expired(status.message ?? 'expired');
          throw new ApiError(status.code ?? 500, status.reason ?? 'InternalError', `watch ${deps.what}: ${status.message ?? 'error event'}`, status);
        }
        const version = (event.object as KubeObject).metadata?.resourceVersion;
        if (version) rv = version;
        delivered = true;
        await onEvent(event as WatchEvent<T>);
      };
      for await (const chunk of stream) {
        pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          await handleLine(line);
          if (signal.aborted) return;
        }
      }
      pending += decoder.end();
      await handleLine(pending);
      deps.log?.debug({ watch: deps.what, resourceVersion: rv, delivered }, 'watch stream ended; resuming');
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof Expired || isGone(err)) {
        // Routine after every kube-apiserver restart of a rollout: the watch starts over from a fresh list.
        deps.log?.debug({ watch: deps.what, resourceVersion: rv }, `the watch of ${deps.what} fell too far behind the API (410 Gone); listing again`);
        rv = undefined;
        continue;
      }
      if (!isRetryableWatchError(err)) throw err;
      failures++;
      const delay = Math.max(backoffDelay(backoff, failures - 1), retryAfterMs(err) ?? 0);
      // The kube-apiserver restarts with every revision: an interruption is expected and is no news for the
      // person reading the journal (debug); only one that keeps failing (60 attempts: half a minute at the
      // 0.5 s cap) earns a warning.
      const fields = { watch: deps.what, err: (err as Error).message, retryInMs: delay, failures };
      if (failures % 60 === 0) deps.log?.warn(fields, `watching ${deps.what}: the API has not answered for ${failures} attempts; still retrying`);
      else deps.log?.debug(fields, failures === 1 ? 'watch interrupted (the API restarts during rollouts); reconnecting' : 'watch reconnect failed; retrying');
      try {
        await sleep(delay, signal);
      } catch {
        return;
      }
    }
  }
}

function isRetryableWatchError(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  if (err instanceof ApiError) return err.statusCode === 429 || err.statusCode >= 500;
  // A stream that broke while being read surfaces as a plain socket error.
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ETIMEDOUT' || code === 'EPIPE'
    || (err instanceof Error && /aborted|socket hang up|terminated/i.test(err.message));
}

function parseEvent(line: string, what: string): { type: WatchEventType | 'ERROR'; object: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    throw new ConnectionError(`watch ${what}: the server sent a line that is not JSON (${line.length} bytes)`, 'EPROTO', { cause: e });
  }
  const e = parsed as { type?: unknown; object?: unknown };
  if (typeof e?.type !== 'string' || typeof e.object !== 'object' || e.object === null) {
    throw new ConnectionError(`watch ${what}: the server sent an event without type/object`, 'EPROTO');
  }
  if (e.type !== 'ERROR' && !EVENT_TYPES.has(e.type as WatchEventType)) {
    throw new ConnectionError(`watch ${what}: unknown event type ${JSON.stringify(e.type).slice(0, 40)}`, 'EPROTO');
  }
  return { type: e.type as WatchEventType | 'ERROR', object: e.object };
}
