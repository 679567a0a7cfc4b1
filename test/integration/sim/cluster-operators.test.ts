// Operators react to configuration the way the agent will meet them: Progressing with realistic reasons,
// a rollout taking its (scaled) time, Degraded on a broken input, and what changes once it is rolled out.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { issueServerCert, sharedCa } from '../../sim/pki';
import type { Simulator } from '../../sim/index';
import { NEW_DOMAIN, TestClient, condition, conditionStatus, tlsSecret, withSimulator } from '../../sim/cluster/testing';
import { KubeHttpError } from '../../sim/cluster/kube-http';

async function co(admin: TestClient, name: string): Promise<KubeObject> {
  return admin.get(R.clusterOperators, name);
}

/** Resolves with the simulated times at which an operator's rollout started and finished. */
function rolloutTimes(sim: Simulator, operator: string): Promise<{ start: number; done: number }> {
  return new Promise((resolve) => {
    let start = 0;
    const on = (e: { operator: string; phase: string }) => {
      if (e.operator !== operator) return;
      if (e.phase === 'start') start = sim.clock.now();
      if (e.phase === 'done') {
        sim.events.off('rollout', on);
        resolve({ start, done: sim.clock.now() });
      }
    };
    sim.events.on('rollout', on);
  });
}

describe('kube-apiserver: namedCertificates', () => {
  test('a new revision: Progressing NodeInstaller, an API outage at the pod switch, then settled', async () => {
    await withSimulator({}, async (sim, admin) => {
      const api = `api.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.create(R.secrets, tlsSecret('openshift-config', 'api-new', issueServerCert(sim.signers.lbSigner, { dnsNames: [api] })));
      const outages: boolean[] = [];
      sim.events.on('api', (e: { up: boolean }) => outages.push(e.up));
      const times = rolloutTimes(sim, 'kube-apiserver');
      await admin.mergePatch(R.apiServers, 'cluster', { spec: { servingCerts: { namedCertificates: [{ names: [api], servingCertificate: { name: 'api-new' } }] } } });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'kube-apiserver'), 'Progressing') === 'True', 3000, 'kube-apiserver Progressing');
      const progressing = condition(await co(admin, 'kube-apiserver'), 'Progressing')!;
      assert.equal(progressing.reason, 'NodeInstaller');
      assert.match(progressing.message!, /1 node is at revision \d+; 0 nodes have achieved new revision \d+/);
      const cv = await admin.get(R.clusterVersions, 'version');
      assert.equal(conditionStatus(cv, 'Progressing'), 'False', 'ClusterVersion Progressing is for upgrades only');
      const { start, done } = await times;
      assert.deepEqual(outages, [false, true], 'the single kube-apiserver pod was replaced once');
      assert.ok(done - start >= sim.options.durations.kubeApiserverRollout);
      await sim.waitFor(() => admin.readyz(), 3000, 'API back');
      const settled = await co(admin, 'kube-apiserver');
      assert.equal(conditionStatus(settled, 'Progressing'), 'False');
      assert.equal(conditionStatus(settled, 'Available'), 'True');
      assert.equal(conditionStatus(settled, 'Degraded'), 'False');
      assert.match(condition(settled, 'Available')!.message!, /1 node is at revision \d+/);
    });
  });

  test('Degraded while a referenced secret is missing or not a valid pair; the old revision keeps serving', async () => {
    await withSimulator({ durations: { kubeApiserverRestartOutage: 0 } }, async (sim, admin) => {
      const api = `api.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.mergePatch(R.apiServers, 'cluster', { spec: { servingCerts: { namedCertificates: [{ names: [api], servingCertificate: { name: 'api-missing' } }] } } });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'kube-apiserver'), 'Degraded') === 'True', 3000, 'Degraded');
      const degraded = condition(await co(admin, 'kube-apiserver'), 'Degraded')!;
      assert.match(degraded.message!, /namedCertificates\[0\]: secrets "api-missing" not found/);
      assert.equal(conditionStatus(await co(admin, 'kube-apiserver'), 'Progressing'), 'False', 'no rollout for a broken config');

      // A pair whose key does not match its certificate.
      const a = issueServerCert(sim.signers.lbSigner, { dnsNames: [api] });
      const b = issueServerCert(sim.signers.lbSigner, { dnsNames: [api] });
      await admin.create(R.secrets, tlsSecret('openshift-config', 'api-missing', { certPem: a.certPem, keyPem: b.keyPem }));
      await sim.waitFor(async () => /does not match/.test(condition(await co(admin, 'kube-apiserver'), 'Degraded')?.message ?? ''), 3000, 'mismatch reported');

      const times = rolloutTimes(sim, 'kube-apiserver');
      await admin.update(R.secrets, { ...(await admin.get(R.secrets, 'api-missing', 'openshift-config')), data: tlsSecret('', '', a).data });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'kube-apiserver'), 'Degraded') === 'False', 3000, 'Degraded cleared');
      await times;
      assert.equal(conditionStatus(await co(admin, 'kube-apiserver'), 'Progressing'), 'False');
    });
  });
});

