import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { coversHost, hasExactDnsNames, sanDnsNames, servingPairProblems, verifyChain } from '../../../src/certs/verify';
import { parseCertificates, splitCertificates } from '../../../src/certs/pem';
import { OpensslWorkdir, type Pem } from './openssl';

describe('certificate checks', () => {
  const ssl = new OpensslWorkdir();
  let root: Pem;
  let intermediate: Pem;
  let leaf: Pem;
  let wildcard: Pem;
  before(() => {
    root = ssl.rootCa('site-root');
    intermediate = ssl.signed('site-intermediate', root, { isCa: true });
    leaf = ssl.signed('api', intermediate, { dnsNames: ['api.sno1.store42.example.com'] });
    wildcard = ssl.signed('apps', root, { dnsNames: ['*.apps.sno1.store42.example.com'] });
  });
  after(() => ssl.cleanup());

  test('splitCertificates keeps order and ignores other blocks', () => {
    const bundle = `junk\n${leaf.certPem}${leaf.keyPem}${intermediate.certPem}`;
    const parts = splitCertificates(bundle);
    assert.equal(parts.length, 2);
    assert.equal(new X509Certificate(parts[0] as string).subject, 'CN=api.sno1.store42.example.com');
    assert.throws(() => parseCertificates('nothing', 'the API certificate'), /the API certificate contains no PEM "CERTIFICATE" block/);
  });

  test('SAN names, exact-name comparison and wildcard coverage (one label only)', () => {
    const w = new X509Certificate(wildcard.certPem);
    assert.deepEqual(sanDnsNames(w), ['*.apps.sno1.store42.example.com']);
    assert.ok(hasExactDnsNames(w, ['*.APPS.sno1.store42.example.com']));
    assert.ok(!hasExactDnsNames(w, ['*.apps.sno1.store42.example.com', 'x']));
    assert.ok(coversHost(w, 'console-openshift-console.apps.sno1.store42.example.com'));
    assert.ok(!coversHost(w, 'a.b.apps.sno1.store42.example.com'));
    assert.ok(!coversHost(w, 'apps.sno1.store42.example.com'));
    assert.ok(!coversHost(new X509Certificate(leaf.certPem), 'sno1.store42.example.com'));
  });

  test('verifyChain: through an intermediate to the root; a pinned intermediate; failures say why', () => {
    const l = new X509Certificate(leaf.certPem);
    const i = new X509Certificate(intermediate.certPem);
    const r = new X509Certificate(root.certPem);
    const now = new Date();
    assert.deepEqual(verifyChain(l, [i], [r], now), { ok: true });
    assert.deepEqual(verifyChain(l, [], [i], now), { ok: true });
    assert.deepEqual(verifyChain(l, [], [l], now), { ok: true });
    const noIntermediate = verifyChain(l, [], [r], now);
    assert.equal(noIntermediate.ok, false);
    assert.match(noIntermediate.problem ?? '', /\(issuer "CN=site-intermediate"\) is not signed by any trusted CA/);
    const other = new X509Certificate(ssl.rootCa('other').certPem);
    assert.equal(verifyChain(l, [i], [other], now).ok, false);
    const later = new Date(Date.now() + 400 * 86_400_000);
    assert.match(verifyChain(l, [i], [r], later).problem ?? '', /is not valid at/);
    assert.match(verifyChain(l, [i], [], now).problem ?? '', /no trusted CA/);
  });

  test('servingPairProblems: a good provided chain passes; each defect is named', () => {
    const now = new Date();
    const hosts = ['api.sno1.store42.example.com'];
    const chainPem = leaf.certPem + intermediate.certPem;
    const anchors = [new X509Certificate(root.certPem)];
    assert.deepEqual(servingPairProblems({ certPem: chainPem, keyPem: leaf.keyPem }, 'spec.certificates.api', { hosts, anchors, now }), []);

    const wrongKey = servingPairProblems({ certPem: chainPem, keyPem: wildcard.keyPem }, 'spec.certificates.api', { hosts, now });
    assert.equal(wrongKey.length, 1);
    assert.match(wrongKey[0] as string, /spec.certificates.api: the private key does not belong to the certificate/);

    const wrongHost = servingPairProblems({ certPem: chainPem, keyPem: leaf.keyPem }, 'x', { hosts: ['api.other.example.com'], now });
    assert.match(wrongHost.join('\n'), /does not cover api.other.example.com \(its DNS names: \[api.sno1.store42.example.com\]\)/);

    const untrusted = servingPairProblems({ certPem: leaf.certPem, keyPem: leaf.keyPem }, 'x', { hosts, anchors, now });
    assert.match(untrusted.join('\n'), /not signed by any trusted CA/);

    const expiring = servingPairProblems({ certPem: chainPem, keyPem: leaf.keyPem }, 'x', { hosts, now, minRemainingMs: 400 * 86_400_000 });
    assert.match(expiring.join('\n'), /expires soon/);

    const client = ssl.signed('client', root, { dnsNames: hosts, serverAuth: false });
    assert.match(servingPairProblems(client, 'x', { hosts, now }).join('\n'), /does not allow TLS server authentication/);

    const garbage = servingPairProblems({ certPem: 'nope', keyPem: 'SECRET-KEY-TEXT' }, 'x', { hosts, now });
    assert.match(garbage.join('\n'), /contains no PEM/);
    const badKey = servingPairProblems({ certPem: chainPem, keyPem: 'SECRET-KEY-TEXT' }, 'x', { hosts, now });
    assert.doesNotMatch(badKey.join('\n'), /SECRET-KEY-TEXT/);
    assert.match(badKey.join('\n'), /not a readable unencrypted PEM private key/);
  });
});
