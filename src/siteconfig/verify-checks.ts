// spec.network.verify is the proof that the site network works before it is committed (else rollback): a check
// that the node answers by itself proves nothing, and hundreds of checks cannot finish in the verification window
// (issue 36: 401 pings ran 66 s against a 10 s window, and the network was committed unverified).
import { addressesFromNmstate } from './nmstate';
import type { Findings } from './problems';

/** More checks than this are refused: each may take seconds, and all must answer within the window. */
export const MAX_VERIFY_CHECKS = 32;

const isLoopback = (ip: string): boolean => /^127\./.test(ip) || ip === '::1' || /^::ffff:127\./i.test(ip);
const bare = (ip: string): string => ip.split('%')[0]!.toLowerCase();

export function checkVerifyTargets(f: Findings, verify: unknown, nmstate: Record<string, unknown> | undefined): void {
  if (verify === null || typeof verify !== 'object') return;
  const { ping, resolve } = verify as { ping?: unknown; resolve?: unknown };
  const pings = Array.isArray(ping) ? ping.filter((p): p is string => typeof p === 'string') : [];
  const names = Array.isArray(resolve) ? resolve.length : 0;
  const own = new Set((nmstate ? addressesFromNmstate(nmstate) : []).map(bare));
  pings.forEach((target, i) => {
    const at = `spec.network.verify.ping[${i}]`;
    if (isLoopback(bare(target))) f.error(at, `'${target}' is this node's own loopback address: it always answers, so it proves nothing about the site network; ping the site's gateway or DNS server instead`);
    else if (own.has(bare(target))) f.error(at, `'${target}' is an address spec.network gives this node itself: it answers even with the cable out, so it proves nothing about the site network; ping the site's gateway or DNS server instead`);
  });
  if (pings.length + names > MAX_VERIFY_CHECKS) {
    f.error('spec.network.verify', `lists ${pings.length + names} checks; at most ${MAX_VERIFY_CHECKS} are allowed, because every one must answer within the verification window before the network is kept: list the gateway, a DNS server and a few names`);
  }
}
