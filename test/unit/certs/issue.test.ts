import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { issueServingCertificate, randomSerialHex } from '../../../src/certs/issue';
import { CertificateError } from '../../../src/certs/pem';
import { sanDnsNames } from '../../../src/certs/verify';
import { OpensslWorkdir, type Pem } from './openssl';

describe('issueServingCertificate', () => {
  const ssl = new OpensslWorkdir();
  let lbSigner: Pem;
  let shortCa: Pem;
  before(() => {
    lbSigner = ssl.rootCa('kube-apiserver-lb-signer');
    shortCa = ssl.rootCa('ingress-operator@1622133677', { days: 30, subject: '/CN=ingress-operator@1622133677' });
  });
  after(() => ssl.cleanup());

  test('issues a leaf with exactly the SANs, server usages, a random positive 128-bit serial, AKI = signer SKI', () => {
    const issued = issueServingCertificate({ signer: lbSigner, dnsNames: ['api.sno1.store42.example.com'] });
    const leaf = new X509Certificate(issued.certPem);
    assert.deepEqual(sanDnsNames(leaf), ['api.sno1.store42.example.com']);
    assert.equal(leaf.subject, 'CN=api.sno1.store42.example.com');
    assert.equal(leaf.ca, false);
    assert.deepEqual(leaf.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(leaf.serialNumber.length, 32, 'serial is 16 bytes');
    assert.ok(parseInt(leaf.serialNumber.slice(0, 2), 16) < 0x80, 'serial is positive');
    const text = ssl.text(issued.certPem);
    assert.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment/);
    assert.match(text, /X509v3 Extended Key Usage:\s+TLS Web Server Authentication/);
    assert.match(text, /Public-Key: \(2048 bit\)/);
    const ski = /X509v3 Subject Key Identifier:\s+([0-9A-F:]+)/.exec(ssl.text(lbSigner.certPem))?.[1];
    assert.ok(ski);
    assert.match(text, new RegExp(`X509v3 Authority Key Identifier:\\s+(keyid:)?${ski}`));
    // chains to the signer for the exact name, with OpenSSL's server purpose checks
    assert.match(ssl.verify(issued.certPem, lbSigner.certPem, 'api.sno1.store42.example.com'), /OK/);
    assert.throws(() => ssl.verify(issued.certPem, lbSigner.certPem, 'api.sno1.factory.example.com'));
    assert.ok(leaf.verify(new X509Certificate(lbSigner.certPem).publicKey));
    // the key is the certificate's and comes out as PKCS#1
    assert.match(issued.keyPem, /^-----BEGIN RSA PRIVATE KEY-----/);
    assert.ok(leaf.checkPrivateKey(createPrivateKey(issued.keyPem)));
    assert.equal(issued.caPem.trim(), new X509Certificate(lbSigner.certPem).toString().trim());
  });

  test('wildcard names and several SANs; the first name is the CN', () => {
    const names = ['*.apps.sno1.store42.example.com', '*.apps.sno1.factory.example.com'];
    const issued = issueServingCertificate({ signer: shortCa, dnsNames: names });
    const leaf = new X509Certificate(issued.certPem);
    assert.deepEqual(sanDnsNames(leaf), names);
    assert.equal(leaf.subject, 'CN=*.apps.sno1.store42.example.com');
    assert.match(ssl.verify(issued.certPem, shortCa.certPem, 'console-openshift-console.apps.sno1.store42.example.com'), /OK/);
  });

  test('validity: backdated at most an hour, never beyond the signer', () => {
    const now = new Date();
    const issued = issueServingCertificate({ signer: shortCa, dnsNames: ['a.example.com'], now });
    const leaf = new X509Certificate(issued.certPem);
    const ca = new X509Certificate(shortCa.certPem);
    assert.ok(new Date(leaf.validTo).getTime() <= new Date(ca.validTo).getTime());
    assert.ok(new Date(leaf.validFrom).getTime() >= new Date(ca.validFrom).getTime());
    assert.ok(now.getTime() - new Date(leaf.validFrom).getTime() <= 3600_000);
    const long = issueServingCertificate({ signer: lbSigner, dnsNames: ['a.example.com'], now });
    const days = (new Date(new X509Certificate(long.certPem).validTo).getTime() - now.getTime()) / 86_400_000;
    assert.ok(days > 824 && days <= 825.01, `825 days, got ${days}`);
  });

  test('every issue has a new key and serial', () => {
    const a = issueServingCertificate({ signer: lbSigner, dnsNames: ['a.example.com'] });
    const b = issueServingCertificate({ signer: lbSigner, dnsNames: ['a.example.com'] });
    assert.notEqual(a.serial, b.serial);
    assert.notEqual(a.keyPem, b.keyPem);
    const serials = new Set(Array.from({ length: 200 }, () => randomSerialHex()));
    assert.equal(serials.size, 200);
    for (const s of serials) assert.match(s, /^[4-7][0-9a-f]{31}$/);
  });

  test('picks the certificate that matches the key from a multi-certificate tls.crt', () => {
    const other = ssl.rootCa('other-ca');
    const signer = { certPem: other.certPem + lbSigner.certPem, keyPem: lbSigner.keyPem };
    const issued = issueServingCertificate({ signer, dnsNames: ['a.example.com'] });
    assert.match(ssl.verify(issued.certPem, lbSigner.certPem), /OK/);
  });

  test('an ECDSA signer issues a certificate that openssl verifies (ecdsa-with-SHA256)', () => {
    const ec = ssl.rootCa('ec-ca', { keyType: 'ec' });
    const issued = issueServingCertificate({ signer: ec, dnsNames: ['console.apps.sno1.store42.example.com'] });
    assert.match(ssl.verify(issued.certPem, ec.certPem), /OK/);
    assert.match(new X509Certificate(issued.certPem).subjectAltName ?? '', /DNS:console\.apps\.sno1\.store42\.example\.com/);
  });

  test('refuses unusable signers with a message naming the signer and no key material', () => {
    const ed = ssl.rootCa('ed-ca', { keyType: 'ed25519' });
    assert.throws(() => issueServingCertificate({ signer: ed, dnsNames: ['a'], signerName: 'ns/ed-signer' }), (e: Error) => e instanceof CertificateError && /ns\/ed-signer has a ed25519 key; only RSA and ECDSA/.test(e.message));
    const mismatched = { certPem: lbSigner.certPem, keyPem: shortCa.keyPem };
    assert.throws(() => issueServingCertificate({ signer: mismatched, dnsNames: ['a'], signerName: 'ns/x' }), /ns\/x: no certificate in tls.crt matches tls.key/);
    const expiring = ssl.rootCa('expiring', { days: 1 });
    assert.throws(() => issueServingCertificate({ signer: expiring, dnsNames: ['a'], signerName: 'ns/exp', now: new Date(Date.now() + 12 * 3600_000) }), /ns\/exp expires/);
    const leaf = ssl.signed('leaf-as-signer', lbSigner, { dnsNames: ['x.example.com'] });
    assert.throws(() => issueServingCertificate({ signer: leaf, dnsNames: ['a'] }), /not a CA/);
    try {
      issueServingCertificate({ signer: { certPem: lbSigner.certPem, keyPem: 'garbage' }, dnsNames: ['a'] });
      assert.fail('should throw');
    } catch (e) {
      assert.ok(e instanceof CertificateError);
      assert.doesNotMatch((e as Error).message, /garbage/);
    }
    assert.throws(() => issueServingCertificate({ signer: lbSigner, dnsNames: [] }), /at least one DNS name/);
  });
});
