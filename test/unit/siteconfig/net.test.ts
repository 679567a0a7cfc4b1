import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dns1123LabelProblem, dns1123SubdomainProblem, hostnameProblem, ipFamily, ipFamilyWithZone, isMacAddress, normalizeMac, parseCidr, repositoryProblem } from '../../../src/siteconfig/net';
import { formatPath, subPath } from '../../../src/siteconfig/problems';
import { editDistance, nearestName, unknownFieldMessage } from '../../../src/siteconfig/suggest';

test('IP families, zones and CIDRs', () => {
  assert.equal(ipFamily('192.0.2.1'), 4);
  assert.equal(ipFamily('fd00::10'), 6);
  assert.equal(ipFamily('192.0.2.256'), undefined);
  assert.equal(ipFamily('fe80::1%eth0'), undefined);
  assert.equal(ipFamilyWithZone('fe80::1%eth0'), 6);
  assert.equal(ipFamilyWithZone('192.0.2.1%eth0'), undefined);
  assert.deepEqual(parseCidr('10.0.0.0/8'), { family: 4, address: '10.0.0.0', prefix: 8 });
  assert.deepEqual(parseCidr('::/0'), { family: 6, address: '::', prefix: 0 });
  assert.deepEqual(parseCidr('192.0.2.1'), { family: 4, address: '192.0.2.1', prefix: 32 });
  assert.match(parseCidr('10.0.0.0/33') as string, /expected 0-32/);
  assert.match(parseCidr('fd00::/129') as string, /expected 0-128/);
  assert.match(parseCidr('10.0.0.0/') as string, /invalid prefix/);
  assert.match(parseCidr('default') as string, /not an IP network/);
});

test('DNS-1123 labels and subdomains', () => {
  assert.equal(dns1123LabelProblem('sno1'), undefined);
  assert.match(dns1123LabelProblem('SNO1')!, /lower case \('sno1'\)/);
  assert.match(dns1123LabelProblem('-sno')!, /RFC 1123/);
  assert.match(dns1123LabelProblem('a'.repeat(64))!, /at most 63/);
  assert.equal(dns1123SubdomainProblem('store42.example.com'), undefined);
  assert.match(dns1123SubdomainProblem('store42.example.com.')!, /must not end with a dot/);
  assert.match(dns1123SubdomainProblem('a..b')!, /empty labels/);
  assert.match(dns1123SubdomainProblem(`${'a'.repeat(60)}.`.repeat(5).slice(0, -1))!, /at most 253/);
  assert.match(dns1123SubdomainProblem('store_42.example.com')!, /label 'store_42'/);
  assert.equal(hostnameProblem('API.Example.com.'), undefined);
  assert.match(hostnameProblem('192.0.2.1')!, /IP address/);
});

test('MAC addresses', () => {
  assert.ok(isMacAddress('52:54:00:12:34:56'));
  assert.ok(isMacAddress('52-54-00-AB-CD-EF'));
  assert.ok(!isMacAddress('52:54:00-12:34:56'));
  assert.ok(!isMacAddress('52:54:00:12:34'));
  assert.ok(isMacAddress(Array.from({ length: 20 }, () => 'a0').join(':')));
  assert.equal(normalizeMac(' 52-54-00-AB-CD-EF\n'), '52:54:00:ab:cd:ef');
});