describe('openshift-apiserver: Ingress appsDomain and route hosts', () => {
  test('routes created without a host follow appsDomain only after the rollout; existing routes keep their host', async () => {
    await withSimulator({}, async (sim, admin) => {
      const oldApps = `apps.${sim.options.clusterName}.${sim.options.baseDomain}`;
      const newApps = `apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      const route = (name: string, host?: string): KubeObject => ({
        apiVersion: 'route.openshift.io/v1',
        kind: 'Route',
        metadata: { name, namespace: 'shop' },
        spec: { ...(host ? { host } : {}), to: { kind: 'Service', name } },
      });
      const before = await admin.create(R.routes, route('before'));
      assert.equal((before.spec as { host: string }).host, `before-shop.${oldApps}`);
      assert.equal(before.metadata?.annotations?.['openshift.io/host.generated'], 'true');

      const times = rolloutTimes(sim, 'openshift-apiserver');
      await admin.mergePatch(R.ingresses, 'cluster', { spec: { appsDomain: newApps } });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'openshift-apiserver'), 'Progressing') === 'True', 3000, 'openshift-apiserver Progressing');
      assert.match(condition(await co(admin, 'openshift-apiserver'), 'Progressing')!.message!, /APIServerDeploymentProgressing: deployment\/apiserver.openshift-apiserver: observed generation is \d+, desired generation is \d+/);
      const during = await admin.create(R.routes, route('during'));
      assert.equal((during.spec as { host: string }).host, `during-shop.${oldApps}`, 'not yet rolled out');
      await times;
      await sim.waitFor(async () => conditionStatus(await co(admin, 'openshift-apiserver'), 'Progressing') === 'False', 3000, 'settled');

      const after = await admin.create(R.routes, route('after'));
      assert.equal((after.spec as { host: string }).host, `after-shop.${newApps}`);
      assert.equal(after.metadata?.annotations?.['openshift.io/host.generated'], 'true');
      const explicit = await admin.create(R.routes, route('explicit', 'shop.example.org'));
      assert.equal((explicit.spec as { host: string }).host, 'shop.example.org');
      assert.equal(explicit.metadata?.annotations?.['openshift.io/host.generated'], undefined);
      const storefront = await admin.get(R.routes, 'storefront', 'shop');
      assert.equal((storefront.spec as { host: string }).host, `storefront-shop.${oldApps}`, 'an existing generated route keeps its host');
      await sim.waitFor(async () => {
        const ingress = ((await admin.get(R.routes, 'after', 'shop')).status as { ingress?: { host: string; conditions: { type: string; status: string }[] }[] } | undefined)?.ingress ?? [];
        return ingress.some((i) => i.host === `after-shop.${newApps}` && i.conditions.some((c) => c.type === 'Admitted' && c.status === 'True'));
      }, 3000, 'the router admits the new route');

      // Re-creating a generated route is how it moves to the new domain.
      await admin.delete(R.routes, 'storefront', 'shop');
      const recreated = await admin.create(R.routes, route('storefront'));
      assert.equal((recreated.spec as { host: string }).host, `storefront-shop.${newApps}`);
    });
  });
});

describe('authentication and console: componentRoutes', () => {
  test('oauth-openshift: route host, status.componentRoutes and the rollout; Degraded on a missing secret', async () => {
    await withSimulator({}, async (sim, admin) => {
      const host = `oauth-openshift.apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.mergePatch(R.ingresses, 'cluster', {
        spec: { componentRoutes: [{ namespace: 'openshift-authentication', name: 'oauth-openshift', hostname: host, servingCertKeyPairSecret: { name: 'oauth-cert' } }] },
      });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'authentication'), 'Degraded') === 'True', 3000, 'authentication Degraded');
      const deg = condition(await co(admin, 'authentication'), 'Degraded')!;
      assert.equal(deg.reason, 'CustomRouteController_SyncError');
      assert.match(deg.message!, /secrets "oauth-cert" not found/);
      const routeStatus = () =>
        admin.get(R.ingresses, 'cluster').then((i) =>
          ((i.status as { componentRoutes: { namespace: string; name: string; currentHostnames: string[]; conditions: { type: string; status: string; reason: string }[] }[] }).componentRoutes).find(
            (r) => r.name === 'oauth-openshift',
          )!,
        );
      assert.equal((await routeStatus()).conditions.find((c) => c.type === 'Degraded')?.reason, 'CustomRouteError');

      const ca = sharedCa('test-site-ca');
      const times = rolloutTimes(sim, 'authentication');
      await admin.create(R.secrets, tlsSecret('openshift-config', 'oauth-cert', issueServerCert(ca, { dnsNames: [host] })));
      await sim.waitFor(async () => conditionStatus(await co(admin, 'authentication'), 'Progressing') === 'True', 3000, 'authentication Progressing');
      assert.equal(conditionStatus(await co(admin, 'authentication'), 'Degraded'), 'False');
      const rs = await routeStatus();
      assert.deepEqual(rs.currentHostnames, [host]);
      const full = (await admin.get(R.ingresses, 'cluster')).status as { componentRoutes: Record<string, unknown>[] };
      const oauth = full.componentRoutes.find((r) => r.name === 'oauth-openshift')!;
      assert.deepEqual(oauth.consumingUsers, ['system:serviceaccount:oauth-openshift:authentication-operator']);
      assert.deepEqual(oauth.relatedObjects, [{ group: 'route.openshift.io', resource: 'routes', namespace: 'openshift-authentication', name: 'oauth-openshift' }]);
      assert.equal(oauth.defaultHostname, `oauth-openshift.apps.${sim.options.clusterName}.${sim.options.baseDomain}`);
      assert.equal(((await admin.get(R.routes, 'oauth-openshift', 'openshift-authentication')).spec as { host: string }).host, host);
      await times;
      await sim.waitFor(async () => conditionStatus(await co(admin, 'authentication'), 'Progressing') === 'False', 3000, 'authentication settled');
      assert.equal((await routeStatus()).conditions.find((c) => c.type === 'Progressing')?.status, 'False');
      assert.equal(full.componentRoutes.length, 3, 'the console entries are untouched');
    });
  });

  test('console and downloads: custom routes, Degraded for a host outside the domain without a secret', async () => {
    await withSimulator({}, async (sim, admin) => {
      const apps = `apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.mergePatch(R.ingresses, 'cluster', { spec: { componentRoutes: [{ namespace: 'openshift-console', name: 'console', hostname: `console-openshift-console.${apps}` }] } });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'console'), 'Degraded') === 'True', 3000, 'console Degraded');
      const deg = condition(await co(admin, 'console'), 'Degraded')!;
      assert.equal(deg.reason, 'ConsoleCustomRouteSync_InvalidCustomRouteConfig');
      assert.match(deg.message!, /secret reference for custom route TLS secret is not defined/);

      const pair = issueServerCert(sharedCa('test-site-ca'), { dnsNames: [`*.${apps}`] });
      await admin.create(R.secrets, tlsSecret('openshift-config', 'apps-cert', pair));
      const times = rolloutTimes(sim, 'console');
      await admin.mergePatch(R.ingresses, 'cluster', {
        spec: {
          componentRoutes: [
            { namespace: 'openshift-console', name: 'console', hostname: `console-openshift-console.${apps}`, servingCertKeyPairSecret: { name: 'apps-cert' } },
            { namespace: 'openshift-console', name: 'downloads', hostname: `downloads-openshift-console.${apps}`, servingCertKeyPairSecret: { name: 'apps-cert' } },
          ],
        },
      });
      await sim.waitFor(async () => conditionStatus(await co(admin, 'console'), 'Progressing') === 'True', 3000, 'console Progressing');
      assert.equal(condition(await co(admin, 'console'), 'Progressing')!.reason, 'SyncLoopRefresh_InProgress');
      const custom = await admin.get(R.routes, 'console-custom', 'openshift-console');
      assert.equal((custom.spec as { host: string }).host, `console-openshift-console.${apps}`);
      assert.equal((custom.spec as { tls: { termination: string } }).tls.termination, 'reencrypt');
      assert.ok(await admin.get(R.routes, 'downloads-custom', 'openshift-console'));
      assert.ok(await admin.get(R.routes, 'console', 'openshift-console'), 'the default route stays');
      await times;
      await sim.waitFor(async () => conditionStatus(await co(admin, 'console'), 'Progressing') === 'False', 3000, 'console settled');
      assert.equal(conditionStatus(await co(admin, 'console'), 'Degraded'), 'False');

      // A secret of the wrong type.
      await admin.create(R.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'opaque', namespace: 'openshift-config' }, type: 'Opaque', data: tlsSecret('', '', pair).data });
      await admin.mergePatch(R.ingresses, 'cluster', {
        spec: { componentRoutes: [{ namespace: 'openshift-console', name: 'downloads', hostname: `downloads-openshift-console.${apps}`, servingCertKeyPairSecret: { name: 'opaque' } }] },
      });
      await sim.waitFor(async () => condition(await co(admin, 'console'), 'Degraded')?.reason === 'DownloadsCustomRouteSync_InvalidCustomTLSSecret', 3000, 'wrong secret type');
    });
  });
});

describe('ingress: IngressController defaultCertificate', () => {
  test('router rollout with IngressController conditions; Degraded for a missing secret', async () => {
    await withSimulator({}, async (sim, admin) => {
      await admin.mergePatch(R.ingressControllers, 'default', { spec: { defaultCertificate: { name: 'wildcard' } } }, 'openshift-ingress-operator');
      await sim.waitFor(async () => conditionStatus(await co(admin, 'ingress'), 'Degraded') === 'True', 3000, 'ingress Degraded');
      assert.match(condition(await co(admin, 'ingress'), 'Degraded')!.message!, /secrets "wildcard" not found/);
      const ic = await admin.get(R.ingressControllers, 'default', 'openshift-ingress-operator');
      assert.equal(conditionStatus(ic, 'Degraded'), 'True');

      const times = rolloutTimes(sim, 'ingress');
      const apps = `apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.create(R.secrets, tlsSecret('openshift-ingress', 'wildcard', issueServerCert(sharedCa('test-site-ca'), { dnsNames: [`*.${apps}`] })));
      await sim.waitFor(async () => conditionStatus(await co(admin, 'ingress'), 'Progressing') === 'True', 3000, 'ingress Progressing');
      const rolling = await admin.get(R.ingressControllers, 'default', 'openshift-ingress-operator');
      assert.equal(conditionStatus(rolling, 'DeploymentRollingOut'), 'True');
      assert.equal(conditionStatus(rolling, 'Degraded'), 'False');
      await times;
      await sim.waitFor(async () => conditionStatus(await co(admin, 'ingress'), 'Progressing') === 'False', 3000, 'ingress settled');
      assert.equal(conditionStatus(await admin.get(R.ingressControllers, 'default', 'openshift-ingress-operator'), 'DeploymentRollingOut'), 'False');
    });
  });
});

