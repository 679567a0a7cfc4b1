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
});
