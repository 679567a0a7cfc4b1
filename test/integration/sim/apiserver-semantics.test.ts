// Kubernetes wire semantics the simulated API server shares with the real one, beyond the verbs: which kinds
// accept an unconditional PUT, CEL validation rules, query flag parsing, unknown fields and strict field
// validation, dryRun values, anonymous requests, the OpenAPI document (issue 15 item 7).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { SimClient } from '../../sim/apiserver/client';

let server: ApiServer;
let admin: SimClient;

const IMAGES = '/apis/config.openshift.io/v1/images';
const ROUTES = '/apis/route.openshift.io/v1/namespaces/shop/routes';
const CM = '/api/v1/namespaces/shop/configmaps';
const SECRETS = '/api/v1/namespaces/shop/secrets';
const INGRESS_CONTROLLERS = '/apis/operator.openshift.io/v1/namespaces/openshift-ingress-operator/ingresscontrollers';

type Obj = { metadata: { name: string; resourceVersion?: string }; [k: string]: unknown };

function withoutResourceVersion(o: Obj): Obj {
  const metadata = { ...o.metadata };
  delete metadata.resourceVersion;
  return { ...o, metadata };
}

describe('simulated API server: Kubernetes semantics', () => {
  before(async () => {
    server = await startApiServer({ clusterVersion: '4.16.0' });
    admin = new SimClient(server, { identity: ADMIN });
    for (const name of ['shop', 'openshift-ingress-operator']) server.store.create(R.namespaces, { metadata: { name } });
  });

  after(async () => {
    admin.close();
    await server.close();
  });

  describe('PUT without metadata.resourceVersion', () => {
    test('custom resources and Routes answer 422 "must be specified for an update", naming the resource', async () => {
      const image = (await admin.request('POST', IMAGES, { body: { apiVersion: 'config.openshift.io/v1', kind: 'Image', metadata: { name: 'cluster' }, spec: {} } })).body as Obj;
      const put = await admin.request('PUT', `${IMAGES}/cluster`, { body: withoutResourceVersion({ ...image, spec: { additionalTrustedCA: { name: 'ca' } } }) });
      assert.equal(put.status, 422);
      assert.deepEqual(put.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'images.config.openshift.io "cluster" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
        reason: 'Invalid',
        details: { name: 'cluster', group: 'config.openshift.io', kind: 'images', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }] },
        code: 422,
      });

      const route = (await admin.request('POST', ROUTES, { body: { apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'web' }, spec: { host: 'web.apps.example.com', to: { kind: 'Service', name: 'web' } } } })).body as Obj;
      const routePut = await admin.request('PUT', `${ROUTES}/web`, { body: withoutResourceVersion({ ...route, spec: { host: 'web.apps.example.org', to: { kind: 'Service', name: 'web' } } }) });
      assert.equal(routePut.status, 422);
      assert.equal((routePut.body as { message: string }).message, 'routes.route.openshift.io "web" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');

      const ic = (await admin.request('POST', INGRESS_CONTROLLERS, { body: { apiVersion: 'operator.openshift.io/v1', kind: 'IngressController', metadata: { name: 'default' }, spec: {} } })).body as Obj;
      const statusPut = await admin.request('PUT', `${INGRESS_CONTROLLERS}/default/status`, { body: withoutResourceVersion({ ...ic, status: { availableReplicas: 1 } }) });
      assert.equal(statusPut.status, 422, 'the status subresource of a custom resource as well');

      const withVersion = await admin.request('PUT', `${IMAGES}/cluster`, { body: { ...image, spec: { additionalTrustedCA: { name: 'ca' } } } });
      assert.equal(withVersion.status, 200);
      const absent = await admin.request('PUT', `${IMAGES}/absent`, { body: { apiVersion: 'config.openshift.io/v1', kind: 'Image', metadata: { name: 'absent' } } });
      assert.equal(absent.status, 404, 'an object that does not exist is 404 first');
    });

    test('ConfigMaps and Secrets allow it: the PUT overwrites what is stored', async () => {
      await admin.request('POST', CM, { body: { metadata: { name: 'cfg' }, data: { a: '1' } } });
      const cm = await admin.request('PUT', `${CM}/cfg`, { body: { metadata: { name: 'cfg' }, data: { a: '2' } } });
      assert.equal(cm.status, 200);
      assert.deepEqual((cm.body as { data: unknown }).data, { a: '2' });
      await admin.request('POST', SECRETS, { body: { metadata: { name: 's' }, data: { k: 'MQ==' } } });
      const secret = await admin.request('PUT', `${SECRETS}/s`, { body: { metadata: { name: 's' }, data: { k: 'Mg==' } } });
      assert.equal(secret.status, 200);
    });
  });

  describe('CEL validation rules (x-kubernetes-validations)', () => {
    const message = (r: { body: unknown }) => (r.body as { message: string }).message;

    test('images.config: blockedRegistries together with allowedRegistries is a 422 with the rule message', async () => {
      const cur = (await admin.get(`${IMAGES}/cluster`)).body as Obj;
      const both = await admin.request('PUT', `${IMAGES}/cluster`, { body: { ...cur, spec: { registrySources: { blockedRegistries: ['bad.example.com'], allowedRegistries: ['quay.io'] } } } });
      assert.equal(both.status, 422);
      assert.equal(message(both), 'Image.config.openshift.io "cluster" is invalid: spec.registrySources: Invalid value: "object": Only one of blockedRegistries or allowedRegistries may be set');
      const one = await admin.request('PUT', `${IMAGES}/cluster`, { body: { ...cur, spec: { registrySources: { allowedRegistries: ['quay.io', '*.example.com'] } } } });
      assert.equal(one.status, 200);
      const badEntry = await admin.request('PATCH', `${IMAGES}/cluster`, { body: { spec: { registrySources: { allowedRegistries: ['quay.io', 'not a registry'] } } } });
      assert.equal(badEntry.status, 422, 'each list entry is checked by its own rule');
      assert.match(message(badEntry), /spec\.registrySources\.allowedRegistries\[1\]: Invalid value: "string": /);
    });

    test('IngressController: Kubernetes CEL libraries (format, duration, int comparisons) and the root rule', async () => {
      const patch = (spec: unknown) => admin.request('PATCH', `${INGRESS_CONTROLLERS}/default`, { body: { spec } });
      const domain = await patch({ domain: 'Apps_Example.com' });
      assert.equal(domain.status, 422);
      assert.match(message(domain), /spec\.domain: Invalid value: "string": domain must consist of lower case alphanumeric characters, '-' or '\.', and must start and end with an alphanumeric character/);
      const keepAlive = await patch({ tuningOptions: { httpKeepAliveTimeout: '20m' } });
      assert.equal(keepAlive.status, 422);
      assert.match(message(keepAlive), /spec\.tuningOptions\.httpKeepAliveTimeout: Invalid value: "string": httpKeepAliveTimeout must be less than or equal to 15 minutes/);
      const connections = await patch({ tuningOptions: { maxConnections: 5 } });
      assert.equal(connections.status, 422);
      assert.match(message(connections), /maxConnections must be 0, -1, or between 2000 and 2000000/);
      assert.equal((await patch({ domain: 'apps.example.com', tuningOptions: { maxConnections: 2000, httpKeepAliveTimeout: '90s' } })).status, 200);
      // 240 characters: within the field's maxLength (244), too long for "router-default.<domain>" (253).
      const long = await patch({ domain: `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(53)}.com` });
      assert.equal(long.status, 422);
      assert.match(message(long), /<nil>: Invalid value: "object": The combined 'router-' \+ metadata\.name \+ '\.' \+ \.spec\.domain cannot exceed 253 characters/);
    });

    test('Route: certificate together with externalCertificate, and passthrough with insecure Allow, are refused', async () => {
      const route = (name: string, tls: unknown) => ({ apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name }, spec: { host: `${name}.apps.example.com`, to: { kind: 'Service', name }, tls } });
      const both = await admin.request('POST', ROUTES, { body: route('both', { termination: 'edge', certificate: 'PEM', externalCertificate: { name: 'secret' } }) });
      assert.equal(both.status, 422);
      assert.match(message(both), /spec\.tls: Invalid value: "object": cannot have both spec\.tls\.certificate and spec\.tls\.externalCertificate/);
      const allow = await admin.request('POST', ROUTES, { body: route('allow', { termination: 'passthrough', insecureEdgeTerminationPolicy: 'Allow' }) });
      assert.equal(allow.status, 422);
      assert.equal((await admin.request('POST', ROUTES, { body: route('fine', { termination: 'passthrough', insecureEdgeTerminationPolicy: 'Redirect' }) })).status, 201);
    });

    test('transition rules (oldSelf) apply on updates only', async () => {
      const INFRA = '/apis/config.openshift.io/v1/infrastructures';
      const created = await admin.request('POST', INFRA, { body: { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'External', external: { platformName: 'Unknown' } } } } });
      assert.equal(created.status, 201, 'no old value on create: the transition rule is not evaluated');
      const external = (platformName: string) => admin.request('PATCH', `${INFRA}/cluster`, { body: { spec: { platformSpec: { external: { platformName } } } } });
      assert.equal((await external('acme')).status, 200, "'Unknown' may be replaced once");
      const changed = await external('other');
      assert.equal(changed.status, 422);
      assert.equal(message(changed), 'Infrastructure.config.openshift.io "cluster" is invalid: spec.platformSpec.external.platformName: Invalid value: "string": platform name cannot be changed once set');
    });
  });

  describe('query parameters, unknown fields and anonymous requests', () => {
    test('boolean flags: anything but "0" or "false" is true (watch=True is a watch, watch=0 a list)', async () => {
      await admin.request('POST', CM, { body: { metadata: { name: 'flags' } } });
      for (const value of ['True', '1', 'yes', '']) {
        const r = await admin.get(CM, { watch: value, timeoutSeconds: '1', fieldSelector: 'metadata.name=flags' });
        assert.equal(r.status, 200);
        assert.deepEqual(JSON.parse(r.text.split('\n')[0]).type, 'ADDED', `watch=${value} streams events`);
      }
      for (const value of ['0', 'false', 'False']) {
        const r = await admin.get(CM, { watch: value, fieldSelector: 'metadata.name=flags' });
        assert.equal((r.body as { kind: string }).kind, 'ConfigMapList', `watch=${value} lists`);
      }
    });

    test('unknown fields: dropped with a Warning header, 400 with fieldValidation=Strict, silent with Ignore', async () => {
      const warned = await admin.request('PATCH', `${IMAGES}/cluster`, { body: { spec: { bogus: 1, externalRegistryHostnames: ['r.example.com'] } } });
      assert.equal(warned.status, 200);
      assert.equal(warned.headers.warning, '299 - "unknown field \\"spec.bogus\\""');
      assert.equal((warned.body as { spec: Record<string, unknown> }).spec.bogus, undefined);
      const strict = await admin.request('PATCH', `${IMAGES}/cluster`, { body: { spec: { bogus: 1 } }, query: { fieldValidation: 'Strict' } });
      assert.equal(strict.status, 400);
      assert.equal((strict.body as { message: string }).message, 'Image in version "v1" cannot be handled as a Image: strict decoding error: unknown field "spec.bogus"');
      const ignored = await admin.request('PATCH', `${IMAGES}/cluster`, { body: { spec: { bogus: 2 } }, query: { fieldValidation: 'Ignore' } });
      assert.equal(ignored.status, 200);
      assert.equal(ignored.headers.warning, undefined);
      const unknownValue = await admin.request('PATCH', `${IMAGES}/cluster`, { body: { spec: {} }, query: { fieldValidation: 'Loose' } });
      assert.equal(unknownValue.status, 422);
      assert.equal((unknownValue.body as { message: string }).message, 'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"');
    });

    test('dryRun: only "All" is accepted (and writes nothing); any other value is refused before writing', async () => {
      const refused = await admin.request('POST', CM, { body: { metadata: { name: 'dry' } }, query: { dryRun: 'true' } });
      assert.equal(refused.status, 422);
      assert.equal((refused.body as { message: string }).message, 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"');
      assert.equal((await admin.get(`${CM}/dry`)).status, 404, 'nothing was written');
      const dry = await admin.request('POST', CM, { body: { metadata: { name: 'dry' } }, query: { dryRun: 'All' } });
      assert.equal(dry.status, 201);
      assert.equal((await admin.get(`${CM}/dry`)).status, 404, 'a dry run stores nothing');
      const del = await admin.request('DELETE', `${CM}/flags`, { query: { dryRun: 'yes' } });
      assert.equal(del.status, 422);
      assert.equal((await admin.get(`${CM}/flags`)).status, 200);
    });

    test('a request without credentials is system:anonymous: 403 from RBAC, not 401', async () => {
      const anon = new SimClient(server, { anonymous: true });
      try {
        const r = await anon.get(CM);
        assert.equal(r.status, 403);
        assert.equal((r.body as { message: string }).message, 'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "shop"');
        assert.equal((await anon.get('/readyz')).status, 200);
      } finally {
        anon.close();
      }
    });
  });
});
