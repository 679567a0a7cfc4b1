// The SimStore contract (test/sim/store-types.ts) that the cluster behaviour (test/sim/cluster/) codes
// against: object lifecycle, resourceVersions, conflicts, generation, status separation, events,
// admission hooks, persistence across a "power cut", and the version-dependent API surface.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { SimApiError, type StoreEvent } from '../../sim/store-types';
import { createStore } from '../../sim/apiserver/index';
import { BOOTSTRAPPER } from '../../sim/apiserver/auth';
import { execFileSync } from 'node:child_process';

function errorOf(fn: () => unknown): SimApiError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof SimApiError, `expected SimApiError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected an error');
}

function withTmp<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sim-store-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ingress = (domain: string): KubeObject => ({ apiVersion: 'config.openshift.io/v1', kind: 'Ingress', metadata: { name: 'cluster' }, spec: { domain } });

describe('SimStore contract', () => {
  test('create assigns uid, resourceVersion, creationTimestamp and generation; get/list return copies', () => {
    const store = createStore();
    assert.equal(store.resourceVersion(), '0');
    const created = store.create(R.ingresses, ingress('apps.a.example.com'));
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(created.metadata?.resourceVersion, '1');
    assert.equal(created.metadata?.generation, 1);
    assert.match(String(created.metadata?.creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(store.resourceVersion(), '1');
    const got = store.get(R.ingresses, 'cluster');
    assert.deepEqual(got, created);
    (got?.spec as { domain: string }).domain = 'mutated';
    assert.equal((store.get(R.ingresses, 'cluster')?.spec as { domain: string }).domain, 'apps.a.example.com');
    assert.equal(store.get(R.ingresses, 'nope'), undefined);
    assert.equal(store.list(R.ingresses).length, 1);
  });

  test('namespaced objects need an existing namespace; list filters by namespace and sorts by name', () => {
    const store = createStore();
    const missing = errorOf(() => store.create(R.secrets, { metadata: { name: 's', namespace: 'openshift-config' }, data: {} }));
    assert.equal(missing.code, 404);
    assert.equal(missing.message, 'namespaces "openshift-config" not found');
    store.create(R.namespaces, { metadata: { name: 'openshift-config' } });
    store.create(R.namespaces, { metadata: { name: 'other' } });
    store.create(R.configMaps, { metadata: { name: 'b', namespace: 'openshift-config' } });
    store.create(R.configMaps, { metadata: { name: 'a', namespace: 'openshift-config' } });
    store.create(R.configMaps, { metadata: { name: 'c', namespace: 'other' } });
    assert.deepEqual(
      store.list(R.configMaps, 'openshift-config').map((o) => o.metadata?.name),
      ['a', 'b'],
    );
    assert.equal(store.list(R.configMaps).length, 3);
    assert.equal(store.get(R.configMaps, 'c', 'openshift-config'), undefined);
    const dup = errorOf(() => store.create(R.configMaps, { metadata: { name: 'a', namespace: 'openshift-config' } }));
    assert.deepEqual([dup.code, dup.reason, dup.message], [409, 'AlreadyExists', 'configmaps "a" already exists']);
  });

  test('update is conditional on resourceVersion and bumps generation only when spec changes', () => {
    const store = createStore();
    const v1 = store.create(R.ingresses, ingress('apps.a.example.com'));
    const v2 = store.update(R.ingresses, { ...v1, spec: { domain: 'apps.a.example.com', appsDomain: 'apps.b.example.com' } });
    assert.equal(v2.metadata?.generation, 2);
    assert.equal(Number(v2.metadata?.resourceVersion), Number(v1.metadata?.resourceVersion) + 1);
    const stale = errorOf(() => store.update(R.ingresses, { ...v1, spec: { domain: 'apps.a.example.com', appsDomain: 'x.example.com' } }));
    assert.equal(stale.code, 409);
    assert.equal(stale.reason, 'Conflict');
    assert.equal(stale.message, 'Operation cannot be fulfilled on ingresses.config.openshift.io "cluster": the object has been modified; please apply your changes to the latest version and try again');
    const labelled = store.update(R.ingresses, { ...v2, metadata: { ...v2.metadata, labels: { a: 'b' } } });
    assert.equal(labelled.metadata?.generation, 2, 'metadata changes do not bump generation');
    const unconditional = store.update(R.ingresses, { ...labelled, metadata: { name: 'cluster', labels: { a: 'c' } } });
    assert.equal(unconditional.metadata?.labels?.a, 'c');
  });

  test('a no-op update keeps the resourceVersion and emits no event', () => {
    const store = createStore();
    const v1 = store.create(R.ingresses, ingress('apps.a.example.com'));
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    const same = store.update(R.ingresses, v1);
    assert.equal(same.metadata?.resourceVersion, v1.metadata?.resourceVersion);
    assert.equal(events.length, 0);
  });

  test('status subresource separation: update ignores status, updateStatus ignores everything else', () => {
    const store = createStore();
    const co = store.create(R.clusterOperators, {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterOperator',
      metadata: { name: 'ingress' },
      spec: {},
      status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
    });
    assert.equal(co.status, undefined, 'status is dropped on create for a CRD with a status subresource');
    const withStatus = store.updateStatus(R.clusterOperators, {
      ...co,
      metadata: { ...co.metadata, labels: { ignored: 'yes' } },
      status: { conditions: [{ type: 'Degraded', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
    });
    assert.equal((withStatus.status as { conditions: { type: string }[] }).conditions[0].type, 'Degraded');
    assert.equal(withStatus.metadata?.labels, undefined, 'updateStatus does not change metadata of custom resources');
    const main = store.update(R.clusterOperators, { ...withStatus, status: { conditions: [] } });
    assert.equal((main.status as { conditions: unknown[] }).conditions.length, 1, 'update does not change status');
  });

  test('validation against the CRD schema: 422 with field causes, unknown fields pruned', () => {
    const store = createStore();
    const err = errorOf(() =>
      store.create(R.imageDigestMirrorSets, {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ImageDigestMirrorSet',
        metadata: { name: 'mirrors' },
        spec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['not a registry!'] }] },
      }),
    );
    assert.equal(err.code, 422);
    assert.equal(err.details?.causes?.[0]?.field, 'spec.imageDigestMirrors[0].mirrors[0]');
    const ok = store.create(R.imageDigestMirrorSets, {
      apiVersion: 'config.openshift.io/v1',
      kind: 'ImageDigestMirrorSet',
      metadata: { name: 'mirrors' },
      spec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'], unknownField: 1 }] },
    });
    assert.deepEqual((ok.spec as { imageDigestMirrors: unknown[] }).imageDigestMirrors[0], {
      source: 'quay.io/openshift-release-dev/ocp-release',
      mirrors: ['registry.store42.example.com:8443/ocp/release'],
    });
  });

  test('events: ADDED, MODIFIED with previous, DELETED with a new resourceVersion; unsubscribe stops them', () => {
    const store = createStore();
    const events: StoreEvent[] = [];
    const off = store.subscribe((e) => events.push(e));
    store.create(R.namespaces, { metadata: { name: 'ns1' } });
    const cm = store.create(R.configMaps, { metadata: { name: 'x', namespace: 'ns1' }, data: { a: '1' } });
    store.update(R.configMaps, { ...cm, data: { a: '2' } });
    assert.equal(store.delete(R.configMaps, 'x', 'ns1'), true);
    assert.equal(store.delete(R.configMaps, 'x', 'ns1'), false);
    off();
    store.create(R.configMaps, { metadata: { name: 'y', namespace: 'ns1' } });
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.resource.plural}/${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`),
      ['ADDED namespaces/ns1@1', 'ADDED configmaps/x@2', 'MODIFIED configmaps/x@3', 'DELETED configmaps/x@4'],
    );
    assert.equal((events[2].previous?.data as { a: string }).a, '1');
  });

  test('finalizers delay deletion until the last one is removed', () => {
    const store = createStore();
    store.create(R.namespaces, { metadata: { name: 'ns1' } });
    store.create(R.configMaps, { metadata: { name: 'held', namespace: 'ns1', finalizers: ['example.com/hold'] } });
    assert.equal(store.delete(R.configMaps, 'held', 'ns1'), true);
    const marked = store.get(R.configMaps, 'held', 'ns1');
    assert.ok(marked?.metadata?.deletionTimestamp, 'marked for deletion');
    store.update(R.configMaps, { ...marked, metadata: { ...marked?.metadata, finalizers: [] } });
    assert.equal(store.get(R.configMaps, 'held', 'ns1'), undefined);
  });

  test('deleting a namespace deletes what is in it', () => {
    const store = createStore();
    store.create(R.namespaces, { metadata: { name: 'gone' } });
    store.create(R.secrets, { metadata: { name: 's', namespace: 'gone' }, data: { a: 'Yg==' } });
    store.delete(R.namespaces, 'gone');
    assert.equal(store.list(R.secrets).length, 0);
  });

  test('admission hooks mutate before validation and can be unregistered', () => {
    const store = createStore();
    store.create(R.namespaces, { metadata: { name: 'openshift-console' } });
    const calls: string[] = [];
    const off = store.addAdmission((op, resource, obj, previous) => {
      calls.push(`${op} ${resource.plural} ${previous ? 'with' : 'without'} previous`);
      if (resource.plural === 'routes' && !(obj.spec as { host?: string }).host) {
        (obj.spec as { host?: string }).host = `${obj.metadata?.name}-${obj.metadata?.namespace}.apps.sno1.example.com`;
      }
    });
    const route = store.create(R.routes, { apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'console', namespace: 'openshift-console' }, spec: { to: { kind: 'Service', name: 'console' } } });
    assert.equal((route.spec as { host: string }).host, 'console-openshift-console.apps.sno1.example.com');
    store.update(R.routes, { ...route, metadata: { ...route.metadata, labels: { x: 'y' } } });
    off();
    store.create(R.routes, { apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'other', namespace: 'openshift-console' }, spec: { to: { kind: 'Service', name: 'x' } } });
    assert.deepEqual(calls, ['CREATE routes without previous', 'UPDATE routes with previous']);
  });

  test('CSRs: the actor becomes spec.username/groups; status only through updateStatus/approval', () => {
    const store = createStore();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sim-csr-'));
    try {
      execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${dir}/k`, '-out', `${dir}/r`, '-subj', '/O=system:nodes/CN=system:node:sno1'], { stdio: 'ignore' });
      const request = Buffer.from(readFileSync(`${dir}/r`)).toString('base64');
      const csr = store.create(
        R.csrs,
        { metadata: { name: 'csr-1' }, spec: { request, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], username: 'forged' }, status: { conditions: [{ type: 'Approved', status: 'True' }] } },
        BOOTSTRAPPER,
      );
      assert.equal((csr.spec as { username: string }).username, BOOTSTRAPPER.user);
      assert.equal(csr.status, undefined);
      const sneaky = errorOf(() => store.updateStatus(R.csrs, { ...csr, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'x' }] } }));
      assert.equal(sneaky.code, 422);
      assert.match(sneaky.message, /status\.conditions: Forbidden: updates may not add a condition of type "Approved"/);
      const approved = store.updateApproval({ ...csr, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'SNOReconfigureApprove', message: 'ok' }] } });
      const cond = (approved.status as { conditions: { type: string; lastUpdateTime?: string }[] }).conditions[0];
      assert.equal(cond.type, 'Approved');
      assert.ok(cond.lastUpdateTime, 'the server stamps condition times');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('saveTo + createStore({persistPath}) restores the cluster after a "power cut"', () => {
    withTmp((dir) => {
      const file = path.join(dir, 'etcd', 'store.json');
      const store = createStore({ persistPath: file, clusterVersion: '4.14.3' });
      store.create(R.namespaces, { metadata: { name: 'openshift-config' } });
      store.create(R.secrets, { metadata: { name: 'pull-secret', namespace: 'openshift-config' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64') } });
      assert.ok(existsSync(file), 'persisted after every change');
      assert.ok(!readFileSync(file, 'utf8').includes('.tmp'));
      // No close, no flush: a new store from the file sees everything, with resourceVersions continuing.
      const restored = createStore({ persistPath: file, clusterVersion: '4.14.3' });
      assert.equal(restored.resourceVersion(), '2');
      assert.equal(restored.get(R.secrets, 'pull-secret', 'openshift-config')?.type, 'kubernetes.io/dockerconfigjson');
      const next = restored.create(R.configMaps, { metadata: { name: 'after', namespace: 'openshift-config' } });
      assert.equal(next.metadata?.resourceVersion, '3');
      assert.equal(restored.eventsSince(1), undefined, 'history before the restart is gone: watches from it get 410');
      const copy = path.join(dir, 'copy.json');
      restored.saveTo(copy);
      assert.equal(createStore({ persistPath: copy }).list(R.configMaps).length, 1);
    });
  });

  test('ImageDigestMirrorSet/ImageTagMirrorSet exist only from OpenShift 4.13', () => {
    const old = createStore({ clusterVersion: '4.12.40' });
    const err = errorOf(() => old.list(R.imageDigestMirrorSets));
    assert.equal(err.code, 404);
    assert.equal(errorOf(() => old.list(R.imageTagMirrorSets)).code, 404);
    assert.deepEqual(old.list(R.imageContentSourcePolicies), []);
    const current = createStore({ clusterVersion: '4.13.0' });
    assert.deepEqual(current.list(R.imageDigestMirrorSets), []);
  });
});
