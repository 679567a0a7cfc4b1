import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { startSimulator } from '../../sim/index';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { domainStep } from '../../../src/steps/domain/index';
import { routePolicy } from '../../../src/steps/domain/desired';
import { generatesHostsOn, replaceRoutes, ROUTE_BACKUP_FILE, type RouteProgress } from '../../../src/steps/domain/routes';
import { domainChecks, followUpRoutes } from '../../../src/steps/domain/settled';
import { createHarness } from './harness';

type Route = KubeObject & { spec?: { host?: string } };
const NEW_APPS = 'apps.sno1.store42.example.com';

// The kube-apiserver restart at the end of its revision is not what these tests are about (settle rides it out).
describe('route replacement', () => {
  test('routes wait until openshift-apiserver generates hosts on the new apps domain', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { openshiftApiserverRollout: 24 * 3600_000, kubeApiserverRestartOutage: 0 } });
    const h = await createHarness(sim);
    try {
      assert.equal(await h.run(domainStep), 'applied');
      const ctx = h.contextFor('settle');
      const checks = await domainChecks(ctx, h.client);
      assert.deepEqual(checks.routes.oldDomains, ['apps.sno1.factory.example.com']);
      const waiting = await followUpRoutes(ctx, h.client, checks, {}, async () => undefined);
      assert.deepEqual(waiting, { pending: 5, hostsReady: false });
      assert.equal((sim.store.get(R.routes, 'storefront', 'shop') as Route).spec?.host, 'storefront-shop.apps.sno1.factory.example.com');
      assert.equal(sim.store.get(R.routes, 'sno-reconfigure-host-probe', 'openshift-config'), undefined, 'the probe route is removed again');
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });

  test('a power cut between delete and create loses nothing: the route comes back from the backup', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { openshiftApiserverRollout: 1_000, kubeApiserverRestartOutage: 0 } });
    const h = await createHarness(sim);
    try {
      assert.equal(await h.run(domainStep), 'applied');
      await sim.waitFor(async () => (await generatesHostsOn(h.client, NEW_APPS)).ready, 20_000, 'generated hosts on the new apps domain');

      // The state after the cut: the original saved, the route deleted, the step's data naming it.
      const original = sim.store.get(R.routes, 'storefront', 'shop') as Route;
      const backupFile = h.file(path.posix.join('/var/lib/sno-reconfigure', ROUTE_BACKUP_FILE));
      mkdirSync(path.dirname(backupFile), { recursive: true });
      writeFileSync(backupFile, JSON.stringify({ 'shop/storefront': original }), { mode: 0o600 });
      sim.store.delete(R.routes, 'storefront', 'shop');
      const progress: RouteProgress = { inFlight: 'shop/storefront' };
      const ctx = h.contextFor('settle');
      const result = await replaceRoutes(ctx, h.client, await routePolicy(ctx, h.client), progress, async () => undefined);

      assert.equal(progress.inFlight, undefined);
      assert.equal((sim.store.get(R.routes, 'storefront', 'shop') as Route).spec?.host, `storefront-shop.${NEW_APPS}`);
      assert.ok(result.changes.some((c) => c.target === 'shop/storefront' && /re-created after an interruption/.test(c.detail ?? '')));
      assert.deepEqual(result.unexpected, []);
      // The backup keeps the first original it saw and gains the others before they change.
      const backup = JSON.parse(readFileSync(backupFile, 'utf8')) as Record<string, Route>;
      assert.equal(backup['shop/storefront']?.spec?.host, 'storefront-shop.apps.sno1.factory.example.com');
      assert.equal(backup['shop/checkout']?.spec?.host, 'checkout.apps.sno1.factory.example.com');
      assert.equal((sim.store.get(R.routes, 'checkout', 'shop') as Route).spec?.host, `checkout.${NEW_APPS}`);
      const again = await replaceRoutes(ctx, h.client, await routePolicy(ctx, h.client), {}, async () => undefined);
      assert.deepEqual(again.changes, []);
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });

  // The tenth hostile re-test of issue 36: the backups outlive a relocation, and a route changed between two
  // relocations came back from the first one's copy (its old backend, its TLS certificate and key gone).
  test('a route is made again as it is now, whatever an earlier copy says; a damaged copy is said, kept aside and started afresh', async () => {
    // Damaged: JSON that is no copy, or no JSON at all (a read that failed once passed the check as an empty copy).
    for (const damaged of [undefined, 'null', '{not json']) {
      const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { openshiftApiserverRollout: 1_000, kubeApiserverRestartOutage: 0 } });
      const h = await createHarness(sim);
      try {
        assert.equal(await h.run(domainStep), 'applied');
        await sim.waitFor(async () => (await generatesHostsOn(h.client, NEW_APPS)).ready, 20_000, 'generated hosts on the new apps domain');
        const now = sim.store.get(R.routes, 'storefront', 'shop') as Route & { spec: { to?: { name?: string } } };
        const stale = { ...now, spec: { ...now.spec, to: { kind: 'Service', name: 'storefront-last-year' } } };
        const backupFile = h.file(path.posix.join('/var/lib/sno-reconfigure', ROUTE_BACKUP_FILE));
        mkdirSync(path.dirname(backupFile), { recursive: true });
        writeFileSync(backupFile, damaged ?? JSON.stringify({ 'shop/storefront': stale }), { mode: 0o600 });
        const ctx = h.contextFor('settle');
        const warned: string[] = [];
        const warn = ctx.log.warn.bind(ctx.log);
        ctx.log.warn = ((...args: unknown[]) => { warned.push(String(args[args.length - 1])); return (warn as (...a: unknown[]) => void)(...args); }) as typeof ctx.log.warn;
        await replaceRoutes(ctx, h.client, await routePolicy(ctx, h.client), {}, async () => undefined);
        const made = sim.store.get(R.routes, 'storefront', 'shop') as Route & { spec: { to?: { name?: string } } };
        assert.equal(made.spec.host, `storefront-shop.${NEW_APPS}`);
        assert.equal(made.spec.to?.name, now.spec.to?.name, 'the backend the route has now');
        if (damaged) {
          assert.equal(readFileSync(`${backupFile}.corrupt`, 'utf8'), damaged);
          assert.ok(warned.some((w) => /copy of the routes it replaces was damaged; it was kept aside as backups\/routes\.json\.corrupt/.test(w)), warned.join('\n'));
          assert.ok(JSON.parse(readFileSync(backupFile, 'utf8'))['shop/storefront'], 'a new copy is kept');
        }
      } finally {
        await h.cleanup();
        await sim.stop();
      }
    }
  });

  // The eleventh hostile re-test of issue 36: the copy kept was the first ever seen, so a power cut between the delete
  // and the create brought the route back as a past relocation had found it.
  test('a route cut off between its delete and its create comes back as it was just before the delete, not as an older copy says', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { openshiftApiserverRollout: 1_000, kubeApiserverRestartOutage: 0 } });
    const h = await createHarness(sim);
    try {
      assert.equal(await h.run(domainStep), 'applied');
      await sim.waitFor(async () => (await generatesHostsOn(h.client, NEW_APPS)).ready, 20_000, 'generated hosts on the new apps domain');
      // An older copy of every route, each with last year's backend.
      type Routed = Route & { metadata: { name: string; namespace: string }; spec: { to?: { name?: string } } };
      const live = (sim.store.list(R.routes) as Routed[]).map((r) => structuredClone(r));
      const backupFile = h.file(path.posix.join('/var/lib/sno-reconfigure', ROUTE_BACKUP_FILE));
      mkdirSync(path.dirname(backupFile), { recursive: true });
      writeFileSync(backupFile, JSON.stringify(Object.fromEntries(live.map((r) => [`${r.metadata.namespace}/${r.metadata.name}`, { ...r, spec: { ...r.spec, to: { kind: 'Service', name: 'last-year' } } }]))), { mode: 0o600 });
      const ctx = h.contextFor('settle');
      const progress: RouteProgress = {};
      // The power cut: the first route's create never happens.
      const cut = Object.assign(Object.create(h.client) as typeof h.client, { create: async () => { throw new Error('power cut'); } });
      await assert.rejects(replaceRoutes(ctx, cut, await routePolicy(ctx, h.client), progress, async () => undefined), /power cut/);
      const gone = progress.inFlight!;
      assert.ok(gone);
      const again = await replaceRoutes(ctx, h.client, await routePolicy(ctx, h.client), progress, async () => undefined);
      assert.ok(again.changes.some((c) => c.target === gone && /re-created after an interruption/.test(c.detail ?? '')));
      const [ns, name] = gone.split('/');
      const back = sim.store.get(R.routes, name!, ns) as Routed;
      assert.equal(back.spec.to?.name, live.find((r) => r.metadata.name === name && r.metadata.namespace === ns)?.spec.to?.name, `${gone} comes back with the backend it had`);
      assert.notEqual(back.spec.to?.name, 'last-year');
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});

