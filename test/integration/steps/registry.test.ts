import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import type { Simulator } from '../../sim/index';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { pullSecretStep, PULL_SECRET_BACKUP } from '../../../src/steps/pull-secret';
import { mirrorsStep, MIRROR_OBJECT_NAME } from '../../../src/steps/mirrors';
import { trustStep, TRUST_CONFIGMAP } from '../../../src/steps/trust';
import { readRollouts } from '../../../src/steps/rollouts';
import { AGENT_USER, withSim, writesIn } from './harness';
import { OpensslWorkdir } from '../../unit/certs/openssl';

type Obj = KubeObject & { spec?: Record<string, unknown>; data?: Record<string, string> };
const b64 = (s: string) => Buffer.from(s).toString('base64');
const SITE_TOKEN = 'store42-secret-token-0xDEADBEEF';
const siteAuth = { auths: { 'registry.store42.example.com:8443': { auth: b64(`store:${SITE_TOKEN}`) } } };
const MIRRORS = [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }];

function dockerConfig(sim: Simulator): { auths: Record<string, { auth?: string }> } {
  const s = sim.store.get(R.secrets, 'pull-secret', 'openshift-config') as Obj;
  return JSON.parse(Buffer.from(s.data?.['.dockerconfigjson'] ?? '', 'base64').toString());
}


describe('pull-secret step', () => {
  test('merge keeps the factory registries, adds the site one, backs up first, never logs the secret; re-run writes nothing', () =>
    withSim('4.14.12', { pullSecret: siteAuth }, async (sim, h) => {
      const before = dockerConfig(sim);
      assert.equal(await h.run(pullSecretStep), 'applied');
      const after = dockerConfig(sim);
      assert.deepEqual(Object.keys(after.auths).sort(), [...Object.keys(before.auths), 'registry.store42.example.com:8443'].sort());
      assert.equal(after.auths['quay.io']?.auth, before.auths['quay.io']?.auth);
      assert.equal((sim.store.get(R.secrets, 'pull-secret', 'openshift-config') as Obj & { type?: string }).type, 'kubernetes.io/dockerconfigjson');

      const backup = h.file(`/var/lib/sno-reconfigure/${PULL_SECRET_BACKUP}`);
      assert.equal(statSync(backup).mode & 0o777, 0o600);
      const saved = JSON.parse(readFileSync(backup, 'utf8')) as { data: Record<string, string> };
      assert.deepEqual(JSON.parse(Buffer.from(saved.data['.dockerconfigjson'] ?? '', 'base64').toString()), before);
      assert.equal(h.data.get('pull-secret')?.backup, '/var/lib/sno-reconfigure/backups/pull-secret.json');

      const everything = [...h.logLines, ...h.changes.map((c) => JSON.stringify(c)), ...h.warnings, ...h.statuses].join('\n');
      assert.doesNotMatch(everything, new RegExp(`${SITE_TOKEN}|${b64(`store:${SITE_TOKEN}`)}|factory-token`));
      assert.match(h.changes.find((c) => c.target === 'openshift-config/pull-secret')?.detail ?? '', /merge; adds registry.store42.example.com:8443/);
      assert.deepEqual((await readRollouts(h.contextFor('settle'))).map((r) => r.id), ['mcp/master']);

      sim.api.clearRequests();
      assert.equal(await h.run(pullSecretStep), 'done');
      assert.deepEqual(writesIn(sim.api.requests), []);
    }));

  test('replace leaves exactly the site registries (backup still holds the original)', () =>
    withSim('4.14.12', { pullSecret: siteAuth, pullSecretMode: 'replace' }, async (sim, h) => {
      assert.equal(await h.run(pullSecretStep), 'applied');
      assert.deepEqual(dockerConfig(sim), siteAuth);
      const saved = JSON.parse(readFileSync(h.file(`/var/lib/sno-reconfigure/${PULL_SECRET_BACKUP}`), 'utf8')) as { data: Record<string, string> };
      assert.ok(Buffer.from(saved.data['.dockerconfigjson'] ?? '', 'base64').toString().includes('cloud.openshift.com'));
      assert.match(h.changes[0]?.detail ?? '', /replace; adds registry.store42.example.com:8443; removes cloud.openshift.com, quay.io/);
    }));

  test('a 409 on the update re-reads and merges into what is there then', () =>
    withSim('4.14.12', { pullSecret: siteAuth }, async (sim, h) => {
      sim.stopKubelet(); // its status updates would take the injected conflicts
      sim.api.faults = { conflictsOnNextWrites: 2 };
      assert.equal(await h.run(pullSecretStep), 'applied');
      assert.ok(sim.api.requests.some((r) => r.status === 409 && r.user === AGENT_USER && r.path.endsWith('/secrets/pull-secret')));
      assert.ok('registry.store42.example.com:8443' in dockerConfig(sim).auths);
    }));
});

