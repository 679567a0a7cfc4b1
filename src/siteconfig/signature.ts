// Signed media (DESIGN.md section 4): when the node holds trusted public keys (factory-installed under
// /etc/sno-reconfigure/trusted-keys/*.pem, read through the Host), a site-config is accepted only with a valid
// detached signature `<file>.sig`: base64 of an Ed25519 or ECDSA P-256 (SHA-256) signature over the file's
// exact bytes — e.g. `openssl pkeyutl -sign -rawin -inkey key.pem -in site-config.yaml | base64 -w0` for
// Ed25519, or `openssl dgst -sha256 -sign key.pem site-config.yaml | base64 -w0` for ECDSA (DER). ECDSA
// signatures are accepted in both DER and IEEE-P1363 (r||s, 64 bytes, as WebCrypto and cloud KMS emit) encodings.
// A trusted-keys directory holding any *.pem file means signatures are required, even if no key in it is
// usable: a damaged key file must never switch verification off.
import { X509Certificate, createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { pathKindInWords, whyUnreadable, type Host } from '../host/host';
import { TRUSTED_KEYS_DIR, UNSIGNED_MEDIA_FILE } from '../paths';
import { pemBlocks } from './certificates';
import type { ValidationProblem } from './types';

export interface TrustedKey {
  /** Node path of the key file. */
  file: string;
  key: KeyObject;
  kind: 'ed25519' | 'ecdsa-p256';
}

export interface TrustedKeys {
  /** True when the node holds any *.pem under the trusted-keys directory: signatures are then required. */
  required: boolean;
  keys: TrustedKey[];
  /** Key files that cannot be used (reported as warnings; they never relax the requirement). */
  problems: ValidationProblem[];
}

/**
 * What this node accepts from site-config media, as the factory's MachineConfig set it up: signed media (its
 * trusted keys), or unsigned media — chosen with `--allow-unsigned-media`, or, on a node whose MachineConfig
 * recorded neither (rendered before the choice was required), merely left so.
 */
export type MediaTrust = { signed: true; keyFiles: string[] } | { signed: false; chosen: boolean };

export async function readMediaTrust(host: Host): Promise<MediaTrust> {
  // An unreadable directory counts as holding keys, as loadTrustedKeys does: fail closed.
  const keyFiles = await host.listDir(TRUSTED_KEYS_DIR).then((names) => names.filter((n) => n.endsWith('.pem')), () => ['(unreadable)']);
  if (keyFiles.length > 0) return { signed: true, keyFiles };
  return { signed: false, chosen: await host.exists(UNSIGNED_MEDIA_FILE) };
}

/** The media policy in one sentence, for `prepare` and `status`. */
export function mediaTrustLine(t: MediaTrust): string {
  if (t.signed) return `media must be signed by one of this node's trusted keys (${t.keyFiles.join(', ')} in ${TRUSTED_KEYS_DIR})`;
  return `unsigned media are accepted ${t.chosen ? '(the factory chose --allow-unsigned-media)' : 'though the factory never chose --allow-unsigned-media (no trusted keys on this node)'}; they may carry only the network, names, pull secret, digest mirrors, NTP and timeouts (anything else needs signed media)`;
}

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export async function loadTrustedKeys(host: Host): Promise<TrustedKeys> {
  let names: string[] = [];
  try {
    names = (await host.listDir(TRUSTED_KEYS_DIR)).filter((n) => n.endsWith('.pem'));
  } catch (e) {
    // An unreadable directory is treated as holding keys: fail closed.
    const info = await host.stat(TRUSTED_KEYS_DIR).catch(() => undefined);
    const why = info !== undefined && info.kind !== 'directory' ? `it is ${pathKindInWords(info)}, not a folder` : whyUnreadable(e);
    return { required: true, keys: [], problems: [{ path: TRUSTED_KEYS_DIR, message: `cannot be listed (${why}); signatures are required but no key can be used` }] };
  }
  const keys: TrustedKey[] = [];
  const problems: ValidationProblem[] = [];
  for (const name of names) {
    const file = `${TRUSTED_KEYS_DIR}/${name}`;
    let text: string;
    try {
      text = await host.readText(file);
    } catch {
      problems.push({ path: file, message: 'cannot be read' });
      continue;
    }
    const parsed = parseTrustedKey(text);
    if (typeof parsed === 'string') problems.push({ path: file, message: parsed });
    else keys.push({ file, ...parsed });
  }
  return { required: names.length > 0, keys, problems };
}

/**
 * Trusted keys given by the operator on a workstation (`validate --trusted-key FILE`): signatures are then
 * required, as on a node that holds these keys. A key that cannot be used is a problem, never a relaxation.
 */
export function trustedKeysFrom(files: readonly { file: string; pem: string }[]): TrustedKeys {
  const keys: TrustedKey[] = [];
  const problems: ValidationProblem[] = [];
  for (const { file, pem } of files) {
    const parsed = parseTrustedKey(pem);
    if (typeof parsed === 'string') problems.push({ path: file, message: parsed });
    else keys.push({ file, ...parsed });
  }
  return { required: true, keys, problems };
}

/** A public key (SPKI PEM, or a certificate carrying it), or why it cannot be used. */
export function parseTrustedKey(pem: string): { key: KeyObject; kind: TrustedKey['kind'] } | string {
  const { blocks } = pemBlocks(pem);
  const block = blocks[0];
  if (!block) return 'holds no PEM public key (-----BEGIN PUBLIC KEY-----)';
  if (/PRIVATE KEY$/.test(block.label)) return 'is a private key: only public keys belong on the node';
  let key: KeyObject;
  try {
    key = block.label === 'CERTIFICATE' ? new X509Certificate(block.text).publicKey : createPublicKey(block.text);
  } catch {
    return 'does not parse as a public key';
  }
  if (key.asymmetricKeyType === 'ed25519') return { key, kind: 'ed25519' };
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return { key, kind: 'ecdsa-p256' };
  return `is an unsupported key (${(key.asymmetricKeyType ?? 'unknown').toUpperCase()}${key.asymmetricKeyDetails?.namedCurve ? ` ${key.asymmetricKeyDetails.namedCurve}` : ''}): only Ed25519 and ECDSA P-256 keys are supported`;
}

/** Decodes the base64 text of a .sig file, or returns why it is not a signature. */
export function decodeSignature(text: string): Buffer | string {
  const compact = text.replace(/\s+/g, '');
  if (compact === '') return 'is empty';
  if (compact.length > 1024 || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact)) {
    return 'is not a base64-encoded signature';
  }
  return Buffer.from(compact, 'base64');
}

/** The trusted key that verifies `signature` over `data`, or undefined. */
export function verifyWithTrustedKeys(data: Uint8Array, signature: Buffer, keys: readonly TrustedKey[]): TrustedKey | undefined {
  for (const trusted of keys) {
    if (trusted.kind === 'ed25519') {
      if (verifies(() => verify(null, data, trusted.key, signature))) return trusted;
      continue;
    }
    // A DER signature is a SEQUENCE (0x30); IEEE-P1363 is r||s, 64 bytes for P-256. Either encoding is accepted.
    for (const dsaEncoding of ['der', 'ieee-p1363'] as const) {
      if (verifies(() => verify('sha256', data, { key: trusted.key, dsaEncoding }, signature))) return trusted;
    }
  }
  return undefined;
}

/** A malformed signature makes node:crypto throw rather than return false: both mean "does not verify". */
function verifies(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}
