// The common shape of a simulated operator: it watches its inputs, computes the config it should serve,
// and when that changes it rolls it out over a realistic duration (ClusterOperator Progressing=True
// meanwhile) and then serves it. A broken input (a missing or invalid secret) makes it Degraded and it keeps
// serving what it had, as real operators do. Overlapping changes of different operators run concurrently.
import type { StoreEvent } from '../../store-types';
import { R } from '../../../../src/cluster/resources';
import type { SimContext } from '../context';
import { clusterNames } from '../options';
import type { OperatorRecord, RolloutRecord } from '../state';
import { asExpected, writeClusterOperatorConditions, type WantedCondition } from './status';

export interface Problem {
  reason: string;
  message: string;
}

export type Desired<C> = { hash: string; config: C } | { problem: Problem };

export interface OperatorView {
  readonly coName: string;
  /** Re-publishes the ClusterOperator conditions (after a degradation was injected or cleared). */
  publish(): void;
  handle(event: StoreEvent): void;
  init(): void;
}

export abstract class RolloutOperator<C> implements OperatorView {
  abstract readonly key: string;
  abstract readonly coName: string;
  protected problem: Problem | undefined;
  private queued = false;

  constructor(protected readonly ctx: SimContext) {}

  protected abstract durationMs(): number;
  protected abstract relevant(event: StoreEvent): boolean;
  protected abstract desired(): Desired<C>;
  /** Progressing=True while rolling `target` out. */
  protected abstract progressingCondition(target: C, record: OperatorRecord): WantedCondition;
  /** Progressing/Available when settled on `current`. */
  protected abstract settledConditions(current: C | undefined, record: OperatorRecord): { progressing: WantedCondition; available: WantedCondition };
  /** Degraded=True for a broken input. */
  protected abstract degradedCondition(problem: Problem): WantedCondition;
  /** Side effects when a rollout of `target` begins (e.g. a route's host changes at once). */
  protected onRolloutStart(_target: C, _previous: C | undefined): void {}
  /** Named intermediate points of a rollout (offsets in simulated ms from its start). */
  protected milestones(_target: C, _previous: C | undefined): { name: string; offset: number }[] {
    return [];
  }
  protected onMilestone(_name: string, _rollout: RolloutRecord): void {}
  /** Side effects when `current` is rolled out and served. */
  protected onRolloutDone(_current: C): void {}
  /** After a restart, re-establish the effects of milestones that already fired (e.g. an API outage). */
  protected onResume(_rollout: RolloutRecord): void {}
  /** Side effects of a broken input appearing or going away (e.g. componentRoute status conditions). */
  protected onProblemChanged(_problem: Problem | undefined): void {}
  /**
   * Whether a new configuration may start rolling out now. Most operators supersede the rollout in progress
   * (a newer revision replaces the one being installed); one that may not (the machine-config pool, whose
   * node finishes its update first) says no here and reconciles again when the rollout in progress is done.
   */
  protected mayStartRollout(_desired: C): boolean {
    return true;
  }
  /** Simulated ms between an input changing and the operator reacting (a controller's queue delay). */
  protected reactionDelayMs(): number {
    return 0;
  }

  /**
   * A degradation from a controller of the operator that runs beside the config rollout (a route health check):
   * it makes the ClusterOperator Degraded without holding a rollout back.
   */
  protected healthProblem(): Problem | undefined {
    return undefined;
  }

  get record(): OperatorRecord {
    const ops = this.ctx.file.state.operators;
    ops[this.key] ??= { generation: 1 };
    return ops[this.key]!;
  }

  /** The config being served now. */
  current(): C | undefined {
    return this.record.current?.config as C | undefined;
  }

  /** The config being rolled out, if any. */
  target(): C | undefined {
    return this.record.target?.config as C | undefined;
  }

