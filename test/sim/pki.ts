// The simulator's PKI: a cluster CA, server and client certificates, kubeconfig files, and a CSR signer
// that accepts the ECDSA P-256 requests real kubelets send.
//
// Keys come from node:crypto (pure-JS RSA keygen is far too slow: reference/runtime-libs.md), RSA keys through a
// pool kept between runs (./key-pool.ts). node-forge builds the X.509 structures (names, extensions) but can only
// sign with and encode RSA keys, and its certificationRequestFromPem rejects EC requests ("OID is not RSA",
// DESIGN.md section 5). So every certificate here is assembled the same way: forge lays out the TBSCertificate
// with a placeholder RSA key, the real SubjectPublicKeyInfo (RSA or EC, DER from node:crypto or copied from the
// CSR) replaces it, and node:crypto signs the TBS bytes with the CA key. This keeps signing in-process (no
// `openssl` child per CSR) and works for any key type node:crypto knows. The CA itself is RSA 2048 like
// OpenShift's signers, so forge-based checks elsewhere can verify what it signs.
import * as crypto from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import forge from 'node-forge';
import { stringify } from 'yaml';
import { nextRsaKey } from './key-pool';

const asn1 = forge.asn1;

export interface CertificateAuthority {
  name: string;
  certPem: string;
  keyPem: string;
}

export interface KeyAndCert {
  certPem: string;
  keyPem: string;
}

export type KeyType = 'rsa' | 'ec';

export interface ServerCertOptions {
  dnsNames?: string[];
  ips?: string[];
  commonName?: string;
  validityDays?: number;
  /** Default 'ec' (P-256): fast to generate. OpenShift's own serving certs are RSA 2048. */
  keyType?: KeyType;
  notBefore?: Date;
}

export interface ClientCertOptions {
  user: string;
  groups?: string[];
  validityDays?: number;
  keyType?: KeyType;
  notBefore?: Date;
  /**
   * Keep the full validity even past the issuer's NotAfter, as library-go's operators issue their client
   * certificates (openshift/library-go pkg/crypto/crypto.go NewClientCertificateTemplateForDuration: NotAfter =
   * now + lifetime, no clamp). Default: clamped, as kube-controller-manager's CSR signer does.
   */
  outliveIssuer?: boolean;
}

export interface SignCsrOptions {
  /** Kubernetes key usages (certificates.k8s.io/v1 KeyUsage strings), e.g. ['digital signature', 'client auth']. */
  usages: string[];
  validityDays?: number;
  /** Default: now minus 5 minutes, as the kube-controller-manager signer backdates for clock skew. */
  notBefore?: Date;
}

// ---------------------------------------------------------------------------------------------------
// DER reading (just enough for PKCS#10 and certificates)

interface Tlv {
  /** Full tag byte (class + constructed bit + number). */
  tag: number;
  /** Raw bytes of the whole element (header + content). */
  raw: Buffer;
  content: Buffer;
}

function readTlv(buf: Buffer, offset: number): { tlv: Tlv; next: number } {
  if (offset + 2 > buf.length) throw new Error('truncated DER');
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new Error('multi-byte DER tags are not supported');
  let len = buf[offset + 1];
  let header = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error('unsupported DER length');
    if (offset + 2 + n > buf.length) throw new Error('truncated DER');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[offset + 2 + i];
    header += n;
  }
  const end = offset + header + len;
  if (end > buf.length) throw new Error('truncated DER');
  return { tlv: { tag, raw: buf.subarray(offset, end), content: buf.subarray(offset + header, end) }, next: end };
}

function children(tlv: Tlv): Tlv[] {
  const out: Tlv[] = [];
  let off = 0;
  while (off < tlv.content.length) {
    const { tlv: child, next } = readTlv(tlv.content, off);
    out.push(child);
    off = next;
  }
  return out;
}

