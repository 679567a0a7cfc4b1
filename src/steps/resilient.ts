// A cluster step whose every phase rides out short API outages. Every cluster step re-reads before it
// writes, so running a phase again is safe.
import { MissingObjectError } from '../cluster/objects';
import { rideOutApiOutages } from '../cluster/retry';
import { StepError, type Step, type StepContext } from '../engine/step';

/** The step with every phase riding out short API outages (rideOutApiOutages). */
export function resilient(step: Step): Step {
  const phase = <T>(ctx: StepContext, work: () => Promise<T>): Promise<T> =>
    rideOutApiOutages(work, {
      timer: ctx.clock,
      signal: ctx.signal,
      onRetry: (err, delayMs) => ctx.log.warn({ err: (err as Error).message, retryInMs: delayMs }, `${step.title}: the API is not available; trying again`),
    }).catch((e: unknown) => {
      // updateObject (src/cluster/objects.ts) is only asked, without `optional`, for objects every cluster has.
      if (e instanceof MissingObjectError) throw new StepError(e.message, 'This object is part of every OpenShift cluster; check that the agent talks to the right cluster (--kubeconfig).');
      throw e;
    });
  return {
    ...step,
    plan: (ctx) => phase(ctx, () => step.plan(ctx)),
    check: (ctx) => phase(ctx, () => step.check(ctx)),
    apply: (ctx) => phase(ctx, () => step.apply(ctx)),
    verify: (ctx) => phase(ctx, () => step.verify(ctx)),
  };
}
