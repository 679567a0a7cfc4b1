// What the site's nmstate means on this node, decided without touching it (docs/network.md has the why).
// The site describes the uplink (NIC, bond or VLAN), never br-ex. The early network phase applies it at boot, before
// configure-ovs, which then builds br-ex on the interface that carries the default route (machine-config-operator
// templates/common/_base/files/configure-ovs-network.yaml, release-4.12 … release-4.16, get_nodeip_interface /
// convert_to_bridge).
import { BR_EX, findInterface, readInterface, type NetInterface, type Topology } from './topology';

export type NmState = Record<string, unknown>;

export interface Refusal {
  message: string;
  remedy: string;
}

/** nmstate refuses only a missing ethernet (or untyped) interface; it creates the virtual ones (ethernet.rs). */
const mustExist = (i: NetInterface) => i.type === 'ethernet' || i.type === 'unknown';

export function siteInterfaces(state: NmState): NetInterface[] {
  return (Array.isArray(state.interfaces) ? state.interfaces : []).map(readInterface).filter((i): i is NetInterface => i !== undefined);
}

const live = (i: NetInterface) => i.state !== 'absent' && i.state !== 'down';
const hasIp = (i: NetInterface) => [i.ipv4, i.ipv6].some((ip) => ip?.enabled && (ip.dhcp || ip.autoconf || ip.addresses.length > 0));
const isDefault = (dest: unknown) => dest === '0.0.0.0/0' || dest === '::/0';

function siteRoutes(state: NmState): Record<string, unknown>[] {
  const routes = state.routes as { config?: unknown } | undefined;
  return (Array.isArray(routes?.config) ? routes.config : []) as Record<string, unknown>[];
}

/**
 * The interface that will carry the node's address and default route — what configure-ovs makes br-ex's port:
 * the one a default route leaves through, else the first with DHCP, else the first with an address.
 */
export function siteUplink(state: NmState): NetInterface | undefined {
  const candidates = siteInterfaces(state).filter((i) => live(i) && hasIp(i) && i.name !== BR_EX);
  const via = siteRoutes(state).find((r) => r.state !== 'absent' && isDefault(r.destination) && candidates.some((c) => c.name === r['next-hop-interface']));
  return candidates.find((c) => c.name === via?.['next-hop-interface']) ?? candidates.find((c) => c.ipv4?.dhcp || c.ipv6?.dhcp || c.ipv6?.autoconf) ?? candidates[0];
}

/** Names a state refers to that must exist on the node or be made by the state itself: ports, VLAN parents. */
function referencedNames(i: NetInterface): string[] {
  const vlan = i.raw.vlan as { 'base-iface'?: unknown } | undefined;
  return [...i.ports, ...(typeof vlan?.['base-iface'] === 'string' ? [vlan['base-iface']] : [])];
}

/** The controller an interface has after the state is applied, by nmstate's rules (see the header). */
function controllerAfter(name: string, site: NetInterface[], topo: Topology, ovn: boolean): string | undefined {
  const own = site.find((i) => i.name === name && i.raw.controller !== undefined);
  if (own) return typeof own.raw.controller === 'string' && own.raw.controller !== '' ? own.raw.controller : undefined;
  const claiming = site.find((c) => live(c) && c.ports.includes(name));
  if (claiming) return claiming.name;
  const current = findInterface(topo, name)?.controller;
  if (!current || (ovn && current === BR_EX)) return undefined;
  const ctrl = site.find((c) => c.name === current);
  return ctrl && (!live(ctrl) || ctrl.raw['link-aggregation'] || ctrl.raw.bridge) ? undefined : current;
}

const describeNow = (i: NetInterface | undefined) => (i?.controller ? `today a port of ${i.controller}` : `today without a controller`);

/**
 * Why the site's state cannot be applied on this node, checked against `nmstatectl show` before anything changes:
 * interfaces it names that the node does not have, an uplink that would leave br-ex without a port, an address on
 * an interface that is a port and stays one (nmstate refuses it: base.rs validate_can_have_ip).
 */
