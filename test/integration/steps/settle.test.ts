import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { startSimulator, type Simulator } from '../../sim/index';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { StepError } from '../../../src/engine/step';
import { DEFAULT_TIMEOUTS } from '../../../src/siteconfig/types';
import { domainStep } from '../../../src/steps/domain/index';
import { pullSecretStep } from '../../../src/steps/pull-secret';
import { mirrorsStep } from '../../../src/steps/mirrors';
import { trustStep } from '../../../src/steps/trust';
import { settleStep } from '../../../src/steps/settle';
import { readRollouts, recordRollouts } from '../../../src/steps/rollouts';
import { checkServedCertificate } from '../../../src/steps/domain/tls-check';
import { ROUTE_BACKUP_FILE } from '../../../src/steps/domain/routes';
import { createHarness, writesIn } from './harness';
import { OpensslWorkdir } from '../../unit/certs/openssl';

type Obj = KubeObject & { spec?: Record<string, unknown>; data?: Record<string, string> };
const MIN = 60_000;
const NEW_APPS = 'apps.sno1.store42.example.com';
const OLD_APPS = 'apps.sno1.factory.example.com';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function route(sim: Simulator, ns: string, name: string): Obj & { metadata: { uid?: string } } {
  return sim.store.get(R.routes, name, ns) as Obj & { metadata: { uid?: string } };
}

describe('settle after all cluster steps', () => {
  test('domain, pull secret, mirrors, trust then settle: routes moved, new names served, a hostile CSR does not block', async () => {
    const ssl = new OpensslWorkdir();
    const ca = ssl.rootCa('store42-registry-ca');
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const h = await createHarness(sim, {
      site: {
        pullSecret: { auths: { 'registry.store42.example.com:8443': { auth: b64('store:pw') } } },
        imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }],
        additionalTrustBundle: ca.certPem,
        // Scaled time: the agent's own CPU time counts as simulated minutes here, so the deadline is generous.
        timeouts: { ...DEFAULT_TIMEOUTS, settle: 12 * 60 * MIN },
      },
    });
    try {
      const uids = { console: route(sim, 'openshift-console', 'console').metadata.uid, storefront: route(sim, 'shop', 'storefront').metadata.uid };
      for (const step of [domainStep, pullSecretStep, mirrorsStep, trustStep]) assert.equal(await h.run(step), 'applied', step.name);
      await sim.injectHostileCsr('other-node');
      await settleStep.apply(h.contextFor('settle'));

      // Routes: generated ones re-created on the new apps domain, explicit ones renamed, others untouched.
      assert.equal(route(sim, 'shop', 'storefront').spec?.host, `storefront-shop.${NEW_APPS}`);
      assert.notEqual(route(sim, 'shop', 'storefront').metadata.uid, uids.storefront);
      assert.equal(route(sim, 'openshift-monitoring', 'prometheus-k8s').spec?.host, `prometheus-k8s-openshift-monitoring.${NEW_APPS}`);
      assert.equal(route(sim, 'shop', 'checkout').spec?.host, `checkout.${NEW_APPS}`);
      assert.equal(route(sim, 'inventory', 'dashboard').spec?.host, 'inventory.corp.example.net');
      assert.equal(route(sim, 'openshift-console', 'console').metadata.uid, uids.console, 'component routes are left to their operators');
      assert.equal(sim.store.get(R.routes, 'sno-reconfigure-host-probe', 'openshift-config'), undefined, 'the probe route is gone');
      const routeChanges = h.changes.filter((c) => c.kind === 'Route').map((c) => c.target).sort();
      assert.deepEqual(routeChanges, ['openshift-monitoring/alertmanager-main', 'openshift-monitoring/prometheus-k8s', 'openshift-monitoring/thanos-querier', 'shop/checkout', 'shop/storefront']);

      // Every original was saved before it changed.
      const backupFile = h.file(`/var/lib/sno-reconfigure/${ROUTE_BACKUP_FILE}`);
      assert.equal(statSync(backupFile).mode & 0o777, 0o600);
      const backup = JSON.parse(readFileSync(backupFile, 'utf8')) as Record<string, Obj>;
      assert.equal(backup['shop/storefront']?.spec?.host, `storefront-shop.${OLD_APPS}`);
      assert.equal(backup['shop/checkout']?.spec?.host, `checkout.${OLD_APPS}`);

      // What settle verified on the wire holds: each new name serves a certificate that verifies.
      // At the simulator's time, which the certificates were issued by (it runs 1000× faster than the wall clock).
      const now = new Date(sim.clock.now());
      assert.ok((await checkServedCertificate(sim.endpoints.api, 'api.sno1.store42.example.com', [sim.signers.lbSigner.certPem], { now })).ok);
      assert.ok((await checkServedCertificate(sim.endpoints.ingress, `oauth-openshift.${NEW_APPS}`, [sim.signers.routerCa.certPem], { now })).ok);
      assert.deepEqual(h.data.get('settle')?.blocking, []);
      assert.ok(h.statuses.some((s) => s.startsWith('cluster settled')), 'progress says when it settled');

      // A second run: every step finds its work done and writes nothing.
      sim.api.clearRequests();
      for (const step of [domainStep, pullSecretStep, mirrorsStep, trustStep]) assert.equal(await h.run(step), 'done', step.name);
      assert.deepEqual(writesIn(sim.api.requests), []);
    } finally {
      await h.cleanup();
      await sim.stop();
      ssl.cleanup();
    }
  });
});

