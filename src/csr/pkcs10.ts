// A PKCS#10 certificate request (RFC 2986) parsed generically with our DER reader (src/certs/asn1.ts): node-forge's
// certificationRequestFromPem only knows RSA ("OID is not RSA"), and real kubelet CSRs carry ECDSA P-256
// keys (client-go util/certificate: the kubelet's certificate manager generates P-256 keys). The
// self-signature is verified with node:crypto, which takes RSA, EC and Ed25519 SubjectPublicKeyInfo.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { Class, Type, derChildren, derElementAt, derToOid, fromDer as decodeDer, type Asn1 } from '../certs/asn1';
import { ipFromBytes } from './ip';

export class CsrParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsrParseError';
  }
}

export interface CsrSubject {
  /** Every CN in the subject (a well-formed node CSR has exactly one). */
  commonNames: string[];
  organizations: string[];
  /** Every other attribute, e.g. { type: 'OU', value: 'x' }. */
  other: { type: string; value: string }[];
}

export interface CsrPublicKey {
  algorithm: 'RSA' | 'EC' | 'Ed25519' | 'other';
  /** The SubjectPublicKeyInfo algorithm OID. */
  oid: string;
  /** EC only: 'P-256', 'P-384', 'P-521' or the curve OID. */
  curve?: string;
  /** RSA only: modulus length. */
  bits?: number;
}

export interface CsrSans {
  dns: string[];
  /** 16-byte addresses (IPv4 as IPv4-mapped); see ./ip. */
  ip: Buffer[];
  email: string[];
  uri: string[];
  /** otherName, directoryName, registeredID, x400Address, ediPartyName: described, e.g. 'otherName'. */
  other: string[];
}

export interface ParsedCsr {
  subject: CsrSubject;
  publicKey: CsrPublicKey;
  /** e.g. 'ecdsa-with-SHA256', 'sha256WithRSAEncryption', or the OID when unknown. */
  signatureAlgorithm: string;
  /** True only when the self-signature verifies with the request's own public key. */
  signatureValid: boolean;
  /** Why the signature did not verify (unsupported algorithm, mismatch). */
  signatureProblem?: string;
  sans: CsrSans;
  /** Requested keyUsage bits, when the request carries the extension (e.g. 'digitalSignature'). */
  keyUsage?: string[];
  /** Requested extKeyUsage, when present (e.g. 'serverAuth', or the OID when unknown). */
  extKeyUsage?: string[];
  /** Requested basicConstraints cA flag, when present. */
  basicConstraintsCA?: boolean;
  /** OIDs of every requested extension. */
  extensionOids: string[];
}

const OID = {
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecPublicKey: '1.2.840.10045.2.1',
  ed25519: '1.3.101.112',
} as const;

const SUBJECT_TYPES: Record<string, string> = {
  '2.5.4.3': 'CN', '2.5.4.10': 'O', '2.5.4.11': 'OU', '2.5.4.6': 'C', '2.5.4.8': 'ST', '2.5.4.7': 'L',
  '2.5.4.5': 'serialNumber', '2.5.4.9': 'street', '2.5.4.17': 'postalCode', '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC', '0.9.2342.19200300.100.1.1': 'UID',
};

const CURVES: Record<string, string> = { '1.2.840.10045.3.1.7': 'P-256', '1.3.132.0.34': 'P-384', '1.3.132.0.35': 'P-521' };

const EKU: Record<string, string> = {
  '1.3.6.1.5.5.7.3.1': 'serverAuth', '1.3.6.1.5.5.7.3.2': 'clientAuth', '1.3.6.1.5.5.7.3.3': 'codeSigning',
  '1.3.6.1.5.5.7.3.4': 'emailProtection', '1.3.6.1.5.5.7.3.8': 'timeStamping', '1.3.6.1.5.5.7.3.9': 'OCSPSigning',
  '2.5.29.37.0': 'anyExtendedKeyUsage',
};

const KEY_USAGE_BITS = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign', 'encipherOnly', 'decipherOnly'];