function parseOid(content: Buffer): string {
  const parts: number[] = [];
  let value = 0;
  for (let i = 0; i < content.length; i++) {
    value = value * 128 + (content[i] & 0x7f);
    if (!(content[i] & 0x80)) {
      if (parts.length === 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        parts.push(first, value - first * 40);
      } else {
        parts.push(value);
      }
      value = 0;
    }
  }
  return parts.join('.');
}

const TAG = { SEQUENCE: 0x30, SET: 0x31, OID: 0x06, BITSTRING: 0x03, OCTETSTRING: 0x04, BOOLEAN: 0x01, CTX0: 0xa0 } as const;

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
} as const;

/** Signature algorithms of PKCS#10 requests and the digest node:crypto needs to verify them. */
const SIGNATURE_DIGESTS: Record<string, string | null> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null, // Ed25519: no separate digest
};

function pemBlocks(pem: string): { type: string; der: Buffer; headers: boolean }[] {
  const out: { type: string; der: Buffer; headers: boolean }[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(pem); m; m = re.exec(pem)) {
    const body = m[2];
    const headers = /^[A-Za-z-]+:/m.test(body);
    const b64 = body.split(/\r?\n/).filter((l) => l && !l.includes(':')).join('');
    out.push({ type: m[1], der: Buffer.from(b64, 'base64'), headers });
  }
  return out;
}

function ipFromBytes(b: Buffer): string {
  if (b.length === 4) return Array.from(b).join('.');
  if (b.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i).toString(16));
    // WHATWG URL parsing yields the canonical (RFC 5952) compressed form: fd00:0:...:10 -> fd00::10.
    return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
  }
  throw new Error(`IP SAN of ${b.length} bytes`);
}

export interface ParsedName {
  commonName?: string;
  organizations: string[];
}

