// withCredentialFallback's /readyz answers: a refused credential is "expired", and final only when it was the
// last credential and its certificate's NotAfter has passed (src/steps/api.ts stops waiting on that).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClosableClusterClient } from '../../../src/cluster/client';
import { withCredentialFallback, type Fallback } from '../../../src/cluster/credential-fallback';

const REFUSED = { ready: false, detail: 'HTTP 401: Unauthorized', unauthorized: true };
const OK = { ready: true, detail: 'ok' };

/** A client whose only behaviour under test is its /readyz answer. */
function answering(answer: { ready: boolean; detail: string; unauthorized?: boolean }): ClosableClusterClient {
  return { server: 'https://localhost:6443', readyz: async () => answer, close: () => {} } as unknown as ClosableClusterClient;
}

const YESTERDAY = new Date(Date.now() - 86_400_000).toISOString();
const TOMORROW = new Date(Date.now() + 86_400_000).toISOString();
const CERT = 'the client certificate of localhost-recovery.kubeconfig';

test('the last credential, its certificate expired: final, with the date it expired', async () => {
  const client = withCredentialFallback(answering(REFUSED), CERT, async () => undefined, () => {}, YESTERDAY);
  const answer = await client.readyz();
  assert.equal(answer.refusedForGood, true);
  assert.equal(answer.detail, `credential expired: the API refused ${CERT}, which expired on ${YESTERDAY.slice(0, 10)} (HTTP 401: Unauthorized)`);
});

test('a refused certificate that has not expired, or of unknown expiry, is worth asking again', async () => {
  for (const notAfter of [TOMORROW, undefined]) {
    const answer = await withCredentialFallback(answering(REFUSED), CERT, async () => undefined, () => {}, notAfter).readyz();
    assert.equal(answer.unauthorized, true);
    assert.equal(answer.refusedForGood, undefined, `NotAfter ${notAfter}`);
    assert.equal(answer.detail, `credential expired: the API refused ${CERT} (HTTP 401: Unauthorized)`);
  }
});

test('an expired certificate with a fallback: the fallback answers, and its refusal is never final', async () => {
  const switched: string[] = [];
  const token = (answer: typeof OK | typeof REFUSED): Fallback => ({ client: answering(answer), description: 'the recovery token' });
  const accepted = await withCredentialFallback(answering(REFUSED), CERT, async () => token(OK), (f) => switched.push(f.description), YESTERDAY).readyz();
  assert.deepEqual(accepted, OK);
  assert.deepEqual(switched, ['the recovery token']);
  const refused = await withCredentialFallback(answering(REFUSED), CERT, async () => token(REFUSED), () => {}, YESTERDAY).readyz();
  assert.equal(refused.refusedForGood, undefined);
  assert.match(refused.detail, /the API refused the client certificate of localhost-recovery\.kubeconfig and the recovery token/);
});
