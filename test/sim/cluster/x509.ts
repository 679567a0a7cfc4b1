// Certificate checks the simulated operators make before they use a secret, with node:crypto
// (X509Certificate parses RSA and ECDSA alike; node-forge cannot read EC keys, runtime-libs.md §5).
import { X509Certificate, createPrivateKey, createHash } from 'node:crypto';
import type { KubeObject } from '../../../src/cluster/types';

export interface TlsPair {
  certPem: string;
  keyPem: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[\s\S]*?-----END \1-----/g;

/** Every PEM block of the given type, in order (a chain is leaf first). */
export function pemBlocks(pem: string, type = 'CERTIFICATE'): string[] {
  return [...pem.matchAll(PEM_BLOCK)].filter((m) => m[1] === type).map((m) => `${m[0].trim()}\n`);
}

/**
 * What is wrong with a TLS pair, as the operators would say it (cluster-authentication-operator
 * customroute: the secret must have a parseable tls.key and a server certificate in tls.crt;
 * console-operator: type kubernetes.io/tls). undefined when the pair is usable.
 */
export function tlsPairProblem(pair: Partial<TlsPair>): string | undefined {
  if (!pair.certPem) return 'missing key tls.crt';
  if (!pair.keyPem) return 'missing key tls.key';
  const certs = pemBlocks(pair.certPem);
  if (certs.length === 0) return 'tls.crt: no PEM CERTIFICATE block';
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certs[0]!);
  } catch (e) {
    return `tls.crt: not a valid certificate (${(e as Error).message})`;
  }
  let key;
  try {
    key = createPrivateKey(pair.keyPem);
  } catch {
    return 'tls.key: not a valid private key';
  }
  if (!leaf.checkPrivateKey(key)) return 'tls.key does not match the certificate in tls.crt';
  if (Date.parse(leaf.validTo) < Date.now()) return `tls.crt: certificate expired at ${leaf.validTo}`;
  return undefined;
}

/** The TLS pair in a Secret (data is base64), or undefined parts when absent. */
export function secretTlsPair(secret: KubeObject | undefined): Partial<TlsPair> {
  const data = (secret?.data ?? {}) as Record<string, string>;
  const decode = (k: string) => (typeof data[k] === 'string' ? Buffer.from(data[k], 'base64').toString('utf8') : undefined);
  return { certPem: decode('tls.crt'), keyPem: decode('tls.key') };
}

/**
 * The problem with a Secret that should hold a kubernetes.io/tls pair; `where` names it in messages
 * (`secret "x" not found` matches the real API error wording the operators relay).
 */
export function tlsSecretProblem(secret: KubeObject | undefined, namespace: string, name: string): string | undefined {
  if (!secret) return `secrets "${name}" not found`;
  if (secret.type !== 'kubernetes.io/tls') return `secret ${namespace}/${name} is not of type "kubernetes.io/tls" (it is ${JSON.stringify(secret.type ?? 'Opaque')})`;
  const problem = tlsPairProblem(secretTlsPair(secret));
  return problem ? `secret ${namespace}/${name}: ${problem}` : undefined;
}

/** Whether the leaf certificate of `certPem` is valid for `host` (SAN DNS with wildcards, or IP). */
export function certCoversHost(certPem: string, host: string): boolean {
  const leafPem = pemBlocks(certPem)[0];
  if (!leafPem) return false;
  try {
    const leaf = new X509Certificate(leafPem);
    return /^[\d.]+$|:/.test(host) ? leaf.checkIP(host) !== undefined : leaf.checkHost(host, { subject: 'never' }) !== undefined;
  } catch {
    return false;
  }
}

/** Whether a namedCertificates-style name (leading wildcard allowed) matches a host. */
export function nameMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p.startsWith('*.')) {
    const dot = h.indexOf('.');
    return dot > 0 && h.slice(dot + 1) === p.slice(2);
  }
  return p === h;
}

export function sha256(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex');
}

export function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}
