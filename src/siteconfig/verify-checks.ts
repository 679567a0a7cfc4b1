// spec.network.verify is the proof that the site network works before it is committed (else rollback): a check
// that the node answers by itself proves nothing, and hundreds of checks cannot finish in the verification window
// (issue 36: 401 pings ran 66 s against a 10 s window, and the network was committed unverified).
import { addressesFromNmstate } from './nmstate';
import type { Findings } from './problems';

/**
 * More checks than this are refused. The network step runs them one after another (src/steps/network.ts), and the
 * window is at least 10 s (verifyWindows): at the measured 165 ms an answered ping takes (401 in 66 s), 32 checks
 * take about 5 s, half the shortest window, which leaves time for a second round when the first finds the uplink
 * still coming up. Two dozen checks cover a gateway, DNS servers, mirrors and names at any real site.
 */
export const MAX_VERIFY_CHECKS = 32;

const bare = (ip: string): string => ip.split('%')[0]!.toLowerCase();

/** One spelling per address: IPv6 as the WHATWG URL parser writes it (`0:0:0:0:0:0:0:1` is `::1`). */
function canonical(ip: string): string {
  const b = bare(ip);
  if (!b.includes(':')) return b;
  try {
    return new URL(`http://[${b}]/`).hostname.slice(1, -1);
  } catch {
    return b;
  }
}

// 127.0.0.0/8 and ::1 are the loopback (RFC 1122 3.2.1.3, RFC 4291 2.5.3), also IPv4-mapped (::ffff:7f00:1).
const isLoopback = (ip: string): boolean => /^127\./.test(ip) || ip === '::1' || /^::ffff:7f[0-9a-f]{2}:/.test(ip);
// Linux delivers a packet for 0.0.0.0 or :: to the host itself (ping 0.0.0.0 is answered by lo).
const isUnspecified = (ip: string): boolean => ip === '0.0.0.0' || ip === '::' || ip === '::ffff:0:0';

/**
 * Names the node answers by itself through NSS, whatever the network: localhost and its subdomains (/etc/hosts and
 * nss-myhostname) and the node's own host name, which nss-myhostname resolves to the node's own addresses when DNS
 * does not (systemd man/nss-myhostname.xml).
 */
function answeredLocally(name: string, ownNames: ReadonlySet<string>): 'localhost' | 'hostname' | undefined {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (/(^|\.)localhost(\.localdomain)?$/.test(n)) return 'localhost';
  return ownNames.has(n) ? 'hostname' : undefined;
}

/**
 * `hostnames`: the host names the config gives the node (spec.hostname, the nmstate hostname), which it
 * resolves by itself.
 */
export function checkVerifyTargets(f: Findings, verify: unknown, nmstate: Record<string, unknown> | undefined, hostnames: readonly (string | undefined)[] = []): void {
  if (verify === null || typeof verify !== 'object') return;
  const { ping, resolve } = verify as { ping?: unknown; resolve?: unknown };
  const pings = Array.isArray(ping) ? ping.filter((p): p is string => typeof p === 'string') : [];
  const names = Array.isArray(resolve) ? resolve.filter((r): r is string => typeof r === 'string') : [];
  const own = new Set((nmstate ? addressesFromNmstate(nmstate) : []).map(canonical));
  const ownNames = new Set(hostnames.filter((h): h is string => typeof h === 'string' && h !== '').map((h) => h.toLowerCase().replace(/\.$/, '')));
  const instead = "ping the site's gateway or DNS server instead";
  pings.forEach((target, i) => {
    const at = `spec.network.verify.ping[${i}]`;
    const ip = canonical(target);
    if (isLoopback(ip)) f.error(at, `'${target}' is this node's own loopback address: it always answers, so it proves nothing about the site network; ${instead}`);
    else if (isUnspecified(ip)) f.error(at, `'${target}' is the unspecified address, which Linux answers from this node itself: it proves nothing about the site network; ${instead}`);
    else if (own.has(ip)) f.error(at, `'${target}' is an address spec.network gives this node itself: it answers even with the cable out, so it proves nothing about the site network; ${instead}`);
  });
  names.forEach((name, i) => {
    const at = `spec.network.verify.resolve[${i}]`;
    const local = answeredLocally(name, ownNames);
    const what = local === 'localhost' ? 'is localhost, which this node resolves from its own /etc/hosts' : `is this node's own host name, which the node resolves by itself`;
    if (local) f.error(at, `'${name}' ${what}, even with the cable out: it proves nothing about the site's DNS; resolve a name the site's DNS serves instead (the cluster's new API name, the mirror registry)`);
  });
  if (pings.length + names.length > MAX_VERIFY_CHECKS) {
    f.error('spec.network.verify', `lists ${pings.length + names.length} checks; at most ${MAX_VERIFY_CHECKS} are allowed, because every one must answer within the verification window before the network is kept: list the gateway, a DNS server and a few names`);
  }
}
