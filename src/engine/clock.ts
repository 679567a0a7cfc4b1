// Real time, and bounded waits on top of it. Every wait in the agent has a deadline (DESIGN.md section 1).
import type { Clock, Deadline } from './step';
import { formatDuration } from '../siteconfig/duration';

export { formatDuration };

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
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
    }),
};

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

export function createDeadline(clock: Clock, label: string, totalMs: number, startedAt = clock.now()): Deadline {
  return {
    label,
    totalMs,
    elapsedMs: () => clock.now() - startedAt,
    remainingMs: () => Math.max(0, startedAt + totalMs - clock.now()),
    expired: () => clock.now() - startedAt >= totalMs,
    progress: () => `${formatDuration(clock.now() - startedAt)} of ${formatDuration(totalMs)}`,
  };
}

/**
 * Capped exponential backoff with "equal jitter" (AWS architecture blog, "Exponential Backoff And Jitter"):
 * retries from several waiters (the agent's steps, restarted services) do not hit a recovering API in lockstep.
 */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.round(exp / 2 + (random() * exp) / 2);
}
