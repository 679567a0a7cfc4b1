// The endpoints serve what the cluster serves: old certificates until the owning operator rolled the new
// ones out, then the new ones — chosen by SNI, checked here with real TLS handshakes and chain verification.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { R } from '../../../src/cluster/resources';
import { issueServerCert, sharedCa } from '../../sim/pki';
import { startSimulator, type Simulator } from '../../sim/index';
import { NEW_DOMAIN, TestClient, conditionStatus, dnsNames, servedCertificate, tlsSecret, withSimulator } from '../../sim/cluster/testing';
import { kubeRequest } from '../../sim/cluster/kube-http';

function rolloutDone(sim: Simulator, operator: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (e: { operator: string; phase: string }) => {
      if (e.operator === operator && e.phase === 'done') {
        sim.events.off('rollout', on);
        resolve();
      }
    };
    sim.events.on('rollout', on);
  });
}

/** GET / through the router with a Host header (SNI = host). */
function viaRouter(sim: Simulator, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: sim.endpoints.ingress.host, port: sim.endpoints.ingress.port, servername: host, headers: { Host: host }, path: '/', rejectUnauthorized: false },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}


describe('api endpoint (SNI)', () => {
  test('serves the load-balancer certificate for the old name; the named certificate for the new name once rolled out', async () => {
    await withSimulator({}, async (sim, admin) => {
      const { host, port } = sim.endpoints.api;
      const oldApi = `api.${sim.options.clusterName}.${sim.options.baseDomain}`;
      const newApi = `api.${sim.options.clusterName}.${NEW_DOMAIN}`;
      const lb = sim.signers.lbSigner.certPem;

      const before = await servedCertificate(host, port, oldApi, lb);
      assert.equal(before.authorized, true, before.error);
      assert.deepEqual(dnsNames(before.cert), [oldApi]);
      const unknownYet = await servedCertificate(host, port, newApi, lb);
      assert.equal(unknownYet.cert.checkHost(newApi), undefined, 'nothing covers the new name yet');

      // The admin kubeconfig (tls-server-name = the API name, CA bundle with the lb signer) works.
      const adminKc = TestClient.fromKubeconfig(sim.kubeconfigs.admin);
      assert.equal(adminKc.creds.tlsServerName, oldApi);
      assert.equal(await adminKc.readyz(), true);
      const newKc = new TestClient({ ...adminKc.creds, tlsServerName: newApi });
      await assert.rejects(kubeRequest(newKc.creds, 'GET', '/readyz'), /Hostname\/IP does not match|altnames/);

      const named = issueServerCert(sim.signers.lbSigner, { dnsNames: [newApi] });
      await admin.create(R.secrets, tlsSecret('openshift-config', 'api-new', named));
      const done = rolloutDone(sim, 'kube-apiserver');
      await admin.mergePatch(R.apiServers, 'cluster', { spec: { servingCerts: { namedCertificates: [{ names: [newApi], servingCertificate: { name: 'api-new' } }] } } });
      await sim.waitFor(async () => conditionStatus(await admin.get(R.clusterOperators, 'kube-apiserver'), 'Progressing') === 'True', 3000, 'Progressing');
      const during = await servedCertificate(host, port, newApi, lb);
      assert.equal(during.cert.checkHost(newApi), undefined, 'not served before the revision is installed');
      await done;
      await sim.waitFor(() => sim.apiUp(), 3000, 'API back after the pod switch');

      const after = await servedCertificate(host, port, newApi, lb);
      assert.equal(after.authorized, true, after.error);
      assert.equal(after.cert.fingerprint256, new (await import('node:crypto')).X509Certificate(named.certPem).fingerprint256);
      assert.deepEqual(dnsNames((await servedCertificate(host, port, oldApi, lb)).cert), [oldApi], 'the old name keeps its certificate');
      assert.equal(await newKc.readyz(), true, 'a kubeconfig for the new API name now verifies');
      const authed = await kubeRequest(newKc.creds, 'GET', '/api/v1/namespaces/default');
      assert.equal(authed.status, 200, 'the client certificate still authenticates');
    });
  });
});

