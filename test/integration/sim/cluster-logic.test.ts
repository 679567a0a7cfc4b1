// The simulator's decision rules on their own: options validation, which machine-config changes reboot,
// what the kube-controller-manager signer accepts, SNI name matching, the simulated clock and rollouts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { resolveOptions, DEFAULT_DURATIONS } from '../../sim/cluster/options';
import { postConfigAction, type PostConfigAction } from '../../sim/cluster/operators/machine-config';
import { validateForSigner } from '../../sim/cluster/csr-signer';
import { buildCsr } from '../../sim/cluster/csr-builder';
import { nameMatches, tlsPairProblem } from '../../sim/cluster/x509';
import { mergeConditions } from '../../sim/cluster/operators/status';
import { SimClock } from '../../sim/cluster/clock';
import { Rollouts } from '../../sim/cluster/rollouts';
import { StateFile, newState } from '../../sim/cluster/state';
import { issueServerCert, sharedCa } from '../../sim/pki';

describe('options', () => {
  test('defaults describe a factory SNO; bad values name the option', () => {
    const o = resolveOptions();
    assert.equal(o.clusterName, 'sno1');
    assert.equal(o.nodeName, 'sno1-node');
    assert.equal(o.baseDomain, 'factory.example.com');
    assert.equal(o.version, '4.14.12');
    assert.equal(o.kubelet, 'masked');
    assert.deepEqual(o.durations, DEFAULT_DURATIONS);
    assert.throws(() => resolveOptions({ timeScale: 0 }), /timeScale: expected a positive number/);
    assert.throws(() => resolveOptions({ baseDomain: 'Not A Domain' }), /baseDomain: expected a DNS name/);
    assert.throws(() => resolveOptions({ nodeIPs: ['300.1.1.1'] }), /nodeIPs\[0\]: expected an IP address/);
    assert.throws(() => resolveOptions({ version: '4.14' }), /version: expected an OpenShift 4.y.z version/);
    assert.throws(() => resolveOptions({ durations: { nope: 1 } as never }), /durations.nope: unknown duration/);
    assert.throws(() => resolveOptions({ durations: { kubeApiserverRollout: 1000, kubeApiserverRestartOutage: 2000 } }), /must not exceed/);
    assert.throws(() => resolveOptions({ kubelet: 'on' as never }), /kubelet: expected masked, started or running/);
    assert.deepEqual(resolveOptions({ nodeIPs: ['fd00::10'] }).kubeletIPs, ['fd00::10']);
  });
});

describe('machine-config: what the MCD does for a change (pkg/daemon/update.go, drain.go)', () => {
  const base = { 'pull-secret': 'a', 'mc/99-master-ssh': 'c' };
  const rows: { name: string; before: Record<string, string>; after: Record<string, string>; action: PostConfigAction }[] = [
    { name: 'a pull-secret change: nothing', before: base, after: { ...base, 'pull-secret': 'z' }, action: 'none' },
    { name: 'a new IDMS: reload CRI-O without a drain (new digest-only mirrors are safe)', before: base, after: { ...base, 'idms/site': 'x' }, action: 'reload-crio' },
    { name: 'a new ICSP: the same', before: base, after: { ...base, 'icsp/site': 'x' }, action: 'reload-crio' },
    { name: 'a modified IDMS: drain and reload CRI-O, no reboot', before: { ...base, 'idms/site': 'x' }, after: { ...base, 'idms/site': 'y' }, action: 'drain-reload-crio' },
    { name: 'a deleted ICSP: drain and reload CRI-O', before: { ...base, 'icsp/site': 'x' }, after: base, action: 'drain-reload-crio' },
    { name: 'an ITMS (tag mirrors are not digest-only): drain and reload CRI-O', before: base, after: { ...base, 'itms/site': 'x' }, action: 'drain-reload-crio' },
    {
      // Issue 29: a new set that makes an already-mirrored source NeverContactSource blocks it in registries.conf.
      name: 'a new IDMS that blocks a source another set already mirrors: drain and reload CRI-O',
      before: { ...base, 'idms/factory': 'x', 'registry/quay.io/ocp': 'open' },
      after: { ...base, 'idms/factory': 'x', 'idms/site': 'y', 'registry/quay.io/ocp': 'blocked' },
      action: 'drain-reload-crio',
    },
    { name: 'a new IDMS for a new source, NeverContactSource: no drain', before: base, after: { ...base, 'idms/site': 'y', 'registry/quay.io/ocp': 'blocked' }, action: 'reload-crio' },
    { name: 'a MachineConfig change: reboot', before: base, after: { ...base, 'mc/99-master-ssh': 'z' }, action: 'reboot' },
    { name: 'a new MachineConfig with a new IDMS: reboot wins', before: base, after: { ...base, 'mc/50-new': 'z', 'idms/site': 'x' }, action: 'reboot' },
  ];
  for (const row of rows) test(row.name, () => assert.equal(postConfigAction(row.before, row.after), row.action));
});

