// PEM checks for spec.additionalTrustBundle and spec.certificates, with node:crypto (X509Certificate,
// createPrivateKey). Host-name coverage follows RFC 6125 section 6.4.3 as Go's crypto/x509 applies it
// (OpenShift's servers and clients are Go): DNS subjectAltNames only (the Common Name is ignored since Go 1.15),
// a wildcard only as the whole left-most label, matching exactly one label. Key material never reaches a message.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { apiHost, appsDomain } from './names';
import { Findings } from './problems';

export const EXPIRY_WARNING_DAYS = 30;
const DAY_MS = 86_400_000;
const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';
const ANY_EKU_OID = '2.5.29.37.0';

export interface PemBlock {
  label: string;
  text: string;
}

/** The PEM blocks of `text`, or a reason when a block is not terminated. Text between blocks is allowed (openssl does). */
export function pemBlocks(text: string): { blocks: PemBlock[]; problem?: string } {
  const blocks: PemBlock[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END ([A-Z0-9 ]+)-----/g;
  let m: RegExpExecArray | null;
  let consumed = '';
  let last = 0;
  while ((m = re.exec(text)) !== null) {
    if (m[1] !== m[2]) return { blocks, problem: `a PEM block starting with BEGIN ${m[1]} ends with END ${m[2]}` };
    blocks.push({ label: m[1]!, text: m[0] });
    consumed += text.slice(last, m.index);
    last = m.index + m[0].length;
  }
  consumed += text.slice(last);
  if (/-----BEGIN /.test(consumed)) return { blocks, problem: 'has a PEM block without its -----END ...----- line (truncated copy?)' };
  return { blocks };
}

function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Problems with a certificate's validity period at `now`: errors for expired / not yet valid, a warning near expiry. */
function checkValidity(cert: X509Certificate, what: string, path: string, now: Date, f: Findings, note: string): void {
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  if (notAfter.getTime() < now.getTime()) f.error(path, `${what} expired on ${isoDay(notAfter)}${note}`);
  else if (notBefore.getTime() > now.getTime()) f.error(path, `${what} is not valid before ${notBefore.toISOString()}${note}`);
  else if (notAfter.getTime() - now.getTime() < EXPIRY_WARNING_DAYS * DAY_MS) {
    const days = Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS);
    f.warn(path, `${what} expires on ${isoDay(notAfter)} (in ${days} day${days === 1 ? '' : 's'})${note}`);
  }
}

function parseCertificate(block: PemBlock): X509Certificate | undefined {
  try {
    return new X509Certificate(block.text);
  } catch {
    return undefined;
  }
}

function isPrivateKeyLabel(label: string): boolean {
  return /PRIVATE KEY$/.test(label);
}

/** Every certificate of a CA bundle parses and is within its validity period. */
export function validateTrustBundle(pem: string, path: string, now: Date, note = ''): { findings: Findings; certificates: X509Certificate[] } {
  const f = new Findings();
  const { blocks, problem } = pemBlocks(pem);
  if (problem) f.error(path, `${problem}${note}`);
  if (blocks.length === 0 && !problem) f.error(path, `holds no PEM certificate (-----BEGIN CERTIFICATE-----)${note}`);
  const certificates: X509Certificate[] = [];
  blocks.forEach((block, i) => {
    const what = `certificate ${i + 1}`;
    if (isPrivateKeyLabel(block.label)) {
      f.error(path, `block ${i + 1} is a private key: a trust bundle holds only CA certificates (remove it, and treat that key as exposed)${note}`);
      return;
    }
    if (block.label !== 'CERTIFICATE') {
      f.error(path, `block ${i + 1} is '${block.label}', expected 'CERTIFICATE'${note}`);
      return;
    }
    const cert = parseCertificate(block);
    if (!cert) {
      f.error(path, `${what} does not parse as an X.509 certificate${note}`);
      return;
    }
    certificates.push(cert);
    checkValidity(cert, `${what} (${subjectCn(cert)})`, path, now, f, note);
  });
  return { findings: f, certificates };
}

function subjectCn(cert: X509Certificate): string {
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject);
  return cn ? `CN=${cn[1]}` : cert.subject.split('\n')[0] ?? 'no subject';
}

/** DNS subjectAltNames of a certificate (node quotes values with special characters as JSON strings). */
export function dnsNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName;
  if (!san) return [];
  const names: string[] = [];
  const re = /DNS:("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(san)) !== null) {
    const raw = m[1]!;
    try {
      names.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
    } catch {
      names.push(raw);
    }
  }
  return names;
}

/** RFC 6125 6.4.3 as Go applies it: `*` only as the whole left-most label, standing for exactly one label. */
export function dnsNameMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p === h) return !p.includes('*');
  if (!p.startsWith('*.') || p.slice(2).includes('*')) return false;
  const rest = p.slice(2);
  // A wildcard must sit under at least two labels: `*.com` covers nothing.
  if (!rest.includes('.')) return false;
  const dot = h.indexOf('.');
  return dot > 0 && h.slice(dot + 1) === rest;
}

export type CertificateRole = 'api' | 'ingress';

