// Site-config signing keys installed at the factory (DESIGN.md section 4: Ed25519 or ECDSA P-256 public keys in
// TRUSTED_KEYS_DIR/*.pem). A MachineConfig is readable by every cluster admin and lands in etcd twice, so a
// private key passed here by mistake is refused, never embedded.
import { createPublicKey } from 'node:crypto';
import * as path from 'node:path';
import { TRUSTED_KEYS_DIR } from '../paths';

export class TrustedKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrustedKeyError';
  }
}

export interface TrustedKey {
  /** Node path: TRUSTED_KEYS_DIR/<name>.pem */
  nodePath: string;
  /** Normalized SPKI PEM. */
  pem: string;
  algorithm: 'ed25519' | 'ecdsa-p256';
}

/** The file name on the node: the source's base name, reduced to characters safe in a path. */
export function trustedKeyName(sourcePath: string): string {
  const base = path.basename(sourcePath).replace(/\.(pem|pub|key)$/i, '').replace(/\.pub$/i, '');
  const safe = base.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '');
  return safe || 'site-config-key';
}

export function parseTrustedKey(sourcePath: string, text: string): TrustedKey {
  const where = `--trusted-key ${sourcePath}`;
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text)) {
    throw new TrustedKeyError(`${where}: this is a PRIVATE key. Only the public key belongs on the node; extract it with \`openssl pkey -in KEY -pubout -out site-signing.pub.pem\` and keep the private key off the node.`);
  }
  if (!/-----BEGIN PUBLIC KEY-----/.test(text)) {
    throw new TrustedKeyError(`${where}: expected a PEM public key ("-----BEGIN PUBLIC KEY-----", Ed25519 or ECDSA P-256)`);
  }
  let key;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch (e) {
    throw new TrustedKeyError(`${where}: not a readable public key (${(e as Error).message})`);
  }
  let algorithm: TrustedKey['algorithm'];
  if (key.asymmetricKeyType === 'ed25519') algorithm = 'ed25519';
  else if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') algorithm = 'ecdsa-p256';
  else {
    const detail = key.asymmetricKeyType === 'ec' ? `EC ${key.asymmetricKeyDetails?.namedCurve ?? 'unknown curve'}` : String(key.asymmetricKeyType);
    throw new TrustedKeyError(`${where}: ${detail} keys are not accepted; site-config signatures are Ed25519 or ECDSA P-256`);
  }
  const pem = key.export({ type: 'spki', format: 'pem' }).toString();
  return { nodePath: `${TRUSTED_KEYS_DIR}/${trustedKeyName(sourcePath)}.pem`, pem, algorithm };
}

/** Two sources with the same base name would overwrite each other on the node. */
export function checkDistinctKeyPaths(keys: readonly TrustedKey[], sources: readonly string[]): void {
  const seen = new Map<string, string>();
  keys.forEach((k, i) => {
    const prev = seen.get(k.nodePath);
    if (prev !== undefined) throw new TrustedKeyError(`--trusted-key ${sources[i]} and ${prev} would both be installed as ${k.nodePath}; rename one of them`);
    seen.set(k.nodePath, sources[i] ?? '');
  });
}
