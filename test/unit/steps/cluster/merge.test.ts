import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { displacedEntries, mergeNamedCertificates, namedCertificatesWouldChange, type NamedCertificate } from '../../../../src/steps/domain/apiserver';
import { desiredComponentRoutes, ingressDiff, mergeComponentRoutes, type ComponentRouteSpec } from '../../../../src/steps/domain/ingress';
import { defaultCertificateTarget } from '../../../../src/steps/domain/ingress-controller';
import { domainNames, SECRETS } from '../../../../src/steps/domain/names';

const names = domainNames('sno1', 'store42.example.com');

describe('APIServer namedCertificates merge', () => {
  const userEntry: NamedCertificate = { names: ['oauth.corp.example.com'], servingCertificate: { name: 'corp-cert' } };
  const implicit: NamedCertificate = { servingCertificate: { name: 'implicit-names' } };

  test('adds ours after every entry of others, unchanged and in order', () => {
    const merged = mergeNamedCertificates([userEntry, implicit], SECRETS.api, { names: [names.api] });
    assert.deepEqual(merged, [userEntry, implicit, { names: ['api.sno1.store42.example.com'], servingCertificate: { name: 'sno-reconfigure-api-cert' } }]);
  });

  test('replaces our earlier entry (another domain) instead of adding a second one', () => {
    const old: NamedCertificate = { names: ['api.sno1.store41.example.com'], servingCertificate: { name: SECRETS.api } };
    const merged = mergeNamedCertificates([old, userEntry], SECRETS.api, { names: [names.api] });
    assert.equal(merged.length, 2);
    assert.deepEqual(merged[0], userEntry);
    assert.deepEqual(merged[1]?.names, [names.api]);
  });

  test('takes our name out of an entry of others (case-insensitive), drops it only when it had nothing else', () => {
    const shared: NamedCertificate = { names: ['API.sno1.store42.example.com', 'other.example.com'], servingCertificate: { name: 'shared' } };
    const only: NamedCertificate = { names: [names.api], servingCertificate: { name: 'only-ours' } };
    const merged = mergeNamedCertificates([shared, only], SECRETS.api, { names: [names.api] });
    assert.deepEqual(merged.map((e) => [e.servingCertificate.name, e.names]), [['shared', ['other.example.com']], [SECRETS.api, [names.api]]]);
    assert.deepEqual(displacedEntries([shared, only, userEntry], SECRETS.api, [names.api]), ['shared', 'only-ours']);
  });

  test('is idempotent: merging twice gives the same list and no change', () => {
    const once = mergeNamedCertificates([userEntry], SECRETS.api, { names: [names.api] });
    assert.deepEqual(mergeNamedCertificates(once, SECRETS.api, { names: [names.api] }), once);
    assert.equal(namedCertificatesWouldChange(once, SECRETS.api, { names: [names.api] }), false);
    assert.equal(namedCertificatesWouldChange([userEntry], SECRETS.api, { names: [names.api] }), true);
  });

  test('removes only ours when asked to (native mode)', () => {
    const ours: NamedCertificate = { names: [names.api], servingCertificate: { name: SECRETS.api } };
    assert.deepEqual(mergeNamedCertificates([userEntry, ours], SECRETS.api, undefined), [userEntry]);
    assert.equal(namedCertificatesWouldChange(undefined, SECRETS.api, undefined), false);
  });

  test('never adds a named certificate for api-int', () => {
    assert.throws(() => mergeNamedCertificates([], SECRETS.api, { names: ['api-int.sno1.store42.example.com'] }), /api-int/);
  });
});

describe('Ingress componentRoutes merge', () => {
  const ours = desiredComponentRoutes(names, { console: SECRETS.ingress, downloads: SECRETS.ingress, oauth: SECRETS.oauth });
  const userRoute: ComponentRouteSpec = { namespace: 'openshift-monitoring', name: 'grafana', hostname: 'grafana.corp.example.com', servingCertKeyPairSecret: { name: 'grafana-cert' } };

  test('the three routes with the default host patterns under the new apps domain', () => {
    assert.deepEqual(ours.map((r) => [r.namespace, r.name, r.hostname, r.servingCertKeyPairSecret?.name]), [
      ['openshift-console', 'console', 'console-openshift-console.apps.sno1.store42.example.com', SECRETS.ingress],
      ['openshift-console', 'downloads', 'downloads-openshift-console.apps.sno1.store42.example.com', SECRETS.ingress],
      ['openshift-authentication', 'oauth-openshift', 'oauth-openshift.apps.sno1.store42.example.com', SECRETS.oauth],
    ]);
  });

  test('keeps entries of others, replaces same namespace+name in place keeping their extra fields, appends new', () => {
    const oldConsole: ComponentRouteSpec = { namespace: 'openshift-console', name: 'console', hostname: 'console.factory.example.com', servingCertKeyPairSecret: { name: 'factory-console' }, labels: { tier: 'x' } };
    const merged = mergeComponentRoutes([userRoute, oldConsole], ours);
    assert.deepEqual(merged.map((r) => `${r.namespace}/${r.name}`), ['openshift-monitoring/grafana', 'openshift-console/console', 'openshift-console/downloads', 'openshift-authentication/oauth-openshift']);
    assert.deepEqual(merged[0], userRoute);
    assert.equal(merged[1]?.hostname, names.console);
    assert.deepEqual(merged[1]?.servingCertKeyPairSecret, { name: SECRETS.ingress });
    assert.deepEqual(merged[1]?.labels, { tier: 'x' });
    assert.deepEqual(mergeComponentRoutes(merged, ours), merged);
  });

  test('with nothing desired, removes only entries pointing at our secrets', () => {
    const merged = mergeComponentRoutes([userRoute, ...ours], []);
    assert.deepEqual(merged, [userRoute]);
  });

  test('ingressDiff: appsDomain and componentRoutes differences; never about spec.domain', () => {
    const current = { spec: { domain: 'apps.sno1.factory.example.com', componentRoutes: [userRoute] } };
    assert.deepEqual(ingressDiff(current, { appsDomain: names.appsDomain, componentRoutes: ours }), { appsDomain: true, componentRoutes: true });
    const done = { spec: { domain: 'apps.sno1.factory.example.com', appsDomain: names.appsDomain, componentRoutes: mergeComponentRoutes([userRoute], ours) } };
    assert.deepEqual(ingressDiff(done, { appsDomain: names.appsDomain, componentRoutes: ours }), { appsDomain: false, componentRoutes: false });
    assert.deepEqual(ingressDiff(done, { componentRoutes: ours }), { appsDomain: true, componentRoutes: false });
  });
});

describe('IngressController default certificate target', () => {
  test('ours when managed; back to generated only if the current one is ours', () => {
    assert.equal(defaultCertificateTarget(undefined, SECRETS.ingress), SECRETS.ingress);
    assert.equal(defaultCertificateTarget('corp-wildcard', SECRETS.ingress), SECRETS.ingress);
    assert.equal(defaultCertificateTarget(SECRETS.ingress, undefined), undefined);
    assert.equal(defaultCertificateTarget('corp-wildcard', undefined), 'corp-wildcard');
  });
});
