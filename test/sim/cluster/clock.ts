// Simulated time. One knob, `scale` (real ms per simulated ms): every delay in the simulator is a
// simulated duration run through this clock, so 0.001 turns a 6-minute rollout into 360 real ms.
// Simulated time keeps running while the simulator is down (a power cut lasts, scaled), because the
// epoch is persisted: a restarted simulator continues the same timeline.
import type { Clock } from '../../../src/engine/step';

export interface ClockEpoch {
  /** Date.now() at the epoch. */
  realMs: number;
  /** Simulated time at the epoch (ms since 1970, like Date.now()). */
  simMs: number;
}

export class SimClock implements Clock {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    readonly scale: number,
    readonly epoch: ClockEpoch = { realMs: Date.now(), simMs: Date.now() },
  ) {}

  /** Simulated now, in ms since 1970. */
  now(): number {
    return this.epoch.simMs + (Date.now() - this.epoch.realMs) / this.scale;
  }

  /** RFC 3339 of simulated now (for conditions and timestamps the simulator writes). */
  iso(simMs = this.now()): string {
    return new Date(Math.floor(simMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  }

  /** Real milliseconds for a simulated duration. */
  real(simMs: number): number {
    return Math.max(0, simMs * this.scale);
  }

  /** Runs `fn` after `simMs` of simulated time; cancelled by cancel() or stop(). */
  after(simMs: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopped) fn();
    }, this.real(simMs));
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  /** Runs `fn` at simulated time `simAt` (now if already past). */
  at(simAt: number, fn: () => void): () => void {
    return this.after(Math.max(0, simAt - this.now()), fn);
  }

  sleep(simMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      let cancel = () => {};
      const onAbort = () => {
        cancel();
        reject(abortReason(signal!));
      };
      cancel = this.after(simMs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      if (this.stopped) {
        reject(new Error('simulator clock stopped'));
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Cancels every pending timer; later after()/at() calls do nothing. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
