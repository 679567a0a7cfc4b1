// One backoff for every wait-and-try-again in the agent: a Backoff value says how long to wait after each
// failure, and retryOn runs a function until it succeeds, fails in a way not worth retrying, or the backoff,
// the deadline or the signal says stop. Modelled on apimachinery's wait.Backoff
// (kubernetes/apimachinery master, pkg/util/wait/backoff.go) and client-go's retry.OnError
// (kubernetes/client-go master, util/retry/util.go): each retry policy is a Backoff plus a predicate.
// This module sits below cluster/ and engine/ so both can use it; it imports nothing of the agent's.

/** How long to wait after each failure. */
export interface Backoff {
  /** The first wait's ceiling, in ms. */
  readonly initialMs: number;
  /** Each further ceiling is the previous one times this (2: doubling). */
  readonly factor: number;
  /**
   * The random part of each ceiling: 0 waits the ceiling exactly, 0.5 waits at least half of it ("equal
   * jitter"), 1 waits anything up to it ("full jitter"). Jitter keeps waiters that failed together (the
   * agent's steps, restarted services) from hitting a recovering API in lockstep (AWS architecture blog,
   * "Exponential Backoff And Jitter").
   */
  readonly jitter: number;
  /** No ceiling exceeds this, in ms. */
  readonly maxMs: number;
  /** Attempts in all, the first included; unset: until the budget, the deadline or the signal ends them. */
  readonly steps?: number;
  /**
   * How long after the first failure a new attempt may still start, in ms; the last wait is cut to fit.
   * It counts from the first failure: how long the trouble has lasted, not how long the work ran before it.
   */
  readonly budgetMs?: number;
}

/** The wait after failed attempt number `attempt` (0 for the first failure), in ms. Pure. */
export function backoffDelay(backoff: Backoff, attempt: number, random: () => number = Math.random): number {
  // The exponent is bounded so a long outage cannot overflow the ceiling to Infinity/NaN before the cap applies.
  const ceiling = Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** Math.min(Math.max(0, attempt), 64));
  return Math.round(ceiling * (1 - backoff.jitter) + random() * ceiling * backoff.jitter);
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Time as retryOn sees it: the engine's Clock fits, and so does a simulator's scaled time. */
export interface Timer {
  now(): number;
  sleep: Sleep;
}

/** setTimeout-based sleep that rejects with the signal's reason (an Error) when the signal aborts. */
export const abortableSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

export const realTimer: Timer = { now: () => Date.now(), sleep: abortableSleep };

/**
 * A timer whose time passes only while it sleeps: a budget on it bounds the time spent waiting between
 * attempts, not the attempts themselves.
 */
export function sleepingTimer(sleep: Sleep): Timer {
  let slept = 0;
  return {
    now: () => slept,
    sleep: (ms, signal) => {
      slept += ms;
      return sleep(ms, signal);
    },
  };
}

export interface RetryRun {
  /** Default: real time. */
  timer?: Timer;
  /** Aborting stops the retries (a wait in progress rejects with the signal's reason). */
  signal?: AbortSignal;
  /** The caller's bounded wait: no attempt starts once it has run out, and the last wait is cut to fit. */
  deadline?: { remainingMs(): number };
  /** [0,1) source for the jitter (default Math.random). */
  random?: () => number;
  /** A wait the failure itself asks for (e.g. the server's Retry-After), still within the backoff's maxMs. */
  waitAtLeast?: (err: unknown) => number | undefined;
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `fn` (with the attempt number, from 1) until it succeeds. A failure `retriable` rejects is thrown at
 * once; so is the last one when the steps, the budget or the deadline are spent or the signal aborted.
 */
export async function retryOn<T>(backoff: Backoff, retriable: (err: unknown) => boolean, fn: (attempt: number) => Promise<T>, run: RetryRun = {}): Promise<T> {
  const timer = run.timer ?? realTimer;
  const steps = Math.max(1, backoff.steps ?? Infinity);
  let giveUpAt: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (backoff.budgetMs !== undefined) giveUpAt ??= timer.now() + backoff.budgetMs;
      const left = Math.min(giveUpAt === undefined ? Infinity : giveUpAt - timer.now(), run.deadline?.remainingMs() ?? Infinity);
      if (attempt >= steps || !retriable(err) || run.signal?.aborted || left <= 0) throw err;
      const asked = Math.min(backoff.maxMs, run.waitAtLeast?.(err) ?? 0);
      const delay = Math.min(left, Math.max(backoffDelay(backoff, attempt - 1, run.random), asked));
      run.onRetry?.(err, attempt, delay);
      await timer.sleep(delay, run.signal);
    }
  }
}
