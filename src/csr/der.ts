// Byte spans of DER elements. The CSR's self-signature covers the exact bytes of
// CertificationRequestInfo (RFC 2986 section 4.2), so those bytes are cut from the input rather than
// re-encoded from a parsed tree (a re-encoding may differ and would then never verify).

export interface DerSpan {
  /** Offset of the tag byte. */
  start: number;
  /** Offset just past the content. */
  end: number;
  tag: number;
}

/** The element starting at `offset`; throws on truncated input or indefinite/oversized lengths. */
export function derElementAt(der: Uint8Array, offset: number): DerSpan {
  if (offset + 2 > der.length) throw new Error('DER element truncated');
  const tag = der[offset] ?? 0;
  if ((tag & 0x1f) === 0x1f) throw new Error('DER multi-byte tags are not used in a CSR');
  let pos = offset + 1;
  const first = der[pos++] ?? 0;
  let length: number;
  if (first < 0x80) {
    length = first;
  } else {
    const count = first & 0x7f;
    if (count === 0) throw new Error('indefinite length (BER) is not DER');
    if (count > 4) throw new Error('DER length too large');
    length = 0;
    for (let i = 0; i < count; i++) {
      if (pos >= der.length) throw new Error('DER length truncated');
      length = length * 256 + (der[pos++] ?? 0);
    }
  }
  const end = pos + length;
  if (end > der.length) throw new Error('DER element runs past the end of the input');
  return { start: offset, end, tag };
}

/** The direct children of the constructed element `parent`. */
export function derChildren(der: Uint8Array, parent: DerSpan): DerSpan[] {
  const headerEnd = contentStart(der, parent);
  const out: DerSpan[] = [];
  for (let pos = headerEnd; pos < parent.end; ) {
    const child = derElementAt(der, pos);
    if (child.end > parent.end) throw new Error('DER child runs past its parent');
    out.push(child);
    pos = child.end;
  }
  return out;
}

function contentStart(der: Uint8Array, span: DerSpan): number {
  const first = der[span.start + 1] ?? 0;
  return span.start + 2 + (first < 0x80 ? 0 : first & 0x7f);
}