/** Signature algorithms node:crypto can check; SHA-1 is refused, as Go's x509 refuses it for CSRs. */
const SIGNATURE_ALGORITHMS: Record<string, { name: string; hash: string | null; key: CsrPublicKey['algorithm'] }> = {
  '1.2.840.113549.1.1.11': { name: 'sha256WithRSAEncryption', hash: 'sha256', key: 'RSA' },
  '1.2.840.113549.1.1.12': { name: 'sha384WithRSAEncryption', hash: 'sha384', key: 'RSA' },
  '1.2.840.113549.1.1.13': { name: 'sha512WithRSAEncryption', hash: 'sha512', key: 'RSA' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa-with-SHA256', hash: 'sha256', key: 'EC' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa-with-SHA384', hash: 'sha384', key: 'EC' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa-with-SHA512', hash: 'sha512', key: 'EC' },
  '1.3.101.112': { name: 'Ed25519', hash: null, key: 'Ed25519' },
};
const KNOWN_UNSUPPORTED: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'sha1WithRSAEncryption (SHA-1 is not accepted)',
  '1.2.840.10045.4.1': 'ecdsa-with-SHA1 (SHA-1 is not accepted)',
  '1.2.840.113549.1.1.10': 'RSASSA-PSS (not supported)',
  '1.2.840.113549.1.1.4': 'md5WithRSAEncryption (MD5 is not accepted)',
};

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/**
 * The CSR text from a CertificateSigningRequest's `spec.request`: base64 of the PEM in JSON (as the API
 * serves it), or the PEM itself (tolerated for hand-made objects).
 */
export function requestToPem(request: string | undefined): string {
  if (!request) throw new CsrParseError('spec.request is empty');
  if (request.includes('-----BEGIN')) return request;
  const compact = request.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw new CsrParseError('spec.request is neither PEM nor base64');
  return Buffer.from(compact, 'base64').toString('latin1');
}

/** Parses one PEM "CERTIFICATE REQUEST" block. Throws CsrParseError (never anything else) on bad input. */
export function parseCsrPem(pem: string): ParsedCsr {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) throw new CsrParseError('no PEM block found (expected "-----BEGIN CERTIFICATE REQUEST-----")');
  if (blocks.length > 1) throw new CsrParseError(`${blocks.length} PEM blocks found; a CSR request holds exactly one`);
  const [, label, body] = blocks[0] as RegExpMatchArray;
  if (label !== 'CERTIFICATE REQUEST' && label !== 'NEW CERTIFICATE REQUEST') {
    throw new CsrParseError(`PEM block is "${label}", expected "CERTIFICATE REQUEST"`);
  }
  const b64 = (body ?? '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length === 0) throw new CsrParseError('PEM body is not base64');
  return parseCsrDer(Buffer.from(b64, 'base64'));
}

export function parseCsrDer(der: Buffer): ParsedCsr {
  try {
    return parseUnchecked(der);
  } catch (e) {
    if (e instanceof CsrParseError) throw e;
    throw new CsrParseError(`malformed PKCS#10 structure: ${e instanceof Error ? e.message : String(e)}`);
  }
}

// Strict DER of one whole element; bit strings stay raw bytes (the signature and public key are not nested ASN.1).
const fromDer = (bytes: string): Asn1 => decodeDer(bytes);

function parseUnchecked(der: Buffer): ParsedCsr {
  const top = derElementAt(der, 0);
  if (top.end !== der.length) throw new CsrParseError('trailing bytes after the CertificationRequest');
  const [infoSpan, , ] = derChildren(der, top);
  if (!infoSpan) throw new CsrParseError('empty CertificationRequest');
  const infoChildren = derChildren(der, infoSpan);
  const spkiSpan = infoChildren[2];
  if (!spkiSpan) throw new CsrParseError('CertificationRequestInfo has no subjectPublicKeyInfo');

  const root = fromDer(der.toString('latin1'));
  const [info, sigAlg, sigBits] = seq(root, 'CertificationRequest', 3);
  const [version, subject, spki, attributes] = children(info, 'CertificationRequestInfo');
  expectType(version, Type.INTEGER, 'version');
  if (bytesOf(version) !== '\x00') throw new CsrParseError('version is not 0 (v1)');

  const publicKeyDer = der.subarray(spkiSpan.start, spkiSpan.end);
  const { publicKey, keyObject } = parsePublicKey(spki, publicKeyDer);
  const parsed: ParsedCsr = {
    subject: parseName(subject),
    publicKey,
    signatureAlgorithm: '',
    signatureValid: false,
    sans: { dns: [], ip: [], email: [], uri: [], other: [] },
    extensionOids: [],
  };
  if (attributes) parseAttributes(attributes, parsed);

  const [algOid] = seq(sigAlg, 'signatureAlgorithm');
  const alg = oidOf(algOid, 'signatureAlgorithm');
  const signature = bitStringBytes(sigBits, 'signature', true);
  const known = SIGNATURE_ALGORITHMS[alg];
  parsed.signatureAlgorithm = known?.name ?? KNOWN_UNSUPPORTED[alg] ?? alg;
  if (!known) {
    parsed.signatureProblem = `signature algorithm ${parsed.signatureAlgorithm} is not accepted`;
  } else if (!keyObject) {
    parsed.signatureProblem = `public key algorithm ${publicKey.oid} is not supported`;
  } else if (known.key !== publicKey.algorithm) {
    parsed.signatureProblem = `signature algorithm ${known.name} does not fit a ${publicKey.algorithm} key`;
  } else {
    const tbs = der.subarray(infoSpan.start, infoSpan.end);
    let ok = false;
    try {
      ok = verify(known.hash, tbs, publicKey.algorithm === 'EC' ? { key: keyObject, dsaEncoding: 'der' } : keyObject, signature);
    } catch {
      ok = false;
    }
    parsed.signatureValid = ok;
    if (!ok) parsed.signatureProblem = 'the self-signature does not verify with the request\'s public key (altered or forged request)';
  }
  return parsed;
}