export interface SubjectAltNames {
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

function parseName(name: Tlv): ParsedName {
  const out: ParsedName = { organizations: [] };
  for (const rdn of children(name)) {
    for (const atv of children(rdn)) {
      const [oid, value] = children(atv);
      const id = parseOid(oid.content);
      const text = value.content.toString('utf8');
      if (id === OID.commonName) out.commonName = text;
      else if (id === OID.organization) out.organizations.push(text);
    }
  }
  return out;
}

function parseGeneralNames(der: Buffer): SubjectAltNames {
  const out: SubjectAltNames = { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [] };
  const { tlv } = readTlv(der, 0);
  for (const gn of children(tlv)) {
    const kind = gn.tag & 0x1f;
    if (kind === 1) out.emailAddresses.push(gn.content.toString('ascii'));
    else if (kind === 2) out.dnsNames.push(gn.content.toString('ascii'));
    else if (kind === 6) out.uris.push(gn.content.toString('ascii'));
    else if (kind === 7) out.ipAddresses.push(ipFromBytes(gn.content));
  }
  return out;
}

export interface ParsedCsr extends SubjectAltNames {
  subject: ParsedName;
  /** DER of the subject Name, copied verbatim into issued certificates. */
  subjectDer: Buffer;
  /** DER of the SubjectPublicKeyInfo. */
  publicKeyDer: Buffer;
  publicKey: crypto.KeyObject;
  /** 'rsa', 'ec', 'ed25519', ... as node:crypto names them. */
  keyType: string;
  signatureAlgorithmOid: string;
}

/**
 * Parses a PEM PKCS#10 request (RSA, ECDSA or Ed25519 keys) and verifies its self-signature, as the
 * kube-apiserver does on CSR create (pkg/apis/certificates/validation: ParseCSR + CheckSignature).
 * Throws an Error whose message says what is wrong.
 */
export function parseCsr(pem: string): ParsedCsr {
  const blocks = pemBlocks(pem);
  const block = blocks.find((b) => b.type === 'CERTIFICATE REQUEST' || b.type === 'NEW CERTIFICATE REQUEST');
  if (!block) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let top: Tlv;
  try {
    top = readTlv(block.der, 0).tlv;
  } catch (e) {
    throw new Error(`asn1: structure error: ${(e as Error).message}`);
  }
  const parts = children(top);
  if (top.tag !== TAG.SEQUENCE || parts.length !== 3) throw new Error('asn1: structure error: not a PKCS#10 CertificationRequest');
  const [info, sigAlg, sigBits] = parts;
  const infoParts = children(info);
  if (infoParts.length < 3) throw new Error('asn1: structure error: CertificationRequestInfo is incomplete');
  const [, subject, spki] = infoParts;
  const algOid = parseOid(children(sigAlg)[0].content);
  if (!(algOid in SIGNATURE_DIGESTS)) throw new Error(`x509: cannot verify signature: algorithm ${algOid} is unimplemented`);
  let publicKey: crypto.KeyObject;
  try {
    publicKey = crypto.createPublicKey({ key: spki.raw, format: 'der', type: 'spki' });
  } catch (e) {
    throw new Error(`x509: failed to parse public key: ${(e as Error).message}`);
  }
  const signature = sigBits.content.subarray(1); // first byte: unused bits
  if (!crypto.verify(SIGNATURE_DIGESTS[algOid], info.raw, publicKey, signature)) {
    // Go's messages (crypto/x509 CheckSignature), which the real API server returns in the 422.
    throw new Error(publicKey.asymmetricKeyType === 'rsa' ? 'crypto/rsa: verification error' : 'x509: ECDSA verification failure');
  }
  const sans: SubjectAltNames = { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [] };
  const attributes = infoParts.slice(3).find((p) => p.tag === TAG.CTX0);
  for (const attr of attributes ? children(attributes) : []) {
    const [oid, values] = children(attr);
    if (parseOid(oid.content) !== OID.extensionRequest) continue;
    for (const extensions of children(values)) {
      for (const ext of children(extensions)) {
        const fields = children(ext);
        if (parseOid(fields[0].content) !== OID.subjectAltName) continue;
        const value = fields[fields.length - 1];
        Object.assign(sans, parseGeneralNames(value.content));
      }
    }
  }
  return {
    subject: parseName(subject),
    subjectDer: Buffer.from(subject.raw),
    publicKeyDer: Buffer.from(spki.raw),
    publicKey,
    keyType: publicKey.asymmetricKeyType ?? 'unknown',
    signatureAlgorithmOid: algOid,
    ...sans,
  };
}

/** Validates PEM certificate content the way the kube-apiserver validates CSR status.certificate. */
export function checkCertificatePem(pem: string): string | undefined {
  const blocks = pemBlocks(pem);
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const b of blocks) {
    if (b.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found "${b.type}"`;
    if (b.headers) return 'no PEM block headers are permitted';
    try {
      new crypto.X509Certificate(b.der);
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Certificate assembly

function toForgeAsn1(der: Buffer): forge.asn1.Asn1 {
  return asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
}

function fromForgeAsn1(node: forge.asn1.Asn1): Buffer {
  return Buffer.from(asn1.toDer(node).getBytes(), 'binary');
}

// forge needs *a* public key to lay out the TBSCertificate; it is replaced before signing.
const PLACEHOLDER_KEY = forge.pki.setRsaPublicKey(new forge.jsbn.BigInteger('c3', 16), new forge.jsbn.BigInteger('10001', 16));

function randomSerialHex(): string {
  const bytes = crypto.randomBytes(16);
  bytes[0] &= 0x7f; // positive INTEGER
  if (bytes[0] === 0) bytes[0] = 1;
  return bytes.toString('hex');
}

function subjectKeyId(spkiDer: Buffer): Buffer {
  // RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey BIT STRING value.
  const spki = readTlv(spkiDer, 0).tlv;
  const bits = children(spki)[1];
  return crypto.createHash('sha1').update(bits.content.subarray(1)).digest();
}

interface Attr {
  shortName: string;
  value: string;
}

function nameAttrs(commonName: string | undefined, organizations: string[] = []): Attr[] {
  const attrs: Attr[] = organizations.map((o) => ({ shortName: 'O', value: o }));
  if (commonName !== undefined) attrs.push({ shortName: 'CN', value: commonName });
  return attrs;
}

interface BuildOptions {
  subject: Attr[] | Buffer;
  spkiDer: Buffer;
  /** undefined: self-signed with signingKeyPem. */
  issuer?: CertificateAuthority;
  signingKeyPem: string;
  notBefore: Date;
  notAfter: Date;
  extensions: Record<string, unknown>[];
}

function buildCertificate(opts: BuildOptions): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = PLACEHOLDER_KEY;
  cert.serialNumber = randomSerialHex();
  cert.validity.notBefore = opts.notBefore;
  cert.validity.notAfter = opts.notAfter;
  if (!Buffer.isBuffer(opts.subject)) cert.setSubject(opts.subject);
  const issuerCert = opts.issuer ? forge.pki.certificateFromPem(opts.issuer.certPem) : undefined;
  if (issuerCert) cert.setIssuer(issuerCert.subject.attributes);
  else if (!Buffer.isBuffer(opts.subject)) cert.setIssuer(opts.subject);
  const ski = subjectKeyId(opts.spkiDer);
  const extensions = [...opts.extensions, { name: 'subjectKeyIdentifier', value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, ski.toString('binary')) }];
  const authorityKeyId = issuerCert ? subjectKeyId(Buffer.from(asn1.toDer(forge.pki.publicKeyToAsn1(issuerCert.publicKey)).getBytes(), 'binary')) : ski;
  extensions.push({
    name: 'authorityKeyIdentifier',
    value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, authorityKeyId.toString('binary'))]),
  });
  cert.setExtensions(extensions);

  const signingKey = crypto.createPrivateKey(opts.signingKeyPem);
  if (signingKey.asymmetricKeyType !== 'rsa') throw new Error('the simulator CA signs with RSA keys only');
  cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption;
  // getTBSCertificate exists in node-forge (lib/x509.js) but @types/node-forge does not declare it.
  const tbs = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  const tbsFields = tbs.value as forge.asn1.Asn1[];
  if (Buffer.isBuffer(opts.subject)) {
    tbsFields[5] = toForgeAsn1(opts.subject);
    if (!issuerCert) tbsFields[3] = toForgeAsn1(opts.subject);
  }
  tbsFields[6] = toForgeAsn1(opts.spkiDer);
  const tbsDer = fromForgeAsn1(tbs);
  const signature = crypto.sign('sha256', tbsDer, signingKey);
  const certificate = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs,
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(forge.pki.oids.sha256WithRSAEncryption).getBytes()),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''),
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, String.fromCharCode(0) + signature.toString('binary')),
  ]);
  const der = fromForgeAsn1(certificate);
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

function generateKey(type: KeyType): { keyPem: string; spkiDer: Buffer } {
  if (type === 'rsa') return nextRsaKey();
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { keyPem: privateKey.export({ type: 'sec1', format: 'pem' }).toString(), spkiDer: publicKey.export({ type: 'spki', format: 'der' }) };
}

const DAY_MS = 24 * 3600 * 1000;

function validity(notBefore: Date | undefined, days: number, ca?: CertificateAuthority): { notBefore: Date; notAfter: Date } {
  const start = notBefore ?? new Date(Date.now() - 5 * 60_000);
  let end = new Date(start.getTime() + days * DAY_MS);
  if (ca) {
    // Never outlive the issuer (the kube signer clamps to the CA's NotAfter the same way).
    const caEnd = new Date(new crypto.X509Certificate(ca.certPem).validTo);
    if (end > caEnd) end = caEnd;
  }
  return { notBefore: start, notAfter: end };
}

/** The one RSA key of this process's `sharedKey` CAs. */
let processRsaKey: { keyPem: string; spkiDer: Buffer } | undefined;

/**
 * A self-signed RSA 2048 CA, its key from the pool (./key-pool.ts). `sharedKey`: one RSA key per process for CAs
 * whose dates are what a test is about; their certificates still differ by name and dates.
 */
export function createCa(name: string, opts: { validityDays?: number; notBefore?: Date; sharedKey?: boolean } = {}): CertificateAuthority {
  const { keyPem, spkiDer } = opts.sharedKey ? (processRsaKey ??= generateKey('rsa')) : generateKey('rsa');
  const subject = [{ shortName: 'OU', value: 'openshift' }, { shortName: 'CN', value: name }];
  const certPem = buildCertificate({
    subject,
    spkiDer,
    signingKeyPem: keyPem,
    ...validity(opts.notBefore ?? new Date(Date.now() - 3600_000), opts.validityDays ?? 3650),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { name, certPem, keyPem };
}

const sharedCas = new Map<string, CertificateAuthority>();

/** One CA per name per process, so a test file pays for RSA keygen once. */
export function sharedCa(name = 'sim-kube-apiserver-ca'): CertificateAuthority {
  let ca = sharedCas.get(name);
  if (!ca) {
    ca = createCa(name);
    sharedCas.set(name, ca);
  }
  return ca;
}

/** A leaf certificate signed by `ca`: a new key of `keyType`, the usual key usages, and `usage`. */
function issueLeaf(ca: CertificateAuthority, subject: ReturnType<typeof nameAttrs>, opts: { keyType?: KeyType; notBefore?: Date; validityDays?: number; outliveIssuer?: boolean }, usage: Record<string, unknown>[]): KeyAndCert {
  const { keyPem, spkiDer } = generateKey(opts.keyType ?? 'ec');
  const certPem = buildCertificate({
    subject,
    spkiDer,
    issuer: ca,
    signingKeyPem: ca.keyPem,
    ...validity(opts.notBefore, opts.validityDays ?? 365, opts.outliveIssuer ? undefined : ca),
    extensions: [{ name: 'basicConstraints', cA: false, critical: true }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true }, ...usage],
  });
  return { certPem, keyPem };
}

export function issueServerCert(ca: CertificateAuthority, opts: ServerCertOptions): KeyAndCert {
  const dnsNames = opts.dnsNames ?? [];
  const ips = opts.ips ?? [];
  if (dnsNames.length === 0 && ips.length === 0) throw new Error('issueServerCert: give at least one of dnsNames or ips');
  const altNames = [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))];
  return issueLeaf(ca, nameAttrs(opts.commonName ?? dnsNames[0] ?? ips[0]), opts, [{ name: 'extKeyUsage', serverAuth: true }, { name: 'subjectAltName', altNames }]);
}

/** A client certificate as the kube-apiserver reads it: CN = user name, O = groups. */
export function issueClientCert(ca: CertificateAuthority, opts: ClientCertOptions): KeyAndCert {
  if (!opts.user) throw new Error('issueClientCert: user is required');
  return issueLeaf(ca, nameAttrs(opts.user, opts.groups), opts, [{ name: 'extKeyUsage', clientAuth: true }]);
}

// Kubernetes KeyUsage strings (k8s.io/api/certificates/v1) to X.509 key usage bits / extended key usages.
const KEY_USAGE_BITS: Record<string, string> = {
  signing: 'digitalSignature',
  'digital signature': 'digitalSignature',
  'content commitment': 'nonRepudiation',
  'key encipherment': 'keyEncipherment',
  'key agreement': 'keyAgreement',
  'data encipherment': 'dataEncipherment',
  'cert sign': 'keyCertSign',
  'crl sign': 'cRLSign',
  'encipher only': 'encipherOnly',
  'decipher only': 'decipherOnly',
};
const EXT_KEY_USAGE_OIDS: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/**
 * Signs a PEM PKCS#10 request (RSA or ECDSA P-256, as kubelets send) with the CA, copying the request's
 * subject and SANs verbatim, like the kube-controller-manager's CSR signer. Throws on an unparsable or
 * badly self-signed request, or an unknown usage.
 */
export function signCsr(ca: CertificateAuthority, csrPem: string, opts: SignCsrOptions): string {
  const csr = parseCsr(csrPem);
  const bits: Record<string, boolean> = {};
  const extUsageOids: string[] = [];
  for (const usage of opts.usages) {
    if (usage in KEY_USAGE_BITS) bits[KEY_USAGE_BITS[usage]] = true;
    else if (usage in EXT_KEY_USAGE_OIDS) extUsageOids.push(EXT_KEY_USAGE_OIDS[usage]);
    else throw new Error(`signCsr: unknown key usage "${usage}"`);
  }
  const extensions: Record<string, unknown>[] = [{ name: 'basicConstraints', cA: false, critical: true }];
  if (Object.keys(bits).length > 0) extensions.push({ name: 'keyUsage', ...bits, critical: true });
  if (extUsageOids.length > 0) {
    extensions.push({
      name: 'extKeyUsage',
      value: asn1.create(
        asn1.Class.UNIVERSAL,
        asn1.Type.SEQUENCE,
        true,
        extUsageOids.map((oid) => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(oid).getBytes())),
      ),
    });
  }
  const altNames = [
    ...csr.dnsNames.map((value) => ({ type: 2, value })),
    ...csr.ipAddresses.map((ip) => ({ type: 7, ip })),
    ...csr.emailAddresses.map((value) => ({ type: 1, value })),
    ...csr.uris.map((value) => ({ type: 6, value })),
  ];
  if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames });
  return buildCertificate({
    subject: csr.subjectDer,
    spkiDer: csr.publicKeyDer,
    issuer: ca,
    signingKeyPem: ca.keyPem,
    ...validity(opts.notBefore, opts.validityDays ?? 365, ca),
    extensions,
  });
}

/** Subject and SANs of a PEM certificate (first block). */
export function describeCertificate(certPem: string): { subject: ParsedName; issuer: ParsedName; sans: SubjectAltNames; notBefore: Date; notAfter: Date } {
  const x = new crypto.X509Certificate(certPem);
  const der = x.raw;
  const tbs = children(readTlv(der, 0).tlv)[0];
  const fields = children(tbs);
  const offset = fields[0].tag === TAG.CTX0 ? 1 : 0;
  const issuer = parseName(fields[offset + 2]);
  const subject = parseName(fields[offset + 4]);
  let sans: SubjectAltNames = { dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [] };
  const extWrapper = fields.find((f) => f.tag === 0xa3);
  if (extWrapper) {
    for (const ext of children(children(extWrapper)[0])) {
      const parts = children(ext);
      if (parseOid(parts[0].content) === OID.subjectAltName) sans = parseGeneralNames(parts[parts.length - 1].content);
    }
  }
  return { subject, issuer, sans, notBefore: new Date(x.validFrom), notAfter: new Date(x.validTo) };
}

// ---------------------------------------------------------------------------------------------------
// kubeconfig

export type KubeconfigAuth = { clientCertPem: string; clientKeyPem: string } | { token: string };

export interface KubeconfigOptions {
  server: string;
  caPem: string;
  /** Names in the file; defaults: cluster "sim", user "sim-user", context "sim". */
  clusterName?: string;
  userName?: string;
}

/** The kubeconfig document (what writeKubeconfig writes), as YAML text. */
export function kubeconfigYaml(opts: KubeconfigOptions & KubeconfigAuth): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const cluster = opts.clusterName ?? 'sim';
  const user = opts.userName ?? 'sim-user';
  const credentials = 'token' in opts ? { token: opts.token } : { 'client-certificate-data': b64(opts.clientCertPem), 'client-key-data': b64(opts.clientKeyPem) };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: opts.server, 'certificate-authority-data': b64(opts.caPem) } }],
    users: [{ name: user, user: credentials }],
    contexts: [{ name: cluster, context: { cluster, user } }],
    'current-context': cluster,
    preferences: {},
  });
}

/** Writes a kubeconfig (mode 0600, atomically: temp file + rename). */
export function writeKubeconfig(file: string, opts: KubeconfigOptions & KubeconfigAuth): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, kubeconfigYaml(opts), { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}
