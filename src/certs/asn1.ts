// A small strict DER codec (X.690): enough to read PKCS#10 requests and write X.509 certificates.
// node-forge's asn1 module did this before; on its own it cost 42 KB of the bundle, and the bundle must
// fit its MachineConfig budget (DESIGN.md section 6). Values are binary (latin1) strings, as in forge,
// so byte-exact comparisons stay simple. Only definite lengths and single-byte tags: BER forms are errors.

export const Class = { UNIVERSAL: 0x00, APPLICATION: 0x40, CONTEXT_SPECIFIC: 0x80, PRIVATE: 0xc0 } as const;

export const Type = {
  BOOLEAN: 1,
  INTEGER: 2,
  BITSTRING: 3,
  OCTETSTRING: 4,
  NULL: 5,
  OID: 6,
  UTF8: 12,
  SEQUENCE: 16,
  SET: 17,
  PRINTABLESTRING: 19,
  T61STRING: 20,
  IA5STRING: 22,
  UTCTIME: 23,
  GENERALIZEDTIME: 24,
  UNIVERSALSTRING: 28,
  BMPSTRING: 30,
} as const;

export interface Asn1 {
  tagClass: number;
  type: number;
  constructed: boolean;
  /** Content bytes (primitive) or children (constructed). */
  value: string | Asn1[];
}

export class DerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerError';
  }
}

export function create(tagClass: number, type: number, constructed: boolean, value: string | Asn1[]): Asn1 {
  return { tagClass, type, constructed, value };
}

/** Byte span of the element at `offset`: where its content starts and where it ends. */
export interface DerSpan {
  /** Offset of the tag byte. */
  start: number;
  contentStart: number;
  /** Offset just past the content. */
  end: number;
  tag: number;
}

export function derElementAt(der: Uint8Array, offset: number): DerSpan {
  if (offset + 2 > der.length) throw new DerError('DER element truncated');
  const tag = der[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('DER multi-byte tags are not supported');
  let pos = offset + 1;
  const first = der[pos++]!;
  let length: number;
  if (first < 0x80) {
    length = first;
  } else {
    const count = first & 0x7f;
    if (count === 0) throw new DerError('indefinite length (BER) is not DER');
    if (count > 4) throw new DerError('DER length too large');
    length = 0;
    for (let i = 0; i < count; i++) {
      if (pos >= der.length) throw new DerError('DER length truncated');
      length = length * 256 + der[pos++]!;
    }
    if (length < 0x80 || (count > 1 && der[offset + 2] === 0)) throw new DerError('DER length not in its shortest form');
  }
  const end = pos + length;
  if (end > der.length) throw new DerError('DER element runs past the end of the input');
  return { start: offset, contentStart: pos, end, tag };
}

/** The direct children of the constructed element `parent`. */
export function derChildren(der: Uint8Array, parent: DerSpan): DerSpan[] {
  const out: DerSpan[] = [];
  for (let pos = parent.contentStart; pos < parent.end; ) {
    const child = derElementAt(der, pos);
    if (child.end > parent.end) throw new DerError('DER child runs past its parent');
    out.push(child);
    pos = child.end;
  }
  return out;
}

function decode(bytes: Buffer, span: DerSpan, depth: number): Asn1 {
  if (depth > 32) throw new DerError('DER nested too deeply');
  const constructed = (span.tag & 0x20) !== 0;
  const node = create(span.tag & 0xc0, span.tag & 0x1f, constructed, '');
  node.value = constructed ? derChildren(bytes, span).map((c) => decode(bytes, c, depth + 1)) : bytes.subarray(span.contentStart, span.end).toString('latin1');
  return node;
}

/** Parses exactly one DER element that spans all of `bytes` (a binary string or a buffer). */
export function fromDer(bytes: string | Uint8Array): Asn1 {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
  const top = derElementAt(buf, 0);
  if (top.end !== buf.length) throw new DerError(`${buf.length - top.end} unparsed bytes after the DER element`);
  return decode(buf, top, 0);
}

function lengthBytes(n: number): string {
  if (n < 0x80) return String.fromCharCode(n);
  let out = '';
  for (let v = n; v > 0; v = Math.floor(v / 256)) out = String.fromCharCode(v & 0xff) + out;
  return String.fromCharCode(0x80 | out.length) + out;
}

export function toDer(node: Asn1): string {
  const content = typeof node.value === 'string' ? node.value : node.value.map(toDer).join('');
  const tag = node.tagClass | (node.constructed ? 0x20 : 0) | node.type;
  return String.fromCharCode(tag) + lengthBytes(content.length) + content;
}

export function oidToDer(oid: string): string {
  const parts = oid.split('.').map(Number);
  if (parts.length < 2 || parts.some((p) => !Number.isInteger(p) || p < 0)) throw new DerError(`not an OID: ${oid}`);
  const arcs = [parts[0]! * 40 + parts[1]!, ...parts.slice(2)];
  let out = '';
  for (const arc of arcs) {
    let chunk = String.fromCharCode(arc & 0x7f);
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk = String.fromCharCode(0x80 | (v & 0x7f)) + chunk;
    out += chunk;
  }
  return out;
}

export function derToOid(bytes: string): string {
  if (bytes.length === 0) throw new DerError('empty OID');
  const arcs: number[] = [];
  let value = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes.charCodeAt(i);
    value = value * 128 + (b & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER) throw new DerError('OID arc too large');
    if ((b & 0x80) === 0) {
      arcs.push(value);
      value = 0;
    } else if (i === bytes.length - 1) {
      throw new DerError('OID truncated');
    }
  }
  const first = arcs.shift()!;
  const top = first < 40 ? 0 : first < 80 ? 1 : 2;
  return [top, first - top * 40, ...arcs].join('.');
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** UTCTime (YYMMDDHHMMSSZ), for dates through 2049 (RFC 5280 4.1.2.5). */
export function utcTime(d: Date): string {
  return `${pad(d.getUTCFullYear() % 100)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}Z`;
}

/** GeneralizedTime (YYYYMMDDHHMMSSZ), for dates from 2050. */
export function generalizedTime(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}${utcTime(d).slice(2)}`;
}