describe('ingress endpoint (SNI)', () => {
  test('router default wildcard, then component route and default certificates as each rolls out', async () => {
    await withSimulator({}, async (sim, admin) => {
      const { host, port } = sim.endpoints.ingress;
      const oldApps = `apps.${sim.options.clusterName}.${sim.options.baseDomain}`;
      const newApps = `apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      const routerCa = sim.signers.routerCa.certPem;
      const siteCa = sharedCa('test-site-ca');

      const oldConsole = await servedCertificate(host, port, `console-openshift-console.${oldApps}`, routerCa);
      assert.equal(oldConsole.authorized, true, oldConsole.error);
      assert.deepEqual(dnsNames(oldConsole.cert), [`*.${oldApps}`]);
      const noSni = await servedCertificate(host, port, undefined);
      assert.deepEqual(dnsNames(noSni.cert), [`*.${oldApps}`]);

      assert.deepEqual(await viaRouter(sim, `console-openshift-console.${oldApps}`), { status: 200, body: 'route openshift-console/console\n' });
      assert.equal((await viaRouter(sim, `nothing.${oldApps}`)).status, 503);

      const consoleCert = issueServerCert(siteCa, { dnsNames: [`console-openshift-console.${newApps}`] });
      await admin.create(R.secrets, tlsSecret('openshift-config', 'console-cert', consoleCert));
      const wildcard = issueServerCert(siteCa, { dnsNames: [`*.${newApps}`] });
      await admin.create(R.secrets, tlsSecret('openshift-ingress', 'site-wildcard', wildcard));
      const consoleDone = rolloutDone(sim, 'console');
      const ingressDone = rolloutDone(sim, 'ingress');
      await admin.mergePatch(R.ingresses, 'cluster', {
        spec: { componentRoutes: [{ namespace: 'openshift-console', name: 'console', hostname: `console-openshift-console.${newApps}`, servingCertKeyPairSecret: { name: 'console-cert' } }] },
      });
      await admin.mergePatch(R.ingressControllers, 'default', { spec: { defaultCertificate: { name: 'site-wildcard' } } }, 'openshift-ingress-operator');

      await sim.waitFor(async () => conditionStatus(await admin.get(R.clusterOperators, 'ingress'), 'Progressing') === 'True', 3000, 'router rolling out');
      const early = await servedCertificate(host, port, `test.${newApps}`, siteCa.certPem);
      assert.equal(early.authorized, false, 'the old default wildcard until the router rolled out');
      // console-custom carries its certificate in the route (reencrypt): the router serves it once admitted.
      await sim.waitFor(async () => (await servedCertificate(host, port, `console-openshift-console.${newApps}`, siteCa.certPem)).authorized, 3000, 'console-custom served');
      await Promise.all([consoleDone, ingressDone]);

      const newConsole = await servedCertificate(host, port, `console-openshift-console.${newApps}`, siteCa.certPem);
      assert.equal(newConsole.authorized, true, newConsole.error);
      assert.deepEqual(dnsNames(newConsole.cert), [`console-openshift-console.${newApps}`]);
      const other = await servedCertificate(host, port, `test.${newApps}`, siteCa.certPem);
      assert.equal(other.authorized, true, other.error);
      assert.deepEqual(dnsNames(other.cert), [`*.${newApps}`]);
      assert.deepEqual(dnsNames((await servedCertificate(host, port, undefined)).cert), [`*.${newApps}`], 'connections without SNI get the new default');
      assert.equal((await viaRouter(sim, `console-openshift-console.${newApps}`)).body, 'route openshift-console/console-custom\n');
    });
  });

  test('oauth (passthrough): the oauth server presents the custom certificate only after its rollout', async () => {
    await withSimulator({}, async (sim, admin) => {
      const { host, port } = sim.endpoints.ingress;
      const oauthHost = `oauth-openshift.apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      const siteCa = sharedCa('test-site-ca');
      await admin.create(R.secrets, tlsSecret('openshift-config', 'oauth-cert', issueServerCert(siteCa, { dnsNames: [oauthHost] })));
      const done = rolloutDone(sim, 'authentication');
      await admin.mergePatch(R.ingresses, 'cluster', {
        spec: { componentRoutes: [{ namespace: 'openshift-authentication', name: 'oauth-openshift', hostname: oauthHost, servingCertKeyPairSecret: { name: 'oauth-cert' } }] },
      });
      await sim.waitFor(async () => conditionStatus(await admin.get(R.clusterOperators, 'authentication'), 'Progressing') === 'True', 3000, 'authentication Progressing');
      assert.equal((await servedCertificate(host, port, oauthHost, siteCa.certPem)).authorized, false, 'old pods still serve the old certificate');
      await done;
      const served = await servedCertificate(host, port, oauthHost, siteCa.certPem);
      assert.equal(served.authorized, true, served.error);
      assert.deepEqual(dnsNames(served.cert), [oauthHost]);
    });
  });

  test('the router is down while the node has not started', async () => {
    const sim = await startSimulator({ timeScale: 0.001 });
    try {
      await assert.rejects(servedCertificate(sim.endpoints.ingress.host, sim.endpoints.ingress.port, 'x.example.com'), /ECONNRESET|socket hang up|disconnected/);
      sim.startKubelet();
      await sim.waitFor(() => sim.apiUp(), 5000, 'node up');
      const served = await servedCertificate(sim.endpoints.ingress.host, sim.endpoints.ingress.port, 'x.example.com');
      assert.ok(served.cert);
    } finally {
      await sim.stop();
    }
  });
});
