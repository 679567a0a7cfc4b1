// API faults through the simulator's control channel (what an out-of-process test harness uses): 503
// bursts and resets for a simulated duration, conflicts on the next writes, and an operator degrading on
// demand.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import type { Simulator } from '../../sim/index';
import { TestClient, condition, runningSimulatorPerSuite } from '../../sim/cluster/testing';
import { kubeRequest } from '../../sim/cluster/kube-http';

let sim: Simulator;
let admin: TestClient;
runningSimulatorPerSuite((s, a) => ((sim = s), (admin = a)));

async function fault(body: unknown): Promise<Response> {
  return fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: JSON.stringify(body) });
}

describe('faults through the control channel', () => {
  test('503 for ten simulated minutes, then answers again', async () => {
    assert.equal((await fault({ apiUnavailableForMs: 10 * 60_000 })).status, 200);
    const during = await kubeRequest(admin.creds, 'GET', '/api/v1/namespaces/default');
    assert.equal(during.status, 503);
    assert.equal((during.body as { reason: string }).reason, 'ServiceUnavailable');
    await sim.waitFor(async () => (await kubeRequest(admin.creds, 'GET', '/api/v1/namespaces/default')).status === 200, 3000, 'API answers after the burst');
  });

  test('connections reset for a while', async () => {
    assert.equal((await fault({ apiResetForMs: 10 * 60_000 })).status, 200);
    await assert.rejects(kubeRequest(admin.creds, 'GET', '/api/v1/namespaces/default', undefined, { timeoutMs: 1000 }), /ECONNRESET|socket hang up|disconnected/);
    await sim.waitFor(async () => (await kubeRequest(admin.creds, 'GET', '/api/v1/namespaces/default').catch(() => undefined))?.status === 200, 3000, 'connections accepted again');
  });

  test('the next write gets 409 Conflict, the one after succeeds', async () => {
    assert.equal((await fault({ api: { conflictsOnNextWrites: 1 } })).status, 200);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: '1' } };
    const first = await kubeRequest(admin.creds, 'POST', '/api/v1/namespaces/default/configmaps', cm);
    assert.equal(first.status, 409);
    const second = await kubeRequest(admin.creds, 'POST', '/api/v1/namespaces/default/configmaps', cm);
    assert.equal(second.status, 201);
  });

  test('an operator degrades and recovers on demand; bad requests are refused with the reason', async () => {
    assert.equal((await fault({ degrade: { operator: 'network', reason: 'RolloutHung', message: 'DaemonSet "openshift-ovn-kubernetes/ovnkube-node" rollout is not making progress' } })).status, 200);
    const network = await admin.get(R.clusterOperators, 'network');
    assert.equal(condition(network, 'Degraded')?.status, 'True');
    assert.match(condition(network, 'Degraded')!.message!, /ovnkube-node/);
    assert.equal((await fault({ recover: 'network' })).status, 200);
    assert.equal(condition(await admin.get(R.clusterOperators, 'network'), 'Degraded')?.status, 'False');

    const bad = await fault({ degrade: { operator: 'nope', reason: 'X' } });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /no ClusterOperator "nope"/);
    const notJson = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: 'not json' });
    assert.equal(notJson.status, 400);
    const negative = await fault({ apiUnavailableForMs: -5 });
    assert.equal(negative.status, 400);
  });
});
