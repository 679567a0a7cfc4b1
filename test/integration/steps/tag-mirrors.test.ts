// spec.imageTagMirrors against the simulator: an ImageTagMirrorSet on 4.14 (created, left alone, removed),
// refused on 4.12, its mirror hosts trusted, and tag-pulled CatalogSources named in the plan.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { ConfigRejectedError } from '../../../src/engine/step';
import { mirrorsStep, MIRROR_OBJECT_NAME } from '../../../src/steps/mirrors';
import { trustStep, TRUST_CONFIGMAP } from '../../../src/steps/trust';
import { readRollouts } from '../../../src/steps/rollouts';
import { withSim, writesIn } from './harness';
import { OpensslWorkdir } from '../../unit/certs/openssl';

type Obj = KubeObject & { spec?: Record<string, unknown>; data?: Record<string, string> };
const INDEX_SOURCE = 'registry.redhat.io/redhat';
const TAG_MIRRORS = [{ source: INDEX_SOURCE, mirrors: ['registry.store42.example.com:8443/redhat'] }];
const DIGEST_MIRRORS = [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['registry.store42.example.com:8443/ocp/release'] }];


describe('mirrors step: imageTagMirrors', () => {
  test('4.14: an ImageTagMirrorSet is created (taking the policy of someone else\'s ITMS, whose entry for our source goes); a second run writes nothing; dropping imageTagMirrors deletes it', () =>
    withSim('4.14.12', { imageTagMirrors: TAG_MIRRORS }, async (sim, h) => {
      sim.store.create(R.imageTagMirrorSets, {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ImageTagMirrorSet',
        metadata: { name: 'factory-tags' },
        spec: { imageTagMirrors: [{ source: INDEX_SOURCE, mirrors: ['factory.example.com/redhat'], mirrorSourcePolicy: 'NeverContactSource' }, { source: 'registry.redhat.io/ubi9', mirrors: ['factory.example.com/ubi9'] }] },
      });
      assert.equal(await h.run(mirrorsStep), 'applied');
      const itms = sim.store.get(R.imageTagMirrorSets, MIRROR_OBJECT_NAME) as Obj;
      assert.deepEqual(itms.spec, { imageTagMirrors: [{ ...TAG_MIRRORS[0], mirrorSourcePolicy: 'NeverContactSource' }] });
      assert.equal(itms.metadata?.labels?.['app.kubernetes.io/managed-by'], 'sno-reconfigure');
      assert.deepEqual((sim.store.get(R.imageTagMirrorSets, 'factory-tags') as Obj).spec, { imageTagMirrors: [{ source: 'registry.redhat.io/ubi9', mirrors: ['factory.example.com/ubi9'] }] });
      assert.equal(sim.store.get(R.imageDigestMirrorSets, MIRROR_OBJECT_NAME), undefined, 'no digest mirrors, no IDMS');

      const created = h.changes.find((c) => c.kind === 'ImageTagMirrorSet' && c.target === MIRROR_OBJECT_NAME);
      assert.equal(created?.action, 'create');
      assert.match(created?.detail ?? '', /^registry\.redhat\.io\/redhat → registry\.store42\.example\.com:8443\/redhat; the machine-config operator may drain the node and reload CRI-O; no reboot$/);
      assert.ok(h.warnings.some((w) => /image tag mirrors \(ImageTagMirrorSet\) makes the machine-config operator drain the node .* reload CRI-O; the node does not reboot/.test(w)), h.warnings.join('\n'));
      const rollouts = await readRollouts(h.contextFor('settle'));
      assert.deepEqual(rollouts.map((r) => [r.id, r.reason]), [['mcp/master', 'ImageTagMirrorSet sno-reconfigure']]);

      sim.api.clearRequests();
      assert.equal(await h.run(mirrorsStep), 'done');
      assert.deepEqual(writesIn(sim.api.requests), []);

      delete h.site.imageTagMirrors;
      assert.equal(await h.run(mirrorsStep), 'applied');
      assert.equal(sim.store.get(R.imageTagMirrorSets, MIRROR_OBJECT_NAME), undefined);
      assert.ok(sim.store.get(R.imageTagMirrorSets, 'factory-tags'), 'someone else\'s ITMS stays');
      assert.ok(h.changes.some((c) => c.kind === 'ImageTagMirrorSet' && c.action === 'delete' && /the site-config has no imageTagMirrors/.test(c.detail ?? '')));
      sim.api.clearRequests();
      assert.equal(await h.run(mirrorsStep), 'done');
      assert.deepEqual(writesIn(sim.api.requests), []);
    }));

  test('4.12: tag mirrors are refused, in plan and in the run, naming the field and the version; nothing is written', () =>
    withSim('4.12.30', { imageTagMirrors: TAG_MIRRORS, imageDigestMirrors: DIGEST_MIRRORS }, async (sim, h) => {
      const expected = (e: unknown) => e instanceof ConfigRejectedError && e.message === 'spec.imageTagMirrors needs OpenShift 4.13 or later (ImageTagMirrorSet); this cluster runs 4.12.30';
      await assert.rejects(mirrorsStep.plan(h.contextFor('mirrors')), expected);
      sim.api.clearRequests();
      await assert.rejects(h.run(mirrorsStep), expected);
      assert.deepEqual(writesIn(sim.api.requests), []);
      assert.equal(sim.store.get(R.imageContentSourcePolicies, MIRROR_OBJECT_NAME), undefined);
    }));
});