function parsePublicKey(spki: Asn1 | undefined, spkiDer: Buffer): { publicKey: CsrPublicKey; keyObject?: KeyObject } {
  const [alg] = seq(spki, 'subjectPublicKeyInfo', 2);
  const [algOid, params] = children(alg, 'subjectPublicKeyInfo.algorithm');
  const oid = oidOf(algOid, 'subjectPublicKeyInfo.algorithm');
  let keyObject: KeyObject | undefined;
  try {
    keyObject = createPublicKey({ key: spkiDer, format: 'der', type: 'spki' });
  } catch (e) {
    if (oid === OID.rsaEncryption || oid === OID.ecPublicKey || oid === OID.ed25519) {
      throw new CsrParseError(`public key cannot be read: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (oid === OID.rsaEncryption) {
    return { publicKey: { algorithm: 'RSA', oid, bits: keyObject?.asymmetricKeyDetails?.modulusLength }, keyObject };
  }
  if (oid === OID.ecPublicKey) {
    const curveOid = params && params.type === Type.OID ? derToOid(bytesOf(params)) : 'unknown';
    return { publicKey: { algorithm: 'EC', oid, curve: CURVES[curveOid] ?? curveOid }, keyObject };
  }
  if (oid === OID.ed25519) return { publicKey: { algorithm: 'Ed25519', oid }, keyObject };
  return { publicKey: { algorithm: 'other', oid } };
}

function parseName(name: Asn1 | undefined): CsrSubject {
  const subject: CsrSubject = { commonNames: [], organizations: [], other: [] };
  for (const rdn of children(name, 'subject')) {
    expectType(rdn, Type.SET, 'subject RDN');
    for (const atv of children(rdn, 'subject RDN')) {
      const [typeOid, value] = seq(atv, 'subject attribute', 2);
      const oid = oidOf(typeOid, 'subject attribute type');
      const text = directoryString(value, `subject ${SUBJECT_TYPES[oid] ?? oid}`);
      const type = SUBJECT_TYPES[oid] ?? oid;
      if (type === 'CN') subject.commonNames.push(text);
      else if (type === 'O') subject.organizations.push(text);
      else subject.other.push({ type, value: text });
    }
  }
  return subject;
}

function parseAttributes(attributes: Asn1, out: ParsedCsr): void {
  if (attributes.tagClass !== Class.CONTEXT_SPECIFIC || attributes.type !== 0) {
    throw new CsrParseError('CertificationRequestInfo.attributes is not [0]');
  }
  let seenExtensionRequest = false;
  for (const attr of children(attributes, 'attributes')) {
    const [typeOid, values] = seq(attr, 'attribute', 2);
    if (oidOf(typeOid, 'attribute type') !== OID.extensionRequest) continue;
    if (seenExtensionRequest) throw new CsrParseError('more than one extensionRequest attribute');
    seenExtensionRequest = true;
    expectType(values, Type.SET, 'extensionRequest values');
    const sets = children(values, 'extensionRequest values');
    if (sets.length !== 1) throw new CsrParseError('extensionRequest must hold exactly one Extensions value');
    for (const ext of children(sets[0], 'Extensions')) parseExtension(ext, out);
  }
}

function parseExtension(ext: Asn1, out: ParsedCsr): void {
  const parts = children(ext, 'Extension');
  const oid = oidOf(parts[0], 'extension id');
  const valueNode = parts[parts.length - 1];
  expectType(valueNode, Type.OCTETSTRING, `extension ${oid} value`);
  if (out.extensionOids.includes(oid)) throw new CsrParseError(`extension ${oid} is requested twice`);
  out.extensionOids.push(oid);
  const inner = (): Asn1 => fromDer(bytesOf(valueNode));
  if (oid === OID.subjectAltName) parseSans(inner(), out.sans);
  else if (oid === OID.keyUsage) out.keyUsage = keyUsageBits(bitStringBytes(inner(), 'keyUsage'));
  else if (oid === OID.extKeyUsage) out.extKeyUsage = children(inner(), 'extKeyUsage').map((o) => { const id = oidOf(o, 'extKeyUsage'); return EKU[id] ?? id; });
  else if (oid === OID.basicConstraints) {
    const first = children(inner(), 'basicConstraints')[0];
    out.basicConstraintsCA = first?.type === Type.BOOLEAN ? bytesOf(first) !== '\x00' : false;
  }
}

// GeneralName tags (RFC 5280 4.2.1.6): [0] otherName, [1] rfc822Name, [2] dNSName, [3] x400Address,
// [4] directoryName, [5] ediPartyName, [6] uniformResourceIdentifier, [7] iPAddress, [8] registeredID.
const OTHER_NAME_KINDS: Record<number, string> = { 0: 'otherName', 3: 'x400Address', 4: 'directoryName', 5: 'ediPartyName', 8: 'registeredID' };

function parseSans(names: Asn1, sans: CsrSans): void {
  for (const name of children(names, 'subjectAltName')) {
    if (name.tagClass !== Class.CONTEXT_SPECIFIC) throw new CsrParseError('subjectAltName entry is not a GeneralName');
    switch (name.type) {
      case 1: sans.email.push(ia5(name, 'email SAN')); break;
      case 2: sans.dns.push(ia5(name, 'DNS SAN')); break;
      case 6: sans.uri.push(ia5(name, 'URI SAN')); break;
      case 7: {
        const ip = ipFromBytes(Buffer.from(bytesOf(name), 'latin1'));
        if (!ip) throw new CsrParseError(`IP SAN has ${bytesOf(name).length} bytes; expected 4 or 16`);
        sans.ip.push(ip);
        break;
      }
      default: sans.other.push(OTHER_NAME_KINDS[name.type] ?? `GeneralName[${name.type}]`);
    }
  }
}

function keyUsageBits(bits: Buffer): string[] {
  const out: string[] = [];
  KEY_USAGE_BITS.forEach((usage, i) => {
    const byte = bits[i >> 3] ?? 0;
    if (byte & (0x80 >> (i & 7))) out.push(usage);
  });
  return out;
}

function seq(node: Asn1 | undefined, what: string, min = 1): Asn1[] {
  expectType(node, Type.SEQUENCE, what);
  const list = children(node, what);
  if (list.length < min) throw new CsrParseError(`${what} has ${list.length} elements; expected at least ${min}`);
  return list;
}

function children(node: Asn1 | undefined, what: string): Asn1[] {
  if (!node || !Array.isArray(node.value)) throw new CsrParseError(`${what} is missing or not constructed`);
  return node.value;
}

function bytesOf(node: Asn1 | undefined): string {
  if (!node || typeof node.value !== 'string') throw new CsrParseError('expected a primitive ASN.1 value');
  return node.value;
}

function expectType(node: Asn1 | undefined, type: number, what: string): void {
  if (!node || node.tagClass !== Class.UNIVERSAL || node.type !== type) throw new CsrParseError(`${what} has an unexpected ASN.1 type`);
}

function oidOf(node: Asn1 | undefined, what: string): string {
  expectType(node, Type.OID, what);
  return derToOid(bytesOf(node));
}

function bitStringBytes(node: Asn1 | undefined, what: string, wholeBytes = false): Buffer {
  expectType(node, Type.BITSTRING, what);
  const raw = bytesOf(node);
  if (raw.length === 0) throw new CsrParseError(`${what} bit string is empty`);
  if (wholeBytes && raw.charCodeAt(0) !== 0) throw new CsrParseError(`${what} bit string has unused bits`);
  return Buffer.from(raw.slice(1), 'latin1');
}

function ia5(node: Asn1, what: string): string {
  const raw = bytesOf(node);
  // eslint-disable-next-line no-control-regex -- IA5String is 7-bit ASCII (RFC 5280); anything else is malformed
  if (!/^[\x00-\x7f]*$/.test(raw)) throw new CsrParseError(`${what} is not ASCII`);
  return raw;
}

function directoryString(node: Asn1 | undefined, what: string): string {
  const raw = bytesOf(node);
  switch (node?.type as number | undefined) {
    case Type.UTF8:
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(raw, 'latin1'));
      } catch {
        throw new CsrParseError(`${what} is not valid UTF-8`);
      }
    case Type.BMPSTRING: {
      const b = Buffer.from(raw, 'latin1');
      if (b.length % 2) throw new CsrParseError(`${what} BMPString has an odd length`);
      return b.swap16().toString('utf16le');
    }
    case Type.PRINTABLESTRING:
    case Type.IA5STRING:
    case 20: // TeletexString
    case 26: // VisibleString
      return raw;
    default:
      throw new CsrParseError(`${what} has an unsupported string type`);
  }
}
