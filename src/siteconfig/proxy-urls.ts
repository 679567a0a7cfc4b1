// The cluster proxy's values, checked offline the way the network operator checks Proxy/cluster before it
// accepts it (cluster-network-operator release-4.12…4.16 pkg/controller/proxyconfig/validation.go
// ValidateProxyConfig; pkg/util/validation/network.go URI, DomainName, IPAddressOrCIDR): httpProxy an http://
// URL, httpsProxy http:// or https://, ports 1–65535; each noProxy entry a domain (a leading '.' and a trailing
// '.' allowed), an IP address or a CIDR, or '*' alone. A proxy URL may carry a user and password: they are
// credentials, so every message shows the URL without them (`redactProxyUrl`).
import { dns1123SubdomainProblem, ipFamily, parseCidr } from './net';

/** The URL with any user and password replaced by `***`, for messages. */
export function redactProxyUrl(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#]*@/, '$1***@');
}

export function proxyUrlProblem(url: string, schemes: readonly string[]): string | undefined {
  const shown = `'${redactProxyUrl(url).slice(0, 120)}'`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${shown} is not a URL: expected ${schemes.map((s) => `${s}://`).join(' or ')}host:port, e.g. http://proxy.example.com:3128`;
  }
  const scheme = u.protocol.replace(/:$/, '');
  if (!schemes.includes(scheme)) return `${shown} has the scheme '${scheme}': the network operator takes only ${schemes.map((s) => `${s}://`).join(' or ')} here`;
  if (u.hostname === '') return `${shown} names no host`;
  if (u.port !== '' && (Number(u.port) < 1 || Number(u.port) > 65535)) return `${shown} has port ${u.port}: expected 1 to 65535`;
  return undefined;
}

export function noProxyEntryProblem(entry: string): string | undefined {
  if (entry === '*') return undefined;
  if (/[\s,]/.test(entry)) return `'${entry.slice(0, 80)}' holds a space or a comma: give one domain, address or CIDR per entry`;
  if (ipFamily(entry) !== undefined) return undefined;
  if (entry.includes('/')) {
    const c = parseCidr(entry);
    return typeof c === 'string' ? c : undefined;
  }
  const domain = entry.replace(/^\./, '').replace(/\.$/, '');
  const p = dns1123SubdomainProblem(domain);
  return p === undefined ? undefined : `'${entry.slice(0, 80)}' is not a domain, IP address or CIDR (${p})`;
}