test('registry references follow the ImageDigestMirrorSet patterns', () => {
  for (const ok of ['quay.io', 'quay.io/openshift-release-dev/ocp-release', 'registry.example.com:8443/ocp/release', 'localhost:5000/a_b/c.d', 'mirror.local/a__b/c-d']) {
    assert.equal(repositoryProblem(ok, { allowWildcard: false }), undefined, ok);
  }
  assert.equal(repositoryProblem('*.redhat.io', { allowWildcard: true }), undefined);
  assert.match(repositoryProblem('*.redhat.io', { allowWildcard: false })!, /wildcard/);
  assert.match(repositoryProblem('*redhat.io', { allowWildcard: true })!, /whole first label/);
  assert.match(repositoryProblem('quay.io/ocp/release:4.14', { allowWildcard: false })!, /tag/);
  assert.match(repositoryProblem('quay.io/ocp/release@sha256:abc', { allowWildcard: false })!, /digest/);
  assert.match(repositoryProblem('https://quay.io/ocp', { allowWildcard: false })!, /URL scheme/);
  assert.match(repositoryProblem('quay.io/OCP', { allowWildcard: false })!, /lower case/);
  assert.match(repositoryProblem('quay.io/', { allowWildcard: false })!, /must not end with/);
  assert.equal(repositoryProblem('registry.example.com:8443', { allowWildcard: false }), undefined);
});

test('field paths in the contract form', () => {
  assert.equal(formatPath(['spec', 'network', 'nmstate', 'interfaces', 0, 'ipv4', 'address', 0, 'ip']), 'spec.network.nmstate.interfaces[0].ipv4.address[0].ip');
  assert.equal(formatPath(['spec', 'pullSecret', 'auths', 'quay.io', 'auth']), 'spec.pullSecret.auths["quay.io"].auth');
  assert.equal(formatPath(['spec', 'routes', 'next-hop-address']), 'spec.routes.next-hop-address');
  assert.equal(subPath('spec.a', 0, 'b'), 'spec.a[0].b');
  assert.equal(subPath('', 'x'), 'x');
  assert.equal(subPath('spec.sha256', 'certs/api.crt'), 'spec.sha256["certs/api.crt"]');
});

test('nearest known field names', () => {
  assert.equal(editDistance('baseDomian', 'baseDomain'), 1);
  assert.equal(nearestName('baseDomian', ['clusterName', 'baseDomain', 'hostname']), 'baseDomain');
  assert.equal(nearestName('basedomain', ['baseDomain']), 'baseDomain');
  assert.equal(nearestName('pull-secret', ['pullSecret', 'pullSecretFile']), 'pullSecret');
  assert.equal(nearestName('zzzzzz', ['baseDomain', 'network']), undefined);
  assert.equal(unknownFieldMessage('verfy', ['nmstate', 'nmstateFile', 'verify']), "unknown field 'verfy' — did you mean 'verify'?");
  assert.match(unknownFieldMessage('foo', ['bar']), /known fields here: bar/);
});

test('names from other formats or from memory: "did you mean" where spelling distance cannot reach', () => {
  const spec = ['match', 'clusterName', 'hostname', 'baseDomain', 'network', 'pullSecret', 'pullSecretFile', 'pullSecretMode', 'imageDigestMirrors', 'imageTagMirrors', 'additionalTrustBundle', 'additionalTrustBundleFile', 'certificates', 'timeouts', 'sha256'];
  const rows: [string, string | undefined][] = [
    ['domain', 'baseDomain'],
    ['mirrors', 'imageDigestMirrors'],
    ['imageContentSources', 'imageDigestMirrors'],
    ['trustBundle', 'additionalTrustBundle'],
    ['trust_bundle', 'additionalTrustBundle'],
    ['caBundle', 'additionalTrustBundle'],
    ['tagMirrors', 'imageTagMirrors'],
    ['nodeName', 'hostname'],
    ['somethingElse', undefined],
  ];
  for (const [typed, meant] of rows) assert.equal(nearestName(typed, spec), meant, typed);
  assert.equal(nearestName('ping', ['nmstate', 'nmstateFile', 'verify']), 'verify', 'ping belongs under network.verify');
  assert.equal(nearestName('domain', ['ping', 'resolve']), undefined, 'only where the meant field is known');
});

test('huge unknown keys are shortened and not compared', () => {
  const key = 'k'.repeat(100_000);
  const message = unknownFieldMessage(key, ['baseDomain']);
  assert.ok(message.length < 200, message.slice(0, 100));
  assert.equal(nearestName(`${'baseDomain'}${'x'.repeat(80)}`, ['baseDomain']), undefined);
});
