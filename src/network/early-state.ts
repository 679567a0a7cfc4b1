// The decisions of the early network phase (./early.ts), pure: the state it applies, the gateways it must reach,
// whether configure-ovs's hint changes, what to do at a boot given the journaled phase. Tested as rows
// (test/unit/network/early-state.test.ts). Ground truth: the real NetworkManager 1.42 and nmstatectl 2.2 with the
// NIC's own /etc profile active, before configure-ovs built br-ex (docs/network.md section 4 cites each observation).
import { BR_EX, findInterface, type Topology } from './topology';
import { siteInterfaces, siteUplink, type NmState } from './uplink';

/** After this many failed attempts of the same config it is refused: a technician must correct it or ask again. */
export const MAX_NETWORK_ATTEMPTS = 3;

/**
 * The phases the early phase journals before each change. `saved` = known good taken, nothing changed yet;
 * `applying` … `committing` = the site state may be on disk uncommitted; `restoring` = bringing the known good back.
 */
export const EARLY_PHASES = ['saved', 'applying', 'verifying', 'committing', 'restoring', 'committed', 'rolled-back'] as const;
export type EarlyPhase = (typeof EARLY_PHASES)[number];

/** Phases in which a power cut or a kill leaves the site state (uncommitted) in the NIC's persistent profile. */
export const IN_FLIGHT: readonly EarlyPhase[] = ['applying', 'verifying', 'committing', 'restoring'];

const isDefault = (dest: unknown) => dest === '0.0.0.0/0' || dest === '::/0';
const bare = (cidr: string) => cidr.replace(/\/\d*$/, '');
const family = (ip: string) => (ip.includes(':') ? 'ipv6' : 'ipv4');

/**
 * The prefix of an internal address: its own (`ip/prefix`), else the one the node holds it with now (the baseline
 * may record bare addresses), else a host route's (/32, /128). nmstate refuses an address without one.
 */
function prefixOf(address: string, topo: Topology): number {
  const own = address.split('/')[1];
  if (own !== undefined && /^\d+$/.test(own)) return Number(own);
  const held = topo.interfaces.flatMap((i) => [...(i.ipv4?.addresses ?? []), ...(i.ipv6?.addresses ?? [])]).find((a) => bare(a) === bare(address));
  const prefix = held?.split('/')[1];
  return prefix && /^\d+$/.test(prefix) ? Number(prefix) : address.includes(':') ? 128 : 32;
}

/** The interface that carries the node's default route today (before configure-ovs: the NIC itself). */
export function defaultRouteInterface(topo: Topology): string | undefined {
  const via = topo.routes.find((r) => r.state !== 'absent' && isDefault(r.destination) && typeof r['next-hop-interface'] === 'string');
  const name = via?.['next-hop-interface'] as string | undefined;
  // After configure-ovs the default route leaves through br-ex: its uplink is the NIC.
  return name === BR_EX ? topo.brEx?.uplink : name;
}

/**
 * The state the early phase applies: the site's, with
 * - a `{next-hop-interface: <old>, state: absent}` entry first for the interface that carries the default route
 *   today (and for the site's uplink when it is another one): nmstate merges the current routes unless marked
 *   absent, so the factory gateway would otherwise be written into the new profile and cloned onto br-ex for good
 *   (real-node-network early-apply.md, experiments 4 and 4b);
 * - the node's internal addresses on the uplink **after** the site's own: the order in the state is the order in the
 *   profile, on br-ex and in the kernel (experiments 5 and 5b), and the default route's source must stay the site's;
 *   on the uplink's own profile nodeip-configuration finds the internal IP at boot, before br-ex exists.
 * A family the site gives no IP (disabled) gets no internal address of that family: the site asked it off.
 */
