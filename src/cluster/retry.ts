// The API's retry policies, each a Backoff and a predicate for retryOn (src/util/backoff.ts), as client-go
// composes RetryOnConflict from OnError and IsConflict (kubernetes/client-go master, util/retry/util.go):
// transient failures (503/502/504, 429 with Retry-After, connection errors), read-modify-write on 409
// Conflict, and a step riding out a restarting API. The timer is injectable (a Clock, or just a sleep) so
// tests and the simulator's scaled time run fast.
import { abortableSleep, retryOn, sleepingTimer, type Backoff, type RetryRun, type Sleep, type Timer } from '../util/backoff';
import { ApiError, ConnectionError, isConflict } from './types';

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

/** Transient failures: 500 ms doubling to 30 s with full jitter, six attempts. */
export const TRANSIENT_BACKOFF: Backoff = { initialMs: 500, factor: 2, jitter: 1, maxMs: 30_000, steps: 6 };

/**
 * Read-modify-write on 409: retrying at once lost to a 409 storm of ~1 s (a controller hot-looping on the
 * same object, or an API server answering every write 409 for a while); equal jitter guarantees each retry
 * waits at least half its ceiling, so ~10 attempts span several seconds. 200 ms doubling to 3 s, at most 10
 * attempts and 15 s spent waiting.
 */
export const CONFLICT_BACKOFF: Backoff = { initialMs: 200, factor: 2, jitter: 0.5, maxMs: 3_000, steps: 10, budgetMs: 15_000 };

/**
 * A step riding out an unreachable or restarting API (an SNO kube-apiserver restart takes ~1 min): 1 s
 * doubling to 15 s with equal jitter, for at most API_OUTAGE_BUDGET_MS after the first failure.
 */
export const API_OUTAGE_BUDGET_MS = 3 * 60_000;
export const API_OUTAGE_BACKOFF: Backoff = { initialMs: 1_000, factor: 2, jitter: 0.5, maxMs: 15_000, budgetMs: API_OUTAGE_BUDGET_MS };

export interface RetryOptions {
  /** Total attempts including the first (default: the policy's steps). */
  attempts?: number;
  /** First backoff ceiling (default: the policy's); doubles each attempt up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** No retry starts once this much time was spent sleeping (default: the policy's budget). */
  maxTotalMs?: number;
  sleep?: Sleep;
  signal?: AbortSignal;
  /** [0,1) source for the jitter (default Math.random). */
  random?: () => number;
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** The policy's Backoff with a caller's adjustments (tests shorten the waits, a caller its attempts). */
function tuned(policy: Backoff, opts: RetryOptions): Backoff {
  return {
    ...policy,
    initialMs: opts.initialDelayMs ?? policy.initialMs,
    maxMs: opts.maxDelayMs ?? policy.maxMs,
    steps: opts.attempts ?? policy.steps,
    budgetMs: opts.maxTotalMs ?? policy.budgetMs,
  };
}

/** How retryOn runs for these options: their budget counts the time spent sleeping between attempts. */
function runOf(opts: RetryOptions): RetryRun {
  return { timer: sleepingTimer(opts.sleep ?? abortableSleep), signal: opts.signal, random: opts.random, onRetry: opts.onRetry };
}

/**
 * Runs `fn` until it succeeds, a non-retryable error occurs or attempts run out (then the last error is
 * thrown). The delay is full-jitter exponential backoff, raised to the server's Retry-After when it gave one.
 */
export function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions & { retryable?: (err: unknown) => boolean } = {}): Promise<T> {
  return retryOn(tuned(TRANSIENT_BACKOFF, opts), opts.retryable ?? isTransient, fn, { ...runOf(opts), waitAtLeast: retryAfterMs });
}

/**
 * Read-modify-write: `fn` must re-read the object each time it is called. Retries only on 409 (Conflict on
 * an update, and on a create both AlreadyExists — the re-read then finds the object — and Conflict), with
 * CONFLICT_BACKOFF; then the last 409 is thrown.
 */
export function retryOnConflict<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  return retryOn(tuned(CONFLICT_BACKOFF, opts), isConflict, fn, runOf(opts));
}

/** Runs idempotent work again while the API is briefly unavailable (isTransient), on the caller's clock. */
export function rideOutApiOutages<T>(fn: () => Promise<T>, run: { timer: Timer; signal: AbortSignal; onRetry: (err: unknown, delayMs: number) => void }): Promise<T> {
  return retryOn(API_OUTAGE_BACKOFF, isTransient, () => fn(), { timer: run.timer, signal: run.signal, onRetry: (err, _attempt, delayMs) => run.onRetry(err, delayMs) });
}
