import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeAuthChanges, desiredDockerConfig, normalizeEntry } from '../../../../src/steps/pull-secret';
import { mergeTrustData, registryHost, trustHosts, trustKey } from '../../../../src/steps/trust';
import { desiredMirrors, mirrorKindFor, withoutSources } from '../../../../src/steps/mirrors';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('pull secret merge and replace', () => {
  const current = { auths: { 'quay.io': { auth: b64('factory:q'), email: 'f@example.com' }, 'registry.redhat.io': { auth: b64('factory:r') } } };

  test('merge adds new registries and overrides the ones the site names, keeping the rest', () => {
    const site = { auths: { 'registry.store42.example.com:8443': { auth: b64('store:s') }, 'quay.io': { auth: b64('site:q') } } };
    const merged = desiredDockerConfig(current, site, 'merge');
    assert.deepEqual(Object.keys(merged.auths ?? {}).sort(), ['quay.io', 'registry.redhat.io', 'registry.store42.example.com:8443']);
    assert.equal(merged.auths?.['quay.io']?.auth, b64('site:q'));
    assert.equal(merged.auths?.['registry.redhat.io']?.auth, b64('factory:r'));
    assert.deepEqual(describeAuthChanges(current, merged), { added: ['registry.store42.example.com:8443'], updated: ['quay.io'], removed: [] });
  });

  test('merge keeps other top-level fields of the existing config', () => {
    const merged = desiredDockerConfig({ ...current, credHelpers: { x: 'y' } }, { auths: {} }, 'merge');
    assert.deepEqual(merged.credHelpers, { x: 'y' });
  });

  test('replace makes the site auths the whole secret', () => {
    const site = { auths: { 'registry.store42.example.com': { auth: b64('store:s') } } };
    const replaced = desiredDockerConfig(current, site, 'replace');
    assert.deepEqual(replaced, { auths: { 'registry.store42.example.com': { auth: b64('store:s') } } });
    assert.deepEqual(describeAuthChanges(current, replaced), { added: ['registry.store42.example.com'], updated: [], removed: ['quay.io', 'registry.redhat.io'] });
  });

  test('username/password entries become auth (what CRI-O reads); auth entries stay as they are', () => {
    assert.deepEqual(normalizeEntry({ username: 'u', password: 'p:w', email: 'e' }), { email: 'e', auth: b64('u:p:w') });
    assert.deepEqual(normalizeEntry({ auth: b64('a:b') }), { auth: b64('a:b') });
  });

  test('the change description names registries only, never credentials', () => {
    const d = describeAuthChanges(current, desiredDockerConfig(current, { auths: { 'quay.io': { auth: b64('secret-user:secret-pw') } } }, 'merge'));
    assert.doesNotMatch(JSON.stringify(d), /secret|c2VjcmV0/);
  });
});

describe('registry CA trust', () => {
  test('keys are host or host..port (openshift-docs hostname[..port])', () => {
    assert.equal(trustKey('registry.example.com'), 'registry.example.com');
    assert.equal(trustKey('registry.example.com:8443'), 'registry.example.com..8443');
    assert.equal(trustKey('[fd00::1]:5000'), '[fd00::1]..5000');
    assert.equal(registryHost('registry.store42.example.com:8443/ocp/release'), 'registry.store42.example.com:8443');
    assert.equal(registryHost('Registry.Example.com'), 'registry.example.com');
  });

  test('hosts: the mirrors; without mirrors the pull secret registries; no wildcards; deduplicated', () => {
    const mirrors = [
      { mirrors: ['registry.store42.example.com:8443/ocp/release', 'registry.store42.example.com:8443/ocp/other'] },
      { mirrors: ['backup.example.com/ocp'] },
    ];
    assert.deepEqual(trustHosts(mirrors, ['quay.io']), ['backup.example.com', 'registry.store42.example.com:8443']);
    assert.deepEqual(trustHosts([], ['registry.store42.example.com:8443/ns', '*.example.com', 'quay.io']), ['quay.io', 'registry.store42.example.com:8443']);
    assert.deepEqual(trustHosts([], []), []);
  });

  test('merge keeps every existing key and sets ours', () => {
    const data = mergeTrustData({ 'other.example.com': 'OTHER', 'registry.example.com..8443': 'OLD' }, ['registry.example.com:8443'], 'NEW');
    assert.deepEqual(data, { 'other.example.com': 'OTHER', 'registry.example.com..8443': 'NEW' });
  });
});

describe('image mirrors', () => {
  test('IDMS from 4.13 on, ICSP below', () => {
    assert.equal(mirrorKindFor('4.12.30'), 'icsp');
    assert.equal(mirrorKindFor('4.13.0'), 'idms');
    assert.equal(mirrorKindFor('4.16.3'), 'idms');
    assert.equal(mirrorKindFor('5.0.0'), 'idms');
    assert.throws(() => mirrorKindFor('unknown'), /cannot read the cluster version/);
  });

  test('desiredMirrors copies the rules and takes mirrorSourcePolicy from another IDMS for the same source', () => {
    const rules = [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['m.example.com/ocp/release'] }, { source: 'quay.io/x', mirrors: ['m.example.com/x'] }];
    const others = [{ metadata: { name: 'factory' }, spec: { imageDigestMirrors: [{ source: 'quay.io/x', mirrors: ['f.example.com/x'], mirrorSourcePolicy: 'NeverContactSource' as const }] } }];
    assert.deepEqual(desiredMirrors(rules, others), [
      { source: 'quay.io/openshift-release-dev/ocp-release', mirrors: ['m.example.com/ocp/release'] },
      { source: 'quay.io/x', mirrors: ['m.example.com/x'], mirrorSourcePolicy: 'NeverContactSource' },
    ]);
  });

  test('withoutSources takes our sources out of someone else\'s list', () => {
    const list = [{ source: 'a', mirrors: ['m/a'] }, { source: 'b', mirrors: ['m/b'] }];
    assert.deepEqual(withoutSources(list, new Set(['a'])), [{ source: 'b', mirrors: ['m/b'] }]);
    assert.deepEqual(withoutSources(undefined, new Set(['a'])), []);
  });
});
