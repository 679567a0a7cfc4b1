import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyRoute, followUpOf, leftBecause, recreatable, HOST_GENERATED_ANNOTATION, type Route, type RoutePolicy } from '../../../../src/steps/domain/routes';
import { OpensslWorkdir } from '../../certs/openssl';
import { clusterBlockers, poolBlockers, rolloutStarted, type ClusterSnapshot } from '../../../../src/steps/settle/conditions';
import type { ExpectedRollout } from '../../../../src/steps/rollouts';
import { BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, CLIENT, cleanupCsrFiles, csrObject, opensslCsr } from '../../csr/make-csr';

const policy: RoutePolicy = {
  oldDomains: ['apps.sno1.factory.example.com', 'apps.sno1.store41.example.com'],
  newAppsDomain: 'apps.sno1.store42.example.com',
  componentRoutes: new Set(['openshift-console/console', 'openshift-authentication/oauth-openshift']),
};

const route = (ns: string, name: string, host: string | undefined, generated = false, extra: Partial<Route> = {}): Route => ({
  apiVersion: 'route.openshift.io/v1',
  kind: 'Route',
  metadata: { namespace: ns, name, uid: 'u1', resourceVersion: '7', creationTimestamp: new Date(0), ...(generated ? { annotations: { [HOST_GENERATED_ANNOTATION]: 'true', keep: 'me' } } : {}) },
  spec: { ...(host ? { host } : {}), to: { kind: 'Service', name } },
  status: { ingress: [] },
  ...extra,
});

