// Files on the media encrypted to one node (issue 19): a stick lost in a back office must not leak the pull
// secret or a TLS private key. `prepare` gives each node an X25519 key pair at the factory; a workstation seals
// a referenced file X to the node's public key as X.sealed; only that node can open it.
//
// Construction, from Node's own crypto: an ephemeral X25519 key agrees a secret with the node's key; HKDF-SHA256
// (salt: both public keys; info: the format's label) derives an AES-256-GCM key; the authenticated data binds
// the file's path on the media, the recipient and the ephemeral key, so a sealed file cannot be renamed into
// another field's place or re-addressed. The container is one JSON object (docs/sealed-files.md): readable
// without the key — who it is for — and nothing else. Why not age: its Node libraries are pure-JS
// reimplementations several times the size of these lines, for the same X25519 + HKDF + AEAD.
import { createCipheriv, createDecipheriv, createHash, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { SEALED_SUFFIX } from './media-names';

export { SEALED_SUFFIX };
const FORMAT = 'sno-reconfigure-sealed/v1';

export class SealedFileError extends Error {
  override name = 'SealedFileError';
}

interface Container {
  format: string;
  /** Fingerprint of the node's public key. */
  recipient: string;
  /** Free text the sealer chose (the node's name), shown by validate. */
  label?: string;
  ephemeralKey: string;
  nonce: string;
  ciphertext: string;
}

function rawPublic(key: KeyObject): Buffer {
  return Buffer.from(key.export({ format: 'jwk' }).x ?? '', 'base64url');
}

/** "SHA256:…" of the raw 32-byte public key, as ssh-keygen shows key fingerprints. */
export function keyFingerprint(publicKeyPem: string | KeyObject): string {
  const key = typeof publicKeyPem === 'string' ? createPublicKey(publicKeyPem) : publicKeyPem;
  return `SHA256:${createHash('sha256').update(rawPublic(key)).digest('base64').replace(/=+$/, '')}`;
}

export function generateNodeKeyPair(): { privateKeyPem: string; publicKeyPem: string; fingerprint: string } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKeyPem, fingerprint: keyFingerprint(publicKey) };
}

/**
 * A damaged node key, in words for the technician and the office: every file of the node is untrusted input too
 * (a bad block, an edit), and a key that does not parse must give a sentence, never a stack trace (issue 36).
 */
export const DAMAGED_NODE_KEY = "cannot be opened: this node's own key for sealed files (node-key.pem, made by sno-reconfigure prepare at the factory) is damaged, so no sealed file can be opened on this node: the office must send the files unsealed (on signed media) or have the node key restored from the factory's records";

/** The same, for a node key file that is there but cannot be read (a folder, a named pipe): `why` in words. */
export const unreadableNodeKey = (why: string): string => DAMAGED_NODE_KEY.replace(') is damaged,', `) cannot be read (${why}),`);

/** This node's private key, or SealedFileError(DAMAGED_NODE_KEY, said of a sealed file) when the PEM is not an X25519 private key. */
export function nodePrivateKey(privateKeyPem: string): KeyObject {
  try {
    const key = createPrivateKey(privateKeyPem);
    if (key.asymmetricKeyType === 'x25519') return key;
  } catch {
    // Not PEM, truncated, or another kind of key: the same sentence.
  }
  throw new SealedFileError(DAMAGED_NODE_KEY);
}

/** The public half of a node key (PEM) and its fingerprint; SealedFileError when the key is damaged. */
export function publicKeyOf(privateKeyPem: string): { publicKeyPem: string; fingerprint: string } {
  const key = createPublicKey(nodePrivateKey(privateKeyPem));
  return { publicKeyPem: key.export({ type: 'spki', format: 'pem' }).toString(), fingerprint: keyFingerprint(key) };
}

function x25519Public(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new SealedFileError('the node public key is not a PEM public key');
  }
  if (key.asymmetricKeyType !== 'x25519') throw new SealedFileError(`the node public key is ${key.asymmetricKeyType ?? 'not an asymmetric key'}, not X25519 (the key sno-reconfigure prepare prints)`);
  return key;
}

