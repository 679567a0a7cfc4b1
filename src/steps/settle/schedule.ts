// The decisions settle's loop makes each round, lifted out of it so each is a pure piece tested as rows
// (test/unit/steps/settle-schedule.test.ts): when the slow checks run, which component has been Degraded
// too long, and which expected rollouts are still waited for.
import type { Blocker, ExpectedRollout } from '../rollouts';
import { rolloutStarted, type ClusterSnapshot } from './conditions';

/** How often settle looks again without a watch event (TLS, routes, stability window end). */
export const RECHECK_MS = 10_000;
/**
 * Once only the slow checks block, they run again after 250 ms, 500 ms, 1 s, then every 2 s: the endpoints
 * switch certificates right as their rollout ends, and every interval here is added to the run (issue #8).
 */
export const ONLY_SLOW_FIRST_RECHECK_MS = 250;
export const ONLY_SLOW_RECHECK_MS = 2_000;
/** A component Degraded this long (continuously) ends the wait: operators report Degraded briefly during rollouts. */
export const DEGRADED_GRACE_MS = 10 * 60_000;
/** An expected rollout that has not started after this long is no longer waited for (with a warning). */
export const REACTION_GRACE_MS = 10 * 60_000;

/**
 * When the slow checks (TLS handshakes, route follow-up) run. They depend on rollouts: they run at once when
 * one of the watched blockers went away (an operator finished: its endpoint may serve the new certificate, or
 * openshift-apiserver now generates hosts on the new apps domain), every RECHECK_MS while the cluster still
 * rolls out, and on a short, growing interval once only they block.
 */
export class SlowCheckSchedule {
  private nextAt = -Infinity;
  private onlySlowDelay = ONLY_SLOW_FIRST_RECHECK_MS;
  private lastFastKeys = new Set<string>();

  /** Whether the slow checks run this round; called once a round with the round's watched (fast) blockers. */
  due(now: number, fast: readonly Blocker[]): boolean {
    const keys = new Set(fast.map((b) => b.key));
    const somethingFinished = [...this.lastFastKeys].some((k) => !keys.has(k));
    this.lastFastKeys = keys;
    if (fast.length > 0) this.onlySlowDelay = ONLY_SLOW_FIRST_RECHECK_MS;
    return somethingFinished || now >= this.nextAt;
  }

  /** The slow checks ran at `now`, while `fastCount` watched blockers remained. */
  ran(now: number, fastCount: number): void {
    if (fastCount > 0) {
      this.nextAt = now + RECHECK_MS;
      return;
    }
    this.nextAt = now + this.onlySlowDelay;
    this.onlySlowDelay = Math.min(ONLY_SLOW_RECHECK_MS, this.onlySlowDelay * 2);
  }

  msUntilDue(now: number): number {
    return this.nextAt - now;
  }
}

/** How long each blocker has reported Degraded without a break. */
export class DegradedSince {
  private readonly since = new Map<string, number>();

  /** Records this round's blockers; returns one Degraded for at least `graceMs`, if any. */
  stuck(blockers: readonly Blocker[], now: number, graceMs = DEGRADED_GRACE_MS): Blocker | undefined {
    for (const b of blockers) if (b.degraded && !this.since.has(b.key)) this.since.set(b.key, now);
    for (const key of [...this.since.keys()]) if (!blockers.some((b) => b.key === key)) this.since.delete(key);
    return blockers.find((b) => b.degraded && now - (this.since.get(b.key) ?? now) >= graceMs);
  }
}

/**
 * The rollouts still waited for: those that started, and those not started yet within REACTION_GRACE_MS of
 * the wait's start. The rest are given up on (the operator may have had nothing to do, e.g. the same
 * rendered config); the caller warns about the non-optional ones.
 */
export function stillAwaited(awaited: readonly ExpectedRollout[], snap: ClusterSnapshot, now: number, waitStartedAt: number): { awaited: ExpectedRollout[]; givenUp: ExpectedRollout[] } {
  const keep: ExpectedRollout[] = [];
  const givenUp: ExpectedRollout[] = [];
  for (const r of awaited) (rolloutStarted(r, snap) || now - waitStartedAt < REACTION_GRACE_MS ? keep : givenUp).push(r);
  return { awaited: keep, givenUp };
}