describe('route classification', () => {
  test('generated hosts on an old apps domain are re-created', () => {
    const d = classifyRoute(route('shop', 'web', 'web-shop.apps.sno1.factory.example.com', true), policy);
    assert.equal(d.action, 'recreate');
  });

  test('explicit hosts on an old apps domain keep their name under the new one (also a previous appsDomain)', () => {
    assert.deepEqual(
      { ...classifyRoute(route('shop', 'pay', 'pay.apps.sno1.factory.example.com'), policy) },
      { key: 'shop/pay', host: 'pay.apps.sno1.factory.example.com', action: 'rewrite', newHost: 'pay.apps.sno1.store42.example.com', reason: 'explicit host on an old apps domain' },
    );
    assert.equal(classifyRoute(route('shop', 'a', 'a.b.apps.sno1.store41.example.com'), policy).newHost, 'a.b.apps.sno1.store42.example.com');
  });

  test('left alone: outside the old domains, already moved, component routes, subdomain routes, a look-alike suffix', () => {
    assert.equal(classifyRoute(route('shop', 'ext', 'shop.corp.example.com'), policy).action, 'keep');
    assert.equal(classifyRoute(route('shop', 'new', 'new-shop.apps.sno1.store42.example.com', true), policy).action, 'keep');
    assert.equal(classifyRoute(route('openshift-console', 'console', 'console-openshift-console.apps.sno1.factory.example.com', true), policy).action, 'keep');
    assert.equal(classifyRoute(route('shop', 'sub', undefined), policy).action, 'keep');
    assert.equal(classifyRoute(route('shop', 'evil', 'xapps.sno1.factory.example.com'), policy).action, 'keep');
    assert.equal(classifyRoute(route('shop', 'bare', 'apps.sno1.factory.example.com'), policy).action, 'keep');
  });

  describe('left on the old apps domain, with the reason (owners write hosts back; own certificates would not fit)', () => {
    const ssl = new OpensslWorkdir();
    after(() => ssl.cleanup());
    const ca = ssl.rootCa('route-ca');
    let n = 0;
    const certFor = (names: string[]) => ssl.signed(`route-${n++}`, ca, { dnsNames: names }).certPem;
    const withMeta = (r: Route, md: Partial<NonNullable<Route['metadata']>>): Route => ({ ...r, metadata: { ...r.metadata, ...md } });
    const withTls = (r: Route, tls: NonNullable<Route['spec']>['tls']): Route => ({ ...r, spec: { ...r.spec, tls } });
    const explicit = route('shop', 'pay', 'pay.apps.sno1.factory.example.com');
    const generated = route('shop', 'web', 'web-shop.apps.sno1.factory.example.com', true);
    const rows: { name: string; route: () => Route; action: string; reason?: RegExp }[] = [
      { name: 'an explicit host with an owner', route: () => withMeta(explicit, { ownerReferences: [{ apiVersion: 'x/v1', kind: 'Storefront', name: 'main', uid: 'u' }] }), action: 'leave', reason: /written by its owner Storefront main/ },
      { name: 'an explicit host managed by Helm', route: () => withMeta(explicit, { labels: { 'app.kubernetes.io/managed-by': 'Helm' } }), action: 'leave', reason: /written by Helm \(label app.kubernetes.io\/managed-by\)/ },
      { name: 'an explicit host managed by us moves', route: () => withMeta(explicit, { labels: { 'app.kubernetes.io/managed-by': 'sno-reconfigure' } }), action: 'rewrite' },
      { name: 'a generated host with an owner moves (the owner does not write the host)', route: () => withMeta(generated, { ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u' }] }), action: 'recreate' },
      { name: 'its own certificate for the old name only', route: () => withTls(explicit, { certificate: certFor(['pay.apps.sno1.factory.example.com']) }), action: 'leave', reason: /does not cover pay.apps.sno1.store42.example.com/ },
      { name: 'its own certificate that covers the new host moves', route: () => withTls(explicit, { certificate: certFor(['pay.apps.sno1.factory.example.com', 'pay.apps.sno1.store42.example.com']) }), action: 'rewrite' },
      { name: 'a generated host whose own wildcard covers the new apps domain moves', route: () => withTls(generated, { certificate: certFor(['*.apps.sno1.store42.example.com']) }), action: 'recreate' },
      { name: 'a generated host whose own certificate is for the old name', route: () => withTls(generated, { certificate: certFor(['web-shop.apps.sno1.factory.example.com']) }), action: 'leave', reason: /does not cover web-shop.apps.sno1.store42.example.com/ },
      { name: 'an external certificate the agent cannot check', route: () => withTls(explicit, { externalCertificate: { name: 'pay-tls' } }), action: 'leave', reason: /certificate of secret pay-tls/ },
    ];
    for (const row of rows) {
      test(row.name, () => {
        const d = classifyRoute(row.route(), policy);
        assert.equal(d.action, row.action, d.reason);
        if (row.reason) assert.match(d.reason, row.reason);
      });
    }
  });

  test('each route is moved at most once a run: one back on the old domain was reverted by its owner', () => {
    const d = classifyRoute(route('shop', 'pay', 'pay.apps.sno1.factory.example.com'), policy);
    assert.equal(followUpOf(d, {}), 'move');
    assert.equal(followUpOf(d, { moved: ['shop/pay'] }), 'reverted');
    assert.equal(leftBecause(d, { moved: ['shop/pay'] }), 'its owner reverted it');
    assert.equal(leftBecause(d, {}), undefined);
  });

  test('the target domain is never treated as old', () => {
    const p = { ...policy, oldDomains: [...policy.oldDomains, policy.newAppsDomain] };
    assert.equal(classifyRoute(route('shop', 'new', 'new-shop.apps.sno1.store42.example.com', true), p).action, 'keep');
  });

  test('recreatable drops host, status, server fields and the generated marker; keeps the rest', () => {
    const owner = { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'x' };
    const r = recreatable(route('shop', 'web', 'web-shop.apps.sno1.factory.example.com', true, {}));
    assert.deepEqual(r.metadata, { name: 'web', namespace: 'shop', annotations: { keep: 'me' } });
    assert.deepEqual(r.spec, { to: { kind: 'Service', name: 'web' } });
    assert.equal('status' in r, false);
    const withOwner = route('shop', 'web', 'h.apps.sno1.factory.example.com', true);
    withOwner.metadata = { ...withOwner.metadata, ownerReferences: [owner], labels: { app: 'web' } };
    assert.deepEqual(recreatable(withOwner).metadata?.ownerReferences, [owner]);
    assert.deepEqual(recreatable(withOwner).metadata?.labels, { app: 'web' });
  });
});

const cond = (type: string, status: string, reason = '', message = '', lastTransitionTime = '2026-01-01T00:00:00Z') => ({ type, status, reason, message, lastTransitionTime });
const co = (name: string, progressing = false, degraded = false, ltt = '2026-01-01T00:00:00Z') => ({
  metadata: { name },
  status: { conditions: [cond('Available', 'True'), cond('Progressing', progressing ? 'True' : 'False', progressing ? 'NodeInstaller' : 'AsExpected', progressing ? 'revision 8' : '', ltt), cond('Degraded', degraded ? 'True' : 'False', degraded ? 'SecretMissing' : '', degraded ? 'secret openshift-config/x not found' : '')] },
});
const pool = (target: string, current: string, updated = true) => ({
  metadata: { name: 'master', generation: 3 },
  spec: { configuration: { name: target } },
  status: { observedGeneration: 3, machineCount: 1, updatedMachineCount: updated ? 1 : 0, configuration: { name: current }, conditions: [cond('Updated', updated ? 'True' : 'False'), cond('Updating', updated ? 'False' : 'True'), cond('Degraded', 'False')] },
});
const settled = (): ClusterSnapshot => ({
  clusterVersion: { metadata: { name: 'version' }, status: { conditions: [cond('Available', 'True'), cond('Progressing', 'False')] } },
  operators: [co('kube-apiserver'), co('ingress')],
  pools: [pool('rendered-master-a', 'rendered-master-a')],
  nodes: [{ metadata: { name: 'sno1-node' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
  csrs: [],
});

describe('settle conditions', () => {
  test('a settled cluster has no blockers', () => {
    assert.deepEqual(clusterBlockers(settled(), { nodeName: 'sno1-node', rollouts: [] }), []);
  });

  test('progressing and degraded operators, unready node, updating pool are all named', () => {
    const snap = settled();
    snap.operators = [co('kube-apiserver', true), co('authentication', false, true)];
    snap.pools = [pool('rendered-master-b', 'rendered-master-a', false)];
    snap.nodes = [{ metadata: { name: 'sno1-node' }, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } }];
    const texts = clusterBlockers(snap, { nodeName: 'sno1-node', rollouts: [] }).map((b) => b.text);
    assert.ok(texts.includes('kube-apiserver (Progressing: NodeInstaller: revision 8)'), texts.join('\n'));
    assert.ok(texts.includes('authentication Degraded (SecretMissing: secret openshift-config/x not found)'));
    assert.ok(texts.some((t) => t.startsWith('machine-config pool master (Updating 0/1 updated to rendered-master-b)')));
    assert.ok(texts.some((t) => t.startsWith('node sno1-node not Ready (KubeletNotReady')));
    const degraded = clusterBlockers(snap, { nodeName: 'sno1-node', rollouts: [] }).find((b) => b.degraded);
    assert.deepEqual(degraded?.degraded, { name: 'cluster operator authentication', message: 'SecretMissing: secret openshift-config/x not found' });
  });

  test('a pool whose status lags its generation or target config is not updated', () => {
    const p = pool('rendered-master-b', 'rendered-master-b');
    assert.deepEqual(poolBlockers(p), []);
    assert.equal(poolBlockers({ ...p, metadata: { name: 'master', generation: 4 } }).length, 1);
    assert.equal(poolBlockers(pool('rendered-master-b', 'rendered-master-a')).length, 1);
  });

  test('expected rollouts count as started only when their baseline moved', () => {
    const r: ExpectedRollout = { id: 'co/kube-apiserver', kind: 'clusteroperator', name: 'kube-apiserver', reason: 'APIServer namedCertificates', step: 'domain', baseline: 'False@2026-01-01T00:00:00Z', recordedAt: '' };
    const snap = settled();
    assert.equal(rolloutStarted(r, snap), false);
    assert.equal(clusterBlockers(snap, { rollouts: [r] }).some((b) => b.notStarted?.id === 'co/kube-apiserver'), true);
    snap.operators = [co('kube-apiserver', false, false, '2026-01-01T00:09:00Z')];
    assert.equal(rolloutStarted(r, snap), true);
    const m: ExpectedRollout = { id: 'mcp/master', kind: 'machineconfigpool', name: 'master', reason: 'pull secret', step: 'pull-secret', baseline: 'rendered-master-a', recordedAt: '' };
    assert.equal(rolloutStarted(m, settled()), false);
    const moved = settled();
    moved.pools = [pool('rendered-master-b', 'rendered-master-b')];
    assert.equal(rolloutStarted(m, moved), true);
  });
});

describe('settle and pending CSRs', () => {
  after(() => cleanupCsrFiles());
  const expectedNode = { name: 'sno1-node', addresses: ['192.168.111.20'], nodeExists: true };

  test('a pending CSR of this node the policy would approve blocks; another node\'s, or a decided one, does not', () => {
    const usages = ['digital signature', 'client auth'];
    const ours = csrObject(opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1-node' }), { name: 'csr-ours', signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages });
    const other = csrObject(opensslCsr({ subject: '/O=system:nodes/CN=system:node:intruder' }), { name: 'csr-other', signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages });
    const approved = csrObject(opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1-node' }), { name: 'csr-done', signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages, conditions: [{ type: 'Approved', status: 'True' }] });
    const snap = settled();
    snap.csrs = [other, approved];
    assert.deepEqual(clusterBlockers(snap, { nodeName: 'sno1-node', expectedNode, rollouts: [] }), []);
    snap.csrs = [ours, other, approved];
    assert.deepEqual(clusterBlockers(snap, { nodeName: 'sno1-node', expectedNode, rollouts: [] }).map((b) => b.text), ['CSR csr-ours of node sno1-node waiting for approval']);
  });

  test('a pending CSR the kubelet replaced with a newer approved and issued one of the same kind does not block', () => {
    const usages = ['digital signature', 'client auth'];
    const subject = '/O=system:nodes/CN=system:node:sno1-node';
    const base = { signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages };
    const abandoned = csrObject(opensslCsr({ subject }), { ...base, name: 'csr-abandoned', created: '2025-01-01T10:05:00Z' });
    const issued = { conditions: [{ type: 'Approved', status: 'True' }], certificate: Buffer.from('issued').toString('base64') };
    const newer = csrObject(opensslCsr({ subject }), { ...base, ...issued, name: 'csr-newer', created: '2025-01-01T10:20:00Z' });
    const older = csrObject(opensslCsr({ subject }), { ...base, ...issued, name: 'csr-older', created: '2025-01-01T10:00:00Z' });
    const snap = settled();
    snap.csrs = [abandoned, newer];
    assert.deepEqual(clusterBlockers(snap, { nodeName: 'sno1-node', expectedNode, rollouts: [] }), []);
    // An issued CSR older than the pending one does not replace it: the pending one still blocks.
    snap.csrs = [abandoned, older];
    assert.deepEqual(clusterBlockers(snap, { nodeName: 'sno1-node', expectedNode, rollouts: [] }).map((b) => b.text), ['CSR csr-abandoned of node sno1-node waiting for approval']);
  });
});