describe('plan: tag-pulled CatalogSources', () => {
  const leaves = (changes: { kind: string; target: string; action: string; detail?: string }[]) => changes.filter((c) => c.kind === 'CatalogSource').map((c) => `${c.action} ${c.target}: ${c.detail ?? ''}`);

  test('with digest mirrors only, each default catalog pulled by tag is named; the run warns with the same words', () =>
    withSim('4.14.12', { imageDigestMirrors: DIGEST_MIRRORS }, async (_sim, h) => {
      const planned = leaves(await mirrorsStep.plan(h.contextFor('mirrors')));
      assert.deepEqual(planned.sort(), [
        'leave openshift-marketplace/certified-operators: pulls registry.redhat.io/redhat/certified-operator-index:v4.14 by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site',
        'leave openshift-marketplace/community-operators: pulls registry.redhat.io/redhat/community-operator-index:v4.14 by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site',
        'leave openshift-marketplace/redhat-marketplace: pulls registry.redhat.io/redhat/redhat-marketplace-index:v4.14 by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site',
        'leave openshift-marketplace/redhat-operators: pulls registry.redhat.io/redhat/redhat-operator-index:v4.14 by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site',
      ]);
      assert.equal(await h.run(mirrorsStep), 'applied');
      assert.ok(h.warnings.includes('CatalogSource redhat-operators pulls registry.redhat.io/redhat/redhat-operator-index:v4.14 by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site'), h.warnings.join('\n'));
    }));

  test('a tag mirror covering the index repositories, or a catalog pinned by digest, is not named; no mirrors at all, no check', () =>
    withSim('4.14.12', { imageTagMirrors: [{ source: 'registry.redhat.io/redhat/redhat-operator-index', mirrors: ['registry.store42.example.com:8443/redhat/redhat-operator-index'] }] }, async (sim, h) => {
      for (const name of ['certified-operators', 'community-operators']) sim.store.delete(R.catalogSources, name, 'openshift-marketplace');
      const market = sim.store.get(R.catalogSources, 'redhat-marketplace', 'openshift-marketplace') as Obj;
      sim.store.update(R.catalogSources, { ...market, spec: { ...market.spec, image: `registry.redhat.io/redhat/redhat-marketplace-index@sha256:${'a'.repeat(64)}` } });
      assert.deepEqual(leaves(await mirrorsStep.plan(h.contextFor('mirrors'))), []);

      h.site.imageTagMirrors = [];
      sim.api.clearRequests();
      assert.deepEqual(leaves(await mirrorsStep.plan(h.contextFor('mirrors'))), []);
      assert.ok(!sim.api.requests.some((r) => r.path.includes('/catalogsources')), 'a site without mirrors does not read the catalogs');
    }));
});

describe('trust step: tag mirror hosts', () => {
  test('the registry CA is trusted for the hosts of imageTagMirrors mirrors too', async () => {
    const ssl = new OpensslWorkdir();
    const ca = ssl.rootCa('store42-registry-ca');
    try {
      await withSim('4.14.12', { imageDigestMirrors: DIGEST_MIRRORS, imageTagMirrors: [{ source: INDEX_SOURCE, mirrors: ['tags.store42.example.com/redhat'] }], additionalTrustBundle: ca.certPem }, async (sim, h) => {
        assert.equal(await h.run(trustStep), 'applied');
        const cm = sim.store.get(R.configMaps, TRUST_CONFIGMAP, 'openshift-config') as Obj;
        assert.deepEqual(Object.keys(cm.data ?? {}).sort(), ['registry.store42.example.com..8443', 'tags.store42.example.com']);
      });
    } finally {
      ssl.cleanup();
    }
  });
});