export function refusalsAgainst(state: NmState, topo: Topology, early?: { defaultRouteVia: string | undefined }): Refusal[] {
  const site = siteInterfaces(state);
  const ovn = topo.brEx !== undefined;
  const nics = topo.interfaces.filter((i) => i.type === 'ethernet').map((i) => i.name);
  const have = `this node has ${nics.join(', ') || 'no ethernet interface'}`;
  const out: Refusal[] = [];
  const made = new Set(site.filter((i) => live(i) && !mustExist(i)).map((i) => i.name));
  const missing = new Set<string>();
  for (const i of site) {
    for (const name of [...(live(i) ? [i.name] : []), ...referencedNames(i)]) if (!made.has(name) && !findInterface(topo, name)) missing.add(name);
  }
  for (const name of missing) {
    out.push({ message: `spec.network.nmstate names the network interface ${name}, which this node does not have (${have})`, remedy: `Write in spec.network.nmstate the interface names this node has (${have}).` });
  }
  for (const i of site) {
    const ctrl = live(i) && hasIp(i) ? controllerAfter(i.name, site, topo, ovn) : undefined;
    if (!ctrl || findInterface(topo, i.name)?.controller !== ctrl) continue;
    out.push({
      message: `spec.network.nmstate gives ${i.name} an address, but ${i.name} is ${describeNow(findInterface(topo, i.name))} and stays one; nmstate refuses an address on a port`,
      remedy: `Put the addresses on ${ctrl} in spec.network.nmstate, or list ${ctrl}'s ports without ${i.name}.`,
    });
  }
  const uplink = topo.brEx?.uplink;
  if (ovn && !siteUplink(state)) {
    out.push({
      message: `spec.network.nmstate gives no interface an address or DHCP: ${BR_EX} would be left without a port (its uplink ${uplink} is ${describeNow(findInterface(topo, uplink ?? ''))}) and the node without a network`,
      remedy: `Describe in spec.network.nmstate the uplink — ${uplink} or the bond or VLAN that replaces it — with its addresses or DHCP, default route and DNS servers, never ${BR_EX}.`,
    });
  } else if (early) {
    // Before br-ex exists the early phase removes today's default route for the site's (early-state.ts earlyState),
    // and with nothing to ping the verification would pass: the node would commit itself off the network. So would a
    // static state without a default route (the eleventh hostile re-test of issue 36): DHCP and autoconf bring theirs.
    const today = early.defaultRouteVia;
    const uplink = siteUplink(state);
    const routed = siteRoutes(state).some((r) => r.state !== 'absent' && isDefault(r.destination));
    const lease = siteInterfaces(state).some((i) => live(i) && (i.ipv4?.dhcp || i.ipv6?.dhcp || i.ipv6?.autoconf));
    const why = !uplink ? 'gives no interface an address or DHCP' : !routed && !lease ? 'gives no default route, and no interface DHCP or autoconf to bring one' : undefined;
    if (why) {
      out.push({
        message: `spec.network.nmstate ${why}, so the node would be left without its network (${today ? `${today} carries the default route today` : 'no interface carries a default route today'}; configure-ovs builds ${BR_EX} on the interface that carries it)`,
        remedy: `Describe in spec.network.nmstate the uplink — ${today ?? 'the NIC'} or the bond or VLAN that replaces it — with its addresses or DHCP, default route and DNS servers, never ${BR_EX}.`,
      });
    }
  }
  return out;
}

/** Static `ip/prefix` addresses an interface state gives (DHCP ones are learnt from the node afterwards). */
export function staticAddresses(i: NetInterface): string[] {
  return [i.ipv4, i.ipv6].flatMap((ip) => (ip?.enabled && !ip.dhcp && !ip.autoconf ? ip.addresses : []));
}
