// @kubernetes/client-node 1.4 as an independent client of the simulated API server: if the official
// client can list, watch, patch, approve CSRs and see a 409 as ApiException, the simulator speaks
// Kubernetes (DESIGN.md section 7). 1.x quirks: reference/runtime-libs.md section 1.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ApiException,
  CertificatesV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
  type V1CertificateSigningRequest,
  type V1Secret,
} from '@kubernetes/client-node';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { BOOTSTRAPPER } from '../../sim/apiserver/auth';
import { R } from '../../../src/cluster/resources';

let server: ApiServer;
let kc: KubeConfig;
let core: CoreV1Api;
let tmp: string;

function ecCsrPem(cn: string, org: string): string {
  const key = path.join(tmp, `${cn.replace(/\W/g, '_')}.key`);
  const csr = `${key}.csr`;
  execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', csr, '-subj', `/O=${org}/CN=${cn}`], { stdio: 'ignore' });
  return readFileSync(csr, 'utf8');
}

async function statusOf(p: Promise<unknown>): Promise<{ code: number; reason?: string }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ApiException, `expected ApiException, got ${String(e)}`);
    const body = typeof e.body === 'string' && e.body ? (JSON.parse(e.body) as { reason?: string }) : undefined;
    return { code: e.code, reason: body?.reason };
  }
  return { code: 200 };
}