export function earlyState(site: NmState, topo: Topology, internal: readonly string[]): NmState {
  const uplink = siteUplink(site);
  const old = defaultRouteInterface(topo);
  const absent = [...new Set([old, uplink?.name].filter((n): n is string => !!n && !!findInterface(topo, n)))].map((name) => ({ 'next-hop-interface': name, state: 'absent' }));
  const routes = site.routes as { config?: unknown } | undefined;
  const config = Array.isArray(routes?.config) ? (routes.config as Record<string, unknown>[]) : [];
  const interfaces = (Array.isArray(site.interfaces) ? (site.interfaces as Record<string, unknown>[]) : []).map((raw) => {
    if (!uplink || raw.name !== uplink.name) return raw;
    const out: Record<string, unknown> = { ...raw };
    for (const fam of ['ipv4', 'ipv6'] as const) {
      const wanted = internal.filter((a) => family(a) === fam);
      const ip = raw[fam] as Record<string, unknown> | undefined;
      if (!wanted.length || !ip || ip.enabled === false) continue;
      const have = Array.isArray(ip.address) ? (ip.address as Record<string, unknown>[]) : [];
      const extra = wanted.filter((a) => !have.some((h) => h.ip === bare(a))).map((a) => ({ ip: bare(a), 'prefix-length': prefixOf(a, topo) }));
      out[fam] = { ...ip, enabled: true, address: [...have, ...extra] };
    }
    return out;
  });
  return { ...site, interfaces, routes: { ...(routes ?? {}), config: [...absent, ...config] } };
}

/**
 * The gateways the site state routes through (static default routes): each must answer itself. With a wrong
 * gateway the store's real gateway and the factory's still answered through leftover link routes; only a ping of
 * the configured gateway told the failure (early-apply.md, experiment 6). DHCP gateways come from the lease.
 */
export function configuredGateways(site: NmState): string[] {
  const routes = site.routes as { config?: unknown } | undefined;
  const config = Array.isArray(routes?.config) ? (routes.config as Record<string, unknown>[]) : [];
  return [...new Set(config.filter((r) => r.state !== 'absent' && isDefault(r.destination) && typeof r['next-hop-address'] === 'string').map((r) => r['next-hop-address'] as string))];
}

/**
 * What configure-ovs's /var/lib/ovnk/iface_default_hint must say after the commit: the site's uplink, when it is
 * not what the hint says now (configure-ovs prefers the hinted interface when it still has a default route and
 * otherwise waits for one: machine-config-operator release-4.14 templates/common/_base/files/configure-ovs-network.yaml,
 * get_nodeip_interface / get_default_interface). undefined = leave the file as it is.
 */
export function hintAfter(currentHint: string | undefined, site: NmState): string | undefined {
  const uplink = siteUplink(site);
  if (!uplink) return undefined;
  return currentHint?.trim() === uplink.name ? undefined : uplink.name;
}

/** The names of the interfaces a site state gives (for messages). */
export const siteInterfaceNames = (site: NmState): string[] => siteInterfaces(site).map((i) => i.name);

export interface EarlyRecord {
  /** sha256 of the desired state this record is about. */
  digest: string;
  phase: EarlyPhase;
  failures: number;
  /** The failure of the last attempt, for the technician (the run's network step says it). */
  lastFailure?: string;
  /** The attempt's state was refused by nmstate as wrong: trying it again cannot help. */
  refused?: boolean;
  /** The run's network step has reported this commit (a later run finds the network already in place). */
  reported?: boolean;
}

export type BootAction = 'nothing' | 'restore-then-apply' | 'restore-only' | 'apply' | 'give-up';

/**
 * What the early phase does at a boot, from the journaled record and the desired state's digest:
 * - an attempt in flight (any digest): the known good comes back first — the checkpoint died with the boot;
 * - committed for this digest: nothing;
 * - refused, or out of attempts for this digest: nothing new (the run reports it; `--retry-network` resets it);
 * - otherwise one attempt.
 */
export function bootAction(rec: EarlyRecord | undefined, digest: string | undefined): BootAction {
  const inFlight = rec !== undefined && IN_FLIGHT.includes(rec.phase);
  if (digest === undefined) return inFlight ? 'restore-only' : 'nothing';
  const same = rec?.digest === digest;
  if (same && rec.phase === 'committed') return 'nothing';
  const exhausted = same && (rec.refused || rec.failures >= MAX_NETWORK_ATTEMPTS);
  if (exhausted) return inFlight ? 'restore-only' : 'give-up';
  return inFlight ? 'restore-then-apply' : 'apply';
}