/** Why `cert` does not serve `role` for the cluster, or undefined when it covers it. */
export function coverageProblem(cert: X509Certificate, role: CertificateRole, clusterName: string, baseDomain: string): string | undefined {
  const names = dnsNames(cert);
  if (names.length === 0) return 'has no DNS subjectAltName: OpenShift (Go) and browsers ignore the Common Name';
  const shown = names.slice(0, 6).join(', ') + (names.length > 6 ? ', ...' : '');
  if (role === 'api') {
    const host = apiHost(clusterName, baseDomain);
    return names.some((n) => dnsNameMatches(n, host)) ? undefined : `does not cover ${host} (its DNS names: ${shown})`;
  }
  const wildcard = `*.${appsDomain(clusterName, baseDomain)}`;
  return names.some((n) => n.toLowerCase().replace(/\.$/, '') === wildcard) ? undefined : `does not cover ${wildcard}: the ingress certificate needs that wildcard DNS name (its DNS names: ${shown})`;
}

export interface CertificatePairInput {
  certPem: string;
  keyPem: string;
  /** Field paths of the two files (spec.certificates.api.certFile / keyFile). */
  certPath: string;
  keyPath: string;
  role: CertificateRole;
  /** Both known: coverage is checked. */
  clusterName?: string;
  baseDomain?: string;
  now: Date;
  certNote?: string;
  keyNote?: string;
}

/** Parsed leaf certificate of a pair, for later checks against the cluster's real name. */
export function leafCertificate(certPem: string): X509Certificate | undefined {
  const first = pemBlocks(certPem).blocks.find((b) => b.label === 'CERTIFICATE');
  return first ? parseCertificate(first) : undefined;
}

export function validateCertificatePair(input: CertificatePairInput): Findings {
  const f = new Findings();
  const certNote = input.certNote ?? '';
  const keyNote = input.keyNote ?? '';
  const certBlocks = pemBlocks(input.certPem);
  if (certBlocks.problem) f.error(input.certPath, `${certBlocks.problem}${certNote}`);
  const chain: X509Certificate[] = [];
  certBlocks.blocks.forEach((block, i) => {
    if (isPrivateKeyLabel(block.label)) {
      f.error(input.certPath, `block ${i + 1} is a private key: certFile holds the certificate (and its issuers); put the key in keyFile${certNote}`);
      return;
    }
    if (block.label !== 'CERTIFICATE') {
      f.error(input.certPath, `block ${i + 1} is '${block.label}', expected 'CERTIFICATE'${certNote}`);
      return;
    }
    const cert = parseCertificate(block);
    if (!cert) f.error(input.certPath, `certificate ${i + 1} does not parse as an X.509 certificate${certNote}`);
    else chain.push(cert);
  });
  if (certBlocks.blocks.length === 0 && !certBlocks.problem) f.error(input.certPath, `holds no PEM certificate (-----BEGIN CERTIFICATE-----)${certNote}`);
  const leaf = chain[0];
  if (leaf) {
    checkValidity(leaf, 'the certificate', input.certPath, input.now, f, certNote);
    chain.slice(1).forEach((issuer, i) => checkValidity(issuer, `issuer certificate ${i + 2}`, input.certPath, input.now, f, certNote));
    const eku = leaf.keyUsage;
    if (Array.isArray(eku) && eku.length > 0 && !eku.includes(SERVER_AUTH_OID) && !eku.includes(ANY_EKU_OID)) {
      f.error(input.certPath, `the certificate's extended key usage does not allow TLS server authentication (serverAuth)${certNote}`);
    }
    for (let i = 0; i + 1 < chain.length; i++) {
      if (!chain[i]!.checkIssued(chain[i + 1]!) || !chain[i]!.verify(chain[i + 1]!.publicKey)) {
        f.warn(input.certPath, `certificate ${i + 2} did not issue certificate ${i + 1}: put the server certificate first, then each issuer in order${certNote}`);
        break;
      }
    }
    if (input.clusterName !== undefined && input.baseDomain !== undefined) {
      const problem = coverageProblem(leaf, input.role, input.clusterName, input.baseDomain);
      if (problem) f.error(input.certPath, `the certificate ${problem}${certNote}`);
    }
  }
  const key = parsePrivateKey(input.keyPem, input.keyPath, keyNote, f);
  if (leaf && key && !leaf.checkPrivateKey(key)) {
    f.error(input.keyPath, `the private key does not belong to the certificate in certFile (their public keys differ)${keyNote}`);
  }
  return f;
}

function parsePrivateKey(pem: string, path: string, note: string, f: Findings): KeyObject | undefined {
  const { blocks, problem } = pemBlocks(pem);
  if (problem) {
    f.error(path, `${problem}${note}`);
    return undefined;
  }
  const keys = blocks.filter((b) => isPrivateKeyLabel(b.label));
  if (keys.length === 0) {
    f.error(path, `holds no PEM private key (-----BEGIN PRIVATE KEY-----)${note}`);
    return undefined;
  }
  if (keys.length > 1) f.error(path, `holds ${keys.length} private keys; keyFile must hold exactly one${note}`);
  if (blocks.length > keys.length) f.error(path, `holds other PEM blocks besides the private key; keyFile must hold only the key${note}`);
  const block = keys[0]!;
  if (block.label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(block.text)) {
    f.error(path, `the private key is encrypted; the agent cannot ask for a passphrase (decrypt it: openssl pkey -in KEY -out KEY.plain)${note}`);
    return undefined;
  }
  try {
    return createPrivateKey(block.text);
  } catch {
    f.error(path, `the private key does not parse (expected PKCS#8, PKCS#1 RSA or SEC1 EC in PEM)${note}`);
    return undefined;
  }
}
