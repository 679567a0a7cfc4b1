import { StepError } from '../engine/step';

/**
 * A cluster step's verify read back what it had just written and found it not in place: something else
 * (an operator, GitOps, a person) wrote the same objects meanwhile. Retried after a restart.
 */
export function notInPlace(message: string, what = 'these objects'): StepError {
  return new StepError(message, `Something else changed ${what} at the same time; the agent retries after a restart.`);
}
