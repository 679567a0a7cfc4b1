import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { desiredTagMirrors, repositoryOf, sourceCovers, tagPullWarning, uncoveredTagPulls } from '../../../../src/steps/mirrors';

describe('tag mirrors', () => {
  test('repositoryOf drops the tag or digest and completes Docker Hub short names', () => {
    assert.equal(repositoryOf('registry.redhat.io/redhat/redhat-operator-index:v4.14'), 'registry.redhat.io/redhat/redhat-operator-index');
    assert.equal(repositoryOf('registry.example.com:5000/ns/index'), 'registry.example.com:5000/ns/index');
    assert.equal(repositoryOf('registry.example.com:5000/ns/index:v1'), 'registry.example.com:5000/ns/index');
    assert.equal(repositoryOf(`quay.io/ns/index@sha256:${'a'.repeat(64)}`), 'quay.io/ns/index');
    assert.equal(repositoryOf('busybox:1.36'), 'docker.io/library/busybox');
    assert.equal(repositoryOf('operatorhubio/catalog:latest'), 'docker.io/operatorhubio/catalog');
    assert.equal(repositoryOf('localhost/index:v1'), 'localhost/index');
  });

  test('sourceCovers: the repository, a parent namespace or host, or a wildcard host above it', () => {
    const repo = 'registry.redhat.io/redhat/redhat-operator-index';
    for (const source of [repo, 'registry.redhat.io/redhat', 'registry.redhat.io', '*.redhat.io', 'Registry.Redhat.io/redhat']) assert.ok(sourceCovers(source, repo), source);
    for (const source of ['registry.redhat.io/red', 'registry.redhat.io/redhat/redhat-operator-index-v2', 'quay.io', '*.registry.redhat.io', 'redhat.io']) assert.ok(!sourceCovers(source, repo), source);
  });

  test('uncoveredTagPulls: tag-referenced images no source covers; digests and catalogs without an image are fine', () => {
    const catalogs = [
      { metadata: { name: 'redhat-operators' }, spec: { image: 'registry.redhat.io/redhat/redhat-operator-index:v4.14' } },
      { metadata: { name: 'pinned' }, spec: { image: `registry.redhat.io/redhat/pinned-index@sha256:${'b'.repeat(64)}` } },
      { metadata: { name: 'by-address' }, spec: {} },
      { metadata: { name: 'community' }, spec: { image: 'quay.io/community/index:latest' } },
    ];
    assert.deepEqual(uncoveredTagPulls(catalogs, [{ source: 'registry.redhat.io/redhat', mirrors: ['m.example.com/redhat'] }]), [{ name: 'community', image: 'quay.io/community/index:latest' }]);
    assert.deepEqual(uncoveredTagPulls(catalogs, []).map((c) => c.name), ['redhat-operators', 'community']);
    assert.equal(
      tagPullWarning({ name: 'redhat-operators', image: 'registry.redhat.io/redhat/redhat-operator-index:v4.14' }),
      'CatalogSource redhat-operators pulls registry.redhat.io/redhat/redhat-operator-index:v4.14 by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site',
    );
  });

  test('desiredTagMirrors: another mirror set\'s policy wins, else the one our ITMS already carries, else none', () => {
    const rules = [{ source: 'a.example.com/x', mirrors: ['m.example.com/x'] }, { source: 'a.example.com/y', mirrors: ['m.example.com/y'] }, { source: 'a.example.com/z', mirrors: ['m.example.com/z'] }];
    const ours = [{ source: 'a.example.com/x', mirrors: ['m.example.com/x'], mirrorSourcePolicy: 'NeverContactSource' as const }, { source: 'a.example.com/y', mirrorSourcePolicy: 'NeverContactSource' as const }];
    const idms = [{ source: 'a.example.com/y', mirrors: ['d.example.com/y'], mirrorSourcePolicy: 'AllowContactingSource' as const }];
    assert.deepEqual(desiredTagMirrors(rules, ours, [idms]), [
      { source: 'a.example.com/x', mirrors: ['m.example.com/x'], mirrorSourcePolicy: 'NeverContactSource' },
      { source: 'a.example.com/y', mirrors: ['m.example.com/y'], mirrorSourcePolicy: 'AllowContactingSource' },
      { source: 'a.example.com/z', mirrors: ['m.example.com/z'] },
    ]);
  });
});
