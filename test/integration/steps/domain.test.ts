import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { statSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { startSimulator, type Simulator } from '../../sim/index';
import { issueClientCert, issueServerCert, sharedCa } from '../../sim/pki';
import { writeKubeconfigFile } from '../../sim/cluster/kubeconfigs';
import { FACTORY_ADMIN_KUBECONFIG } from '../../../src/paths';
import { R } from '../../../src/cluster/resources';
import { ConnectionError, type KubeObject } from '../../../src/cluster/types';
import { domainStep } from '../../../src/steps/domain/index';
import { SECRETS } from '../../../src/steps/domain/names';
import { sanDnsNames } from '../../../src/certs/verify';
import { checkServedCertificate } from '../../../src/steps/domain/tls-check';
import { AGENT_USER, createHarness, writesIn, type Harness } from './harness';
import { OpensslWorkdir } from '../../unit/certs/openssl';

const NEW = 'store42.example.com';
const API = `api.sno1.${NEW}`;
const APPS = `apps.sno1.${NEW}`;

type Spec = KubeObject & { spec?: Record<string, unknown> };

function secretPem(sim: Simulator, ns: string, name: string, key = 'tls.crt'): string {
  const s = sim.store.get(R.secrets, name, ns) as (KubeObject & { data?: Record<string, string> }) | undefined;
  return Buffer.from(s?.data?.[key] ?? '', 'base64').toString('utf8');
}

describe('domain step against the simulator', () => {
  let sim: Simulator;
  let h: Harness;
  const userNamed = { names: ['corp-api.example.com'], servingCertificate: { name: 'corp-api-cert' } };
  const userRoute = { namespace: 'openshift-monitoring', name: 'grafana', hostname: 'grafana.corp.example.com', servingCertKeyPairSecret: { name: 'grafana-cert' } };

  before(async () => {
    sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    // Someone else's configuration the agent must keep (with its secret: a dangling one degrades kube-apiserver).
    const corp = issueServerCert(sharedCa('corp-ca'), { dnsNames: ['corp-api.example.com'] });
    sim.store.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'corp-api-cert', namespace: 'openshift-config' }, type: 'kubernetes.io/tls', data: { 'tls.crt': Buffer.from(corp.certPem).toString('base64'), 'tls.key': Buffer.from(corp.keyPem).toString('base64') } });
    const apiserver = sim.store.get(R.apiServers, 'cluster') as Spec;
    sim.store.update(R.apiServers, { ...apiserver, spec: { ...apiserver.spec, servingCerts: { namedCertificates: [userNamed] } } });
    const ingress = sim.store.get(R.ingresses, 'cluster') as Spec;
    sim.store.update(R.ingresses, { ...ingress, spec: { ...ingress.spec, componentRoutes: [userRoute] } });
    // Let the rollouts these start finish first (kube-apiserver restarts at the end of its revision).
    await sim.waitFor(() => sim.snapshot().rollouts.length === 0 && sim.apiUp(), 20_000, 'fixture rollouts');
    h = await createHarness(sim);
  });
  after(async () => {
    await h?.cleanup();
    await sim?.stop();
  });

  test('plan lists every change and writes nothing', async () => {
    sim.api.clearRequests();
    const changes = await domainStep.plan(h.contextFor('domain'));
    assert.deepEqual(writesIn(sim.api.requests), []);
    const targets = changes.map((c) => `${c.kind} ${c.target}`);
    for (const t of [`Secret openshift-config/${SECRETS.api}`, `Secret openshift-config/${SECRETS.ingress}`, `Secret openshift-config/${SECRETS.oauth}`, `Secret openshift-ingress/${SECRETS.ingress}`, 'APIServer cluster', 'Ingress cluster', 'IngressController openshift-ingress-operator/default', 'Route shop/storefront', 'Route shop/checkout']) {
      assert.ok(targets.includes(t), `plan misses ${t}: ${targets.join(', ')}`);
    }
    assert.ok(!targets.includes('Route inventory/dashboard'), 'a route outside the apps domain is not touched');
    assert.ok(!targets.includes('Route openshift-console/console'), 'component routes are moved by their operator');
  });

  test('apply merges into what others configured and never touches spec.domain', async () => {
    const domainBefore = (sim.store.get(R.ingresses, 'cluster') as Spec).spec?.domain;
    assert.equal(await h.run(domainStep), 'applied');

    const named = ((sim.store.get(R.apiServers, 'cluster') as Spec).spec?.servingCerts as { namedCertificates: unknown[] }).namedCertificates;
    assert.deepEqual(named, [userNamed, { names: [API], servingCertificate: { name: SECRETS.api } }]);

    const ingress = sim.store.get(R.ingresses, 'cluster') as Spec;
    assert.equal(ingress.spec?.domain, domainBefore);
    assert.equal(ingress.spec?.appsDomain, APPS);
    const routes = ingress.spec?.componentRoutes as { namespace: string; name: string; hostname: string; servingCertKeyPairSecret: { name: string } }[];
    assert.deepEqual(routes[0], userRoute);
    assert.deepEqual(routes.slice(1).map((r) => [r.name, r.hostname, r.servingCertKeyPairSecret.name]), [
      ['console', `console-openshift-console.${APPS}`, SECRETS.ingress],
      ['downloads', `downloads-openshift-console.${APPS}`, SECRETS.ingress],
      ['oauth-openshift', `oauth-openshift.${APPS}`, SECRETS.oauth],
    ]);
    const ic = sim.store.get(R.ingressControllers, 'default', 'openshift-ingress-operator') as Spec;
    assert.deepEqual(ic.spec?.defaultCertificate, { name: SECRETS.ingress });

    // Certificates: exact names, signed by the cluster's own CAs, chain in tls.crt.
    const api = new X509Certificate(secretPem(sim, 'openshift-config', SECRETS.api));
    assert.deepEqual(sanDnsNames(api), [API]);
    assert.ok(api.verify(new X509Certificate(sim.signers.lbSigner.certPem).publicKey));
    const wildcard = new X509Certificate(secretPem(sim, 'openshift-config', SECRETS.ingress));
    assert.deepEqual(sanDnsNames(wildcard), [`*.${APPS}`, '*.apps.sno1.factory.example.com']);
    assert.ok(wildcard.verify(new X509Certificate(sim.signers.routerCa.certPem).publicKey));
    assert.deepEqual(sanDnsNames(new X509Certificate(secretPem(sim, 'openshift-config', SECRETS.oauth))), [`oauth-openshift.${APPS}`]);
    assert.equal(secretPem(sim, 'openshift-ingress', SECRETS.ingress), secretPem(sim, 'openshift-config', SECRETS.ingress));
    assert.equal((sim.store.get(R.secrets, SECRETS.api, 'openshift-config') as KubeObject & { type?: string }).type, 'kubernetes.io/tls');

    // The hand-off kubeconfig: 0600, new server name, the load-balancer signer in its CA data.
    const kcPath = h.file('/var/lib/sno-reconfigure/kubeconfig-new-api');
    assert.equal(statSync(kcPath).mode & 0o777, 0o600);
    const kc = parseYaml(readFileSync(kcPath, 'utf8')) as { clusters: { cluster: Record<string, string> }[]; users: { user: Record<string, string> }[] };
    assert.equal(kc.clusters[0]?.cluster.server, `https://${API}:6443`);
    const caData = Buffer.from(kc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString();
    assert.ok(caData.includes(sim.signers.lbSigner.certPem.trim().split('\n')[1] ?? 'x'));
    assert.ok(kc.users[0]?.user['client-key-data']);
    assert.equal(h.facts.newApiKubeconfig, '/var/lib/sno-reconfigure/kubeconfig-new-api');
    assert.ok(h.changes.some((c) => c.kind === 'file' && c.target.endsWith('kubeconfig-new-api')));
  });

  test('the hand-off kubeconfig states when its credential expires: in the file and in the facts the report and banner read', async () => {
    const text = readFileSync(h.file('/var/lib/sno-reconfigure/kubeconfig-new-api'), 'utf8');
    const user = (parseYaml(text) as { users: { user: Record<string, string> }[] }).users[0]?.user ?? {};
    const notAfter = new Date(new X509Certificate(Buffer.from(user['client-certificate-data'] ?? '', 'base64')).validTo).toISOString();
    assert.match(text, /^# Admin kubeconfig for https:\/\/api\.sno1\.store42\.example\.com:6443, written by sno-reconfigure\.\n# Credentials: from the node-local kubeconfig: the node's rotating debug certificate\.\n/);
    assert.ok(text.includes(`# Its client certificate expires ${notAfter}.\n# After that, log in through the OAuth route (oc login) with kubeadmin or a cluster user.\n`), text.split('\n').slice(0, 4).join('\n'));
    assert.equal(h.facts.newApiKubeconfigExpires, notAfter);
  });

  test('a re-run finds everything in place and makes no writes', async () => {
    sim.api.clearRequests();
    const before = secretPem(sim, 'openshift-config', SECRETS.api);
    assert.equal(await h.run(domainStep), 'done');
    assert.deepEqual(writesIn(sim.api.requests), []);
    assert.equal(secretPem(sim, 'openshift-config', SECRETS.api), before, 'the stored certificate is reused, not re-issued');
  });

  test('once kube-apiserver rolled out, the API serves the new certificate and the hand-off CA verifies it', async () => {
    const kc = parseYaml(readFileSync(h.file('/var/lib/sno-reconfigure/kubeconfig-new-api'), 'utf8')) as { clusters: { cluster: Record<string, string> }[] };
    const ca = Buffer.from(kc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString();
    let last = '';
    await sim.waitFor(async () => {
      // Judged at the simulator's time, the time the step issued the certificate by (it runs 1000× faster).
      const check = await checkServedCertificate(sim.endpoints.api, API, [ca], { now: new Date(sim.clock.now()) });
      last = check.detail;
      return check.ok;
    }, 5 * 60_000, 'new API certificate served').catch((e: Error) => assert.fail(`${e.message}\nlast check: ${last}`));
    const served = await checkServedCertificate(sim.endpoints.api, API, [ca], { now: new Date(sim.clock.now()) });
    assert.equal(served.fingerprint, new X509Certificate(secretPem(sim, 'openshift-config', SECRETS.api)).fingerprint256);
  });

  test('a second domain change (store 42, then store 77 a year later): no certificate the first stored is reused for the new names', async () => {
    const first = Object.fromEntries(Object.values(SECRETS).map((name) => [name, secretPem(sim, 'openshift-config', name)]));
    const STORE77 = 'store77.example.com';
    const h2 = await createHarness(sim, { root: h.root, site: { name: 'store-0077', baseDomain: STORE77 } });
    try {
      // The first change's kube-apiserver rollout may still restart the API when this one starts (seen once in CI):
      // a connection error fails the step, and the agent runs it again at its next start (the runner: "The agent
      // retries after a restart"); so does this test, at most five times, once the API is up. An attempt cut off
      // after its writes leaves the next one nothing to write: 'done' then, not 'applied'.
      let attempts = 0;
      const run = async (): Promise<string> => {
        attempts++;
        try {
          return await h2.run(domainStep);
        } catch (e) {
          if (!(e instanceof ConnectionError) || attempts >= 5) throw e;
          await sim.waitFor(() => sim.apiUp(), 60_000, 'the API up again');
          return run();
        }
      };
      const outcome = await run();
      assert.ok(outcome === 'applied' || (attempts > 1 && outcome === 'done'), `${outcome} after ${attempts} attempt(s)`);
      for (const [name, before] of Object.entries(first)) {
        const now = secretPem(sim, 'openshift-config', name);
        assert.notEqual(now, before, `${name}: the certificate stored for ${NEW} was kept for ${STORE77}`);
        const names = sanDnsNames(new X509Certificate(now));
        assert.ok(names.some((n) => n.endsWith(`.sno1.${STORE77}`)), `${name} is for ${names.join(', ')}`);
        assert.ok(!names.some((n) => n.endsWith(`.sno1.${NEW}`)), `${name} still names the first store: ${names.join(', ')}`);
      }
      assert.deepEqual(sanDnsNames(new X509Certificate(secretPem(sim, 'openshift-config', SECRETS.api))), [`api.sno1.${STORE77}`]);
    } finally {
      await h2.cleanup();
    }
  });
});

describe('domain step: a hand-off whose signer expires first', () => {
  test('states the signer\'s NotAfter, the earlier one, in the file and in the facts (node-system-admin-signer outlived by its client)', async () => {
    // The client was issued when node-system-admin-signer was 300 of its 365 days old: it outlives the signer.
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', nodeAdminSignerAgeDays: 300 });
    const h = await createHarness(sim);
    try {
      assert.equal(await h.run(domainStep), 'applied');
      const text = readFileSync(h.file('/var/lib/sno-reconfigure/kubeconfig-new-api'), 'utf8');
      const user = (parseYaml(text) as { users: { user: Record<string, string> }[] }).users[0]?.user ?? {};
      const leaf = new X509Certificate(Buffer.from(user['client-certificate-data'] ?? '', 'base64'));
      const bundle = String((sim.store.get(R.configMaps, 'client-ca', 'openshift-kube-apiserver')?.data as Record<string, string>)['ca-bundle.crt']);
      const signer = bundle.split(/(?=-----BEGIN CERTIFICATE-----)/).map((p) => new X509Certificate(p)).find((ca) => leaf.checkIssued(ca))!;
      const signerNotAfter = new Date(signer.validTo).toISOString();
      assert.ok(Date.parse(signerNotAfter) < Date.parse(leaf.validTo), 'the signer expires first');
      assert.equal(h.facts.newApiKubeconfigExpires, signerNotAfter);
      assert.match(text, new RegExp(`# Its client certificate works until ${signerNotAfter.replace(/\./g, '\\.')}, when its signer openshift-kube-apiserver-operator_node-system-admin-signer@\\d+ expires\\.`));
      assert.deepEqual(h.warnings, [], 'still valid: no warning');

      // kube-apiserver restarting right after the writes (its revision rollout): the client CA read fails for a
      // moment. That goes to the step's retry, not into a kubeconfig rendered without the signer — which would
      // differ from the file just written and fail verify as "not in place".
      const ctx = h.contextFor('domain');
      const away = new Proxy(h.client, {
        get: (target, prop, receiver) =>
          prop === 'get'
            ? (r: unknown, name: string, ns?: string) => (name === 'client-ca' ? Promise.reject(new ConnectionError('connect ECONNREFUSED', 'ECONNREFUSED')) : (target.get as (...a: unknown[]) => unknown)(r, name, ns))
            : Reflect.get(target, prop, receiver),
      });
      await assert.rejects(domainStep.verify({ ...ctx, cluster: async () => away }), (e) => e instanceof ConnectionError, 'a transient error is the retry\'s, not a different desired kubeconfig');
      await domainStep.verify(ctx);
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});

describe('domain step: the factory\'s admin kubeconfig', () => {
  test('is preferred for the hand-off when prepare stored one, and its expiry is the one stated', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const h = await createHarness(sim);
    try {
      const factoryAdmin = issueClientCert(sim.signers.apiCa, { user: 'system:admin', groups: ['system:masters'], validityDays: 3650 });
      writeKubeconfigFile(h.file(FACTORY_ADMIN_KUBECONFIG), { server: 'https://api.sno1.factory.example.com:6443', caPem: sim.caPem, client: factoryAdmin, clusterName: 'sno1', userName: 'admin' });
      assert.equal(await h.run(domainStep), 'applied');
      const text = readFileSync(h.file('/var/lib/sno-reconfigure/kubeconfig-new-api'), 'utf8');
      const user = (parseYaml(text) as { users: { user: Record<string, string> }[] }).users[0]?.user ?? {};
      assert.equal(Buffer.from(user['client-certificate-data'] ?? '', 'base64').toString('utf8'), factoryAdmin.certPem);
      const notAfter = new Date(new X509Certificate(factoryAdmin.certPem).validTo).toISOString();
      assert.match(text, /# Credentials: from the admin kubeconfig stored at the factory \(sno-reconfigure prepare --admin-kubeconfig\)\./);
      assert.ok(text.includes(`# Its client certificate expires ${notAfter}.`));
      assert.equal(h.facts.newApiKubeconfigExpires, notAfter);
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});

describe('domain step: conflicts and provided certificates', () => {
  test('409 Conflicts on writes are retried and the result is the same', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const h = await createHarness(sim);
    try {
      sim.stopKubelet(); // its status updates would take the injected conflicts
      sim.api.faults = { conflictsOnNextWrites: 3 };
      assert.equal(await h.run(domainStep), 'applied');
      assert.equal(sim.api.requests.filter((r) => r.status === 409 && r.user === AGENT_USER).length, 3, 'every injected conflict hit the agent');
      assert.equal((sim.store.get(R.ingresses, 'cluster') as Spec).spec?.appsDomain, APPS);
      assert.equal(await h.run(domainStep), 'done');
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });

  test('site-provided certificates are used as given; no OAuth certificate is issued', async () => {
    const ssl = new OpensslWorkdir();
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const root = ssl.rootCa('site-root');
    const api = ssl.signed('api', root, { dnsNames: [API] });
    const apps = ssl.signed('apps', root, { dnsNames: [`*.${APPS}`] });
    const h = await createHarness(sim, { site: { certificates: { api: { certPem: api.certPem + root.certPem, keyPem: api.keyPem }, ingress: { certPem: apps.certPem + root.certPem, keyPem: apps.keyPem } } } });
    try {
      assert.equal(await h.run(domainStep), 'applied');
      assert.equal(secretPem(sim, 'openshift-config', SECRETS.api), api.certPem + root.certPem);
      assert.equal(secretPem(sim, 'openshift-config', SECRETS.ingress, 'tls.key'), apps.keyPem);
      assert.equal(sim.store.get(R.secrets, SECRETS.oauth, 'openshift-config'), undefined);
      const routes = (sim.store.get(R.ingresses, 'cluster') as Spec).spec?.componentRoutes as { name: string; servingCertKeyPairSecret: { name: string } }[];
      assert.equal(routes.find((r) => r.name === 'oauth-openshift')?.servingCertKeyPairSecret.name, SECRETS.ingress);
      assert.equal(await h.run(domainStep), 'done');
    } finally {
      await h.cleanup();
      await sim.stop();
      ssl.cleanup();
    }
  });

  test('a provided certificate that does not cover the API name is refused before anything changes', async () => {
    const ssl = new OpensslWorkdir();
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const root = ssl.rootCa('site-root');
    const wrong = ssl.signed('wrong', root, { dnsNames: ['api.other.example.com'] });
    const h = await createHarness(sim, { site: { certificates: { api: { certPem: wrong.certPem, keyPem: wrong.keyPem } } } });
    try {
      sim.api.clearRequests();
      await assert.rejects(h.run(domainStep), (e: Error) => e.name === 'ConfigRejectedError' && /spec.certificates.api: the certificate does not cover api.sno1.store42.example.com/.test(e.message));
      assert.deepEqual(writesIn(sim.api.requests), []);
    } finally {
      await h.cleanup();
      await sim.stop();
      ssl.cleanup();
    }
  });
});

describe('domain step: the namedCertificates limit', () => {
  test('ten entries of others already: refused before anything is written, with the count and what to do', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const apiserver = sim.store.get(R.apiServers, 'cluster') as Spec;
    const others = Array.from({ length: 10 }, (_, i) => ({ names: [`corp-${i}.example.com`], servingCertificate: { name: `corp-${i}` } }));
    sim.store.update(R.apiServers, { ...apiserver, spec: { ...apiserver.spec, servingCerts: { namedCertificates: others } } });
    const h = await createHarness(sim);
    try {
      sim.api.clearRequests();
      await assert.rejects(h.run(domainStep), (e: Error & { remedy?: string }) => {
        assert.match(e.message, /already has 10 namedCertificates entries; .* there would be 11, more than the 10 the kube-apiserver operator accepts/);
        assert.match(e.remedy ?? '', /Remove namedCertificates entries/);
        return true;
      });
      assert.deepEqual(writesIn(sim.api.requests), [], 'nothing was written');
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});
