// IP addresses as bytes, so SANs compare as addresses rather than strings (DESIGN.md section 5:
// `fd00::10` = `fd00:0:0:0:0:0:0:10`). IPv4 and IPv4-mapped IPv6 (`::ffff:a.b.c.d`) compare equal, as
// Go's net.IP.Equal does: the kube-controller-manager signer and cluster-machine-approver are Go, and
// Go's x509 writes an IPv4 SAN as 4 bytes whichever form the kubelet held it in.

/** 16 bytes (IPv4 as IPv4-mapped), or undefined when `text` is not an IP address. */
export function parseIp(text: string): Buffer | undefined {
  const s = text.trim();
  const v4 = parseIPv4(s);
  if (v4) return mapped(v4);
  return parseIPv6(s);
}

/** 16-byte form of a 4- or 16-byte SAN value; undefined for any other length. */
export function ipFromBytes(bytes: Uint8Array): Buffer | undefined {
  if (bytes.length === 4) return mapped(Buffer.from(bytes));
  if (bytes.length === 16) return Buffer.from(bytes);
  return undefined;
}

export function ipEqual(a: Buffer, b: Buffer): boolean {
  return a.length === 16 && b.length === 16 && a.equals(b);
}

/** Canonical text: dotted quad for IPv4 (and IPv4-mapped), RFC 5952 compressed form for IPv6. */
export function formatIp(ip: Buffer): string {
  if (ip.length === 4) return Array.from(ip).join('.');
  if (isV4Mapped(ip)) return Array.from(ip.subarray(12)).join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(ip.readUInt16BE(i));
  // RFC 5952 4.2: compress the longest run (first on ties) of two or more zero groups.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function isV4Mapped(ip: Buffer): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false;
  return ip[10] === 0xff && ip[11] === 0xff;
}

function mapped(v4: Buffer): Buffer {
  const out = Buffer.alloc(16);
  out[10] = 0xff;
  out[11] = 0xff;
  v4.copy(out, 12);
  return out;
}

// Leading zeros are rejected (Go >= 1.17 does too: "010.0.0.1" is ambiguous between octal and decimal).
function parseIPv4(s: string): Buffer | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = Buffer.alloc(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] ?? '';
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseIPv6(s: string): Buffer | undefined {
  if (s.includes('%')) return undefined; // zone ids never appear in certificates
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parseGroups = (part: string, allowV4Tail: boolean): number[] | undefined => {
    if (part === '') return [];
    const items = part.split(':');
    const groups: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const item = items[i] ?? '';
      if (allowV4Tail && i === items.length - 1 && item.includes('.')) {
        const v4 = parseIPv4(item);
        if (!v4) return undefined;
        groups.push(v4.readUInt16BE(0), v4.readUInt16BE(2));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return undefined;
        groups.push(parseInt(item, 16));
      }
    }
    return groups;
  };
  let groups: number[];
  if (halves.length === 2) {
    const head = parseGroups(halves[0] ?? '', false);
    const tail = parseGroups(halves[1] ?? '', true);
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = parseGroups(s, true);
    if (!all || all.length !== 8) return undefined;
    groups = all;
  }
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
