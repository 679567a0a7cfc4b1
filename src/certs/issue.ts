// Issues TLS serving certificates signed by one of the cluster's own CAs, so every client that already trusts
// the cluster keeps trusting the new names. Keys and signatures come from node:crypto (node-forge's pure-JS
// RSA key generation took up to 65 s for 4096 bits here; reference/runtime-libs.md section 5). The
// certificate is laid out with our DER codec (src/certs/asn1.ts): node-forge's pki/x509 modules would add
// 47 KB gzip, a quarter of the MachineConfig budget (DESIGN.md section 6), and sign with RSA only.
import { X509Certificate, createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import * as asn1 from './asn1';
import type { ServingKey } from './keys';
import { CertificateError, keyMatchesCertificate, parseCertificates, parsePrivateKey } from './pem';

export interface SignerPair {
  /** PEM; may hold several certificates (the one matching the key is used). */
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  signer: SignerPair;
  /** SAN DNS names, exactly these; the first is also the subject CN. */
  dnsNames: string[];
  now?: Date;
  /** Requested lifetime; capped at the signer's own expiry. */
  validityDays?: number;
  /** Names the signer in errors, e.g. "openshift-kube-apiserver-operator/loadbalancer-serving-signer". */
  signerName?: string;
  /** The certificate's key pair (src/certs/keys.ts); a new RSA 2048 key when absent. */
  key?: ServingKey;
}

export interface IssuedCertificate {
  /** The leaf only. */
  certPem: string;
  /** PKCS#1 "RSA PRIVATE KEY", like the keys OpenShift's operators write. */
  keyPem: string;
  /** The signer certificate that issued it (PEM). */
  caPem: string;
  notAfter: Date;
  /** Hex, 16 bytes. */
  serial: string;
}

/**
 * 825 days: the longest TLS server certificate lifetime Apple platforms accept (their 2019 policy applies to
 * every CA, private ones included); browsers elsewhere accept it too.
 */
export const DEFAULT_VALIDITY_DAYS = 825;
/** Backdated a little so a node whose clock is slightly behind still accepts it. */
const BACKDATE_MS = 60 * 60_000;
/** A signer that expires sooner than this cannot issue anything useful. */
const MIN_SIGNER_REMAINING_MS = 24 * 60 * 60_000;

/** 16 random bytes with the top bit cleared (a positive DER INTEGER) and the next bit set (no leading zero). */
export function randomSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes.toString('hex');
}

interface LoadedSigner {
  x509: X509Certificate;
  key: KeyObject;
  pem: string;
  /** The signer's subject Name, DER, reused byte for byte as the leaf's issuer (Go matches raw bytes). */
  subjectDer: string;
  /** Its subject key identifier: the leaf's authority key identifier. */
  keyId: string;
}

// OIDs (RFC 5280, RFC 3279, RFC 5758).
const OID = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  sha256WithRSA: '1.2.840.113549.1.1.11',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
};

type Asn1 = asn1.Asn1;
const seq = (value: Asn1[]): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, value);
const oid = (dotted: string): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(dotted));
const octets = (bytes: string): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, bytes);
const der = (node: Asn1): string => asn1.toDer(node);
const children = (node: Asn1): Asn1[] => node.value as Asn1[];

/** DER Time: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
function time(d: Date): Asn1 {
  return d.getUTCFullYear() < 2050 ? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTCTIME, false, asn1.utcTime(d)) : asn1.create(asn1.Class.UNIVERSAL, asn1.Type.GENERALIZEDTIME, false, asn1.generalizedTime(d));
}

function extension(id: string, critical: boolean, value: Asn1): Asn1 {
  return seq([oid(id), ...(critical ? [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BOOLEAN, false, '\xff')] : []), octets(der(value))]);
}

/** The subjectPublicKey bits of a SubjectPublicKeyInfo (without the unused-bits octet). */
function publicKeyBits(spkiDer: string): string {
  return (children(asn1.fromDer(spkiDer))[1]!.value as string).slice(1);
}

/** RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey bits — what Go and OpenSSL compute. */
function keyIdentifier(spkiDer: string): string {
  return createHash('sha1').update(Buffer.from(publicKeyBits(spkiDer), 'binary')).digest().toString('binary');
}

/** The signer's own subjectKeyIdentifier extension when it has one, else computed from its key. */
function signerKeyId(tbs: Asn1[], spkiDer: string): string {
  const exts = tbs.find((n) => n.tagClass === asn1.Class.CONTEXT_SPECIFIC && n.type === 3);
  for (const ext of exts ? children(children(exts)[0]!) : []) {
    const parts = children(ext);
    if (asn1.derToOid(parts[0]!.value as string) === OID.subjectKeyIdentifier) {
      return asn1.fromDer(parts[parts.length - 1]!.value as string).value as string;
    }
  }
  return keyIdentifier(spkiDer);
}

