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

test('a step refusing the file tells the node the second stick, and the office what the author must fix (issue 27)', async () => {
  const { describeError } = await import('../../../src/engine/runner');
  const d = describeError(new ConfigRejectedError('the network operator refused the proxy: bad URL', 'Correct spec.proxy in the site-config and insert the media again.'));
  assert.equal(d.remedy, 'If a second stick or image came for this node, try that one.');
  assert.equal(d.office, 'they must send new media (for them: Correct spec.proxy in the site-config and insert the media again.)');
  const own = describeError(new ConfigRejectedError('x', 'Check the cable.', { office: 'they must send new media if the gateway is wrong' }));
  assert.deepEqual([own.remedy, own.office], ['Check the cable.', 'they must send new media if the gateway is wrong']);
  const retry = describeError(new StepError('attempt 1 failed', 'Check the cable.', true, { attempt: { n: 1, of: 3 } }));
  assert.deepEqual(retry.attempt, { n: 1, of: 3 });
});
