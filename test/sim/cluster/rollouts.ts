// Timed rollouts on the simulated clock. Each owner (an operator) has at most one rollout at a time; a
// new one replaces it (a newer kube-apiserver revision supersedes the one being installed). Rollouts are
// kept in the persisted state, so after a restart they resume where the timeline is: milestones that
// passed while the simulator was down fire at once, in order.
import type { SimClock } from './clock';
import type { RolloutRecord, StateFile } from './state';

export type MilestoneHandler = (rollout: RolloutRecord, milestone: string) => void;

export class Rollouts {
  private readonly handlers = new Map<string, MilestoneHandler>();
  private readonly cancels = new Map<string, () => void>();

  constructor(
    private readonly clock: SimClock,
    private readonly file: StateFile,
  ) {}

  /** Registers what an owner does at its milestones ('done' last). */
  on(owner: string, handler: MilestoneHandler): void {
    this.handlers.set(owner, handler);
  }

  get(owner: string): RolloutRecord | undefined {
    return this.file.state.rollouts.find((r) => r.owner === owner);
  }

  all(): RolloutRecord[] {
    return [...this.file.state.rollouts];
  }

  /**
   * Starts (or restarts) the owner's rollout lasting `durationMs` simulated ms. `milestones` are offsets
   * from the start; one named 'done' is added at the end.
   */
  start(owner: string, durationMs: number, data: Record<string, unknown> = {}, milestones: { name: string; offset: number }[] = []): RolloutRecord {
    this.cancel(owner);
    const startedAt = this.clock.now();
    const endsAt = startedAt + durationMs;
    const record: RolloutRecord = {
      owner,
      startedAt,
      endsAt,
      milestones: [...milestones.map((m) => ({ name: m.name, at: startedAt + Math.min(m.offset, durationMs) })), { name: 'done', at: endsAt }].sort((a, b) => a.at - b.at),
      data,
    };
    this.file.state.rollouts.push(record);
    this.file.save();
    this.schedule(record);
    return record;
  }

  /** Drops the owner's rollout without firing anything. */
  cancel(owner: string): void {
    this.cancels.get(owner)?.();
    this.cancels.delete(owner);
    const i = this.file.state.rollouts.findIndex((r) => r.owner === owner);
    if (i >= 0) {
      this.file.state.rollouts.splice(i, 1);
      this.file.save();
    }
  }

  /** Schedules every rollout in the state that is not scheduled yet (after a restart). */
  resumeAll(): void {
    for (const r of this.file.state.rollouts) if (!this.cancels.has(r.owner)) this.schedule(r);
  }

  private schedule(record: RolloutRecord): void {
    const next = record.milestones.find((m) => !m.fired);
    if (!next) return;
    const cancel = this.clock.at(next.at, () => {
      if (this.get(record.owner) !== record) return;
      next.fired = true;
      if (next.name === 'done') {
        const i = this.file.state.rollouts.indexOf(record);
        if (i >= 0) this.file.state.rollouts.splice(i, 1);
        this.cancels.delete(record.owner);
      }
      this.file.save();
      this.handlers.get(record.owner)?.(record, next.name);
      if (next.name !== 'done' && this.get(record.owner) === record) this.schedule(record);
    });
    this.cancels.set(record.owner, cancel);
  }
}
