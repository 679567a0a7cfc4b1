// Retries for API calls: read-modify-write on 409 Conflict (with backoff), and transient failures (503/502/504, 429
// with Retry-After, connection errors) with capped exponential backoff and full jitter. The sleep is
// injectable (a Clock's sleep) so tests and the simulator's scaled time run fast.
import { ApiError, ConnectionError } from './types';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** setTimeout-based sleep that rejects with the signal's reason when aborted. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) { reject(abortReason(signal)); return; }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(abortReason(signal)); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new Error('aborted');
}

export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 409;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 404;
}

/** Worth trying again: the API is restarting, overloaded or unreachable — not a wrong request. */
export function isTransient(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  if (!(err instanceof ApiError)) return false;
  if ([429, 502, 503, 504].includes(err.statusCode)) return true;
  // kube-apiserver answers 500 when etcd times out ("etcdserver: request timed out"): transient too.
  return err.statusCode === 500 && /etcdserver|timed out|try again/i.test(err.message);
}

/** The server's Retry-After (429/503) in ms: Status details.retryAfterSeconds, which the client also fills from the header. */
export function retryAfterMs(err: unknown): number | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const seconds = err.status?.details?.retryAfterSeconds;
  return typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : undefined;
}

export interface RetryOptions {
  /** Total attempts including the first (default 6). */
  attempts?: number;
  /** First backoff (default 500 ms); doubles each attempt up to maxDelayMs (default 30 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  sleep?: Sleep;
  signal?: AbortSignal;
  /** [0,1) source for the jitter (default Math.random). */
  random?: () => number;
  /** Which errors to retry (default isTransient). */
  retryable?: (err: unknown) => boolean;
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `fn` until it succeeds, a non-retryable error occurs or attempts run out (then the last error is
 * thrown). The delay is full-jitter exponential backoff, raised to the server's Retry-After when it gave one.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 6);
  const initial = opts.initialDelayMs ?? 500;
  const max = opts.maxDelayMs ?? 30_000;
  const sleep = opts.sleep ?? realSleep;
  const random = opts.random ?? Math.random;
  const retryable = opts.retryable ?? isTransient;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !retryable(err) || opts.signal?.aborted) throw err;
      const ceiling = Math.min(max, initial * 2 ** (attempt - 1));
      const jittered = Math.floor(random() * ceiling);
      const delay = Math.min(max, Math.max(jittered, retryAfterMs(err) ?? 0));
      opts.onRetry?.(err, attempt, delay);
      await sleep(delay, opts.signal);
    }
  }
}

export interface ConflictRetryOptions {
  /** Total attempts including the first (default 10). */
  attempts?: number;
  /** First backoff ceiling (default 200 ms); doubles each attempt up to maxDelayMs (default 3 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** No retry starts once this much time was spent sleeping (default 15 s). */
  maxTotalMs?: number;
  sleep?: Sleep;
  signal?: AbortSignal;
  random?: () => number;
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Read-modify-write: `fn` must re-read the object each time it is called. Retries only on 409 (Conflict on
 * an update, and on a create both AlreadyExists — the re-read then finds the object — and Conflict), with
 * capped exponential backoff and "equal jitter": retrying at once lost to a 409 storm of ~1 s (a controller
 * hot-looping on the same object, or an API server answering every write 409 for a while); equal jitter
 * guarantees each retry waits at least half its ceiling, so ~10 attempts span several seconds. Bounded by
 * `attempts` and `maxTotalMs`; then the last 409 is thrown. A number as second argument is `attempts`.
 */
export async function retryOnConflict<T>(fn: (attempt: number) => Promise<T>, options: number | ConflictRetryOptions = {}): Promise<T> {
  const opts: ConflictRetryOptions = typeof options === 'number' ? { attempts: options } : options;
  const attempts = Math.max(1, opts.attempts ?? 10);
  const initial = opts.initialDelayMs ?? 200;
  const max = opts.maxDelayMs ?? 3_000;
  const budget = opts.maxTotalMs ?? 15_000;
  const sleep = opts.sleep ?? realSleep;
  const random = opts.random ?? Math.random;
  let slept = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !isConflict(err) || opts.signal?.aborted || slept >= budget) throw err;
      const ceiling = Math.min(max, initial * 2 ** (attempt - 1));
      const delay = Math.min(budget - slept, Math.round(ceiling / 2 + (random() * ceiling) / 2));
      opts.onRetry?.(err, attempt, delay);
      slept += delay;
      await sleep(delay, opts.signal);
    }
  }
}