describe('routes the agent leaves on the old apps domain', () => {
  test('a Helm-managed route stays and is reported; a route reverted by its owner is reported and no longer holds up settle', async () => {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', durations: { openshiftApiserverRollout: 1_000, kubeApiserverRestartOutage: 0 } });
    const h = await createHarness(sim);
    try {
      const helm = sim.store.get(R.routes, 'checkout', 'shop') as Route & { metadata: { labels?: Record<string, string> } };
      sim.store.create(R.routes, { ...helm, metadata: { name: 'catalog', namespace: 'shop', labels: { 'app.kubernetes.io/managed-by': 'Helm' } }, spec: { ...helm.spec, host: 'catalog.apps.sno1.factory.example.com' } });
      assert.equal(await h.run(domainStep), 'applied');
      await sim.waitFor(async () => (await generatesHostsOn(h.client, NEW_APPS)).ready, 20_000, 'generated hosts on the new apps domain');
      const ctx = h.contextFor('settle');
      const checks = await domainChecks(ctx, h.client);
      const progress: RouteProgress = {};
      const first = await followUpRoutes(ctx, h.client, checks, progress, async () => undefined);
      assert.deepEqual(first, { pending: 0, hostsReady: true });
      assert.equal((sim.store.get(R.routes, 'catalog', 'shop') as Route).spec?.host, 'catalog.apps.sno1.factory.example.com', 'the Helm route is not touched');
      assert.ok(h.warnings.some((w) => w === 'route shop/catalog left on the old apps domain (catalog.apps.sno1.factory.example.com): its host is written by Helm (label app.kubernetes.io/managed-by), which would set it back'), h.warnings.join('\n'));
      assert.equal((sim.store.get(R.routes, 'checkout', 'shop') as Route).spec?.host, `checkout.${NEW_APPS}`);

      // Its owner writes the old host back: the agent does not fight it, says so, and settle is not held up.
      const moved = sim.store.get(R.routes, 'checkout', 'shop') as Route;
      sim.store.update(R.routes, { ...moved, spec: { ...moved.spec, host: 'checkout.apps.sno1.factory.example.com' } });
      sim.api.clearRequests();
      const second = await followUpRoutes(ctx, h.client, checks, progress, async () => undefined);
      assert.deepEqual(second, { pending: 0, hostsReady: true });
      assert.equal((sim.store.get(R.routes, 'checkout', 'shop') as Route).spec?.host, 'checkout.apps.sno1.factory.example.com');
      assert.deepEqual(sim.api.requests.filter((r) => r.method !== 'GET' && r.path.includes('/routes/checkout')), [], 'no second rewrite');
      assert.ok(h.warnings.some((w) => w === 'route shop/checkout left on the old apps domain (checkout.apps.sno1.factory.example.com): its owner reverted it'), h.warnings.join('\n'));
    } finally {
      await h.cleanup();
      await sim.stop();
    }
  });
});
