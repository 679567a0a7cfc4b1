// A StepError that wraps another error keeps it as its cause: the sentence is for people, the cause for the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigRejectedError, StepError } from '../../../src/engine/step';

test('StepError and ConfigRejectedError keep the error they wrap as cause', () => {
  const errno = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
  const wrapped = new StepError('cannot read the node-local kubeconfig', 'Check --kubeconfig.', true, { cause: errno });
  assert.equal(wrapped.cause, errno);
  assert.equal(wrapped.message, 'cannot read the node-local kubeconfig', 'the cause stays out of the sentence');
  const rejected = new ConfigRejectedError('the site network did not verify', 'Provide corrected media.', { cause: errno });
  assert.equal(rejected.cause, errno);
  assert.equal(rejected.retryable, false);
  assert.equal(new StepError('m', 'r').cause, undefined, 'no cause unless one is given');
});
