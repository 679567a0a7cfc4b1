// Writes are validated like the real server does: OpenShift types against the real openshift/api CRD
// schemas (422 Invalid with field causes, unknown fields pruned, defaults applied, Ingress spec.domain
// immutable), built-in types by their own rules (Secret base64 and types, CSR request and approval).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { SimClient, type RawResponse } from '../../sim/apiserver/client';
import { formatFieldError, goRegExp, loadCrdValidator } from '../../sim/crd-schema';
import { signCsr } from '../../sim/pki';

let server: ApiServer;
let admin: SimClient;
let tmp: string;

interface StatusBody {
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string; field: string }[] };
}
const st = (r: RawResponse) => r.body as StatusBody;

function csrPem(subject: string, keyArgs: string[]): string {
  const key = path.join(tmp, `k${Math.random().toString(16).slice(2)}`);
  execFileSync('openssl', ['req', '-new', ...keyArgs, '-nodes', '-keyout', key, '-out', `${key}.csr`, '-subj', subject], { stdio: 'ignore' });
  return readFileSync(`${key}.csr`, 'utf8');
}

describe('validation of writes', () => {
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'sim-validation-'));
    server = await startApiServer({ clusterVersion: '4.16.0' });
    admin = new SimClient(server, { identity: ADMIN });
    server.store.create(R.namespaces, { metadata: { name: 'openshift-config' } });
  });

  after(async () => {
    admin.close();
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('APIServer: a namedCertificates entry with the wrong type is a 422 with the real field path', async () => {
    const r = await admin.request('POST', '/apis/config.openshift.io/v1/apiservers', {
      body: {
        apiVersion: 'config.openshift.io/v1',
        kind: 'APIServer',
        metadata: { name: 'cluster' },
        spec: { servingCerts: { namedCertificates: [{ names: 'api.sno1.store42.example.com', servingCertificate: { name: 'api-cert' } }] } },
      },
    });
    assert.equal(r.status, 422);
    const s = st(r);
    assert.equal(s.reason, 'Invalid');
    assert.equal(
      s.message,
      'APIServer.config.openshift.io "cluster" is invalid: spec.servingCerts.namedCertificates[0].names: Invalid value: "string": spec.servingCerts.namedCertificates[0].names in body must be of type array: "string"',
    );
    assert.deepEqual(s.details, {
      name: 'cluster',
      group: 'config.openshift.io',
      kind: 'APIServer',
      causes: [
        {
          reason: 'FieldValueTypeInvalid',
          message: 'Invalid value: "string": spec.servingCerts.namedCertificates[0].names in body must be of type array: "string"',
          field: 'spec.servingCerts.namedCertificates[0].names',
        },
      ],
    });
  });

  test('APIServer: unknown fields are pruned, defaults applied (audit.profile)', async () => {
    const r = await admin.request('POST', '/apis/config.openshift.io/v1/apiservers', {
      body: { apiVersion: 'config.openshift.io/v1', kind: 'APIServer', metadata: { name: 'cluster', unknownMeta: 1 }, spec: { servingCerts: { namedCertificates: [{ names: ['api.x.example.com'], servingCertificate: { name: 'c' }, bogus: true }] }, notAField: 'x' } },
    });
    assert.equal(r.status, 201, r.text);
    const obj = r.body as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    assert.equal(obj.spec.notAField, undefined);
    assert.deepEqual(obj.spec.servingCerts, { namedCertificates: [{ names: ['api.x.example.com'], servingCertificate: { name: 'c' } }] });
    assert.deepEqual(obj.spec.audit, { profile: 'Default' });
    assert.equal(obj.metadata.unknownMeta, undefined);
  });

  test('Ingress: changing spec.domain is rejected with the CRD rule message', async () => {
    await admin.request('POST', '/apis/config.openshift.io/v1/ingresses', { body: { apiVersion: 'config.openshift.io/v1', kind: 'Ingress', metadata: { name: 'cluster' }, spec: { domain: 'apps.sno1.factory.example.com' } } });
    const r = await admin.request('PATCH', '/apis/config.openshift.io/v1/ingresses/cluster', { body: { spec: { domain: 'apps.sno1.store42.example.com' } } });
    assert.equal(r.status, 422);
    assert.equal(st(r).message, 'Ingress.config.openshift.io "cluster" is invalid: spec.domain: Invalid value: "string": domain is immutable once set');
    const appsDomain = await admin.request('PATCH', '/apis/config.openshift.io/v1/ingresses/cluster', { body: { spec: { appsDomain: 'apps.sno1.store42.example.com' } } });
    assert.equal(appsDomain.status, 200, 'appsDomain is the supported way to move routes');
  });

  test('ImageDigestMirrorSet: a bad mirror fails the CRD pattern; several errors are aggregated', async () => {
    const r = await admin.request('POST', '/apis/config.openshift.io/v1/imagedigestmirrorsets', {
      body: {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ImageDigestMirrorSet',
        metadata: { name: 'site-mirrors' },
        spec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['https://registry.example.com/ocp'], mirrorSourcePolicy: 'Sometimes' }] },
      },
    });
    assert.equal(r.status, 422);
    const causes = st(r).details?.causes ?? [];
    assert.deepEqual(
      causes.map((c) => [c.field, c.reason]),
      [
        ['spec.imageDigestMirrors[0].mirrorSourcePolicy', 'FieldValueNotSupported'],
        ['spec.imageDigestMirrors[0].mirrors[0]', 'FieldValueInvalid'],
      ],
    );
    assert.equal(causes[0].message, 'Unsupported value: "Sometimes": supported values: "NeverContactSource", "AllowContactingSource"');
    assert.match(causes[1].message, /^Invalid value: "https:\/\/registry\.example\.com\/ocp": spec\.imageDigestMirrors\[0\]\.mirrors\[0\] in body should match '\^\(\(\?:/);
    assert.match(st(r).message, /^ImageDigestMirrorSet\.config\.openshift\.io "site-mirrors" is invalid: \[spec\.imageDigestMirrors\[0\]\.mirrorSourcePolicy: Unsupported value: .*, spec\.imageDigestMirrors\[0\]\.mirrors\[0\]: Invalid value: /);
  });

  test('ImageContentSourcePolicy (operator.openshift.io/v1alpha1) and required fields', async () => {
    const r = await admin.request('POST', '/apis/operator.openshift.io/v1alpha1/imagecontentsourcepolicies', {
      body: { apiVersion: 'operator.openshift.io/v1alpha1', kind: 'ImageContentSourcePolicy', metadata: { name: 'icsp' }, spec: { repositoryDigestMirrors: [{ mirrors: ['registry.example.com/ocp'] }] } },
    });
    assert.equal(r.status, 422);
    assert.deepEqual(st(r).details?.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.repositoryDigestMirrors[0].source' }]);
  });

  test('Secret: bad base64 is a 400 decode error; a malformed pull secret a 422 that never echoes the contents', async () => {
    const b64 = await admin.request('POST', '/api/v1/namespaces/openshift-config/secrets', { body: { metadata: { name: 'b64' }, data: { key: 'c2VjcmV0!' } } });
    assert.equal(b64.status, 400);
    assert.equal(st(b64).message, 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 8');
    const secret = '{"auths":{"quay.io":{"auth":"c3VwZXJzZWNyZXQ="}}';
    const bad = await admin.request('POST', '/api/v1/namespaces/openshift-config/secrets', {
      body: { metadata: { name: 'pull-secret' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(secret).toString('base64') } },
    });
    assert.equal(bad.status, 422);
    assert.match(st(bad).message, /data\[\.dockerconfigjson\]: Invalid value: "<secret contents redacted>"/);
    assert.ok(!bad.text.includes('c3VwZXJzZWNyZXQ') && !bad.text.includes('quay.io'), 'no secret material in the error');
    const missing = await admin.request('POST', '/api/v1/namespaces/openshift-config/secrets', { body: { metadata: { name: 'tls' }, type: 'kubernetes.io/tls', data: {} } });
    assert.deepEqual(
      st(missing).details?.causes?.map((c) => c.field),
      ['data[tls.crt]', 'data[tls.key]'],
    );
    const wrongType = await admin.request('POST', '/api/v1/namespaces/openshift-config/secrets', { body: { metadata: { name: 'n' }, immutable: 'yes' } });
    assert.equal(wrongType.status, 400);
    assert.match(st(wrongType).message, /json: cannot unmarshal string into Go struct field Secret\.immutable of type bool/);
  });

  test('Secret: type is immutable; immutable secrets keep their data', async () => {
    const created = (await admin.request('POST', '/api/v1/namespaces/openshift-config/secrets', { body: { metadata: { name: 'frozen' }, immutable: true, stringData: { a: 'b' } } })).body as Record<string, unknown>;
    assert.deepEqual(created.data, { a: 'Yg==' });
    const r = await admin.request('PUT', '/api/v1/namespaces/openshift-config/secrets/frozen', { body: { ...created, type: 'kubernetes.io/tls', data: { a: 'Yw==' } } });
    assert.equal(r.status, 422);
    assert.deepEqual(
      st(r).details?.causes?.map((c) => formatFieldError({ field: c.field, message: c.message, reason: 'FieldValueInvalid' })),
      ['data[tls.crt]: Required value', 'data[tls.key]: Required value', 'type: Invalid value: "kubernetes.io/tls": field is immutable', 'data: Forbidden: field is immutable when `immutable` is set'],
    );
  });

  test('metadata: names and labels follow the Kubernetes rules', async () => {
    const name = await admin.request('POST', '/api/v1/namespaces/openshift-config/configmaps', { body: { metadata: { name: 'Not_Valid' } } });
    assert.equal(name.status, 422);
    assert.match(st(name).message, /metadata\.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/);
    const label = await admin.request('POST', '/api/v1/namespaces/openshift-config/configmaps', { body: { metadata: { name: 'ok', labels: { app: 'bad value!' } } } });
    assert.match(st(label).message, /metadata\.labels: Invalid value: "bad value!": a valid label must be an empty string/);
    const ns = await admin.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'has.dot' } } });
    assert.match(st(ns).message, /a lowercase RFC 1123 label must consist/);
    const noName = await admin.request('POST', '/api/v1/namespaces/openshift-config/configmaps', { body: { metadata: {} } });
    assert.equal(st(noName).details?.causes?.[0]?.message, 'Required value: name or generateName is required');
  });

  test('CSR: request must be a valid self-signed PKCS#10; usages required; signerName checked', async () => {
    const good = csrPem('/O=system:nodes/CN=system:node:sno1', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']);
    const tampered = good.replace(/(\n[A-Za-z0-9+/]{20})([A-Za-z0-9])/, (_m, a: string, b: string) => a + (b === 'A' ? 'B' : 'A'));
    const r = await admin.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      body: { metadata: { name: 'bad' }, spec: { request: Buffer.from(tampered).toString('base64'), signerName: 'not-a-signer', usages: ['digital signature', 'digital signature', 'teleport'] } },
    });
    assert.equal(r.status, 422);
    assert.deepEqual(
      st(r).details?.causes?.map((c) => c.field),
      ['spec.request', 'spec.usages[1]', 'spec.usages[2]', 'spec.signerName'],
    );
    const none = await admin.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { body: { metadata: { name: 'none' }, spec: { request: Buffer.from(good).toString('base64'), signerName: 'kubernetes.io/kubelet-serving' } } });
    assert.deepEqual(st(none).details?.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.usages' }]);
  });

  test('CSR: only /approval adds Approved; main PUT ignores status; /status sets the certificate once', async () => {
    const pem = csrPem('/O=system:nodes/CN=system:node:sno1', ['-newkey', 'rsa:2048']);
    const base = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    const created = (await admin.request('POST', base, { body: { metadata: { name: 'node-csr' }, spec: { request: Buffer.from(pem).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'key encipherment', 'client auth'] } } })).body as Record<string, unknown>;
    const approvedCond = { type: 'Approved', status: 'True', reason: 'SNOReconfigureApprove', message: 'ok' };
    const viaMain = await admin.request('PUT', `${base}/node-csr`, { body: { ...created, status: { conditions: [approvedCond] } } });
    assert.equal(viaMain.status, 200);
    assert.equal((viaMain.body as { status?: unknown }).status, undefined, 'main resource cannot change status');
    const viaStatus = await admin.request('PUT', `${base}/node-csr/status`, { body: { ...created, status: { conditions: [approvedCond] } } });
    assert.equal(viaStatus.status, 422);
    assert.match(st(viaStatus).message, /updates may not add a condition of type "Approved"/);
    const both = await admin.request('PUT', `${base}/node-csr/approval`, { body: { ...created, status: { conditions: [approvedCond, { type: 'Denied', status: 'True' }] } } });
    assert.equal(both.status, 422);
    assert.match(st(both).message, /status\.conditions\[1\]\.type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive/);
    const approved = await admin.request('PUT', `${base}/node-csr/approval`, { body: { ...created, spec: { ...(created.spec as object), usages: ['server auth'] }, status: { conditions: [approvedCond] } } });
    assert.equal(approved.status, 200);
    const a = approved.body as { spec: { usages: string[] }; status: { conditions: { type: string; lastTransitionTime: string }[] } };
    assert.deepEqual(a.spec.usages, ['digital signature', 'key encipherment', 'client auth'], 'approval cannot change spec');
    assert.ok(a.status.conditions[0].lastTransitionTime);
    const removed = await admin.request('PUT', `${base}/node-csr/approval`, { body: { ...approved.body as object, status: { conditions: [] } } });
    assert.match(st(removed).message, /updates may not remove a condition of type "Approved"/);

    const cert = signCsr(server.ca, pem, { usages: ['digital signature', 'key encipherment', 'client auth'] });
    const issued = await admin.request('PATCH', `${base}/node-csr/status`, { body: { status: { certificate: Buffer.from(cert).toString('base64') } } });
    assert.equal(issued.status, 200, issued.text);
    const notBase64 = await admin.request('PATCH', `${base}/node-csr/status`, { body: { status: { certificate: 'LS0t!' } } });
    assert.equal(notBase64.status, 400, 'bad base64 is a decode error');
    const other = signCsr(server.ca, pem, { usages: ['client auth'] });
    const reissue = await admin.request('PATCH', `${base}/node-csr/status`, { body: { status: { certificate: Buffer.from(other).toString('base64') } } });
    assert.equal(reissue.status, 422);
    assert.match(st(reissue).message, /status\.certificate: Forbidden: updates may not modify existing certificate content/);
    const garbage = await admin.request('PATCH', `${base}/node-csr/status`, { body: { status: { certificate: Buffer.from('not a pem').toString('base64') } } });
    assert.equal(garbage.status, 422);
    assert.match(st(garbage).message, /status\.certificate/);
  });

  test('every pattern in the CRDs compiles, and Go-only syntax is translated', () => {
    const v = loadCrdValidator();
    assert.ok(v.crds.length >= 13);
    assert.ok(goRegExp('^(?i)application/[^][ ()]+$').test('APPLICATION/json'));
    assert.ok(!goRegExp('^[^][ ()]+$').test('a b'));
    assert.ok(goRegExp('^[^%[:cntrl:]]*$').test('ok'));
    assert.ok(!goRegExp('^[^%[:cntrl:]]*$').test('tab\there'));
    const r = v.validate('config.openshift.io/v1', 'DNS', { apiVersion: 'config.openshift.io/v1', kind: 'DNS', metadata: { name: 'cluster' }, spec: { baseDomain: 7 } });
    // The DNS CRD carries CEL rules: after a type error they are not evaluated, and one more error says so
    // (apiextensions-apiserver pkg/registry/customresource/strategy.go hasBlockingErr).
    assert.deepEqual(r.errors.map(formatFieldError), [
      'spec.baseDomain: Invalid value: "integer": spec.baseDomain in body must be of type string: "integer"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    assert.throws(() => v.validate('config.openshift.io/v2', 'DNS', {}), /no CRD serves DNS in config.openshift.io\/v2/);
  });
});
