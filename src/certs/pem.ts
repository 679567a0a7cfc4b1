// PEM bundles: splitting, parsing into node:crypto X509Certificate, and the small conversions node-forge needs.
import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/** A certificate or key that cannot be used; the message names what and why, never the key material. */
export class CertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateError';
  }
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Every CERTIFICATE block of a PEM bundle, in order, each ending with a newline. */
export function splitCertificates(pem: string): string[] {
  return (pem.match(CERT_BLOCK) ?? []).map((block) => `${block.trim()}\n`);
}

/** Parses every certificate of a bundle; `what` names the bundle in errors ("the API certificate"). */
export function parseCertificates(pem: string, what: string): X509Certificate[] {
  const blocks = splitCertificates(pem);
  if (blocks.length === 0) throw new CertificateError(`${what} contains no PEM "CERTIFICATE" block`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (e) {
      throw new CertificateError(`${what}: certificate #${i + 1} cannot be parsed (${(e as Error).message})`);
    }
  });
}

/** The private key of a PEM (PKCS#1, PKCS#8 or SEC1). The error never echoes the key. */
export function parsePrivateKey(pem: string, what: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    throw new CertificateError(`${what} is not a readable unencrypted PEM private key`);
  }
}

/** True when the private key belongs to the certificate's public key. */
export function keyMatchesCertificate(key: KeyObject, cert: X509Certificate): boolean {
  const fromKey = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const fromCert = cert.publicKey.export({ type: 'spki', format: 'der' });
  return Buffer.compare(fromKey, fromCert) === 0;
}

/** Concatenates PEM blocks with exactly one newline between them. */
export function joinPem(blocks: string[]): string {
  return blocks.map((b) => `${b.trim()}\n`).join('');
}

/**
 * Until when a client certificate is accepted: its NotAfter, or its issuer's when that comes first. The issuer is
 * looked up in `trustedCas` (the kube-apiserver's client CA bundle) by name and signature; Go's x509 Verify
 * rejects a chain with an expired CA, and the operators do not clamp a client to its signer (library-go
 * pkg/crypto/crypto.go NewClientCertificateTemplateForDuration).
 */
export function clientCredentialExpiry(clientCert: Buffer, trustedCas: string | undefined): { notAfter: string; signer?: string } | undefined {
  const first = splitCertificates(clientCert.toString('utf8'))[0];
  if (!first) return undefined;
  try {
    const leaf = new X509Certificate(first);
    const own = new Date(leaf.validTo).toISOString();
    const issuer = splitCertificates(trustedCas ?? '')
      .map((pem) => new X509Certificate(pem))
      .find((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
    if (!issuer || Date.parse(issuer.validTo) >= Date.parse(own)) return { notAfter: own };
    return { notAfter: new Date(issuer.validTo).toISOString(), signer: /CN=([^\n,]+)/.exec(issuer.subject)?.[1] ?? issuer.subject };
  } catch {
    return undefined;
  }
}

/** The NotAfter (ISO) of the first certificate in a kubeconfig's client-certificate data; undefined if none parses. */
export function clientCertificateNotAfter(clientCert: Buffer | undefined): string | undefined {
  const first = clientCert ? splitCertificates(clientCert.toString('utf8'))[0] : undefined;
  if (!first) return undefined;
  try {
    return new Date(new X509Certificate(first).validTo).toISOString();
  } catch {
    return undefined;
  }
}
