import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import forge from 'node-forge';
import { coverageProblem, dnsNameMatches, dnsNames, pemBlocks, validateCertificatePair, validateTrustBundle } from '../../../src/siteconfig/certificates';
import { CORPUS_DIR } from './corpus';

const pki = (f: string) => readFileSync(path.join(CORPUS_DIR, '_pki', f), 'utf8');
const DAY = 86_400_000;

/** An RSA certificate with arbitrary dates (openssl 3.0 cannot back- or forward-date with x509 -req). */
function makeCert(opts: { sans: string[]; notBefore: Date; notAfter: Date; eku?: 'serverAuth' | 'clientAuth' }): { certPem: string; keyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '0a1b2c3d';
  cert.validity.notBefore = opts.notBefore;
  cert.validity.notAfter = opts.notAfter;
  cert.setSubject([{ name: 'commonName', value: opts.sans[0] ?? 'test' }]);
  cert.setIssuer([{ name: 'commonName', value: 'self' }]);
  cert.setExtensions([
    { name: 'subjectAltName', altNames: opts.sans.map((value) => ({ type: 2, value })) },
    { name: 'extKeyUsage', serverAuth: opts.eku !== 'clientAuth', clientAuth: opts.eku === 'clientAuth' },
  ]);
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  cert.sign(key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

const NOW = new Date();
const base = { certPath: 'spec.certificates.api.certFile', keyPath: 'spec.certificates.api.keyFile', clusterName: 'sno1', baseDomain: 'store42.example.com', now: NOW };

describe('RFC 6125 host matching (as Go applies it)', () => {
  test('exact and wildcard names', () => {
    assert.ok(dnsNameMatches('api.sno1.example.com', 'API.sno1.example.com'));
    assert.ok(dnsNameMatches('*.sno1.example.com', 'api.sno1.example.com'));
    assert.ok(dnsNameMatches('api.sno1.example.com.', 'api.sno1.example.com'));
    assert.ok(!dnsNameMatches('*.example.com', 'api.sno1.example.com'), 'a wildcard stands for one label only');
    assert.ok(!dnsNameMatches('*.sno1.example.com', 'sno1.example.com'), 'a wildcard never matches an empty label');
    assert.ok(!dnsNameMatches('a*.sno1.example.com', 'api.sno1.example.com'), 'partial wildcards are not honoured');
    assert.ok(!dnsNameMatches('*.com', 'example.com'));
    assert.ok(!dnsNameMatches('api.*.example.com', 'api.sno1.example.com'));
  });

  test('coverage of the API and the ingress names', () => {
    const api = new X509Certificate(pki('api.crt'));
    const apps = new X509Certificate(pki('apps.crt'));
    assert.deepEqual(dnsNames(api), ['api.sno1.store42.example.com', 'api-int.sno1.store42.example.com']);
    assert.equal(coverageProblem(api, 'api', 'sno1', 'store42.example.com'), undefined);
    assert.equal(coverageProblem(apps, 'ingress', 'sno1', 'store42.example.com'), undefined);
    assert.match(coverageProblem(api, 'ingress', 'sno1', 'store42.example.com')!, /does not cover \*\.apps\.sno1\.store42\.example\.com/);
    assert.match(coverageProblem(apps, 'api', 'sno1', 'store42.example.com')!, /does not cover api\.sno1/);
    assert.match(coverageProblem(api, 'api', 'sno2', 'store42.example.com')!, /does not cover api\.sno2/);
  });
});

describe('certificate pairs', () => {
  test('a committed valid pair with its chain passes', () => {
    const f = validateCertificatePair({ ...base, certPem: pki('api-chain.crt'), keyPem: pki('api.key'), role: 'api' });
    assert.deepEqual(f.errors, []);
    assert.deepEqual(f.warnings, []);
  });

  test('a chain in the wrong order is a warning', () => {
    const f = validateCertificatePair({ ...base, certPem: pki('api-chain-reversed.crt'), keyPem: pki('ca.key'), role: 'api' });
    assert.ok(f.warnings.some((w) => /did not issue certificate 1/.test(w.message)), JSON.stringify(f.warnings));
  });

  test('expiring within 30 days is a warning, not an error (RSA certificate made now)', () => {
    const c = makeCert({ sans: ['api.sno1.store42.example.com'], notBefore: new Date(NOW.getTime() - DAY), notAfter: new Date(NOW.getTime() + 10 * DAY) });
    const f = validateCertificatePair({ ...base, ...c, role: 'api' });
    assert.deepEqual(f.errors, []);
    assert.equal(f.warnings.length, 1);
    assert.match(f.warnings[0]!.message, /expires on .* \(in (9|10) days\)/);
    assert.equal(f.warnings[0]!.path, 'spec.certificates.api.certFile');
  });

  test('not yet valid is an error', () => {
    const c = makeCert({ sans: ['api.sno1.store42.example.com'], notBefore: new Date(NOW.getTime() + 5 * DAY), notAfter: new Date(NOW.getTime() + 400 * DAY) });
    const f = validateCertificatePair({ ...base, ...c, role: 'api' });
    assert.ok(f.errors.some((e) => /is not valid before/.test(e.message)), JSON.stringify(f.errors));
  });

  test('a trust bundle certificate expiring soon is a warning', () => {
    const c = makeCert({ sans: ['registry-ca'], notBefore: new Date(NOW.getTime() - DAY), notAfter: new Date(NOW.getTime() + 3 * DAY) });
    const { findings, certificates } = validateTrustBundle(pki('ca.crt') + c.certPem, 'spec.additionalTrustBundle', NOW);
    assert.equal(certificates.length, 2);
    assert.deepEqual(findings.errors, []);
    assert.equal(findings.warnings.length, 1);
    assert.match(findings.warnings[0]!.message, /certificate 2 \(CN=registry-ca\) expires on/);
  });

  test('without a cluster name, coverage is not judged', () => {
    const f = validateCertificatePair({ certPath: 'c', keyPath: 'k', baseDomain: 'store42.example.com', now: NOW, certPem: pki('other.crt'), keyPem: pki('other.key'), role: 'api' });
    assert.deepEqual(f.errors, []);
  });

  test('a key file with two keys or extra blocks is refused, without echoing key material', () => {
    const f = validateCertificatePair({ ...base, certPem: pki('api.crt'), keyPem: pki('api.key') + pki('apps.key') + pki('ca.crt'), role: 'api' });
    assert.ok(f.errors.some((e) => /holds 2 private keys/.test(e.message)));
    assert.ok(f.errors.some((e) => /other PEM blocks besides the private key/.test(e.message)));
    for (const e of f.errors) assert.ok(!e.message.includes('BEGIN'), e.message);
  });

  test('PEM block parsing', () => {
    assert.equal(pemBlocks(`x\n${pki('ca.crt')}y\n${pki('api.crt')}`).blocks.length, 2);
    assert.match(pemBlocks('-----BEGIN CERTIFICATE-----\nabc\n-----END PRIVATE KEY-----\n').problem!, /ends with END PRIVATE KEY/);
    assert.match(pemBlocks('-----BEGIN CERTIFICATE-----\nabc\n').problem!, /without its -----END/);
  });
});
