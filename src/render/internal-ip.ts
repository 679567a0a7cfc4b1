// The stable internal node IP (seed 000, "IP address modification"): an extra address on br-ex that kubelet and
// CRI-O use, so the node keeps its identity (node IP, serving certificate SANs, etcd peer URL) while the
// site network around it changes.
import { BR_EX } from './layout';

export class CidrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CidrError';
  }
}

export interface InternalAddress {
  family: 4 | 6;
  /** Canonical text, as `ip addr` prints it (RFC 5952 for IPv6). */
  address: string;
  prefix: number;
  /** address/prefix */
  cidr: string;
  /** The subnet's first address: the KUBELET_NODEIP_HINT value. */
  network: string;
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    value = (value << 8n) | BigInt(p);
  }
  return value;
}

function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
}

function parseIpv6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  let groups: string[];
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const expand = (s: string): string[] | undefined => {
    if (s === '') return [];
    const out: string[] = [];
    const parts = s.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] ?? '';
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIpv4(p);
        if (v4 === undefined) return undefined;
        out.push(((v4 >> 16n) & 0xffffn).toString(16), (v4 & 0xffffn).toString(16));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
        out.push(p);
      }
    }
    return out;
  };
  const head = expand(halves[0] ?? '');
  const tail = halves.length === 2 ? expand(halves[1] ?? '') : [];
  if (!head || !tail) return undefined;
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    groups = [...head, ...Array<string>(missing).fill('0'), ...tail];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** RFC 5952: lowercase, no leading zeros, the longest run (>= 2) of zero groups as `::`, the first on a tie. */
function formatIpv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/**
 * Parses `--internal-ip ADDRESS/PREFIX`. The address must be usable as a host address: not the subnet's first
 * or (IPv4) last address, not loopback, link-local, multicast or unspecified.
 */
export function parseInternalCidr(text: string): InternalAddress {
  const where = `--internal-ip "${text}"`;
  const m = /^([^/\s]+)\/([0-9]{1,3})$/.exec(text.trim());
  if (!m || !m[1] || !m[2]) throw new CidrError(`${where}: expected ADDRESS/PREFIX, e.g. 192.168.127.10/24 or fd00:127::10/64`);
  const prefix = Number(m[2]);
  const v4 = parseIpv4(m[1]);
  const v6 = v4 === undefined ? parseIpv6(m[1]) : undefined;
  if (v4 === undefined && v6 === undefined) throw new CidrError(`${where}: "${m[1]}" is not an IPv4 or IPv6 address`);
  const family: 4 | 6 = v4 !== undefined ? 4 : 6;
  const bits = family === 4 ? 32 : 128;
  const value = (v4 ?? v6) as bigint;
  if (prefix < 1 || prefix > bits) throw new CidrError(`${where}: prefix /${prefix} is out of range for IPv${family} (1-${bits})`);
  const hostBits = BigInt(bits - prefix);
  const hostMask = (1n << hostBits) - 1n;
  const network = value & ~hostMask & ((1n << BigInt(bits)) - 1n);
  const format = family === 4 ? formatIpv4 : formatIpv6;
  if (family === 4) {
    const first = Number(value >> 24n);
    if (first === 0 || first === 127 || first >= 224 || (first === 169 && Number((value >> 16n) & 0xffn) === 254)) {
      throw new CidrError(`${where}: ${format(value)} is not a unicast host address (0/8, loopback, link-local, multicast and reserved are not allowed)`);
    }
  } else {
    const top = value >> 112n;
    if (value === 0n || value === 1n || top >> 8n === 0xffn || (top & 0xffc0n) === 0xfe80n) {
      throw new CidrError(`${where}: ${format(value)} is not a unicast host address (unspecified, loopback, multicast and link-local fe80::/10 are not allowed)`);
    }
  }
  if (hostBits >= 2n && (value & hostMask) === 0n) {
    throw new CidrError(`${where}: ${format(value)} is the subnet address of /${prefix}; give the node's own address, e.g. ${format(network + 10n)}/${prefix}`);
  }
  if (family === 4 && hostBits >= 2n && (value & hostMask) === hostMask) {
    throw new CidrError(`${where}: ${format(value)} is the broadcast address of /${prefix}`);
  }
  const address = format(value);
  return { family, address, prefix, cidr: `${address}/${prefix}`, network: format(network) };
}

/** The canonical text of an IP address (RFC 5952 for IPv6), or undefined when `text` is not one. */
export function canonicalIp(text: string): string | undefined {
  const v4 = parseIpv4(text);
  if (v4 !== undefined) return formatIpv4(v4);
  const v6 = parseIpv6(text);
  return v6 === undefined ? undefined : formatIpv6(v6);
}

/**
 * Why the internal addresses cannot be used on this node, or undefined when each is one of the Node's current
 * InternalIP addresses. Seed 000 ("IP address modification"): the internal IP "will be the same IP as
 * ovs-configuration.service configured on the br-ex bridge during the installation". Any other address changes
 * the node IP after install, and etcd's peer URL and certificates are for the installed one.
 */
