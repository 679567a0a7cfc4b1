// The simulated API server over HTTPS: every verb, discovery, health, selectors, authentication (401)
// and authorization (403), with the real Status bodies.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { R } from '../../../src/cluster/resources';
import { ADMIN, BOOTSTRAPPER, nodeIdentity, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { SimClient } from '../../sim/apiserver/client';
import { createCa, issueClientCert } from '../../sim/pki';

let server: ApiServer;
let admin: SimClient;

const CM = '/api/v1/namespaces/openshift-config/configmaps';

function status(body: unknown): { code: number; reason: string; message: string; details?: Record<string, unknown> } {
  const b = body as { kind: string; code: number; reason: string; message: string; details?: Record<string, unknown> };
  assert.equal(b.kind, 'Status');
  return b;
}

describe('simulated API server: verbs, discovery and auth over HTTPS', () => {
  before(async () => {
    server = await startApiServer({ clusterVersion: '4.15.9' });
    admin = new SimClient(server, { identity: ADMIN });
    server.store.create(R.namespaces, { metadata: { name: 'openshift-config' } });
    server.store.create(R.namespaces, { metadata: { name: 'openshift-ingress-operator' } });
  });

  after(async () => {
    admin.close();
    await server.close();
  });

  test('health endpoints answer anonymously; /version follows the OpenShift version', async () => {
    const anon = new SimClient(server, { anonymous: true });
    try {
      for (const p of ['/readyz', '/livez', '/healthz']) {
        const r = await anon.get(p);
        assert.deepEqual([r.status, r.text], [200, 'ok'], p);
      }
      const v = await anon.get('/version');
      assert.equal(v.status, 200);
      assert.deepEqual([(v.body as { major: string }).major, (v.body as { minor: string }).minor], ['1', '28']);
      assert.match((v.body as { gitVersion: string }).gitVersion, /^v1\.28\./);
      const verbose = await anon.get('/readyz?verbose');
      assert.match(verbose.text, /readyz check passed/);
    } finally {
      anon.close();
    }
  });

  test('discovery: /api, /apis, groups and resource lists with verbs and subresources', async () => {
    const api = await admin.get('/api');
    assert.deepEqual((api.body as { versions: string[] }).versions, ['v1']);
    const apis = (await admin.get('/apis')).body as { kind: string; groups: { name: string; preferredVersion: { version: string } }[] };
    assert.equal(apis.kind, 'APIGroupList');
    const groups = Object.fromEntries(apis.groups.map((g) => [g.name, g.preferredVersion.version]));
    assert.equal(groups['operator.openshift.io'], 'v1');
    assert.equal(groups['certificates.k8s.io'], 'v1');
    const v1 = (await admin.get('/api/v1')).body as { resources: { name: string; verbs: string[]; namespaced: boolean; shortNames?: string[] }[] };
    const nodes = v1.resources.find((r) => r.name === 'nodes');
    assert.deepEqual(nodes?.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(nodes?.shortNames, ['no']);
    assert.ok(v1.resources.some((r) => r.name === 'nodes/status'));
    const certs = (await admin.get('/apis/certificates.k8s.io/v1')).body as { resources: { name: string }[] };
    assert.deepEqual(
      certs.resources.map((r) => r.name),
      ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'],
    );
    const group = (await admin.get('/apis/operator.openshift.io')).body as { versions: { version: string }[] };
    assert.deepEqual(
      group.versions.map((v) => v.version),
      ['v1', 'v1alpha1'],
    );
    assert.equal((await admin.get('/apis/nothing.example.com/v1')).status, 404);
  });

  test('OpenShift 4.12: no ImageDigestMirrorSet/ImageTagMirrorSet in discovery or at their paths; ICSP served', async () => {
    const old = await startApiServer({ clusterVersion: '4.12.40' });
    const c = new SimClient(old, { identity: ADMIN });
    try {
      const config = (await c.get('/apis/config.openshift.io/v1')).body as { resources: { name: string }[] };
      const names = config.resources.map((r) => r.name);
      assert.ok(names.includes('ingresses'));
      assert.ok(!names.includes('imagedigestmirrorsets') && !names.includes('imagetagmirrorsets'));
      const idms = await c.get('/apis/config.openshift.io/v1/imagedigestmirrorsets');
      assert.equal(idms.status, 404);
      assert.equal(status(idms.body).message, 'the server could not find the requested resource');
      assert.equal((await c.get('/apis/operator.openshift.io/v1alpha1/imagecontentsourcepolicies')).status, 200);
      assert.match((await c.get('/version')).text, /"gitVersion":"v1\.25\./);
    } finally {
      c.close();
      await old.close();
    }
  });

  test('create: 201, generateName, 409 AlreadyExists, namespace mismatch 400, unsupported body type 415', async () => {
    const created = await admin.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: '1' } } });
    assert.equal(created.status, 201);
    assert.equal((created.body as { metadata: { namespace: string } }).metadata.namespace, 'openshift-config');
    const generated = await admin.request('POST', CM, { body: { metadata: { generateName: 'gen-' } } });
    assert.match((generated.body as { metadata: { name: string } }).metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const dup = await admin.request('POST', CM, { body: { metadata: { name: 'cfg' } } });
    assert.equal(dup.status, 409);
    assert.deepEqual(status(dup.body), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "cfg" already exists',
      reason: 'AlreadyExists',
      details: { name: 'cfg', kind: 'configmaps' },
      code: 409,
    });
    const wrongNs = await admin.request('POST', CM, { body: { metadata: { name: 'x', namespace: 'default' } } });
    assert.equal(wrongNs.status, 400);
    assert.equal(status(wrongNs.body).message, 'the namespace of the provided object does not match the namespace sent on the request');
    const noType = await admin.request('POST', CM, { body: { metadata: { name: 'y' } }, contentType: 'text/plain' });
    assert.equal(noType.status, 415);
    assert.equal(status(noType.body).reason, 'UnsupportedMediaType');
    const yamlBody = await admin.request('POST', CM, { body: 'metadata:\n  name: from-yaml\ndata:\n  k: v\n', contentType: 'application/yaml' });
    assert.equal(yamlBody.status, 201);
    const badJson = await admin.request('POST', CM, { body: '{"metadata":', contentType: 'application/json' });
    assert.equal(badJson.status, 400);
  });

  test('get: 200 with kind/apiVersion; 404 NotFound Status with group details', async () => {
    const got = await admin.get(`${CM}/cfg`);
    assert.equal(got.status, 200);
    assert.deepEqual([(got.body as { kind: string }).kind, (got.body as { apiVersion: string }).apiVersion], ['ConfigMap', 'v1']);
    const missing = await admin.get('/apis/config.openshift.io/v1/ingresses/cluster');
    assert.equal(missing.status, 404);
    assert.deepEqual(status(missing.body).details, { name: 'cluster', group: 'config.openshift.io', kind: 'ingresses' });
    assert.equal(status(missing.body).message, 'ingresses.config.openshift.io "cluster" not found');
    assert.equal((await admin.get('/api/v1/nosuchthings')).status, 404);
  });

  test('update (PUT): 200, 409 on a stale resourceVersion, name mismatch 400, 404 when absent', async () => {
    const cur = (await admin.get(`${CM}/cfg`)).body as { metadata: { resourceVersion: string }; data: Record<string, string> };
    const put = await admin.request('PUT', `${CM}/cfg`, { body: { ...cur, data: { a: '2' } } });
    assert.equal(put.status, 200);
    assert.notEqual((put.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion, cur.metadata.resourceVersion);
    const stale = await admin.request('PUT', `${CM}/cfg`, { body: { ...cur, data: { a: '3' } } });
    assert.equal(stale.status, 409);
    assert.equal(status(stale.body).reason, 'Conflict');
    const renamed = await admin.request('PUT', `${CM}/cfg`, { body: { metadata: { name: 'other' } } });
    assert.equal(renamed.status, 400);
    assert.equal(status(renamed.body).message, 'the name of the object (other) does not match the name on the URL (cfg)');
    const absent = await admin.request('PUT', `${CM}/absent`, { body: { metadata: { name: 'absent' } } });
    assert.equal(absent.status, 404);
  });

  test('status subresource: PUT on the object ignores status, PUT on /status ignores spec', async () => {
    const body = { apiVersion: 'operator.openshift.io/v1', kind: 'IngressController', metadata: { name: 'default' }, spec: { replicas: 1 }, status: { availableReplicas: 5 } };
    const base = '/apis/operator.openshift.io/v1/namespaces/openshift-ingress-operator/ingresscontrollers';
    const created = (await admin.request('POST', base, { body })).body as Record<string, unknown> & { metadata: { generation: number } };
    assert.equal(created.status, undefined);
    const viaStatus = await admin.request('PUT', `${base}/default/status`, { body: { ...created, spec: { replicas: 3 }, status: { availableReplicas: 1 } } });
    assert.equal(viaStatus.status, 200);
    const afterStatus = viaStatus.body as { spec: { replicas: number }; status: { availableReplicas: number }; metadata: { generation: number } };
    assert.deepEqual([afterStatus.spec.replicas, afterStatus.status.availableReplicas, afterStatus.metadata.generation], [1, 1, 1]);
    const viaMain = (await admin.request('PUT', `${base}/default`, { body: { ...afterStatus, spec: { replicas: 2 }, status: { availableReplicas: 9 } } })).body as typeof afterStatus;
    assert.deepEqual([viaMain.spec.replicas, viaMain.status.availableReplicas, viaMain.metadata.generation], [2, 1, 2]);
    assert.equal((await admin.request('PUT', `${CM}/cfg/status`, { body: { metadata: { name: 'cfg' } } })).status, 404);
  });

  test('delete: Success Status, then 404; deletecollection with a selector; 405 for unsupported methods', async () => {
    await admin.request('POST', CM, { body: { metadata: { name: 'doomed' } } });
    const del = await admin.request('DELETE', `${CM}/doomed`);
    assert.equal(del.status, 200);
    assert.deepEqual([(del.body as { status: string }).status, (del.body as { details: { name: string } }).details.name], ['Success', 'doomed']);
    assert.equal((await admin.request('DELETE', `${CM}/doomed`)).status, 404);
    await admin.request('POST', CM, { body: { metadata: { name: 'tmp-1', labels: { tmp: 'yes' } } } });
    await admin.request('POST', CM, { body: { metadata: { name: 'tmp-2', labels: { tmp: 'yes' } } } });
    const coll = await admin.request('DELETE', CM, { query: { labelSelector: 'tmp=yes' } });
    assert.equal(coll.status, 200);
    assert.equal(server.store.list(R.configMaps, 'openshift-config').filter((c) => c.metadata?.labels?.tmp).length, 0);
    const post = await admin.request('POST', `${CM}/cfg`, { body: { metadata: { name: 'cfg' } } });
    assert.equal(post.status, 405);
    assert.equal(status(post.body).reason, 'MethodNotAllowed');
  });

  test('list: resourceVersion, items without kind for built-ins, limit/continue', async () => {
    for (const n of ['l-a', 'l-b', 'l-c']) await admin.request('POST', CM, { body: { metadata: { name: n, labels: { list: 'yes' } } } });
    const all = (await admin.get(CM, { labelSelector: 'list' })).body as { kind: string; metadata: { resourceVersion: string }; items: { kind?: string; metadata: { name: string } }[] };
    assert.equal(all.kind, 'ConfigMapList');
    assert.equal(all.metadata.resourceVersion, server.store.resourceVersion());
    assert.deepEqual(
      all.items.map((i) => i.metadata.name),
      ['l-a', 'l-b', 'l-c'],
    );
    assert.equal(all.items[0].kind, undefined);
    const page1 = (await admin.get(CM, { labelSelector: 'list', limit: '2' })).body as { metadata: { continue: string; remainingItemCount: number }; items: { metadata: { name: string } }[] };
    assert.deepEqual(
      page1.items.map((i) => i.metadata.name),
      ['l-a', 'l-b'],
    );
    assert.equal(page1.metadata.remainingItemCount, 1);
    const page2 = (await admin.get(CM, { labelSelector: 'list', limit: '2', continue: page1.metadata.continue })).body as { metadata: { continue?: string }; items: { metadata: { name: string } }[] };
    assert.deepEqual(
      page2.items.map((i) => i.metadata.name),
      ['l-c'],
    );
    assert.equal(page2.metadata.continue, undefined);
    // Custom resources keep kind/apiVersion in list items.
    const ics = (await admin.get('/apis/operator.openshift.io/v1/ingresscontrollers')).body as { items: { kind: string }[] };
    assert.equal(ics.items[0].kind, 'IngressController');
  });

  test('label selectors: =, ==, !=, in, notin, exists, !exists', async () => {
    const labels: Record<string, Record<string, string>> = { 's-1': { tier: 'web', env: 'prod' }, 's-2': { tier: 'db', env: 'dev' }, 's-3': { tier: 'web' } };
    for (const [name, l] of Object.entries(labels)) await admin.request('POST', CM, { body: { metadata: { name, labels: { ...l, sel: 'x' } } } });
    const names = async (selector: string) =>
      ((await admin.get(CM, { labelSelector: `sel=x,${selector}` })).body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
    assert.deepEqual(await names('tier=web'), ['s-1', 's-3']);
    assert.deepEqual(await names('tier==db'), ['s-2']);
    assert.deepEqual(await names('env!=prod'), ['s-2', 's-3']);
    assert.deepEqual(await names('env in (prod,dev)'), ['s-1', 's-2']);
    assert.deepEqual(await names('tier notin (web)'), ['s-2']);
    assert.deepEqual(await names('env'), ['s-1', 's-2']);
    assert.deepEqual(await names('!env'), ['s-3']);
    const bad = await admin.get(CM, { labelSelector: 'tier in web' });
    assert.equal(bad.status, 400);
  });

  test('field selectors: metadata.name, metadata.namespace, spec.signerName; others 400', async () => {
    const byName = (await admin.get('/api/v1/configmaps', { fieldSelector: 'metadata.name=cfg' })).body as { items: unknown[] };
    assert.equal(byName.items.length, 1);
    const byNs = (await admin.get('/api/v1/configmaps', { fieldSelector: 'metadata.namespace!=openshift-config' })).body as { items: unknown[] };
    assert.equal(byNs.items.length, 0);
    const csrs = await admin.get('/apis/certificates.k8s.io/v1/certificatesigningrequests', { fieldSelector: 'spec.signerName=kubernetes.io/kubelet-serving' });
    assert.equal(csrs.status, 200);
    const unsupported = await admin.get(CM, { fieldSelector: 'data.a=1' });
    assert.equal(unsupported.status, 400);
    assert.deepEqual([status(unsupported.body).reason, status(unsupported.body).message], ['BadRequest', 'field label not supported: data.a']);
  });

  test('authentication: foreign-CA certificates and unknown tokens get 401; tokens work', async () => {
    const anon = new SimClient(server, { anonymous: true });
    const foreignCa = createCa('someone-else');
    const foreign = issueClientCert(foreignCa, { user: 'system:admin', groups: ['system:masters'] });
    const impostor = new SimClient(server, { certPem: foreign.certPem, keyPem: foreign.keyPem });
    const badToken = new SimClient(server, { token: 'sha256~nope' });
    try {
      for (const c of [impostor, badToken]) {
        const r = await c.get('/api/v1/namespaces');
        assert.equal(r.status, 401);
        assert.deepEqual(status(r.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      }
      // No credentials at all: OpenShift authenticates system:anonymous, which RBAC refuses (403, not 401).
      const anonymous = await anon.get('/api/v1/namespaces');
      assert.equal(anonymous.status, 403);
      assert.equal(status(anonymous.body).message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
      const discovery = await anon.get('/apis');
      assert.equal(discovery.status, 403);
      assert.equal(status(discovery.body).message, 'forbidden: User "system:anonymous" cannot get path "/apis"');
      server.addToken('sha256~good', ADMIN);
      const good = new SimClient(server, { token: 'sha256~good' });
      assert.equal((await good.get('/api/v1/namespaces')).status, 200);
      good.close();
      assert.equal(server.requests.filter((r) => r.status === 401).at(-1)?.user, undefined);
    } finally {
      anon.close();
      impostor.close();
      badToken.close();
    }
  });

  test('authorization: node-bootstrapper and system:node identities get 403 outside their rights', async () => {
    const boot = new SimClient(server, { identity: BOOTSTRAPPER });
    const node = new SimClient(server, { identity: nodeIdentity('sno1') });
    try {
      assert.equal((await boot.get('/apis/certificates.k8s.io/v1/certificatesigningrequests')).status, 200);
      const secrets = await boot.get('/api/v1/namespaces/openshift-config/secrets');
      assert.equal(secrets.status, 403);
      assert.equal(
        status(secrets.body).message,
        'secrets is forbidden: User "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper" cannot list resource "secrets" in API group "" in the namespace "openshift-config"',
      );
      const createNode = await node.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'sno1' } } });
      assert.equal(createNode.status, 201);
      const ownStatus = await node.request('PATCH', '/api/v1/nodes/sno1/status', { body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
      assert.equal(ownStatus.status, 200);
      const other = await node.get('/api/v1/nodes/other');
      assert.equal(other.status, 403);
      assert.equal(status(other.body).message, 'nodes "other" is forbidden: User "system:node:sno1" cannot get resource "nodes" in API group "" at the cluster scope');
      const approve = await node.request('PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/x/approval', { body: { metadata: { name: 'x' } } });
      assert.equal(approve.status, 403);
    } finally {
      boot.close();
      node.close();
    }
  });

  test('kubeconfigFor writes a usable kubeconfig (client certificate or token)', async () => {
    const certCfg = parse(readFileSync(server.kubeconfigFor(ADMIN), 'utf8')) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[]; users: { user: Record<string, string> }[] };
    assert.equal(certCfg.clusters[0].cluster.server, server.url);
    assert.equal(Buffer.from(certCfg.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), server.caPem);
    const u = certCfg.users[0].user;
    const c = new SimClient(server, { certPem: Buffer.from(u['client-certificate-data'], 'base64').toString(), keyPem: Buffer.from(u['client-key-data'], 'base64').toString() });
    assert.equal((await c.get('/api/v1/nodes')).status, 200);
    c.close();
    const tokenCfg = parse(readFileSync(server.kubeconfigFor(BOOTSTRAPPER, { token: true }), 'utf8')) as { users: { user: { token: string } }[] };
    const t = new SimClient(server, { token: tokenCfg.users[0].user.token });
    assert.equal((await t.get('/apis/certificates.k8s.io/v1/certificatesigningrequests')).status, 200);
    t.close();
  });

  test('the request log records method, path, query, content type, user and status, and can be cleared', async () => {
    server.clearRequests();
    await admin.request('PATCH', `${CM}/cfg`, { body: { data: { logged: 'yes' } }, query: { fieldManager: 'test' } });
    assert.deepEqual(
      server.requests.map((r) => ({ method: r.method, path: r.path, query: r.query, contentType: r.contentType, user: r.user, status: r.status })),
      [{ method: 'PATCH', path: `${CM}/cfg`, query: 'fieldManager=test', contentType: 'application/merge-patch+json', user: 'system:admin', status: 200 }],
    );
    assert.equal(typeof server.requests[0].time, 'number');
  });
});