function keyAndAad(shared: Buffer, ephemeral: Buffer, recipient: Buffer, relPath: string, fingerprint: string): { key: Buffer; aad: Buffer } {
  const key = Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephemeral, recipient]), FORMAT, 32));
  return { key, aad: Buffer.from(`${FORMAT}\0${relPath}\0${fingerprint}\0${ephemeral.toString('base64')}`) };
}

/** The path as the site-config names it, so `./a.json` and `a.json` seal alike. */
function normalized(relPath: string): string {
  return relPath.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}

export function sealFile(plaintext: Buffer, relPath: string, nodePublicKeyPem: string, label?: string): Buffer {
  const recipientKey = x25519Public(nodePublicKeyPem);
  const recipient = rawPublic(recipientKey);
  const fingerprint = keyFingerprint(recipientKey);
  const eph = generateKeyPairSync('x25519');
  const ephemeral = rawPublic(eph.publicKey);
  const { key, aad } = keyAndAad(diffieHellman({ privateKey: eph.privateKey, publicKey: recipientKey }), ephemeral, recipient, normalized(relPath), fingerprint);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  const container: Container = { format: FORMAT, recipient: fingerprint, ...(label ? { label } : {}), ephemeralKey: ephemeral.toString('base64'), nonce: nonce.toString('base64'), ciphertext: ciphertext.toString('base64') };
  return Buffer.from(`${JSON.stringify(container, null, 1)}\n`);
}

/** Who a sealed file is for, read without any key. Throws SealedFileError when it is not one. */
export function describeSealed(sealed: Buffer): { recipient: string; label?: string } {
  const c = parseContainer(sealed);
  return { recipient: c.recipient, ...(c.label ? { label: c.label } : {}) };
}

function parseContainer(sealed: Buffer): Container {
  let c: Partial<Container>;
  try {
    c = JSON.parse(sealed.toString('utf8')) as Partial<Container>;
  } catch {
    throw new SealedFileError('is not a sealed file (not the JSON container sno-reconfigure seal writes)');
  }
  if (c.format !== FORMAT) throw new SealedFileError(`is not a sealed file of a format this agent reads (format ${JSON.stringify(c.format)}, expected ${FORMAT})`);
  for (const field of ['recipient', 'ephemeralKey', 'nonce', 'ciphertext'] as const) {
    if (typeof c[field] !== 'string') throw new SealedFileError(`is a damaged sealed file (no ${field})`);
  }
  return c as Container;
}

/** The plaintext, for the node whose private key this is; SealedFileError for any other key or any change. */
export function openSealedFile(sealed: Buffer, relPath: string, nodePrivateKeyPem: string): Buffer {
  const c = parseContainer(sealed);
  const privateKey = nodePrivateKey(nodePrivateKeyPem);
  const own = createPublicKey(privateKey);
  const fingerprint = keyFingerprint(own);
  if (c.recipient !== fingerprint) throw new SealedFileError(`is sealed for the node key ${c.recipient}${c.label ? ` (${c.label})` : ''}, and this node's key is ${fingerprint}: it was made for another node`);
  const ephemeral = Buffer.from(c.ephemeralKey, 'base64');
  const body = Buffer.from(c.ciphertext, 'base64');
  if (ephemeral.length !== 32 || body.length < 16) throw new SealedFileError('is a damaged sealed file');
  try {
    const ephemeralKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: ephemeral.toString('base64url') }, format: 'jwk' });
    const { key, aad } = keyAndAad(diffieHellman({ privateKey, publicKey: ephemeralKey }), ephemeral, rawPublic(own), normalized(relPath), fingerprint);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(c.nonce, 'base64')).setAAD(aad);
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
  } catch {
    throw new SealedFileError(`could not be opened with this node's key: it was changed after it was sealed, or sealed under another name than ${normalized(relPath)}`);
  }
}
