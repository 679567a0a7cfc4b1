import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import * as asn1 from '../../../src/certs/asn1';

test('OIDs encode and decode (multi-byte arcs, first-arc packing)', () => {
  for (const oid of ['2.5.29.17', '1.2.840.113549.1.1.11', '1.2.840.10045.4.3.2', '1.3.6.1.5.5.7.3.1', '2.999.3']) {
    assert.equal(asn1.derToOid(asn1.oidToDer(oid)), oid);
  }
  assert.equal(Buffer.from(asn1.oidToDer('1.2.840.113549'), 'latin1').toString('hex'), '2a864886f70d');
});

test('a real certificate decodes and re-encodes to the same bytes', () => {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  assert.equal(Buffer.from(asn1.toDer(asn1.fromDer(spki)), 'latin1').compare(spki), 0);
  const long = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, 'x'.repeat(70_000));
  assert.equal(asn1.fromDer(asn1.toDer(long)).value, 'x'.repeat(70_000), 'three-byte lengths');
  assert.ok(new X509Certificate(Buffer.from(asn1.toDer(asn1.fromDer(Buffer.from(testCert(), 'base64'))), 'latin1')));
});

test('only DER is accepted: BER lengths, trailing bytes and truncation are errors', () => {
  assert.throws(() => asn1.fromDer(Buffer.from('3080020100 0000'.replace(/ /g, ''), 'hex')), /indefinite length/);
  assert.throws(() => asn1.fromDer(Buffer.from('30810100', 'hex')), /shortest form/);
  assert.throws(() => asn1.fromDer(Buffer.from('3003020100ff', 'hex')), /unparsed bytes/);
  assert.throws(() => asn1.fromDer(Buffer.from('300502', 'hex')), /runs past the end/);
  assert.throws(() => asn1.fromDer(Buffer.from('1f0100', 'hex')), /multi-byte tags/);
  assert.throws(() => asn1.derToOid('\x2a\x86'), /truncated/);
});

test('times: UTCTime through 2049, GeneralizedTime after', () => {
  assert.equal(asn1.utcTime(new Date('2026-11-22T10:05:09Z')), '261122100509Z');
  assert.equal(asn1.generalizedTime(new Date('2051-01-02T03:04:05Z')), '20510102030405Z');
});

/** A small self-signed certificate (openssl, EC P-256), base64 DER. */
function testCert(): string {
  return 'MIIBfTCCASOgAwIBAgIUBo0g6g1iCkOo0FnR+yr/CEFoMvwwCgYIKoZIzj0EAwIwFDESMBAGA1UEAwwJdGVzdC1jZXJ0MB4XDTI2MTEyMjA0NTU1M1oXDTM2MTExOTA0NTU1M1owFDESMBAGA1UEAwwJdGVzdC1jZXJ0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE1kIfRcJM0Lkf4TA6ogh5doqhkN+jdt+BI4z7cIZfH6PZR22nLAeev5Wm1wJ3X1fxyuPa8ilyv+8/6fh1H90D56NTMFEwHQYDVR0OBBYEFNbmhgCLL2okCB88QndJePzDmsElMB8GA1UdIwQYMBaAFNbmhgCLL2okCB88QndJePzDmsElMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAI/oG9scz1GF0T3Xjvbvc5JzM4Cni6obXUKXBluyT8U9AiAorma6FNWv+Zo1ZxsDJIfUvS6kyLUUBPFLDdZJiAtWcQ==';
}
