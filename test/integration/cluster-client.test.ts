// The agent's own Kubernetes client against the cluster simulator (test/sim), which speaks the real wire
// protocol: client-certificate and token auth, RBAC, CRD schema validation, resourceVersion conflicts,
// the three patch types, watch with bookmarks and 410, and injected faults.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClusterClient, type ClosableClusterClient } from '../../src/cluster/client';
import { loadKubeconfig } from '../../src/cluster/kubeconfig';
import { R } from '../../src/cluster/resources';
import { retryOnConflict, withRetry } from '../../src/cluster/retry';
import { ApiError, ConnectionError, type KubeObject, type WatchEvent } from '../../src/cluster/types';
import { startSimulator, type Simulator } from '../sim/index';
import { waitFor } from '../unit/cluster/wait';
import { readFile } from 'node:fs/promises';

type ConfigMap = KubeObject & { data?: Record<string, string> };
const NS = 'openshift-config';

describe('cluster client against the simulator', () => {
  let sim: Simulator;
  let client: ClosableClusterClient;
  const extra: ClosableClusterClient[] = [];
  before(async () => {
    sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    client = createClusterClient(await loadKubeconfig((p) => readFile(p), sim.kubeconfigs.localhost), { timeoutMs: 5000, watchBackoff: { initialMs: 5, maxMs: 50 }, watchTimeoutSeconds: 60 });
  });
  after(async () => {
    client?.close();
    for (const c of extra) c.close();
    await sim?.stop();
  });

  test('readyz, and reading seeded cluster objects', async () => {
    assert.deepEqual(await client.readyz(), { ready: true, detail: 'ok' });
    const cv = await client.get<KubeObject>(R.clusterVersions, 'version');
    assert.equal(cv?.kind, 'ClusterVersion');
    const nodes = await client.list(R.nodes);
    assert.deepEqual(nodes.items.map((n) => n.metadata?.name), [sim.options.nodeName]);
    assert.match(nodes.resourceVersion, /^\d+$/);
  });

  test('create, get, list by label, conditional update with 409 on a stale version, the three patch types, delete', async () => {
    const created = await client.create<ConfigMap>(R.configMaps, { metadata: { name: 'cc-test', namespace: NS, labels: { app: 'cc' } }, data: { a: '1' } });
    assert.ok(created.metadata?.resourceVersion);
    assert.equal((await client.get<ConfigMap>(R.configMaps, 'cc-test', NS))?.data?.a, '1');
    assert.deepEqual((await client.list(R.configMaps, { namespace: NS, labelSelector: 'app=cc' })).items.map((i) => i.metadata?.name), ['cc-test']);
    await assert.rejects(client.create(R.configMaps, { metadata: { name: 'cc-test', namespace: NS } }), (err: unknown) => err instanceof ApiError && err.statusCode === 409 && err.reason === 'AlreadyExists');

    const updated = await client.update<ConfigMap>(R.configMaps, { ...created, data: { a: '2' } });
    await assert.rejects(client.update(R.configMaps, { ...created, data: { a: 'stale' } }), (err: unknown) => err instanceof ApiError && err.statusCode === 409 && err.reason === 'Conflict');
    assert.equal((await client.get<ConfigMap>(R.configMaps, 'cc-test', NS))?.data?.a, '2');
    assert.notEqual(updated.metadata?.resourceVersion, created.metadata?.resourceVersion);

    assert.deepEqual((await client.patch<ConfigMap>(R.configMaps, 'cc-test', { data: { b: 'm' } }, 'merge', NS)).data, { a: '2', b: 'm' });
    assert.deepEqual((await client.patch<ConfigMap>(R.configMaps, 'cc-test', [{ op: 'replace', path: '/data/a', value: 'j' }], 'json', NS)).data, { a: 'j', b: 'm' });
    assert.deepEqual((await client.patch<ConfigMap>(R.configMaps, 'cc-test', { data: { c: 's' } }, 'strategic', NS)).data, { a: 'j', b: 'm', c: 's' });

    assert.equal(await client.delete(R.configMaps, 'cc-test', NS), true);
    assert.equal(await client.delete(R.configMaps, 'cc-test', NS), false);
    assert.equal(await client.get(R.configMaps, 'cc-test', NS), undefined);
  });

  test('OpenShift resources: merge patch accepted, a schema violation is 422 Invalid, strategic merge on a CRD is 415', async () => {
    const patched = await client.patch<KubeObject>(R.apiServers, 'cluster', { metadata: { annotations: { 'sno-reconfigure.io/test': 'x' } } }, 'merge');
    assert.equal(patched.metadata?.annotations?.['sno-reconfigure.io/test'], 'x');
    await assert.rejects(client.patch(R.ingresses, 'cluster', { spec: { appsDomain: 12 } }, 'merge'), (err: unknown) => {
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.statusCode, 422);
      assert.equal(err.reason, 'Invalid');
      assert.match(err.message, /appsDomain/);
      return true;
    });
    await assert.rejects(client.patch(R.ingresses, 'cluster', { spec: {} }, 'strategic'), (err: unknown) => err instanceof ApiError && err.statusCode === 415);
  });

  test('read-modify-write with retryOnConflict survives concurrent writers (real 409s)', async () => {
    await client.create<ConfigMap>(R.configMaps, { metadata: { name: 'rmw', namespace: NS }, data: { n: '0', other: '' } });
    let attempts = 0;
    await retryOnConflict(async () => {
      attempts++;
      const cm = await client.get<ConfigMap>(R.configMaps, 'rmw', NS);
      assert.ok(cm);
      if (attempts <= 2) {
        // someone else writes between our read and our write
        const theirs = sim.store.get(R.configMaps, 'rmw', NS) as ConfigMap;
        sim.store.update(R.configMaps, { ...theirs, data: { ...theirs.data, other: `${theirs.data?.other ?? ''}x` } });
      }
      await client.update(R.configMaps, { ...cm, data: { ...cm.data, n: String(Number(cm.data?.n) + 1) } });
    });
    assert.equal(attempts, 3);
    assert.deepEqual((await client.get<ConfigMap>(R.configMaps, 'rmw', NS))?.data, { n: '1', other: 'xx' }, 'our change and theirs both kept');
  });

  test('503 while the API is unavailable is retried by withRetry; resets are ConnectionErrors', async () => {
    sim.api.faults = { ...sim.api.faults, unavailableUntil: sim.clock.now() + 10 ** 12 };
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 20)));
    let failures = 0;
    const got = await withRetry(() => client.get(R.nodes, sim.options.nodeName), {
      attempts: 10,
      sleep,
      onRetry: (err) => {
        assert.ok(err instanceof ApiError && err.statusCode === 503 && err.reason === 'ServiceUnavailable', String(err));
        // the API recovers after the third 503
        if (++failures === 3) sim.api.faults = { ...sim.api.faults, unavailableUntil: undefined };
      },
    });
    assert.ok(got);
    assert.equal(failures, 3);

    sim.api.faults = { ...sim.api.faults, unavailableUntil: undefined, resetUntil: sim.clock.now() + 60_000_000 };
    await assert.rejects(client.get(R.nodes, sim.options.nodeName), (err: unknown) => err instanceof ConnectionError);
    const ready = await client.readyz();
    assert.equal(ready.ready, false);
    sim.api.faults = { ...sim.api.faults, resetUntil: undefined };
    assert.ok(await client.get(R.nodes, sim.options.nodeName));
  });

  test('token authentication and RBAC: a node identity may not read secrets (403 Forbidden)', async () => {
    const kubeconfig = sim.api.kubeconfigFor({ user: `system:node:${sim.options.nodeName}`, groups: ['system:nodes', 'system:authenticated'] }, { token: true });
    const nodeClient = createClusterClient(await loadKubeconfig((p) => readFile(p), kubeconfig));
    extra.push(nodeClient);
    assert.ok(await nodeClient.get(R.nodes, sim.options.nodeName));
    await assert.rejects(nodeClient.list(R.secrets, { namespace: NS }), (err: unknown) => err instanceof ApiError && err.statusCode === 403 && err.reason === 'Forbidden');
  });

  test('watch: events, bookmarks, an API outage with a compacted history → relist, then new events', async () => {
    const ns = 'openshift-config-managed';
    await client.create(R.configMaps, { metadata: { name: 'w-1', namespace: ns } });
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.configMaps, { namespace: ns, signal: ac.signal, fieldSelector: 'metadata.name!=nothing' }, (e) => { events.push(e); });
    await waitFor(() => events.some((e) => e.object.metadata?.name === 'w-1'), 'the initial list');
    await client.create(R.configMaps, { metadata: { name: 'w-2', namespace: ns } });
    await waitFor(() => events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'w-2'), 'ADDED w-2 through the watch');
    await waitFor(() => events.some((e) => e.type === 'BOOKMARK'), 'a bookmark');

    // the API goes away; meanwhile objects change and the history is compacted
    await sim.api.setUp(false);
    sim.store.create(R.configMaps, { metadata: { name: 'w-3', namespace: ns } });
    sim.api.compactHistory();
    const before = events.length;
    await sim.api.setUp(true);
    await waitFor(() => events.slice(before).some((e) => e.object.metadata?.name === 'w-3'), 'the relist after 410');
    const relisted = events.slice(before).filter((e) => e.type === 'ADDED').map((e) => e.object.metadata?.name).sort();
    assert.deepEqual(relisted.filter((n) => n?.startsWith('w-')), ['w-1', 'w-2', 'w-3']);
    await client.create(R.configMaps, { metadata: { name: 'w-4', namespace: ns } });
    await waitFor(() => events.some((e) => e.object.metadata?.name === 'w-4'), 'watching again after the relist');
    ac.abort();
    await done;
    const lists = sim.api.requests.filter((r) => r.path === `/api/v1/namespaces/${ns}/configmaps` && r.method === 'GET' && !/watch=1/.test(r.query));
    assert.equal(lists.length, 2, 'one initial list and one relist after the 410');
  });
});