describe('mirrors step', () => {
  test('OpenShift 4.12 gets an ImageContentSourcePolicy (no IDMS API there)', () =>
    withSim('4.12.30', { imageDigestMirrors: MIRRORS }, async (sim, h) => {
      assert.equal(await h.run(mirrorsStep), 'applied');
      const icsp = sim.store.get(R.imageContentSourcePolicies, MIRROR_OBJECT_NAME) as Obj;
      assert.deepEqual(icsp.spec, { repositoryDigestMirrors: MIRRORS });
      assert.equal(h.facts.clusterVersion, undefined, 'the api step is the one writer of the version fact');
      sim.api.clearRequests();
      assert.equal(await h.run(mirrorsStep), 'done');
      assert.deepEqual(writesIn(sim.api.requests), []);
    }));

  test('OpenShift 4.14 gets an IDMS; an ICSP of an earlier run goes and someone else\'s loses only our source', () =>
    withSim('4.14.12', { imageDigestMirrors: MIRRORS }, async (sim, h) => {
      sim.store.create(R.imageContentSourcePolicies, { apiVersion: 'operator.openshift.io/v1alpha1', kind: 'ImageContentSourcePolicy', metadata: { name: MIRROR_OBJECT_NAME }, spec: { repositoryDigestMirrors: MIRRORS } });
      sim.store.create(R.imageContentSourcePolicies, {
        apiVersion: 'operator.openshift.io/v1alpha1',
        kind: 'ImageContentSourcePolicy',
        metadata: { name: 'factory-mirrors' },
        spec: { repositoryDigestMirrors: [MIRRORS[0] && { source: MIRRORS[0].source, mirrors: ['factory.example.com/ocp/release'] }, { source: 'registry.redhat.io/ubi9', mirrors: ['factory.example.com/ubi9'] }] },
      });
      assert.equal(await h.run(mirrorsStep), 'applied');
      const idms = sim.store.get(R.imageDigestMirrorSets, MIRROR_OBJECT_NAME) as Obj;
      assert.deepEqual(idms.spec, { imageDigestMirrors: MIRRORS });
      assert.equal(sim.store.get(R.imageContentSourcePolicies, MIRROR_OBJECT_NAME), undefined);
      const factory = sim.store.get(R.imageContentSourcePolicies, 'factory-mirrors') as Obj;
      assert.deepEqual(factory.spec, { repositoryDigestMirrors: [{ source: 'registry.redhat.io/ubi9', mirrors: ['factory.example.com/ubi9'] }] });
      assert.ok(h.warnings.some((w) => /drain the node .* reload CRI-O; the node does not reboot/.test(w)));
      sim.api.clearRequests();
      assert.equal(await h.run(mirrorsStep), 'done');
      assert.deepEqual(writesIn(sim.api.requests), []);
    }));
});

describe('trust step', () => {
  test('one key per mirror host in host..port form, referenced from image.config; existing keys kept', async () => {
    const ssl = new OpensslWorkdir();
    const ca = ssl.rootCa('store42-registry-ca');
    try {
      await withSim('4.14.12', { imageDigestMirrors: MIRRORS, additionalTrustBundle: ca.certPem }, async (sim, h) => {
        assert.equal(await h.run(trustStep), 'applied');
        const image = sim.store.get(R.images, 'cluster') as Obj;
        assert.deepEqual(image.spec?.additionalTrustedCA, { name: TRUST_CONFIGMAP });
        const cm = sim.store.get(R.configMaps, TRUST_CONFIGMAP, 'openshift-config') as Obj;
        assert.deepEqual(Object.keys(cm.data ?? {}), ['registry.store42.example.com..8443']);
        assert.equal(cm.data?.['registry.store42.example.com..8443']?.trim(), ca.certPem.trim());
        sim.api.clearRequests();
        assert.equal(await h.run(trustStep), 'done');
        assert.deepEqual(writesIn(sim.api.requests), []);
      });
      await withSim('4.14.12', { imageDigestMirrors: MIRRORS, additionalTrustBundle: ca.certPem }, async (sim, h) => {
        sim.store.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'registry-cas', namespace: 'openshift-config' }, data: { 'corp.example.com': 'CORP-CA' } });
        const image = sim.store.get(R.images, 'cluster') as Obj;
        sim.store.update(R.images, { ...image, spec: { ...image.spec, additionalTrustedCA: { name: 'registry-cas' } } });
        assert.equal(await h.run(trustStep), 'applied');
        const cm = sim.store.get(R.configMaps, 'registry-cas', 'openshift-config') as Obj;
        assert.deepEqual(Object.keys(cm.data ?? {}).sort(), ['corp.example.com', 'registry.store42.example.com..8443']);
        assert.equal(cm.data?.['corp.example.com'], 'CORP-CA');
        assert.equal(sim.store.get(R.configMaps, TRUST_CONFIGMAP, 'openshift-config'), undefined);
      });
    } finally {
      ssl.cleanup();
    }
  });
});
