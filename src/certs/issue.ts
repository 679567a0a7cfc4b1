// Issues TLS serving certificates signed by one of the cluster's own CAs, so every client that already trusts
// the cluster keeps trusting the new names. Keys come from node:crypto: node-forge's pure-JS RSA key generation
// took up to 65 s for 4096 bits here, its signing takes ~30 ms (reference/runtime-libs.md section 5).
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
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
  cert: forge.pki.Certificate;
  x509: X509Certificate;
  key: forge.pki.rsa.PrivateKey;
  pem: string;
}

function loadSigner(signer: SignerPair, what: string, now: Date): LoadedSigner {
  const key = parsePrivateKey(signer.keyPem, `the key of ${what}`);
  if (key.asymmetricKeyType !== 'rsa') {
    throw new CertificateError(`${what} has a ${key.asymmetricKeyType ?? 'unknown'} key; only RSA signers are supported (node-forge signs with RSA only)`);
  }
  const certs = parseCertificates(signer.certPem, what);
  const x509 = certs.find((c) => keyMatchesCertificate(key, c));
  if (!x509) throw new CertificateError(`${what}: no certificate in tls.crt matches tls.key`);
  if (!x509.ca) throw new CertificateError(`${what}: the certificate is not a CA (basicConstraints CA:FALSE)`);
  if (new Date(x509.validTo).getTime() - now.getTime() < MIN_SIGNER_REMAINING_MS) {
    throw new CertificateError(`${what} expires ${new Date(x509.validTo).toISOString()}; it cannot issue a certificate`);
  }
  const pem = x509.toString();
  const pkcs1 = createPrivateKey(signer.keyPem).export({ type: 'pkcs1', format: 'pem' }).toString();
  return { cert: forge.pki.certificateFromPem(pem), x509, key: forge.pki.privateKeyFromPem(pkcs1) as forge.pki.rsa.PrivateKey, pem };
}

/** The subject key identifier of the signer, as the leaf's authority key identifier (raw bytes). */
function authorityKeyId(signer: forge.pki.Certificate): string {
  const ski = signer.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | null;
  if (ski?.subjectKeyIdentifier) return forge.util.hexToBytes(ski.subjectKeyIdentifier);
  // RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey, what Go and OpenSSL compute.
  return forge.pki.getPublicKeyFingerprint(signer.publicKey, { type: 'RSAPublicKey', md: forge.md.sha1.create() }).getBytes();
}

function derOf(pem: string): string {
  return forge.pki.pemToDer(pem).getBytes();
}

/** The issuer Name of a certificate and the subject Name of its signer must be byte-identical (Go matches raw bytes). */
function issuerMatchesSubject(leafPem: string, signerPem: string): boolean {
  const leafTbs = forge.asn1.fromDer(derOf(leafPem)).value[0] as forge.asn1.Asn1;
  const signerTbs = forge.asn1.fromDer(derOf(signerPem)).value[0] as forge.asn1.Asn1;
  // TBSCertificate: [0] version, serial, signature alg, issuer (3), validity, subject (5), ...
  const issuer = (leafTbs.value as forge.asn1.Asn1[])[3] as forge.asn1.Asn1;
  const subject = (signerTbs.value as forge.asn1.Asn1[])[5] as forge.asn1.Asn1;
  return forge.asn1.toDer(issuer).getBytes() === forge.asn1.toDer(subject).getBytes();
}

export function issueServingCertificate(opts: IssueOptions): IssuedCertificate {
  const now = opts.now ?? new Date();
  const what = opts.signerName ?? 'the signer';
  if (opts.dnsNames.length === 0) throw new CertificateError('a serving certificate needs at least one DNS name');
  const signer = loadSigner(opts.signer, what, now);

  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = randomSerialHex();

  const signerFrom = new Date(signer.x509.validFrom).getTime();
  const signerTo = new Date(signer.x509.validTo).getTime();
  const notBefore = new Date(Math.max(now.getTime() - BACKDATE_MS, signerFrom));
  const wanted = now.getTime() + (opts.validityDays ?? DEFAULT_VALIDITY_DAYS) * 86_400_000;
  const notAfter = new Date(Math.min(wanted, signerTo));
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;

  const [first] = opts.dnsNames as [string, ...string[]];
  cert.setSubject([{ shortName: 'CN', value: first }]);
  cert.setIssuer(signer.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: opts.dnsNames.map((value) => ({ type: 2, value })) },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: authorityKeyId(signer.cert) },
  ]);
  cert.sign(signer.key, forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');

  if (!issuerMatchesSubject(certPem, signer.pem)) {
    throw new CertificateError(`${what}: its subject name cannot be reproduced byte for byte as the issuer name; clients would not build the chain`);
  }
  const check = new X509Certificate(certPem);
  if (!check.checkIssued(signer.x509) || !check.verify(signer.x509.publicKey)) {
    throw new CertificateError(`${what}: the issued certificate does not verify against the signer`);
  }
  return {
    certPem,
    keyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    caPem: signer.pem,
    notAfter,
    serial: cert.serialNumber,
  };
}
