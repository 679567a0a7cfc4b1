// Sealed files (issue 19): only the node whose key a file was sealed to opens it; any change to the container,
// a rename, or another node's key is refused with a sentence naming the reason; who a file is for is readable
// without any key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describeSealed, generateNodeKeyPair, keyFingerprint, openSealedFile, publicKeyOf, sealFile, SealedFileError } from '../../../src/siteconfig/sealed';

const secret = Buffer.from(JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from('store42:s3cr3t').toString('base64') } } }));
const node = generateNodeKeyPair();
const other = generateNodeKeyPair();

test('a sealed file opens with its node key only, under the name it was sealed as', () => {
  const sealed = sealFile(secret, 'pull-secret.json', node.publicKeyPem, 'store-0042');
  assert.ok(!sealed.includes(secret), 'the plaintext is not in the container');
  assert.ok(!sealed.toString().includes('s3cr3t'));
  assert.deepEqual(openSealedFile(sealed, 'pull-secret.json', node.privateKeyPem), secret);
  assert.deepEqual(openSealedFile(sealed, './pull-secret.json', node.privateKeyPem), secret, 'the same path written as ./');
  assert.deepEqual(describeSealed(sealed), { recipient: node.fingerprint, label: 'store-0042' });
  assert.equal(publicKeyOf(node.privateKeyPem).fingerprint, node.fingerprint);
  assert.match(node.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
  // Two sealings of the same file differ (fresh ephemeral key and nonce).
  assert.notDeepEqual(sealFile(secret, 'pull-secret.json', node.publicKeyPem), sealFile(secret, 'pull-secret.json', node.publicKeyPem));
});

test("another node's key is refused, naming both keys", () => {
  const sealed = sealFile(secret, 'pull-secret.json', node.publicKeyPem, 'store-0042');
  assert.throws(
    () => openSealedFile(sealed, 'pull-secret.json', other.privateKeyPem),
    (e: Error) => e instanceof SealedFileError && e.message === `is sealed for the node key ${node.fingerprint} (store-0042), and this node's key is ${other.fingerprint}: it was made for another node`,
  );
});

test('a renamed file (sealed as another field) and a re-addressed header are refused', () => {
  const sealed = sealFile(secret, 'pull-secret.json', node.publicKeyPem);
  assert.throws(() => openSealedFile(sealed, 'certs/api.key', node.privateKeyPem), /changed after it was sealed, or sealed under another name than certs\/api\.key/);
  const container = JSON.parse(sealed.toString()) as Record<string, string>;
  // Pointing the header at another key does not help whoever holds that key.
  const readdressed = Buffer.from(JSON.stringify({ ...container, recipient: other.fingerprint }));
  assert.throws(() => openSealedFile(readdressed, 'pull-secret.json', other.privateKeyPem), SealedFileError);
  const otherEphemeral = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!;
  const swapped = Buffer.from(JSON.stringify({ ...container, ephemeralKey: Buffer.from(otherEphemeral, 'base64url').toString('base64') }));
  assert.throws(() => openSealedFile(swapped, 'pull-secret.json', node.privateKeyPem), /changed after it was sealed/);
});

test('every single-byte change of the ciphertext is refused', () => {
  const sealed = sealFile(secret, 'pull-secret.json', node.publicKeyPem);
  const container = JSON.parse(sealed.toString()) as Record<string, string>;
  const body = Buffer.from(container.ciphertext!, 'base64');
  for (let i = 0; i < body.length; i += 7) {
    const flipped = Buffer.from(body);
    flipped[i] = flipped[i]! ^ 0x01;
    assert.throws(() => openSealedFile(Buffer.from(JSON.stringify({ ...container, ciphertext: flipped.toString('base64') })), 'pull-secret.json', node.privateKeyPem), SealedFileError, `byte ${i}`);
  }
  const nonce = Buffer.from(container.nonce!, 'base64');
  nonce[0] = nonce[0]! ^ 0x80;
  assert.throws(() => openSealedFile(Buffer.from(JSON.stringify({ ...container, nonce: nonce.toString('base64') })), 'pull-secret.json', node.privateKeyPem), SealedFileError);
});

test('what is not a sealed file, or not of this format, says so; a key of the wrong type is named', () => {
  assert.throws(() => describeSealed(Buffer.from('{"auths":{}}')), /is not a sealed file of a format this agent reads \(format undefined, expected sno-reconfigure-sealed\/v1\)/);
  assert.throws(() => describeSealed(Buffer.from('not json')), /is not a sealed file \(not the JSON container/);
  assert.throws(() => describeSealed(Buffer.from('{"format":"sno-reconfigure-sealed/v1","recipient":"x"}')), /is a damaged sealed file \(no ephemeralKey\)/);
  const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.throws(() => sealFile(secret, 'a', ed), /the node public key is ed25519, not X25519/);
  assert.equal(keyFingerprint(node.publicKeyPem), node.fingerprint);
});
