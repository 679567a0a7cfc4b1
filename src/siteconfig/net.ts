// Syntax rules for addresses and names used across the site-config: IPs and prefixes (nmstate, verify),
// DNS names (Kubernetes DNS-1123 rules, k8s.io/apimachinery validation.IsDNS1123Label/Subdomain), MAC
// addresses (spec.match) and registry references (the patterns of openshift/api ImageDigestMirrorSet and
// ImageTagMirrorSet).
import { isIPv4, isIPv6 } from 'node:net';

export type IpFamily = 4 | 6;

/** 4 or 6 for a plain address (no zone, no brackets, no prefix), undefined when it is not one. */
export function ipFamily(text: string): IpFamily | undefined {
  if (text.includes('%')) return undefined;
  if (isIPv4(text)) return 4;
  if (isIPv6(text)) return 6;
  return undefined;
}

/** An IPv6 address may carry a zone (`fe80::1%eth1`): nmstate accepts that for DNS servers only. */
export function ipFamilyWithZone(text: string): IpFamily | undefined {
  const pct = text.indexOf('%');
  if (pct < 0) return ipFamily(text);
  const zone = text.slice(pct + 1);
  if (zone === '' || !/^[A-Za-z0-9_.-]+$/.test(zone)) return undefined;
  return ipFamily(text.slice(0, pct)) === 6 ? 6 : undefined;
}

export const MAX_PREFIX: Record<IpFamily, number> = { 4: 32, 6: 128 };

export interface Cidr {
  family: IpFamily;
  address: string;
  prefix: number;
}

/** `ip/prefix` or a bare `ip` (a host route), as nmstate's route destinations accept. Returns a reason on error. */
export function parseCidr(text: string): Cidr | string {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const family = ipFamily(address);
  if (family === undefined) return `'${text}' is not an IP network: expected an address with an optional /prefix-length, e.g. 192.0.2.0/24 or 2001:db8::/64`;
  if (slash < 0) return { family, address, prefix: MAX_PREFIX[family] };
  const prefixText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > MAX_PREFIX[family]) {
    return `'${text}' has an invalid prefix length: expected 0-${MAX_PREFIX[family]} for IPv${family}`;
  }
  return { family, address, prefix: Number(prefixText) };
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Why `text` is not a DNS-1123 label (lower case, ≤ 63), or undefined when it is one. */
export function dns1123LabelProblem(text: string): string | undefined {
  if (text === '') return 'must not be empty';
  if (text.length > 63) return `is ${text.length} characters long; a DNS label is at most 63`;
  if (/[A-Z]/.test(text) && DNS1123_LABEL.test(text.toLowerCase())) return `must be lower case ('${text.toLowerCase()}')`;
  if (!DNS1123_LABEL.test(text)) return 'must consist of lower-case letters, digits and \'-\', and start and end with a letter or digit (RFC 1123)';
  return undefined;
}

/** Why `text` is not a DNS-1123 subdomain (dot-separated DNS-1123 labels, ≤ 253), or undefined. */
export function dns1123SubdomainProblem(text: string): string | undefined {
  if (text === '') return 'must not be empty';
  if (text.endsWith('.')) return `must not end with a dot ('${text.slice(0, -1)}')`;
  if (text.length > 253) return `is ${text.length} characters long; a DNS name is at most 253`;
  const labels = text.split('.');
  for (const label of labels) {
    if (label === '') return 'must not contain empty labels (\'..\') or start with a dot';
    const p = dns1123LabelProblem(label);
    if (p !== undefined) {
      if (p.startsWith('must be lower case')) return `must be lower case ('${text.toLowerCase()}')`;
      return `label '${label}' ${p}`;
    }
  }
  return undefined;
}

const HOST_LABEL = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;

/** A name to resolve (verify.resolve): RFC 1123 host name, any case, optional trailing dot. */
export function hostnameProblem(text: string): string | undefined {
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  if (name === '') return 'must not be empty';
  if (name.length > 253) return `is ${name.length} characters long; a DNS name is at most 253`;
  for (const label of name.split('.')) {
    if (label === '') return 'must not contain empty labels';
    if (label.length > 63) return `label '${label.slice(0, 20)}…' is ${label.length} characters long; a DNS label is at most 63`;
    if (!HOST_LABEL.test(label)) return `label '${label}' must consist of letters, digits and '-', and start and end with a letter or digit`;
  }
  if (ipFamily(name) !== undefined) return 'is an IP address, not a DNS name';
  return undefined;
}

const MAC = /^[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?:(?:\1[0-9A-Fa-f]{2}){14})?$/;

/** 6-octet Ethernet or 20-octet InfiniBand hardware address, ':' or '-' separated. */
export function isMacAddress(text: string): boolean {
  return MAC.test(text);
}

export function normalizeMac(text: string): string {
  return text.trim().toLowerCase().replace(/-/g, ':');
}

// Facts from openshift/api at commit 2a3d739: the patterns of ImageDigestMirrorSet's `mirrors` items and
// non-wildcard `source` (config/v1/types_image_digest_mirror_set.go, as its CRD manifest
// 0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml states them). ImageTagMirrorSet
// (types_image_tag_mirror_set.go) declares the very same two patterns, so these rules serve both lists.
const HOST_PART = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const REPOSITORY = new RegExp(
  `^(${HOST_PART}(?:(?:\\.${HOST_PART})+)?(?::[0-9]+)?)(?:(?:/[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?)+)?$`,
);
/** The `[*.]host` form a `source` (and a containers-auth.json key) may take. */
const WILDCARD_HOST = new RegExp(`^\\*(?:\\.${HOST_PART})+$`);

/** Why `text` is not a `host[:port][/namespace...][/repo]` reference without tag or digest, or undefined. */
export function repositoryProblem(text: string, opts: { allowWildcard: boolean }): string | undefined {
  if (text === '') return 'must not be empty';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return 'must not contain a URL scheme: write host[:port][/path], e.g. registry.example.com:8443/ocp/release';
  if (text.includes('@')) return 'must not contain a digest (@sha256:...): mirrors apply to a repository, not to one image';
  const lastSlash = text.lastIndexOf('/');
  if (lastSlash >= 0 && text.slice(lastSlash).includes(':')) return 'must not contain a tag (:tag): mirrors apply to a repository, not to one image';
  if (text.startsWith('*')) {
    if (!opts.allowWildcard) return 'must not be a wildcard here';
    return WILDCARD_HOST.test(text) ? undefined : "a wildcard must be the whole first label of a host name, e.g. '*.example.com'";
  }
  if (text.endsWith('/')) return "must not end with '/'";
  if (!REPOSITORY.test(text)) {
    if (lastSlash >= 0 && /[A-Z]/.test(text.slice(text.indexOf('/')))) return 'repository path must be lower case';
    return 'must be host[:port][/namespace...][/repository] (lower-case path components of letters, digits, \'.\', \'_\', \'-\')';
  }
  return undefined;
}
