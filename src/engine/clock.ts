// Real time, and bounded waits on top of it. Every wait in the agent has a deadline (DESIGN.md section 1).
import type { Clock, Deadline } from './step';
import { formatDuration } from '../siteconfig/duration';
import { realTimer } from '../util/backoff';

export { formatDuration };

export const realClock: Clock = realTimer;

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