describe('settle after a trust-only change', () => {
  test('a registry CA alone starts no pool rollout, and settle does not wait out the 10-minute reaction grace for one', async () => {
    const ssl = new OpensslWorkdir();
    const ca = ssl.rootCa('store42-registry-ca');
    const sim = await startSimulator({ timeScale: 0.002, kubelet: 'running' });
    // The installed domain and no mirror or pull-secret change: only the trust step writes.
    const h = await createHarness(sim, {
      site: {
        baseDomain: 'factory.example.com',
        imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }],
        additionalTrustBundle: ca.certPem,
        timeouts: { ...DEFAULT_TIMEOUTS, settleStability: 30_000, settle: 60 * MIN },
      },
    });
    const poolRollouts: string[] = [];
    sim.events.on('rollout', (e: { operator: string; phase: string }) => {
      if (e.operator === 'machine-config') poolRollouts.push(e.phase);
    });
    try {
      assert.equal(await h.run(trustStep), 'applied');
      // Settle waits (up to the reaction grace) only for the rollouts the steps recorded, each a blocker "… to
      // start rolling out" until it starts: none recorded for the pool means no such wait. Scaled time makes a
      // simulated-minutes bound a wall-clock one, which a loaded machine broke (766 simulated s at load 27).
      assert.deepEqual((await readRollouts(h.contextFor('settle'))).filter((r) => r.kind === 'machineconfigpool'), [], 'no pool rollout is expected for a registry CA');
      await settleStep.apply(h.contextFor('settle'));
      assert.deepEqual(poolRollouts, [], 'the machine-config pool did not roll out for a registry CA');
      assert.deepEqual(h.statuses.filter((st) => st.includes('machine-config pool')), [], 'settle never waited for the pool');
      assert.deepEqual(h.warnings.filter((w) => w.includes('showed no rollout')), []);
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});

describe('settle waits for everything at once', () => {
  test('rollouts of 3, 5 and 7 simulated minutes: settle ends after the longest, well before their sum', async () => {
    // Scaled time turns CPU contention into simulated minutes: a scale of 0.01 and a 30 s stability window
    // leave seconds of real slack between "the longest plus the window" and "the sum".
    const sim = await startSimulator({
      timeScale: 0.01,
      kubelet: 'running',
      durations: { openshiftApiserverRollout: 3 * MIN, machineConfigRollout: 5 * MIN, kubeApiserverRollout: 7 * MIN, kubeApiserverRestartOutage: 30_000, rebootOutage: 0 },
    });
    // The installed domain: nothing of the domain step is awaited; the three rollouts are started directly.
    const h = await createHarness(sim, { site: { baseDomain: 'factory.example.com', timeouts: { ...DEFAULT_TIMEOUTS, settleStability: 30_000 } } });
    const done = new Map<string, number>();
    sim.events.on('rollout', (e: { operator: string; phase: string }) => {
      if (e.phase === 'done') done.set(e.operator, sim.clock.now());
    });
    try {
      const ctx = h.contextFor('settle');
      const client = h.client;
      await recordRollouts(ctx, client, 'domain', [
        { kind: 'clusteroperator', name: 'openshift-apiserver', reason: 'Ingress appsDomain' },
        { kind: 'clusteroperator', name: 'kube-apiserver', reason: 'APIServer namedCertificates' },
      ]);
      await recordRollouts(ctx, client, 'pull-secret', [{ kind: 'machineconfigpool', name: 'master', reason: 'pull secret' }]);
      const start = sim.clock.now();
      const ingress = sim.store.get(R.ingresses, 'cluster') as Obj;
      sim.store.update(R.ingresses, { ...ingress, spec: { ...ingress.spec, appsDomain: 'apps.sno1.elsewhere.example.com' } });
      const ps = sim.store.get(R.secrets, 'pull-secret', 'openshift-config') as Obj;
      const cfg = JSON.parse(Buffer.from(ps.data?.['.dockerconfigjson'] ?? '', 'base64').toString()) as { auths: Record<string, unknown> };
      cfg.auths['registry.example.com'] = { auth: b64('a:b') };
      sim.store.update(R.secrets, { ...ps, data: { '.dockerconfigjson': b64(JSON.stringify(cfg)) } });
      const apiserver = sim.store.get(R.apiServers, 'cluster') as Obj;
      const lb = sim.store.get(R.secrets, 'loadbalancer-serving-signer', 'openshift-kube-apiserver-operator') as Obj;
      sim.store.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'corp-cert', namespace: 'openshift-config' }, type: 'kubernetes.io/tls', data: lb.data });
      sim.store.update(R.apiServers, { ...apiserver, spec: { ...apiserver.spec, servingCerts: { namedCertificates: [{ names: ['corp.example.com'], servingCertificate: { name: 'corp-cert' } }] } } });

      await settleStep.apply(ctx);
      const end = sim.clock.now();
      const longest = done.get('kube-apiserver');
      assert.ok(longest, 'kube-apiserver rolled out');
      assert.deepEqual([...done.keys()].sort(), ['kube-apiserver', 'machine-config', 'openshift-apiserver'], 'all three rollouts finished before settle returned');
      // Settle ended after the last rollout plus the stability window ...
      assert.ok(end >= longest + 30_000, 'settle waited for the stability window after the last rollout');
      // ... and the rollouts ran side by side: the whole wait is far below 3 + 5 + 7 minutes.
      assert.ok(end - start < 15 * MIN, `settle took ${((end - start) / MIN).toFixed(1)} simulated minutes`);
      assert.ok(longest - start >= 7 * MIN, `kube-apiserver took ${((longest - start) / MIN).toFixed(1)} min`);
      // What blocked was shown while waiting, with the deadline.
      assert.ok(h.statuses.some((s) => /^waiting for .*kube-apiserver \(Progressing: NodeInstaller/.test(s) && / of 45m$/.test(s)), h.statuses.slice(0, 3).join('\n'));
      assert.deepEqual(h.data.get('settle')?.blocking, []);
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});

describe('settle failures', () => {
  test('an operator that stays Degraded ends the wait with its name, its message and what to do', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
    const h = await createHarness(sim, { site: { baseDomain: 'factory.example.com', timeouts: { ...DEFAULT_TIMEOUTS, settle: 10 * 60 * MIN } } });
    try {
      sim.degradeOperator('authentication', 'OAuthServerRouteEndpointAccessibleController_SyncError', 'route.route.openshift.io "oauth-openshift" not found');
      const started = sim.clock.now();
      const err = await settleStep.apply(h.contextFor('settle')).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof StepError, String(err));
      assert.match(err.message, /cluster operator authentication, not changed by this run \(pre-existing or unrelated\), has been Degraded for more than 10m: OAuthServerRouteEndpointAccessibleController_SyncError: route.route.openshift.io "oauth-openshift" not found/);
      assert.match(err.remedy, /oc get co/);
      assert.ok(sim.clock.now() - started < 10 * 60 * MIN, 'it did not wait for the whole deadline');
      assert.ok((h.data.get('settle')?.blocking as string[]).some((b) => b.startsWith('authentication Degraded')));
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });

  test('a name still served with its old certificate keeps settle waiting and is named when the deadline passes', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { kubeApiserverRollout: 600 * MIN } });
    const h = await createHarness(sim, { site: { timeouts: { ...DEFAULT_TIMEOUTS, settle: 90 * MIN } } });
    try {
      assert.equal(await h.run(domainStep), 'applied');
      const served = await checkServedCertificate(sim.endpoints.api, 'api.sno1.store42.example.com', [sim.signers.lbSigner.certPem], { now: new Date(sim.clock.now()) });
      assert.equal(served.ok, false);
      assert.match(served.detail, /serves a certificate for \[.*api\.sno1\.factory\.example\.com.*\], not api\.sno1\.store42\.example\.com/);
      const err = await settleStep.apply(h.contextFor('settle')).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof StepError, String(err));
      assert.match(err.message, /did not settle within 1h30m/);
      assert.match(err.message, /api\.sno1\.store42\.example\.com to serve its new certificate/);
      assert.match(err.message, /kube-apiserver \(Progressing: NodeInstaller/);
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});