function loadSigner(signer: SignerPair, what: string, now: Date): LoadedSigner {
  const key = parsePrivateKey(signer.keyPem, `the key of ${what}`);
  if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ec') {
    throw new CertificateError(`${what} has a ${key.asymmetricKeyType ?? 'unknown'} key; only RSA and ECDSA signers are supported`);
  }
  const certs = parseCertificates(signer.certPem, what);
  const x509 = certs.find((c) => keyMatchesCertificate(key, c));
  if (!x509) throw new CertificateError(`${what}: no certificate in tls.crt matches tls.key`);
  if (!x509.ca) throw new CertificateError(`${what}: the certificate is not a CA (basicConstraints CA:FALSE)`);
  if (new Date(x509.validTo).getTime() - now.getTime() < MIN_SIGNER_REMAINING_MS) {
    throw new CertificateError(`${what} expires ${new Date(x509.validTo).toISOString()}; it cannot issue a certificate`);
  }
  // TBSCertificate: [0] version, serial, signature alg, issuer, validity, subject (5), spki (6), ...
  const tbs = children(children(asn1.fromDer(x509.raw.toString('binary')))[0]!);
  const spki = der(tbs[6]!);
  return { x509, key, pem: x509.toString(), subjectDer: der(tbs[5]!), keyId: signerKeyId(tbs, spki) };
}

/** AlgorithmIdentifier for a SHA-256 signature by this key (RSA PKCS#1 v1.5 with NULL parameters; ECDSA without). */
function signatureAlgorithm(key: KeyObject): Asn1 {
  return key.asymmetricKeyType === 'rsa' ? seq([oid(OID.sha256WithRSA), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')]) : seq([oid(OID.ecdsaWithSha256)]);
}

/** An X.509 v3 TLS server certificate, DER-encoded by hand and signed with node:crypto (RFC 5280 section 4.1). */
function buildCertificate(o: { serialHex: string; signer: LoadedSigner; notBefore: Date; notAfter: Date; commonName: string; dnsNames: string[]; spkiDer: string }): string {
  const sigAlg = signatureAlgorithm(o.signer.key);
  const ia5 = (name: string) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, name);
  const tbs = seq([
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, '\x02')]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, Buffer.from(o.serialHex, 'hex').toString('latin1')),
    sigAlg,
    asn1.fromDer(o.signer.subjectDer),
    seq([time(o.notBefore), time(o.notAfter)]),
    seq([asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, [seq([oid(OID.commonName), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTF8, false, Buffer.from(o.commonName, 'utf8').toString('latin1'))])])]),
    asn1.fromDer(o.spkiDer),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 3, true, [
      seq([
        extension(OID.basicConstraints, true, seq([])),
        // digitalSignature (bit 0) + keyEncipherment (bit 2): 0b101 in the top bits, 5 unused bits.
        extension(OID.keyUsage, true, asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, '\x05\xa0')),
        extension(OID.extKeyUsage, false, seq([oid(OID.serverAuth)])),
        extension(OID.subjectAltName, false, seq(o.dnsNames.map(ia5))),
        extension(OID.subjectKeyIdentifier, false, octets(keyIdentifier(o.spkiDer))),
        extension(OID.authorityKeyIdentifier, false, seq([asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, o.signer.keyId)])),
      ]),
    ]),
  ]);
  const tbsDer = der(tbs);
  const signature = sign('sha256', Buffer.from(tbsDer, 'binary'), o.signer.key).toString('binary');
  const cert = seq([tbs, sigAlg, asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\x00${signature}`)]);
  const b64 = Buffer.from(der(cert), 'binary').toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${b64.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

export function issueServingCertificate(opts: IssueOptions): IssuedCertificate {
  const now = opts.now ?? new Date();
  const what = opts.signerName ?? 'the signer';
  if (opts.dnsNames.length === 0) throw new CertificateError('a serving certificate needs at least one DNS name');
  const signer = loadSigner(opts.signer, what, now);

  const { privateKey, publicKey } = opts.key ?? generateKeyPairSync('rsa', { modulusLength: 2048 });
  const serial = randomSerialHex();
  const signerFrom = new Date(signer.x509.validFrom).getTime();
  const signerTo = new Date(signer.x509.validTo).getTime();
  // DER times have whole seconds: round so what we report equals what the certificate says.
  const notBefore = new Date(Math.ceil(Math.max(now.getTime() - BACKDATE_MS, signerFrom) / 1000) * 1000);
  const wanted = now.getTime() + (opts.validityDays ?? DEFAULT_VALIDITY_DAYS) * 86_400_000;
  const notAfter = new Date(Math.floor(Math.min(wanted, signerTo) / 1000) * 1000);
  const certPem = buildCertificate({
    serialHex: serial,
    signer,
    notBefore,
    notAfter,
    commonName: opts.dnsNames[0]!,
    dnsNames: opts.dnsNames,
    spkiDer: publicKey.export({ type: 'spki', format: 'der' }).toString('binary'),
  });

  const check = new X509Certificate(certPem);
  if (!check.checkIssued(signer.x509) || !check.verify(signer.x509.publicKey)) {
    throw new CertificateError(`${what}: the issued certificate does not verify against the signer`);
  }
  return {
    certPem,
    keyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    caPem: signer.pem,
    notAfter,
    serial,
  };
}