  init(): void {
    this.ctx.rollouts.on(this.key, (r, m) => this.safely(`rollout ${m}`, () => this.milestone(r, m)));
    const resumed = this.ctx.rollouts.get(this.key);
    if (resumed) this.onResume(resumed);
    if (!this.record.current) {
      const d = this.desired();
      if ('hash' in d) {
        this.record.current = { hash: d.hash, config: d.config };
        this.ctx.file.save();
      }
    }
    this.reconcile();
  }

  handle(event: StoreEvent): void {
    if (!this.relevant(event) || this.queued) return;
    this.queued = true;
    // Coalesce a burst of writes (a secret and the config referencing it) into one reaction, as an
    // informer-driven work queue does.
    const react = () => {
      this.queued = false;
      this.safely('reconcile', () => this.reconcile());
    };
    const delay = this.reactionDelayMs();
    if (delay > 0) this.ctx.clock.after(delay, react);
    else setImmediate(react);
  }

  /** A controller error is logged and retried on the next event, never thrown into the event loop. */
  /** The cluster's ingress domain: Ingress "cluster" spec.domain, else the installed apps.<cluster>.<base>. */
  protected ingressDomain(): string {
    return ((this.ctx.store.get(R.ingresses, 'cluster')?.spec as { domain?: string } | undefined)?.domain) ?? clusterNames(this.ctx.opts).apps;
  }

  protected safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.ctx.log(`${this.coName}: ${what} failed: ${(e as Error).message}`);
    }
  }

  reconcile(): void {
    const d = this.desired();
    if ('problem' in d) {
      const changed = JSON.stringify(d.problem) !== JSON.stringify(this.problem);
      this.problem = d.problem;
      if (changed) {
        this.ctx.log(`${this.coName}: degraded: ${d.problem.message}`);
        this.onProblemChanged(d.problem);
      }
      this.publish();
      return;
    }
    if (this.problem) {
      this.problem = undefined;
      this.onProblemChanged(undefined);
    }
    const rec = this.record;
    const have = rec.target?.hash ?? rec.current?.hash;
    if (d.hash !== have && this.mayStartRollout(d.config)) {
      const previous = this.current();
      rec.generation += 1;
      rec.target = { hash: d.hash, config: d.config };
      this.ctx.file.save();
      this.ctx.log(`${this.coName}: rolling out a new configuration (generation ${rec.generation})`);
      this.ctx.events.emit('rollout', { operator: this.coName, phase: 'start', generation: rec.generation });
      this.ctx.rollouts.start(this.key, this.durationMs(), { generation: rec.generation }, this.milestones(d.config, previous));
      this.onRolloutStart(d.config, previous);
    }
    this.publish();
  }

  publish(): void {
    const rec = this.record;
    const injected = this.ctx.file.state.injectedDegraded[this.coName];
    const settled = this.settledConditions(this.current(), rec);
    const health = this.problem ? undefined : this.healthProblem();
    const wanted: Record<string, WantedCondition> = {
      Degraded: injected ? { status: 'True', reason: injected.reason, message: injected.message } : this.problem ? this.degradedCondition(this.problem) : health ? this.degradedCondition(health) : asExpected('All is well'),
      Progressing: rec.target ? this.progressingCondition(rec.target.config as C, rec) : settled.progressing,
      Available: settled.available,
    };
    writeClusterOperatorConditions(this.ctx, this.coName, wanted);
  }

  private milestone(rollout: RolloutRecord, name: string): void {
    if (name !== 'done') {
      this.onMilestone(name, rollout);
      return;
    }
    const rec = this.record;
    if (!rec.target) return;
    rec.current = rec.target;
    rec.target = undefined;
    this.ctx.file.save();
    this.ctx.log(`${this.coName}: rollout of generation ${rec.generation} complete`);
    this.onRolloutDone(rec.current.config as C);
    this.publish();
    this.ctx.events.emit('rollout', { operator: this.coName, phase: 'done', generation: rec.generation });
  }
}
