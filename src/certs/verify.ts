// Certificate checks with node:crypto's X509Certificate only: chain to a trust anchor, host-name coverage,
// validity, key match. Used to decide whether a stored certificate can be reused, to accept a site-provided
// one, and to judge what a TLS endpoint actually serves.
import type { X509Certificate } from 'node:crypto';
import { CertificateError, keyMatchesCertificate, parseCertificates, parsePrivateKey } from './pem';

const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';
const MAX_CHAIN_DEPTH = 8;

/** The DNS names of the subjectAltName extension. */
export function sanDnsNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName;
  if (!san) return [];
  const names: string[] = [];
  // Node quotes a value as a JSON string when it holds a comma or quote (CVE-2021-44532 fix).
  for (const m of san.matchAll(/DNS:("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const raw = m[1] ?? '';
    names.push((raw.startsWith('"') ? (JSON.parse(raw) as string) : raw).trim().toLowerCase());
  }
  return names;
}

/** RFC 6125 host check against the SAN DNS names (a leading `*` matches exactly one label). */
export function coversHost(cert: X509Certificate, host: string): boolean {
  return cert.checkHost(host.toLowerCase(), { subject: 'never', wildcards: true, partialWildcards: false, multiLabelWildcards: false }) !== undefined;
}

/** True when the SAN DNS names are exactly `names` (order and case ignored). */
export function hasExactDnsNames(cert: X509Certificate, names: string[]): boolean {
  const have = new Set(sanDnsNames(cert));
  const want = new Set(names.map((n) => n.toLowerCase()));
  return have.size === want.size && [...want].every((n) => have.has(n));
}

export function isValidAt(cert: X509Certificate, now: Date): boolean {
  return new Date(cert.validFrom).getTime() <= now.getTime() && now.getTime() <= new Date(cert.validTo).getTime();
}

/** Allows serverAuth: either no extendedKeyUsage extension at all, or one that lists serverAuth. */
export function allowsServerAuth(cert: X509Certificate): boolean {
  const eku = cert.keyUsage as string[] | undefined;
  return !eku || eku.length === 0 || eku.includes(SERVER_AUTH_OID);
}

/** One line for logs and errors: subject, SANs, issuer, expiry, fingerprint. Certificates are public. */
export function describeCertificate(cert: X509Certificate): string {
  const names = sanDnsNames(cert);
  return `subject "${cert.subject.replace(/\n/g, ', ')}", DNS names [${names.join(', ')}], issuer "${cert.issuer.replace(/\n/g, ', ')}", valid until ${new Date(cert.validTo).toISOString()}, sha256 ${cert.fingerprint256}`;
}

export interface ChainResult {
  ok: boolean;
  /** Why the chain does not verify (undefined when ok). */
  problem?: string;
}

function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * Builds a path leaf → intermediates → anchor and checks every signature and validity period. An anchor may
 * be a root or an intermediate (the expected chain of a site-provided certificate), or the leaf itself.
 */
export function verifyChain(leaf: X509Certificate, intermediates: X509Certificate[], anchors: X509Certificate[], now: Date): ChainResult {
  if (anchors.length === 0) return { ok: false, problem: 'no trusted CA certificate to verify against' };
  const anchorPrints = new Set(anchors.map((a) => a.fingerprint256));
  let current = leaf;
  const pool = intermediates.filter((c) => c.fingerprint256 !== leaf.fingerprint256);
  for (let depth = 0; depth < MAX_CHAIN_DEPTH; depth++) {
    if (!isValidAt(current, now)) {
      return { ok: false, problem: `certificate "${current.subject.replace(/\n/g, ', ')}" is not valid at ${now.toISOString()} (valid ${new Date(current.validFrom).toISOString()} to ${new Date(current.validTo).toISOString()})` };
    }
    if (anchorPrints.has(current.fingerprint256)) return { ok: true };
    const anchor = anchors.find((a) => signedBy(current, a));
    if (anchor) {
      if (!isValidAt(anchor, now)) return { ok: false, problem: `the CA "${anchor.subject.replace(/\n/g, ', ')}" expired on ${new Date(anchor.validTo).toISOString()}` };
      return { ok: true };
    }
    const next = pool.find((c) => signedBy(current, c));
    if (!next) {
      return { ok: false, problem: `certificate "${current.subject.replace(/\n/g, ', ')}" (issuer "${current.issuer.replace(/\n/g, ', ')}") is not signed by any trusted CA` };
    }
    pool.splice(pool.indexOf(next), 1);
    current = next;
  }
  return { ok: false, problem: `certificate chain longer than ${MAX_CHAIN_DEPTH}` };
}

export interface PairCheckOptions {
  /** Host names the certificate must serve (concrete names such as `console-openshift-console.apps.x`). */
  hosts: string[];
  /** When given, the chain must verify against these. */
  anchors?: X509Certificate[];
  now: Date;
  /** The certificate must stay valid at least this long. */
  minRemainingMs?: number;
}

/**
 * Everything wrong with a cert/key pair for serving `hosts` (empty = usable). `what` names the pair in
 * messages ("spec.certificates.api"). Messages describe certificates, never keys.
 */
export function servingPairProblems(pair: { certPem: string; keyPem: string }, what: string, opts: PairCheckOptions): string[] {
  let certs: X509Certificate[];
  try {
    certs = parseCertificates(pair.certPem, `${what} certificate`);
  } catch (e) {
    return [(e as Error).message];
  }
  const problems: string[] = [];
  const leaf = certs[0] as X509Certificate;
  try {
    const key = parsePrivateKey(pair.keyPem, `${what} key`);
    if (!keyMatchesCertificate(key, leaf)) problems.push(`${what}: the private key does not belong to the certificate (the first certificate in the file must be the server certificate)`);
  } catch (e) {
    problems.push(e instanceof CertificateError ? e.message : `${what}: unreadable key`);
  }
  for (const host of opts.hosts) {
    if (!coversHost(leaf, host)) problems.push(`${what}: the certificate does not cover ${host} (its DNS names: [${sanDnsNames(leaf).join(', ')}])`);
  }
  if (!allowsServerAuth(leaf)) problems.push(`${what}: the certificate's extended key usage does not allow TLS server authentication`);
  if (!isValidAt(leaf, opts.now)) {
    problems.push(`${what}: the certificate is not valid now (valid ${new Date(leaf.validFrom).toISOString()} to ${new Date(leaf.validTo).toISOString()})`);
  } else if (opts.minRemainingMs !== undefined && new Date(leaf.validTo).getTime() - opts.now.getTime() < opts.minRemainingMs) {
    problems.push(`${what}: the certificate expires soon (${new Date(leaf.validTo).toISOString()})`);
  }
  if (opts.anchors) {
    const chain = verifyChain(leaf, certs.slice(1), opts.anchors, opts.now);
    if (!chain.ok) problems.push(`${what}: ${chain.problem}`);
  }
  return problems;
}
