// Independent clients against the simulated API server, asserting Kubernetes semantics rather than this
// project's client: @kubernetes/client-node (a test dependency) through an API restart and a conditional
// update, and kubectl — where installed, it is not installed for this — through create, apply, patch,
// replace and CSR approval, which needs the OpenAPI v3 documents and server-side field validation
// (issue 15 item 7).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, Watch, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { R } from '../../../src/cluster/resources';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { waitFor } from '../../unit/cluster/wait';

let server: ApiServer;
let kc: KubeConfig;
let tmp: string;
const NS = 'shop';

/** Runs kubectl asynchronously (the API server answers from this process): exit code and combined output. */
function kubectl(...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', server.kubeconfigFor(ADMIN), ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

const kubectlInstalled = new Promise<boolean>((resolve) => execFile('kubectl', ['version', '--client'], { timeout: 20_000 }, (err) => resolve(!err)));

function manifest(name: string, doc: unknown): string {
  const file = path.join(tmp, name);
  writeFileSync(file, stringify(doc));
  return file;
}

describe('independent clients against the simulated API server', () => {
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'independent-clients-'));
    server = await startApiServer({ clusterVersion: '4.16.0', bookmarkIntervalMs: 100 });
    kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigFor(ADMIN));
    server.store.create(R.namespaces, { metadata: { name: NS } });
  });

  after(async () => {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('client-node: a Watch from before an API restart ends with ERROR 410; an informer relists and follows', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${NS}/configmaps`, () => core.listNamespacedConfigMap({ namespace: NS }));
    const added: string[] = [];
    informer.on('add', (o) => added.push(o.metadata?.name ?? ''));
    let stopped = false;
    informer.on('error', () => {
      // client-node reports the cut stream; restarting it is the caller's job.
      setTimeout(() => {
        if (!stopped) void informer.start();
      }, 10);
    });
    await informer.start();
    try {
      const before = server.store.resourceVersion();
      await server.setUp(false);
      server.store.create(R.configMaps, { metadata: { name: 'made-while-down', namespace: NS } });
      await server.setUp(true);

      const phases: { phase: string; code?: number; reason?: string }[] = [];
      let finished: () => void = () => {};
      const done = new Promise<void>((r) => (finished = r));
      await new Watch(kc).watch(
        `/api/v1/namespaces/${NS}/configmaps`,
        { resourceVersion: before, timeoutSeconds: 2 },
        (phase, obj: { code?: number; reason?: string }) => phases.push({ phase, code: obj.code, reason: obj.reason }),
        () => finished(),
      );
      await done;
      assert.deepEqual(phases, [{ phase: 'ERROR', code: 410, reason: 'Expired' }]);
      await waitFor(() => added.includes('made-while-down'), 'the informer to relist after the restart');
    } finally {
      stopped = true;
      await informer.stop();
    }
  });

  test('client-node: replacing a custom resource without its resourceVersion is ApiException 422', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'images', body: { apiVersion: 'config.openshift.io/v1', kind: 'Image', metadata: { name: 'cluster' }, spec: {} } });
    try {
      await custom.replaceClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'images', name: 'cluster', body: { apiVersion: 'config.openshift.io/v1', kind: 'Image', metadata: { name: 'cluster' }, spec: { externalRegistryHostnames: ['r.example.com'] } } });
      assert.fail('the PUT was accepted');
    } catch (e) {
      assert.ok(e instanceof ApiException, String(e));
      assert.equal(e.code, 422);
      assert.match(String(e.body), /metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/);
    }
  });

  test('kubectl: create, apply (twice), strict field validation, a CEL rule, replace and CSR approval', async (t) => {
    if (!(await kubectlInstalled)) return t.skip('kubectl is not installed');
    const cm = manifest('cm.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'k1', namespace: NS }, data: { a: '1' } });
    const created = await kubectl('create', '-f', cm);
    assert.equal(created.code, 0, created.out);
    assert.match(created.out, /configmap\/k1 created/);
    assert.ok(server.requests.some((r) => r.method === 'POST' && /fieldValidation=Strict/.test(r.query)), 'kubectl left field validation to the server');
    const applied = await kubectl('apply', '-f', manifest('cm2.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'k1', namespace: NS }, data: { a: '2', b: '3' } }));
    assert.equal(applied.code, 0, applied.out);
    const again = await kubectl('apply', '-f', path.join(tmp, 'cm2.yaml'));
    assert.match(again.out, /configmap\/k1 unchanged/);

    const image = { apiVersion: 'config.openshift.io/v1', kind: 'Image', metadata: { name: 'cluster' }, spec: { externalRegistryHostnames: ['r.example.com'] } };
    const imageApplied = await kubectl('apply', '-f', manifest('image.yaml', image));
    assert.equal(imageApplied.code, 0, imageApplied.out);
    const unknown = await kubectl('apply', '-f', manifest('image-bad.yaml', { ...image, spec: { bogus: 1 } }));
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.out, /strict decoding error: unknown field "spec\.bogus"/);
    const both = await kubectl('patch', 'images.config.openshift.io', 'cluster', '--type=merge', '-p', JSON.stringify({ spec: { registrySources: { blockedRegistries: ['a.io'], allowedRegistries: ['b.io'] } } }));
    assert.notEqual(both.code, 0);
    assert.match(both.out, /Only one of blockedRegistries or allowedRegistries may be set/);
    const replaced = await kubectl('replace', '-f', path.join(tmp, 'image.yaml'));
    assert.equal(replaced.code, 0, replaced.out);

    const key = path.join(tmp, 'node.key');
    const csrPem = await new Promise<string>((resolve, reject) =>
      execFile('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', `${key}.csr`, '-subj', '/O=system:nodes/CN=system:node:sno1'], (err) => (err ? reject(err) : resolve(readFileSync(`${key}.csr`, 'utf8')))),
    );
    const csr = manifest('csr.yaml', {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'csr-kubectl' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
    });
    assert.equal((await kubectl('create', '-f', csr)).code, 0);
    const approve = await kubectl('certificate', 'approve', 'csr-kubectl');
    assert.equal(approve.code, 0, approve.out);
    const condition = await kubectl('get', 'csr', 'csr-kubectl', '-o', 'jsonpath={.status.conditions[0].type}');
    assert.equal(condition.out.trim(), 'Approved');
  });
});