describe('@kubernetes/client-node 1.4 against the simulator', () => {
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'client-node-'));
    server = await startApiServer({ clusterVersion: '4.16.0', bookmarkIntervalMs: 100 });
    kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigFor(ADMIN));
    core = kc.makeApiClient(CoreV1Api);
    server.store.create(R.namespaces, { metadata: { name: 'openshift-config' } });
    server.store.create(R.ingresses, { apiVersion: 'config.openshift.io/v1', kind: 'Ingress', metadata: { name: 'cluster' }, spec: { domain: 'apps.sno1.factory.example.com' } });
  });

  after(async () => {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('lists and reads through the generated API classes', async () => {
    const list = await core.listNamespace();
    assert.deepEqual(
      list.items.map((n) => n.metadata?.name),
      ['openshift-config'],
    );
    assert.match(list.metadata?.resourceVersion ?? '', /^\d+$/);
    const ns = await core.readNamespace({ name: 'openshift-config' });
    assert.equal(ns.status?.phase, 'Active');
  });

  test('Watch class receives ADDED and BOOKMARK events from a resourceVersion', async () => {
    const start = await core.listNamespacedConfigMap({ namespace: 'openshift-config' });
    const seen: { phase: string; name?: string; rv?: string }[] = [];
    let resolveAdded: () => void = () => {};
    const added = new Promise<void>((r) => (resolveAdded = r));
    let resolveBookmark: () => void = () => {};
    const bookmark = new Promise<void>((r) => (resolveBookmark = r));
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/openshift-config/configmaps',
      { resourceVersion: start.metadata?.resourceVersion, allowWatchBookmarks: true },
      (phase, obj: { metadata?: { name?: string; resourceVersion?: string } }) => {
        seen.push({ phase, name: obj.metadata?.name, rv: obj.metadata?.resourceVersion });
        if (phase === 'ADDED') resolveAdded();
        // A bookmark may come before the create on a loaded machine (one a second): it carries the older
        // resourceVersion, rightly. The one that matters is the first after the ADDED.
        if (phase === 'BOOKMARK' && seen.some((e) => e.phase === 'ADDED')) resolveBookmark();
      },
      () => {},
    );
    try {
      await core.createNamespacedConfigMap({ namespace: 'openshift-config', body: { metadata: { name: 'watched' }, data: { a: 'b' } } });
      await added;
      await bookmark;
    } finally {
      controller.abort();
    }
    const add = seen.find((e) => e.phase === 'ADDED');
    assert.equal(add?.name, 'watched');
    const after = seen.slice(seen.indexOf(add!)).find((e) => e.phase === 'BOOKMARK');
    assert.ok(Number(after?.rv) >= Number(add?.rv), JSON.stringify(seen));
  });

  test('Watch reports 410 Expired after compaction as an ERROR phase the caller must handle', async () => {
    const start = await core.listNamespacedConfigMap({ namespace: 'openshift-config' });
    await core.createNamespacedConfigMap({ namespace: 'openshift-config', body: { metadata: { name: 'before-compaction' } } });
    server.compactHistory();
    const phases: { phase: string; code?: number; reason?: string }[] = [];
    let finished: () => void = () => {};
    const done = new Promise<void>((r) => (finished = r));
    await new Watch(kc).watch(
      '/api/v1/namespaces/openshift-config/configmaps',
      { resourceVersion: start.metadata?.resourceVersion },
      (phase, obj: { code?: number; reason?: string }) => phases.push({ phase, code: obj.code, reason: obj.reason }),
      () => finished(),
    );
    await done;
    assert.deepEqual(phases, [{ phase: 'ERROR', code: 410, reason: 'Expired' }]);
  });

  test('merge patch of a custom resource via setHeaderOptions(Content-Type, MergePatch)', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const patched = (await custom.patchClusterCustomObject(
      { group: 'config.openshift.io', version: 'v1', plural: 'ingresses', name: 'cluster', body: { spec: { appsDomain: 'apps.sno1.store42.example.com' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as { spec: { domain: string; appsDomain: string }; metadata: { generation: number } };
    assert.equal(patched.spec.appsDomain, 'apps.sno1.store42.example.com');
    assert.equal(patched.spec.domain, 'apps.sno1.factory.example.com');
    assert.equal(patched.metadata.generation, 2);
    // Without the header override 1.x sends application/json-patch+json, which a merge body is not.
    const wrong = await statusOf(custom.patchClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'ingresses', name: 'cluster', body: { spec: { appsDomain: 'x' } } }));
    assert.equal(wrong.code, 400);
  });

  test('a kubelet-style CSR is created by the bootstrapper and approved with replaceCertificateSigningRequestApproval', async () => {
    const bootKc = new KubeConfig();
    bootKc.loadFromFile(server.kubeconfigFor(BOOTSTRAPPER, { token: true }));
    const bootCerts = bootKc.makeApiClient(CertificatesV1Api);
    const created = await bootCerts.createCertificateSigningRequest({
      body: {
        metadata: { generateName: 'csr-' },
        spec: {
          request: Buffer.from(ecCsrPem('system:node:sno1', 'system:nodes')).toString('base64'),
          signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
          usages: ['digital signature', 'client auth'],
        },
      },
    });
    assert.equal(created.spec.username, BOOTSTRAPPER.user);
    assert.ok(created.spec.groups?.includes('system:serviceaccounts:openshift-machine-config-operator'));
    const name = created.metadata?.name ?? '';
    assert.match(name, /^csr-[a-z0-9]{5}$/);

    // The bootstrapper may not approve.
    const denied = await statusOf(bootCerts.replaceCertificateSigningRequestApproval({ name, body: created }));
    assert.deepEqual(denied, { code: 403, reason: 'Forbidden' });

    const certs = kc.makeApiClient(CertificatesV1Api);
    const csr: V1CertificateSigningRequest = await certs.readCertificateSigningRequest({ name });
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'SNOReconfigureApprove', message: 'approved by the test' }] };
    const approved = await certs.replaceCertificateSigningRequestApproval({ name, body: csr });
    assert.equal(approved.status?.conditions?.[0]?.type, 'Approved');
    assert.equal(approved.status?.conditions?.[0]?.reason, 'SNOReconfigureApprove');
    const listed = await certs.listCertificateSigningRequest({ fieldSelector: 'spec.signerName=kubernetes.io/kube-apiserver-client-kubelet' });
    assert.deepEqual(
      listed.items.map((i) => i.metadata?.name),
      [name],
    );
  });

  test('a stale resourceVersion surfaces as ApiException 409 Conflict', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'openshift-config', body: { metadata: { name: 'contended' }, data: { v: '1' } } });
    await core.replaceNamespacedConfigMap({ namespace: 'openshift-config', name: 'contended', body: { ...cm, data: { v: '2' } } });
    const stale = await statusOf(core.replaceNamespacedConfigMap({ namespace: 'openshift-config', name: 'contended', body: { ...cm, data: { v: '3' } } }));
    assert.deepEqual(stale, { code: 409, reason: 'Conflict' });
    const current = await core.readNamespacedConfigMap({ namespace: 'openshift-config', name: 'contended' });
    assert.equal(current.data?.v, '2');
  });

  test('an informer lists, then follows changes', async () => {
    const informer = makeInformer<V1Secret>(kc, '/api/v1/namespaces/openshift-config/secrets', () => core.listNamespacedSecret({ namespace: 'openshift-config' }));
    const names: string[] = [];
    let resolveSeen: () => void = () => {};
    const seen = new Promise<void>((r) => (resolveSeen = r));
    informer.on('add', (s) => {
      names.push(s.metadata?.name ?? '');
      if (names.includes('pull-secret')) resolveSeen();
    });
    await informer.start();
    try {
      await core.createNamespacedSecret({ namespace: 'openshift-config', body: { metadata: { name: 'pull-secret' }, type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': '{"auths":{}}' } } });
      await seen;
    } finally {
      await informer.stop();
    }
    assert.ok(names.includes('pull-secret'));
  });
});