describe('kube-controller-manager signer validation', () => {
  test('kubelet client: exactly O=system:nodes, CN system:node:, no SANs, the allowed usage sets', async () => {
    const ok = await buildCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    assert.equal(validateForSigner('kubernetes.io/kube-apiserver-client-kubelet', ok.csrPem, ['digital signature', 'client auth']), undefined);
    assert.equal(validateForSigner('kubernetes.io/kube-apiserver-client-kubelet', ok.csrPem, ['digital signature', 'key encipherment', 'client auth']), undefined);
    assert.match(validateForSigner('kubernetes.io/kube-apiserver-client-kubelet', ok.csrPem, ['client auth', 'server auth'])!, /usages did not match/);
    const masters = await buildCsr({ commonName: 'system:node:n1', organizations: ['system:nodes', 'system:masters'] });
    assert.match(validateForSigner('kubernetes.io/kube-apiserver-client-kubelet', masters.csrPem, ['digital signature', 'client auth'])!, /organization/);
    const san = await buildCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'] });
    assert.match(validateForSigner('kubernetes.io/kube-apiserver-client-kubelet', san.csrPem, ['digital signature', 'client auth'])!, /subjectAltNames are not allowed/);
    const rsa = await buildCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], keyType: 'rsa' });
    assert.equal(validateForSigner('kubernetes.io/kube-apiserver-client-kubelet', rsa.csrPem, ['digital signature', 'key encipherment', 'client auth']), undefined);
  });
  test('kubelet serving needs a DNS or IP SAN; the generic client signer signs any subject with client auth', async () => {
    const none = await buildCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
    assert.match(validateForSigner('kubernetes.io/kubelet-serving', none.csrPem, ['digital signature', 'server auth'])!, /DNS or IP subjectAltName is required/);
    const serving = await buildCsr({ commonName: 'system:node:n1', organizations: ['system:nodes'], ipAddresses: ['fd00::10'] });
    assert.equal(validateForSigner('kubernetes.io/kubelet-serving', serving.csrPem, ['digital signature', 'server auth']), undefined);
    const admin = await buildCsr({ commonName: 'system:admin', organizations: ['system:masters'] });
    assert.equal(validateForSigner('kubernetes.io/kube-apiserver-client', admin.csrPem, ['client auth']), undefined);
    assert.match(validateForSigner('kubernetes.io/kube-apiserver-client', admin.csrPem, ['server auth'])!, /missing required usages/);
    assert.match(validateForSigner('kubernetes.io/kube-apiserver-client', 'garbage', ['client auth'])!, /unable to parse csr/);
  });
});

describe('certificates and names', () => {
  test('namedCertificates names: exact or one leading wildcard label', () => {
    assert.equal(nameMatches('api.sno1.example.com', 'API.sno1.example.com.'), true);
    assert.equal(nameMatches('*.apps.sno1.example.com', 'console.apps.sno1.example.com'), true);
    assert.equal(nameMatches('*.apps.sno1.example.com', 'a.b.apps.sno1.example.com'), false);
    assert.equal(nameMatches('*.apps.sno1.example.com', 'apps.sno1.example.com'), false);
  });
  test('a TLS pair: present, parseable, key matching', () => {
    const ca = sharedCa('logic-test-ca');
    const a = issueServerCert(ca, { dnsNames: ['a.example.com'] });
    const b = issueServerCert(ca, { dnsNames: ['b.example.com'] });
    assert.equal(tlsPairProblem(a), undefined);
    assert.match(tlsPairProblem({ certPem: a.certPem, keyPem: b.keyPem })!, /does not match/);
    assert.match(tlsPairProblem({ certPem: 'nope', keyPem: a.keyPem })!, /no PEM CERTIFICATE block/);
    assert.match(tlsPairProblem({ certPem: a.certPem })!, /missing key tls.key/);
  });
  test('conditions keep lastTransitionTime while their status holds', () => {
    const first = mergeConditions([], { Ready: { status: 'True', reason: 'A', message: 'a' } }, 't1');
    const same = mergeConditions(first, { Ready: { status: 'True', reason: 'B', message: 'b' } }, 't2');
    assert.equal(same[0]!.lastTransitionTime, 't1');
    assert.equal(same[0]!.reason, 'B');
    const flipped = mergeConditions(same, { Ready: { status: 'False', reason: 'C', message: 'c' } }, 't3');
    assert.equal(flipped[0]!.lastTransitionTime, 't3');
  });
});

describe('simulated clock and rollouts', () => {
  test('simulated time runs 1/scale faster; milestones fire in order; a newer rollout supersedes', async () => {
    const clock = new SimClock(0.001);
    const file = StateFile.open(undefined, () => newState(clock.epoch));
    const rollouts = new Rollouts(clock, file);
    const fired: string[] = [];
    rollouts.on('op', (r, m) => fired.push(`${r.data.n}:${m}`));
    const t0 = clock.now();
    // Wide margins: a loaded machine delays timers by tens of real milliseconds.
    rollouts.start('op', 1_000_000, { n: 1 }, [{ name: 'early', offset: 100_000 }]);
    await clock.sleep(300_000);
    assert.deepEqual(fired, ['1:early']);
    rollouts.start('op', 60_000, { n: 2 });
    await new Promise<void>((resolve) => rollouts.on('op', (r, m) => (fired.push(`${r.data.n}:${m}`), m === 'done' && resolve())));
    assert.deepEqual(fired, ['1:early', '2:done'], 'the first rollout never completed');
    assert.ok(clock.now() - t0 >= 360_000);
    assert.deepEqual(rollouts.all(), []);
    clock.stop();
    await assert.rejects(clock.sleep(1), /stopped/);
  });

  test('a restored rollout fires the milestones it missed while down, in order', async () => {
    const clock = new SimClock(0.001);
    const file = StateFile.open(undefined, () => newState(clock.epoch));
    const now = clock.now();
    file.state.rollouts.push({ owner: 'op', startedAt: now - 90_000, endsAt: now + 10_000, milestones: [{ name: 'a', at: now - 50_000 }, { name: 'b', at: now - 10_000, fired: true }, { name: 'done', at: now + 10_000 }].sort((x, y) => x.at - y.at), data: {} });
    const rollouts = new Rollouts(clock, file);
    const fired: string[] = [];
    const done = new Promise<void>((resolve) => rollouts.on('op', (_r, m) => (fired.push(m), m === 'done' && resolve())));
    rollouts.resumeAll();
    await done;
    assert.deepEqual(fired, ['a', 'done']);
    clock.stop();
  });
});
