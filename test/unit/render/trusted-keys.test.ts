import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { checkDistinctKeyPaths, parseTrustedKey, trustedKeyName, TrustedKeyError } from '../../../src/render/trusted-keys';
import { TRUSTED_KEYS_DIR } from '../../../src/paths';

const pub = (k: { publicKey: { export(o: { type: 'spki'; format: 'pem' }): string | Buffer } }): string => k.publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('trusted keys', () => {
  test('Ed25519 and ECDSA P-256 public keys are installed under the trusted-keys directory', () => {
    const ed = parseTrustedKey('keys/Site Signing.pub.pem', pub(generateKeyPairSync('ed25519')));
    assert.equal(ed.algorithm, 'ed25519');
    assert.equal(ed.nodePath, `${TRUSTED_KEYS_DIR}/site-signing.pem`);
    assert.match(ed.pem, /^-----BEGIN PUBLIC KEY-----\n/);
    const ec = parseTrustedKey('/tmp/p256.pem', pub(generateKeyPairSync('ec', { namedCurve: 'prime256v1' })));
    assert.equal(ec.algorithm, 'ecdsa-p256');
    assert.equal(ec.nodePath, `${TRUSTED_KEYS_DIR}/p256.pem`);
  });

  test('a private key is refused and never echoed', () => {
    const priv = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    assert.throws(() => parseTrustedKey('signing.key', priv), (e: unknown) => {
      assert.ok(e instanceof TrustedKeyError);
      assert.match(e.message, /^--trusted-key signing\.key: this is a PRIVATE key\. .*openssl pkey -in KEY -pubout/);
      const body = priv.split('\n')[1] ?? '';
      assert.equal(e.message.includes(body), false, 'no key material in the message');
      return true;
    });
  });

  test('other key types and non-keys are refused with what is accepted', () => {
    assert.throws(() => parseTrustedKey('rsa.pem', pub(generateKeyPairSync('rsa', { modulusLength: 1024 }))), /rsa keys are not accepted; site-config signatures are Ed25519 or ECDSA P-256/);
    assert.throws(() => parseTrustedKey('p384.pem', pub(generateKeyPairSync('ec', { namedCurve: 'secp384r1' }))), /EC secp384r1 keys are not accepted/);
    assert.throws(() => parseTrustedKey('cert.pem', '-----BEGIN CERTIFICATE-----\nMII=\n-----END CERTIFICATE-----\n'), /expected a PEM public key/);
    assert.throws(() => parseTrustedKey('bad.pem', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n'), /not a readable public key/);
  });

  test('names are path-safe and must not collide', () => {
    assert.equal(trustedKeyName('../../etc/passwd'), 'passwd');
    assert.equal(trustedKeyName('.pem'), 'site-config-key');
    const k = pub(generateKeyPairSync('ed25519'));
    const a = parseTrustedKey('a/site.pem', k);
    const b = parseTrustedKey('b/site.pub', k);
    assert.throws(() => checkDistinctKeyPaths([a, b], ['a/site.pem', 'b/site.pub']), /would both be installed as .*site\.pem/);
  });
});
