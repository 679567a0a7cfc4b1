import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { APPROVAL_CONFLICT_ATTEMPTS, CsrDeniedError } from '../../../src/cluster/approval';
import type { ClosableClusterClient } from '../../../src/cluster/client';
import { ApiError } from '../../../src/cluster/types';
import { CsrApi } from './csr-api';
import { testServerPerSuite, type TestServer } from './test-server';

describe('approveCsr through the /approval subresource', () => {
  let server: TestServer;
  let client: ClosableClusterClient;
  testServerPerSuite((t) => ({ server, client } = t));

  const fresh = () => {
    const api = new CsrApi();
    server.setHandler(api.handler);
    api.add({ metadata: { name: 'csr-1' }, spec: { signerName: 'kubernetes.io/kubelet-serving', request: 'eA==', usages: ['digital signature', 'server auth'] }, status: {} });
    return api;
  };

  test('PUTs the object as read, with resourceVersion and an appended Approved condition', async () => {
    const api = fresh();
    const before = api.get('csr-1');
    await client.approveCsr('csr-1', 'SNOReconfigureApprove', 'checked by the policy');
    assert.equal(api.approvals.length, 1);
    const put = server.requests.at(-1);
    assert.equal(put?.method, 'PUT');
    assert.equal(put?.path, '/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval');
    const body = api.approvals[0]?.body;
    assert.equal(body?.metadata.resourceVersion, before?.metadata.resourceVersion);
    assert.deepEqual(body?.spec, before?.spec);
    const conditions = api.get('csr-1')?.status?.conditions ?? [];
    assert.equal(conditions.length, 1);
    const c = conditions[0] ?? {};
    assert.equal(c.type, 'Approved');
    assert.equal(c.status, 'True');
    assert.equal(c.reason, 'SNOReconfigureApprove');
    assert.equal(c.message, 'checked by the policy');
    assert.match(String(c.lastUpdateTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC 3339, second precision');
  });

  test('an already approved CSR is left alone', async () => {
    const api = fresh();
    await client.approveCsr('csr-1', 'SNOReconfigureApprove', 'first');
    await client.approveCsr('csr-1', 'SNOReconfigureApprove', 'second');
    assert.equal(api.approvals.length, 1);
    assert.equal(api.get('csr-1')?.status?.conditions?.length, 1);
  });

  test('a denied CSR cannot be approved: CsrDeniedError, nothing sent', async () => {
    const api = fresh();
    api.deny('csr-1');
    await assert.rejects(client.approveCsr('csr-1', 'SNOReconfigureApprove', 'x'), (err: unknown) => err instanceof CsrDeniedError && /csr-1 was denied .*Test: denied in test/.test(err.message));
    assert.equal(api.approvals.length, 0);
  });

  test('409 Conflict: re-read and retry, then succeed', async () => {
    const api = fresh();
    api.approvalConflicts = 2;
    await client.approveCsr('csr-1', 'SNOReconfigureApprove', 'x');
    assert.equal(api.approvals.length, 3);
    const versions = api.approvals.map((a) => a.body.metadata.resourceVersion);
    assert.equal(new Set(versions).size, 3, 'each attempt carried the freshly read resourceVersion');
    assert.equal(api.get('csr-1')?.status?.conditions?.filter((c) => c.type === 'Approved').length, 1);
  });

  test('conflicts that never stop give up after a bounded number of attempts with the 409', async () => {
    const api = fresh();
    api.approvalConflicts = 100;
    await assert.rejects(client.approveCsr('csr-1', 'SNOReconfigureApprove', 'x'), (err: unknown) => err instanceof ApiError && err.statusCode === 409);
    assert.equal(api.approvals.length, APPROVAL_CONFLICT_ATTEMPTS);
  });

  test('a CSR that does not exist is a 404 ApiError', async () => {
    fresh();
    await assert.rejects(client.approveCsr('nope', 'SNOReconfigureApprove', 'x'), (err: unknown) => err instanceof ApiError && err.statusCode === 404);
  });
});
