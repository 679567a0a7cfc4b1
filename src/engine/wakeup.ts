// A wait that events can cut short: a step sleeps until its next periodic look, and a watch event (or the CSR
// approver's progress) wakes it at once — so the agent notices a change as it happens, and the periodic look
// only covers what no event reports.
import type { Clock } from './step';

export class Wakeup {
  private controller = new AbortController();
  private pending = false;

  /** Ends the current sleep; a wake with nobody asleep makes the next sleep return at once. */
  wake(): void {
    this.pending = true;
    this.controller.abort();
  }

  /** Sleeps up to `ms`; returns early on wake() and when `signal` aborts (the caller checks which). */
  async sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    const onStop = () => controller.abort();
    signal.addEventListener('abort', onStop, { once: true });
    try {
      await clock.sleep(ms, controller.signal);
    } catch {
      // woken up early or stopping (checked by the caller)
    } finally {
      signal.removeEventListener('abort', onStop);
      this.pending = false;
    }
  }
}