describe('machine-config: pull secret and mirrors', () => {
  test('a pull-secret change renders a new config: pool Updating then Updated, no reboot, CO not Progressing', async () => {
    await withSimulator({}, async (sim, admin) => {
      const poolBefore = await admin.get(R.machineConfigPools, 'master');
      const renderedBefore = (poolBefore.status as { configuration: { name: string } }).configuration.name;
      assert.match(renderedBefore, /^rendered-master-[0-9a-f]{32}$/);
      assert.equal(conditionStatus(poolBefore, 'Updated'), 'True');
      const events: string[] = [];
      sim.events.on('api', (e: { up: boolean }) => events.push(`api:${e.up}`));
      sim.events.on('reboot', (e: { phase: string }) => events.push(`reboot:${e.phase}`));

      const times = rolloutTimes(sim, 'machine-config');
      const ps = await admin.get(R.secrets, 'pull-secret', 'openshift-config');
      ps.data = { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('site:secret').toString('base64') } } })).toString('base64') };
      await admin.update(R.secrets, ps);
      await sim.waitFor(async () => conditionStatus(await admin.get(R.machineConfigPools, 'master'), 'Updating') === 'True', 3000, 'pool Updating');
      const updating = await admin.get(R.machineConfigPools, 'master');
      assert.equal(conditionStatus(updating, 'Updated'), 'False');
      assert.equal((updating.status as { updatedMachineCount: number }).updatedMachineCount, 0);
      const renderedAfter = (updating.spec as { configuration: { name: string } }).configuration.name;
      assert.notEqual(renderedAfter, renderedBefore);
      assert.ok(await admin.get(R.machineConfigs, renderedAfter), 'the rendered MachineConfig exists');
      assert.equal(conditionStatus(await co(admin, 'machine-config'), 'Progressing'), 'False', 'pool updates do not set the CO Progressing (MCO status.go)');
      const node = await admin.get(R.nodes, sim.options.nodeName);
      assert.equal(node.metadata?.annotations?.['machineconfiguration.openshift.io/desiredConfig'], renderedAfter);
      assert.equal(node.metadata?.annotations?.['machineconfiguration.openshift.io/state'], 'Working');

      await times;
      const updated = await admin.get(R.machineConfigPools, 'master');
      assert.equal(conditionStatus(updated, 'Updated'), 'True');
      assert.equal(conditionStatus(updated, 'Updating'), 'False');
      assert.equal((updated.status as { configuration: { name: string } }).configuration.name, renderedAfter);
      assert.equal((updated.status as { updatedMachineCount: number; readyMachineCount: number }).readyMachineCount, 1);
      const doneNode = await admin.get(R.nodes, sim.options.nodeName);
      assert.equal(doneNode.metadata?.annotations?.['machineconfiguration.openshift.io/currentConfig'], renderedAfter);
      assert.deepEqual(events, [], 'no drain, no reboot, no API outage for a pull-secret change');
    });
  });

  test('a MachineConfig written while the node updates is rendered at once and applied by a second update, with its own reboot; a paused pool renders and waits', async () => {
    await withSimulator({}, async (sim, admin) => {
      const starts: string[] = [];
      let reboots = 0;
      sim.events.on('rollout', (e: { operator: string; phase: string }) => e.operator === 'machine-config' && starts.push(e.phase));
      sim.events.on('reboot', (e: { phase: string }) => e.phase === 'down' && reboots++);
      const mc = (name: string, text: string) => ({
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfig',
        metadata: { name, labels: { 'machineconfiguration.openshift.io/role': 'master' } },
        spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: `/etc/${name}`, mode: 420, contents: { source: `data:,${text}` } }] } } },
      });
      const pool = async () => admin.get(R.machineConfigPools, 'master') as Promise<KubeObject & { spec: { configuration: { name: string }; paused?: boolean }; status: { configuration: { name: string } } }>;
      await admin.create(R.machineConfigs, mc('50-master-a', 'a'));
      await sim.waitFor(async () => conditionStatus(await pool(), 'Updating') === 'True', 3000, 'pool updating for the first MachineConfig');
      const first = (await pool()).spec.configuration.name;
      await admin.create(R.machineConfigs, mc('50-master-b', 'b'));
      await sim.waitFor(async () => (await pool()).spec.configuration.name !== first, 3000, 'the second MachineConfig rendered');
      const second = (await pool()).spec.configuration.name;
      assert.equal((await admin.get(R.nodes, sim.options.nodeName)).metadata?.annotations?.['machineconfiguration.openshift.io/desiredConfig'], first, 'the node keeps updating to the first render');
      await sim.waitFor(async () => (await pool()).status.configuration.name === second && conditionStatus(await pool(), 'Updated') === 'True', 10_000, 'the second update done');
      assert.deepEqual(starts, ['start', 'done', 'start', 'done'], 'two updates, one after the other');
      assert.equal(reboots, 2, 'each update reboots the node');

      // Paused: rendered (spec.configuration) but not applied until unpaused; two MachineConfigs, one update.
      await admin.mergePatch(R.machineConfigPools, 'master', { spec: { paused: true } });
      await admin.create(R.machineConfigs, mc('50-master-c', 'c'));
      await admin.create(R.machineConfigs, mc('50-master-d', 'd'));
      await sim.waitFor(async () => (await pool()).spec.configuration.name !== second, 3000, 'rendered while paused');
      // An unpaused pool would have started the update in the same reaction that rendered.
      assert.equal(starts.length, 4, 'no update while paused');
      assert.equal((await admin.get(R.nodes, sim.options.nodeName)).metadata?.annotations?.['machineconfiguration.openshift.io/desiredConfig'], second);
      await admin.mergePatch(R.machineConfigPools, 'master', { spec: { paused: false } });
      await sim.waitFor(async () => conditionStatus(await pool(), 'Updated') === 'True' && (await pool()).status.configuration.name === (await pool()).spec.configuration.name && starts.length === 6, 10_000, 'one update after unpausing');
      assert.equal(reboots, 3);
    });
  });

  test('IDMS: creating it updates the pool without a drain; modifying it drains the node and reloads CRI-O, no reboot', async () => {
    await withSimulator({}, async (sim, admin) => {
      const events: string[] = [];
      sim.events.on('reboot', (e: { phase: string }) => events.push(`reboot:${e.phase}`));
      const cordoned = async () => ((await admin.get(R.nodes, sim.options.nodeName)).spec as { unschedulable?: boolean }).unschedulable === true;
      const idms = {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ImageDigestMirrorSet',
        metadata: { name: 'site-mirrors' },
        spec: { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }] },
      };
      let times = rolloutTimes(sim, 'machine-config');
      await admin.create(R.imageDigestMirrorSets, idms);
      await sim.waitFor(async () => conditionStatus(await admin.get(R.machineConfigPools, 'master'), 'Updating') === 'True', 3000, 'pool updating');
      assert.equal(await cordoned(), false, 'a new IDMS is a safe registries change: no drain');
      await times;

      times = rolloutTimes(sim, 'machine-config');
      const current = await admin.get(R.imageDigestMirrorSets, 'site-mirrors');
      current.spec = { imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry2.store42.example.com/ocp/release'] }] };
      await admin.update(R.imageDigestMirrorSets, current);
      await sim.waitFor(cordoned, 3000, 'node cordoned for the drain');
      await times;
      assert.deepEqual(events, [], 'registries.conf changes reload CRI-O; they never reboot the node');
      assert.equal(await cordoned(), false, 'uncordoned');
    });
  });

  // The MCD compares the old and new rendered configs (machine-config-operator release-4.14…4.16 pkg/daemon/update.go
  // calculatePostConfigChangeAction), which the MCO merges from every MachineConfig of the pool (pkg/controller/common/
  // helpers.go MergeMachineConfigs): a MachineConfig of core's keys alone changes passwd only; an empty one changes nothing.
  test("a MachineConfig of core's keys alone is rolled out without a drain or reboot; one that holds nothing renders no new config", async () => {
    await withSimulator({}, async (sim, admin) => {
      const events: string[] = [];
      sim.events.on('reboot', (e: { phase: string }) => events.push(`reboot:${e.phase}`));
      const rendered = async () => ((await admin.get(R.machineConfigPools, 'master')).spec as { configuration: { name: string } }).configuration.name;
      const mc = (name: string, config: Record<string, unknown>) => ({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name, labels: { 'machineconfiguration.openshift.io/role': 'master' } }, spec: { config: { ignition: { version: '3.2.0' }, ...config } } });
      const before = await rendered();
      await admin.create(R.machineConfigs, mc('99-master-empty', {}));
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(await rendered(), before, 'an empty MachineConfig adds nothing to the rendered config');
      const times = rolloutTimes(sim, 'machine-config');
      await admin.create(R.machineConfigs, mc('99-master-ssh-storea', { passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIStoreA storea@example.com'] }] } }));
      await sim.waitFor(async () => (await rendered()) !== before, 3000, 'a new rendered config');
      await times;
      assert.equal(conditionStatus(await admin.get(R.machineConfigPools, 'master'), 'Updated'), 'True');
      assert.equal(((await admin.get(R.nodes, sim.options.nodeName)).spec as { unschedulable?: boolean }).unschedulable ?? false, false);
      assert.deepEqual(events, [], 'no reboot');
    });
  });

  test('a MachineConfig change drains and reboots the node; its API is down with it', async () => {
    await withSimulator({}, async (sim, admin) => {
      const events: string[] = [];
      const apiDownAtReboot: string[][] = [];
      sim.events.on('reboot', (e: { phase: string }) => {
        events.push(`reboot:${e.phase}`);
        if (e.phase === 'down') apiDownAtReboot.push(sim.snapshot().apiDownReasons);
      });
      const times = rolloutTimes(sim, 'machine-config');
      await admin.create(R.machineConfigs, {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfig',
        metadata: { name: '99-master-site', labels: { 'machineconfiguration.openshift.io/role': 'master' } },
        // A file: one that held nothing but its Ignition version would add nothing to the rendered config.
        spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/site-motd', contents: { source: 'data:,store' }, mode: 420 }] } } },
      });
      await sim.waitFor(async () => ((await admin.get(R.nodes, sim.options.nodeName)).spec as { unschedulable?: boolean }).unschedulable === true, 3000, 'node cordoned for the drain');
      await sim.waitFor(() => events.includes('reboot:down'), 3000, 'reboot');
      assert.deepEqual(apiDownAtReboot, [['node-reboot']], 'the node is down: so is its API');
      await times;
      assert.deepEqual(events, ['reboot:down', 'reboot:up']);
      await sim.waitFor(() => admin.readyz(), 3000, 'API back after the reboot');
      await sim.waitFor(async () => conditionStatus(await admin.get(R.nodes, sim.options.nodeName), 'Ready') === 'True', 3000, 'node Ready after the reboot');
      assert.equal(((await admin.get(R.nodes, sim.options.nodeName)).spec as { unschedulable?: boolean }).unschedulable, undefined, 'uncordoned');
    });
  });

  test('a registry CA in image.config rolls no pool (ControllerConfig / node-ca, not a rendered config)', async () => {
    await withSimulator({}, async (_sim, admin) => {
      const before = (await admin.get(R.machineConfigPools, 'master')).spec as { configuration?: { name?: string } };
      await admin.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'registry-cas', namespace: 'openshift-config' }, data: { 'registry.example.com..8443': 'PEM' } });
      const image = await admin.get(R.images, 'cluster');
      image.spec = { ...(image.spec as object), additionalTrustedCA: { name: 'registry-cas' } };
      await admin.update(R.images, image);
      await new Promise((r) => setTimeout(r, 300));
      const after = (await admin.get(R.machineConfigPools, 'master')).spec as { configuration?: { name?: string } };
      assert.equal(after.configuration?.name, before.configuration?.name);
      assert.equal(conditionStatus(await admin.get(R.machineConfigPools, 'master'), 'Updating'), 'False');
    });
  });

  test('OpenShift 4.12: no IDMS type; an ICSP updates the pool', async () => {
    await withSimulator({ version: '4.12.30' }, async (sim, admin) => {
      await assert.rejects(admin.list(R.imageDigestMirrorSets), (e: unknown) => e instanceof KubeHttpError && e.status === 404);
      const times = rolloutTimes(sim, 'machine-config');
      await admin.create(R.imageContentSourcePolicies, {
        apiVersion: 'operator.openshift.io/v1alpha1',
        kind: 'ImageContentSourcePolicy',
        metadata: { name: 'site-mirrors' },
        spec: { repositoryDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }] },
      });
      await times;
      assert.equal(conditionStatus(await admin.get(R.machineConfigPools, 'master'), 'Updated'), 'True');
      const cv = await admin.get(R.clusterVersions, 'version');
      assert.equal((cv.status as { desired: { version: string } }).desired.version, '4.12.30');
    });
  });
});