export function internalAddressProblem(internal: readonly string[], nodeName: string, nodeInternalIPs: readonly string[]): string | undefined {
  const installed = new Set(nodeInternalIPs.map((a) => canonicalIp(a) ?? a));
  const foreign = internal.filter((a) => !installed.has(canonicalIp(a) ?? a));
  if (foreign.length === 0) return undefined;
  const has = nodeInternalIPs.length ? `has InternalIP ${nodeInternalIPs.join(', ')}` : 'reports no InternalIP address';
  return `internal IP ${foreign.join(', ')} is not the node's installed IP: Node ${nodeName} ${has}, and etcd's peer URL and certificates are for that`;
}

/** At most one address per family (kubelet takes one IPv4 and/or one IPv6 node IP). */
export function parseInternalAddresses(texts: readonly string[]): InternalAddress[] {
  const out = texts.map(parseInternalCidr);
  for (const family of [4, 6] as const) {
    const same = out.filter((a) => a.family === family);
    if (same.length > 1) throw new CidrError(`--internal-ip: at most one IPv${family} address (got ${same.map((a) => a.cidr).join(', ')})`);
  }
  return out.sort((a, b) => a.family - b.family);
}

/**
 * NetworkManager dispatcher script: puts the internal addresses on br-ex whenever br-ex comes up (pre-up, so
 * they are there before NetworkManager-wait-online and nodeip-configuration), and again after events where
 * NetworkManager re-syncs the device's addresses (up, reapply, DHCP changes). Idempotent.
 * IPv6 uses `nodad`: a tentative address cannot be bound, and nodeip-configuration rejects it.
 */
export function renderDispatcherScript(addresses: readonly InternalAddress[]): string {
  const adds = addresses.map((a) => `add_address ${a.family} ${a.cidr}${a.family === 6 ? ' nodad' : ''}`);
  return `#!/bin/bash
# sno-reconfigure: keeps the node's stable internal IP on ${BR_EX} (NetworkManager dispatcher script).
# ovs-configuration creates ${BR_EX} and moves the node's address onto it; kubelet and CRI-O use the extra
# address below, so the node keeps its identity when the site network changes (seed 000).
# Rendered by \`sno-reconfigure render --internal-ip\` (src/render/internal-ip.ts).
# NetworkManager calls it as: SCRIPT INTERFACE ACTION
interface="\${1:-}"
action="\${2:-}"
[ "$interface" = ${BR_EX} ] || exit 0
case "$action" in
  pre-up|up|reapply|dhcp4-change|dhcp6-change) ;;
  *) exit 0 ;;
esac

add_address() {
  local family="$1" cidr="$2"
  shift 2
  if ip -o "-$family" addr show dev ${BR_EX} | grep -qF " $cidr "; then
    return 0
  fi
  if ip "-$family" addr add "$cidr" dev ${BR_EX} "$@"; then
    logger -t sno-reconfigure "added internal address $cidr to ${BR_EX} ($action)" 2>/dev/null || true
  else
    logger -t sno-reconfigure -p daemon.err "could not add internal address $cidr to ${BR_EX} ($action)" 2>/dev/null || true
  fi
}

${adds.join('\n')}
exit 0
`;
}

/**
 * /etc/default/nodeip-configuration: KUBELET_NODEIP_HINT lists one address per family; node-ip picks the host
 * address in the same subnet (the internal address). Quoted: the file is read by systemd's EnvironmentFile=
 * and the value is word-split by nodeip-configuration's bash (openshift-kni/lifecycle-agent postpivot
 * setNodeIpHint joins dual-stack hints with a space the same way).
 */
export function renderNodeIpHint(addresses: readonly InternalAddress[]): string {
  return [
    '# sno-reconfigure: kubelet and CRI-O use the stable internal IP on br-ex.',
    '# Read by nodeip-configuration.service (baremetal-runtimecfg node-ip set).',
    `KUBELET_NODEIP_HINT="${addresses.map((a) => a.network).join(' ')}"`,
    '',
  ].join('\n');
}

/**
 * The direct alternative where nodeip-configuration does not run (it is enabled on platform None only): the
 * same variables baremetal-runtimecfg writes to 20-nodenet.conf, in drop-ins that sort after it.
 */
export function renderNodeIpDropins(addresses: readonly InternalAddress[]): { kubelet: string; crio: string } {
  const primary = addresses[0];
  if (!primary) throw new CidrError('--internal-ip: no address given');
  const all = addresses.map((a) => a.address).join(',');
  return {
    kubelet: `# sno-reconfigure: kubelet registers with the stable internal IP (sorts after 20-nodenet.conf).\n[Service]\nEnvironment="KUBELET_NODE_IP=${primary.address}" "KUBELET_NODE_IPS=${all}"\n`,
    crio: `# sno-reconfigure: CRI-O serves exec/attach streams on the stable internal IP.\n[Service]\nEnvironment="CONTAINER_STREAM_ADDRESS=${primary.address}"\n`,
  };
}
