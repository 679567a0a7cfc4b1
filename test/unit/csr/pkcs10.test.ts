import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import forge from 'node-forge';
import { CsrParseError, parseCsrPem, requestToPem } from '../../../src/csr/pkcs10';
import { formatIp, ipEqual, parseIp } from '../../../src/csr/ip';
import { cleanupCsrFiles, opensslCsr } from './make-csr';

after(() => cleanupCsrFiles());

describe('PKCS#10 parsing', () => {
  test('EC P-256 request: subject, key, SANs of every kind, requested key usages; signature verified', () => {
    const pem = opensslCsr({
      subject: '/C=US/O=system:nodes/OU=edge/CN=system:node:sno1',
      sans: ['DNS:sno1', 'IP:192.168.42.10', 'IP:fd00::10', 'email:ops@example.com', 'URI:spiffe://cluster/node', 'otherName:1.3.6.1.4.1.311.20.2.3;UTF8:u@corp'],
      addext: ['keyUsage=critical,digitalSignature,keyEncipherment', 'extendedKeyUsage=serverAuth,clientAuth', 'basicConstraints=CA:FALSE'],
    });
    const p = parseCsrPem(pem);
    assert.deepEqual(p.subject.commonNames, ['system:node:sno1']);
    assert.deepEqual(p.subject.organizations, ['system:nodes']);
    assert.deepEqual(p.subject.other, [{ type: 'C', value: 'US' }, { type: 'OU', value: 'edge' }]);
    assert.deepEqual(p.publicKey, { algorithm: 'EC', oid: '1.2.840.10045.2.1', curve: 'P-256' });
    assert.equal(p.signatureAlgorithm, 'ecdsa-with-SHA256');
    assert.equal(p.signatureValid, true);
    assert.deepEqual(p.sans.dns, ['sno1']);
    assert.deepEqual(p.sans.ip.map(formatIp), ['192.168.42.10', 'fd00::10']);
    assert.deepEqual(p.sans.email, ['ops@example.com']);
    assert.deepEqual(p.sans.uri, ['spiffe://cluster/node']);
    assert.deepEqual(p.sans.other, ['otherName']);
    assert.deepEqual(p.keyUsage, ['digitalSignature', 'keyEncipherment']);
    assert.deepEqual(p.extKeyUsage, ['serverAuth', 'clientAuth']);
    assert.equal(p.basicConstraintsCA, false);
    assert.deepEqual(p.extensionOids.sort(), ['2.5.29.15', '2.5.29.17', '2.5.29.19', '2.5.29.37']);
  });

  test('RSA request without extensions; UTF-8 subject values', () => {
    const p = parseCsrPem(opensslCsr({ subject: '/O=Société Générale/CN=nœud', key: 'rsa' }));
    assert.deepEqual(p.publicKey, { algorithm: 'RSA', oid: '1.2.840.113549.1.1.1', bits: 2048 });
    assert.equal(p.signatureAlgorithm, 'sha256WithRSAEncryption');
    assert.equal(p.signatureValid, true);
    assert.deepEqual(p.subject.organizations, ['Société Générale']);
    assert.deepEqual(p.subject.commonNames, ['nœud']);
    assert.deepEqual(p.sans, { dns: [], ip: [], email: [], uri: [], other: [] });
    assert.equal(p.keyUsage, undefined);
  });

  test("node-forge's own parser rejects the EC request this parser reads (why forge.asn1 is used)", () => {
    const pem = opensslCsr({ subject: '/CN=x' });
    assert.throws(() => forge.pki.certificationRequestFromPem(pem), /OID is not RSA/);
    assert.equal(parseCsrPem(pem).signatureValid, true);
  });

  test('requestToPem takes base64-of-PEM (API JSON) or PEM', () => {
    const pem = opensslCsr({ subject: '/CN=x' });
    assert.equal(requestToPem(Buffer.from(pem).toString('base64')), pem);
    assert.equal(requestToPem(pem), pem);
    assert.throws(() => requestToPem(undefined), CsrParseError);
  });

  test('every malformed input is a CsrParseError', () => {
    for (const bad of ['', 'junk', '-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----', '-----BEGIN CERTIFICATE REQUEST-----\nMIIBAAAA\n-----END CERTIFICATE REQUEST-----']) {
      assert.throws(() => parseCsrPem(bad), CsrParseError, JSON.stringify(bad));
    }
  });
});

describe('IP addresses', () => {
  test('parse and compare as addresses', () => {
    const eq = (a: string, b: string) => { const x = parseIp(a); const y = parseIp(b); return !!x && !!y && ipEqual(x, y); };
    assert.ok(eq('fd00::10', 'fd00:0:0:0:0:0:0:10'));
    assert.ok(eq('FD00::10', 'fd00:0000::0010'));
    assert.ok(eq('192.168.42.10', '::ffff:192.168.42.10'));
    assert.ok(eq('::ffff:c0a8:2a0a', '192.168.42.10'));
    assert.ok(eq('::', '0:0:0:0:0:0:0:0'));
    assert.ok(!eq('fd00::10', 'fd00::1'));
    assert.ok(!eq('10.0.0.1', '10.0.0.2'));
    assert.ok(!eq('::192.168.42.10', '192.168.42.10'), 'IPv4-compatible is not IPv4-mapped');
  });
  test('reject what is not an address', () => {
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1::2::3', 'fe80::1%eth0', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9', '192.168.42.10/24', 'host.example']) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });
  test('canonical text (RFC 5952)', () => {
    const f = (s: string) => formatIp(parseIp(s) as Buffer);
    assert.equal(f('fd00:0:0:0:0:0:0:10'), 'fd00::10');
    assert.equal(f('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
    assert.equal(f('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1');
    assert.equal(f('0:0:0:0:0:0:0:1'), '::1');
    assert.equal(f('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(f('1:0:0:0:0:0:0:0'), '1::');
  });
});