describe('time scaling and concurrent rollouts', () => {
  test('rollouts of 3, 5 and 7 simulated minutes run concurrently: all done after ~7, in that order', async () => {
    const durations = { authenticationRollout: 3 * 60_000, openshiftApiserverRollout: 5 * 60_000, kubeApiserverRollout: 7 * 60_000, kubeApiserverRestartOutage: 0 };
    await withSimulator({ durations }, async (sim, admin) => {
      const order: string[] = [];
      sim.events.on('rollout', (e: { operator: string; phase: string }) => e.phase === 'done' && order.push(e.operator));
      const apps = `apps.${sim.options.clusterName}.${NEW_DOMAIN}`;
      const api = `api.${sim.options.clusterName}.${NEW_DOMAIN}`;
      await admin.create(R.secrets, tlsSecret('openshift-config', 'api-new', issueServerCert(sim.signers.lbSigner, { dnsNames: [api] })));
      const t = { auth: rolloutTimes(sim, 'authentication'), oas: rolloutTimes(sim, 'openshift-apiserver'), kas: rolloutTimes(sim, 'kube-apiserver') };
      const start = sim.clock.now();
      await admin.mergePatch(R.ingresses, 'cluster', {
        spec: { appsDomain: apps, componentRoutes: [{ namespace: 'openshift-authentication', name: 'oauth-openshift', hostname: `oauth-openshift.${apps}` }] },
      });
      await admin.mergePatch(R.apiServers, 'cluster', { spec: { servingCerts: { namedCertificates: [{ names: [api], servingCertificate: { name: 'api-new' } }] } } });
      const [auth, oas, kas] = await Promise.all([t.auth, t.oas, t.kas]);
      assert.deepEqual(order, ['authentication', 'openshift-apiserver', 'kube-apiserver']);
      for (const [r, minutes] of [[auth, 3], [oas, 5], [kas, 7]] as const) assert.ok(r.done - r.start >= minutes * 60_000, `${minutes}-minute rollout took its time`);
      // Concurrent: each started before any finished. (A bound on the total in simulated minutes is a bound in
      // real milliseconds at this scale, which a loaded machine's API round trips overran.)
      const lastStart = Math.max(auth.start, oas.start, kas.start);
      const firstDone = Math.min(auth.done, oas.done, kas.done);
      assert.ok(lastStart < firstDone, `concurrent: the last started ${Math.round((lastStart - start) / 1000)} s simulated in, before the first finished at ${Math.round((firstDone - start) / 1000)} s`);
    });
  });

  test('an injected degradation shows until recovered', async () => {
    await withSimulator({}, async (sim, admin) => {
      sim.degradeOperator('etcd', 'EtcdMembersDegraded', 'EtcdMembersDegraded: 1 of 1 members unhealthy');
      const etcd = await co(admin, 'etcd');
      assert.equal(conditionStatus(etcd, 'Degraded'), 'True');
      assert.equal(condition(etcd, 'Degraded')!.reason, 'EtcdMembersDegraded');
      sim.degradeOperator('console', 'TestDegraded');
      assert.equal(conditionStatus(await co(admin, 'console'), 'Degraded'), 'True');
      sim.recoverOperator('etcd');
      sim.recoverOperator('console');
      assert.equal(conditionStatus(await co(admin, 'etcd'), 'Degraded'), 'False');
      assert.equal(conditionStatus(await co(admin, 'console'), 'Degraded'), 'False');
      assert.throws(() => sim.degradeOperator('nope', 'X'), /no ClusterOperator "nope"/);
    });
  });
});
