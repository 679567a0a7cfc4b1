// PATCH as the kube-apiserver applies it: JSON merge patch, JSON patch (test op failures are 422),
// strategic merge patch for built-in types only (415 for custom resources), server-side apply not served.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { SimClient } from '../../sim/apiserver/client';
import { jsonPatch, mergePatch, strategicMergePatch } from '../../sim/apiserver/patch';

let server: ApiServer;
let admin: SimClient;
const NODE = '/api/v1/nodes/sno1';
const INGRESS = '/apis/config.openshift.io/v1/ingresses/cluster';

interface Meta {
  resourceVersion: string;
  generation?: number;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
}
const body = (r: { body: unknown }) => r.body as Record<string, unknown> & { metadata: Meta; spec: Record<string, unknown>; status: Record<string, unknown> };

describe('PATCH', () => {
  before(async () => {
    server = await startApiServer();
    admin = new SimClient(server, { identity: ADMIN });
    server.store.create(R.nodes, {
      metadata: { name: 'sno1', labels: { 'node-role.kubernetes.io/master': '' }, finalizers: ['a'] },
      spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'KubeletNotReady' },
          { type: 'MemoryPressure', status: 'False' },
        ],
        addresses: [
          { type: 'InternalIP', address: '192.168.1.10' },
          { type: 'Hostname', address: 'sno1' },
        ],
      },
    });
    server.store.create(R.ingresses, { apiVersion: 'config.openshift.io/v1', kind: 'Ingress', metadata: { name: 'cluster' }, spec: { domain: 'apps.sno1.example.com', componentRoutes: [{ name: 'console', namespace: 'openshift-console', hostname: 'console.apps.sno1.example.com' }] } });
  });

  after(async () => {
    admin.close();
    await server.close();
  });

  test('merge patch (RFC 7386): nested merge, null deletes, lists replaced; generation bumps on spec change', async () => {
    const r = await admin.request('PATCH', INGRESS, { body: { spec: { appsDomain: 'apps.store42.example.com', componentRoutes: null } }, contentType: 'application/merge-patch+json' });
    assert.equal(r.status, 200);
    assert.deepEqual(body(r).spec, { domain: 'apps.sno1.example.com', appsDomain: 'apps.store42.example.com' });
    assert.equal(body(r).metadata.generation, 2);
    const labels = await admin.request('PATCH', INGRESS, { body: { metadata: { labels: { x: 'y' } } } });
    assert.equal(body(labels).metadata.generation, 2);
    const notObject = await admin.request('PATCH', INGRESS, { body: [1], contentType: 'application/merge-patch+json' });
    assert.equal(notObject.status, 400);
  });

  test('merge patch with a stale metadata.resourceVersion is a 409', async () => {
    const cur = body(await admin.get(INGRESS));
    await admin.request('PATCH', INGRESS, { body: { metadata: { annotations: { bump: '1' } } } });
    const stale = await admin.request('PATCH', INGRESS, { body: { metadata: { resourceVersion: cur.metadata.resourceVersion }, spec: { appsDomain: 'x.example.com' } } });
    assert.equal(stale.status, 409);
  });

  test('JSON patch (RFC 6902): add/replace/remove/copy/move, test guards, 422 on failure, 400 when malformed', async () => {
    const ok = await admin.request('PATCH', INGRESS, {
      contentType: 'application/json-patch+json',
      body: [
        { op: 'test', path: '/spec/domain', value: 'apps.sno1.example.com' },
        { op: 'add', path: '/spec/componentRoutes', value: [] },
        { op: 'add', path: '/spec/componentRoutes/-', value: { name: 'downloads', namespace: 'openshift-console', hostname: 'downloads.apps.x.example.com' } },
        { op: 'replace', path: '/spec/appsDomain', value: 'apps.x.example.com' },
        { op: 'copy', from: '/spec/appsDomain', path: '/metadata/annotations/copied' },
        { op: 'move', from: '/metadata/annotations/copied', path: '/metadata/annotations/moved' },
        { op: 'remove', path: '/metadata/annotations/bump' },
      ],
    });
    assert.equal(ok.status, 200, ok.text);
    const o = body(ok);
    assert.equal((o.spec.componentRoutes as { name: string }[])[0].name, 'downloads');
    assert.equal(o.spec.appsDomain, 'apps.x.example.com');
    assert.deepEqual(o.metadata.annotations, { moved: 'apps.x.example.com' });

    const failedTest = await admin.request('PATCH', INGRESS, { contentType: 'application/json-patch+json', body: [{ op: 'test', path: '/spec/appsDomain', value: 'other' }, { op: 'remove', path: '/spec/appsDomain' }] });
    assert.equal(failedTest.status, 422);
    assert.deepEqual([(failedTest.body as { reason: string }).reason, (failedTest.body as { message: string }).message], ['Invalid', 'testing value /spec/appsDomain failed: test failed']);
    assert.equal(body(await admin.get(INGRESS)).spec.appsDomain, 'apps.x.example.com', 'nothing applied');

    const missing = await admin.request('PATCH', INGRESS, { contentType: 'application/json-patch+json', body: [{ op: 'remove', path: '/spec/nothing' }] });
    assert.equal(missing.status, 422);
    const malformed = await admin.request('PATCH', INGRESS, { contentType: 'application/json-patch+json', body: { op: 'add' } });
    assert.equal(malformed.status, 400);
  });

  test('strategic merge patch on a Node merges conditions and addresses by type, finalizers as a set', async () => {
    const r = await admin.request('PATCH', `${NODE}/status`, {
      contentType: 'application/strategic-merge-patch+json',
      body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }], addresses: [{ type: 'InternalIP', address: '10.0.0.5' }] } },
    });
    assert.equal(r.status, 200, r.text);
    const st = body(r).status as { conditions: { type: string; status: string }[]; addresses: { type: string; address: string }[] };
    assert.deepEqual(
      st.conditions.map((c) => `${c.type}=${c.status}`),
      ['Ready=True', 'MemoryPressure=False'],
    );
    assert.deepEqual(
      st.addresses.map((a) => `${a.type}=${a.address}`),
      ['InternalIP=10.0.0.5', 'Hostname=sno1'],
    );
    const meta = await admin.request('PATCH', NODE, { contentType: 'application/strategic-merge-patch+json', body: { metadata: { finalizers: ['b', 'a'], labels: { 'node-role.kubernetes.io/master': null } }, spec: { taints: [{ key: 'other', effect: 'NoExecute' }] } } });
    const m = body(meta);
    assert.deepEqual(m.metadata.finalizers, ['a', 'b']);
    assert.deepEqual(m.metadata.labels ?? {}, {});
    assert.deepEqual(m.spec.taints, [{ key: 'other', effect: 'NoExecute' }], 'taints have no patch strategy: replaced');
    const del = await admin.request('PATCH', `${NODE}/status`, { contentType: 'application/strategic-merge-patch+json', body: { status: { conditions: [{ type: 'MemoryPressure', $patch: 'delete' }] } } });
    assert.deepEqual(
      (body(del).status as { conditions: { type: string }[] }).conditions.map((c) => c.type),
      ['Ready'],
    );
  });

  test('strategic merge patch of a custom resource is 415; so is server-side apply', async () => {
    const smp = await admin.request('PATCH', INGRESS, { contentType: 'application/strategic-merge-patch+json', body: { spec: { appsDomain: 'y.example.com' } } });
    assert.equal(smp.status, 415);
    assert.equal((smp.body as { message: string }).message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json');
    const apply = await admin.request('PATCH', INGRESS, { contentType: 'application/apply-patch+yaml', body: 'spec: {}', query: { fieldManager: 'x' } });
    assert.equal(apply.status, 415);
  });

  test('status patches go through /status only', async () => {
    const main = await admin.request('PATCH', NODE, { body: { status: { phase: 'Running' } } });
    assert.equal((body(main).status as { phase?: string }).phase, undefined);
    const viaStatus = await admin.request('PATCH', `${NODE}/status`, { body: { status: { phase: 'Running' }, spec: { unschedulable: true } } });
    assert.equal((body(viaStatus).status as { phase?: string }).phase, 'Running');
    assert.equal(body(viaStatus).spec.unschedulable, undefined);
    assert.equal((await admin.request('PATCH', '/api/v1/nodes/absent', { body: {} })).status, 404);
  });

  test('patch functions on their own', () => {
    assert.deepEqual(mergePatch({ a: { b: 1, c: 2 }, d: [1] }, { a: { b: null, e: 3 }, d: [2] }), { a: { c: 2, e: 3 }, d: [2] });
    assert.deepEqual(jsonPatch({ a: ['x', 'y'] }, [{ op: 'add', path: '/a/1', value: 'z' }]), { a: ['x', 'z', 'y'] });
    assert.deepEqual(jsonPatch({ 'a/b': { '~': 1 } }, [{ op: 'replace', path: '/a~1b/~0', value: 2 }]), { 'a/b': { '~': 2 } });
    assert.deepEqual(strategicMergePatch('configmaps', { data: { a: '1', b: '2' } }, { data: { a: null, c: '3' } }), { data: { b: '2', c: '3' } });
    assert.deepEqual(strategicMergePatch('configmaps', { data: { a: '1', b: '2' } }, { data: { $patch: 'replace', x: '1' } }), { data: { x: '1' } });
    assert.deepEqual(strategicMergePatch('nodes', { metadata: { finalizers: ['a', 'b'] } }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }), { metadata: { finalizers: ['b'] } });
  });
});
