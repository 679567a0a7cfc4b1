// What an nmstate state from unsigned media may hold (DESIGN.md section 4, "Trust model"; issue 36): only what
// moves the node's uplink. An allowlist, like src/siteconfig/trust.ts: a key not named here, including any key a
// later nmstate adds, needs signed media. nmstate applies far more than addresses: an interface's `dispatch`
// script is written into NetworkManager's dispatcher directory and run as root on every activation, outside the
// checkpoint that rolls a bad state back (nmstate/nmstate v2.2.23 rust/src/lib/dispatch.rs DispatchConfig,
// validate_dispatch_script_has_no_checkpoint; rust/src/lib/nm/query_apply/dispatch.rs DEFAULT_DISPATCH_DIR);
// `ovs-db` and `ovn` set Open vSwitch and OVN settings such as where ovn-controller takes its flows from; IPsec,
// VXLAN and other tunnel types connect the node to a host the media name; bridges and OVS ports join the uplink
// to other networks. Key names follow nmstate v2.2.23 (net_state.rs NetworkState; ifaces/base.rs BaseInterface;
// ip.rs InterfaceIp; ifaces/ethernet.rs EthernetConfig; ifaces/vlan.rs VlanConfig; ifaces/bond.rs BondConfig).
import { isPlainObject, subPath } from './problems';
import type { ValidationProblem } from './types';

/**
 * Top-level keys. interfaces, routes and dns-resolver are the uplink. route-rules choose which routing table a
 * packet of the node's own looks up (ip-from/ip-to, fwmark, iif, priority): they pick among routes the state may
 * set anyway, on interfaces it may configure anyway, and open no interface, listener or tunnel. hostname: its
 * config must equal spec.hostname and the node's own name (checked here and when the agent starts), so it renames
 * nothing; its `running` (the transient name, compared with nothing) stays with signed media.
 */
const TOP_LEVEL: Record<string, readonly string[] | true> = { interfaces: true, routes: true, 'route-rules': true, 'dns-resolver': true, hostname: ['config'] };

/** The interface types an uplink is made of (docs/network.md: a NIC, a bond of NICs, a VLAN on either). */
const UPLINK_TYPES = ['ethernet', 'bond', 'vlan'];

/**
 * Interfaces OVN-Kubernetes and Open vSwitch make on an OpenShift node, never an uplink: the integration bridge br-int
 * and the management port ovn-k8s-mp0 (and ovn-k8s-mp<n> of secondary networks; the legacy k8s-<node>), the Geneve
 * and VXLAN tunnel ports (ovn-org/ovn-kubernetes go-controller/pkg/types/const.go K8sMgmtIntfName, pkg/node
 * management-port.go, gateway_shared_intf.go), the datapath's ovs-system, and configure-ovs's gateway bridges br-ex,
 * br-ex1 and their ports (openshift/machine-config-operator release-4.16
 * templates/common/_base/files/configure-ovs-network.yaml). Refused by name as well as by type: from unsigned media
 * an interface always names its type, and none of these may be named whatever type is claimed.
 */
const NODE_NETWORK_NAMES = /^(br-int|br-ex1?|br-local|ovs-system|ovn-k8s-mp\d+|k8s-.*|genev_sys_.*|vxlan_sys_.*|patch-.*|ovs-if-.*|ovs-port-.*)$/;

/**
 * Interface keys, each a setting of the uplink itself. Names and labels: name, type, state, description,
 * profile-name (NetworkManager's connection name). Which NIC: identifier and mac-address (match or set the NIC's
 * address). The link: mtu, wait-ip (when activation counts as done), accept-all-mac-addresses (the NIC takes
 * frames for other addresses; the kernel still answers only its own), lldp (NetworkManager only listens to the
 * switch's announcements). min-mtu, max-mtu and permanent-mac-address are what `nmstatectl show` reports; nmstate
 * ignores them when applying. controller: only a bond of this state (see CONTROLLER below).
 * Not here, so signed media only: dispatch (root scripts), 802.1x (key and certificate files on the node, and the
 * authenticator it trusts), ovs-db (Open vSwitch settings), ethtool, mptcp, copy-mac-from, and every type's own
 * section but ethernet, vlan and link-aggregation.
 */
const IP_KEYS = ['enabled', 'dhcp', 'autoconf', 'address', 'auto-dns', 'auto-gateway', 'auto-routes', 'auto-route-table-id', 'auto-route-metric', 'dhcp-client-id', 'dhcp-duid', 'addr-gen-mode', 'token', 'allow-extra-address', 'dhcp-send-hostname', 'dhcp-custom-hostname'];

const INTERFACE_KEYS: Record<string, readonly string[] | true> = {
  name: true, type: true, state: true, description: true, 'profile-name': true, identifier: true, 'mac-address': true,
  'permanent-mac-address': true, mtu: true, 'min-mtu': true, 'max-mtu': true, 'wait-ip': true, 'accept-all-mac-addresses': true,
  lldp: ['enabled'], controller: true,
  // Where the addresses, DNS servers and routes come from.
  // Every key of nmstate's InterfaceIp (ip.rs), for both families: where the addresses, DNS servers and routes come from
  // and what the node tells the DHCP server (its address entries are checked by nmstate.ts).
  ipv4: IP_KEYS,
  ipv6: IP_KEYS,
  // Link speed only: sr-iov creates virtual functions, new interfaces with their own trust settings.
  ethernet: ['auto-negotiation', 'speed', 'duplex'],
  vlan: ['base-iface', 'id', 'protocol', 'registration-protocol', 'reorder-headers', 'loose-binding'],
  'link-aggregation': ['mode', 'options', 'port', 'ports', 'slaves', 'ports-config'],
};

/** Why a key or type needs signed media, when there is more to say than "not part of the uplink". */
const WHY: Record<string, string> = {
  dispatch: 'nmstate writes it as a script that NetworkManager runs as root whenever the interface comes up or goes down, and the rollback does not remove it',
  '802.1x': 'it points NetworkManager at key and certificate files on the node and decides which network authenticator the node trusts',
  'ovs-db': 'it changes Open vSwitch settings, such as where OVN takes the node\'s network flows from',
  ovn: 'it changes how OVN maps the node\'s bridges to networks',
  'hostname.running': 'the running host name is not checked against the node\'s name (hostname.config is)',
  'sr-iov': 'it creates virtual functions, new interfaces with their own trust settings',
  controller: 'it attaches the interface to a controller other than a bond of this state, joining the uplink to another network',
  type: 'an interface of this type connects the node to another host or network (a tunnel, bridge or Open vSwitch port); the uplink is an ethernet NIC, a bond or a VLAN',
  untyped: 'an interface without a type is whichever interface has that name on the node, OVN-Kubernetes\' own bridges and ports among them; give type ethernet, bond or vlan',
  name: 'it names an interface OVN-Kubernetes or Open vSwitch makes on the node (its bridges, management and tunnel ports), which is never the uplink',
  wildcard: 'a route to remove that names no interface removes every route it matches (nmstate.github.io devel/yaml_api.md, Routes: "state: absent is used to delete all matching route entry"), the node network\'s on br-ex included; name the uplink in next-hop-interface',
  port: 'a bond port it names is an interface OVN-Kubernetes or Open vSwitch makes on the node, or one this state gives another type than ethernet',
};

/** The reason for the first of `keys` WHY explains (own keys only: a key from media may be 'constructor'). */
function why(...keys: string[]): string {
  for (const key of keys) if (Object.hasOwn(WHY, key)) return WHY[key]!;
  return 'it is not a setting of the uplink';
}

function refusal(why: string, note: string): string {
  return `needs signed media: ${why}${note}. From unsigned media this node takes in the network state only its uplink (ethernet, bond and VLAN interfaces with their addresses, routes, route rules and DNS servers); the office must send signed media, or a network state without this`;
}

/** The keys of `obj` outside `allowed`, each refused at its path. */
function extraKeys(obj: Record<string, unknown>, allowed: Record<string, readonly string[] | true>, path: string, note: string, out: ValidationProblem[]): void {
  for (const [key, value] of Object.entries(obj)) {
    const rule = Object.hasOwn(allowed, key) ? allowed[key] : undefined;
    const at = subPath(path, key);
    if (rule === undefined) out.push({ path: at, message: refusal(why(key), note) });
    else if (rule !== true && isPlainObject(value)) {
      for (const inner of Object.keys(value)) if (!rule.includes(inner)) out.push({ path: subPath(at, inner), message: refusal(why(`${key}.${inner}`, inner), note) });
    }
  }
}

/** A value naming one of the node network's own interfaces. */
function namesNodeNetwork(value: unknown): boolean {
  return typeof value === 'string' && NODE_NETWORK_NAMES.test(value);
}

/** A section's `config` list (routes, route-rules), or none. */
function configList(section: unknown): unknown[] {
  return isPlainObject(section) && Array.isArray(section.config) ? section.config : [];
}

/**
 * Where the rest of a state names an interface: a route's next-hop-interface (nmstate v2.2.23 rust/src/lib/route.rs
 * RouteEntry), a route rule's iif (route_rule.rs RouteRuleEntry; there is no oif, through v2.2.37), and a DNS
 * server's scope after `%`, the interface an IPv6 link-local server is reached through (dns.rs
 * parse_dns_ipv6_link_local_srv, "fe80::deef:1%eth1"). An absent route names one too: it removes the node
 * network's routes.
 */
function referenceProblems(state: Record<string, unknown>, path: string, note: string, out: ValidationProblem[]): void {
  const named: Array<Array<string | number>> = [];
  const wildcards: Array<Array<string | number>> = [];
  const look = (section: 'routes' | 'route-rules', key: string) =>
    configList(state[section]).forEach((r, i) => {
      if (!isPlainObject(r)) return;
      if (namesNodeNetwork(r[key])) named.push([section, 'config', i, key]);
      // A rule to remove names its table or priority; the node network's routes live in the main table, by interface.
      else if (section === 'routes' && r.state === 'absent' && (typeof r[key] !== 'string' || r[key] === '')) wildcards.push([section, 'config', i, key]);
    });
  look('routes', 'next-hop-interface');
  look('route-rules', 'iif');
  for (const at of wildcards) out.push({ path: subPath(path, ...at), message: refusal(why('wildcard'), note) });
  const dns = state['dns-resolver'];
  const servers: unknown[] = isPlainObject(dns) && isPlainObject(dns.config) && Array.isArray(dns.config.server) ? dns.config.server : [];
  servers.forEach((s, i) => {
    if (typeof s === 'string' && s.split('%').slice(1).some(namesNodeNetwork)) named.push(['dns-resolver', 'config', 'server', i]);
  });
  for (const at of named) out.push({ path: subPath(path, ...at), message: refusal(why('name'), note) });
}

/**
 * A bond's ports (link-aggregation port / ports / slaves, ports-config[].name) must be NICs, never one of the node
 * network's own interfaces, and so must its primary (options.primary, the port it prefers; nmstate v2.2.23
 * ifaces/bond.rs BondConfig, BondOptions).
 */
function bondProblems(lag: Record<string, unknown>, at: string, declared: Map<unknown, unknown>, note: string, out: ValidationProblem[]): void {
  for (const key of ['port', 'ports', 'slaves', 'ports-config'] as const) {
    const ports = lag[key];
    if (!Array.isArray(ports)) continue;
    ports.forEach((p, n) => {
      const name = key === 'ports-config' ? (isPlainObject(p) ? p.name : undefined) : p;
      const type = declared.get(name);
      if (typeof name === 'string' && (NODE_NETWORK_NAMES.test(name) || (type !== undefined && type !== 'ethernet'))) {
        out.push({ path: subPath(at, 'link-aggregation', key, n), message: refusal(why('port'), note) });
      }
    });
  }
  if (isPlainObject(lag.options) && namesNodeNetwork(lag.options.primary)) out.push({ path: subPath(at, 'link-aggregation', 'options', 'primary'), message: refusal(why('name'), note) });
}

/** One interface's problems: its type, its names, its keys, its controller, its VLAN base and its bond's ports. */
function interfaceProblems(iface: Record<string, unknown>, at: string, bonds: Set<unknown>, declared: Map<unknown, unknown>, note: string, out: ValidationProblem[]): void {
  if (iface.type === undefined) out.push({ path: subPath(at, 'type'), message: refusal(why('untyped'), note) });
  else if (!(typeof iface.type === 'string' && UPLINK_TYPES.includes(iface.type))) {
    out.push({ path: subPath(at, 'type'), message: refusal(`'${String(iface.type).slice(0, 40)}': ${why('type')}`, note) });
  }
  for (const key of ['name', 'profile-name'] as const) {
    if (namesNodeNetwork(iface[key])) out.push({ path: subPath(at, key), message: refusal(why('name'), note) });
  }
  extraKeys(iface, INTERFACE_KEYS, at, note, out);
  // A port names its bond itself (nmstate 2 ifaces/base.rs controller); any other controller (br-int, an OVS or
  // Linux bridge, a VRF) would plug the uplink into it.
  if (iface.controller !== undefined && iface.controller !== null && iface.controller !== '' && !bonds.has(iface.controller)) {
    out.push({ path: subPath(at, 'controller'), message: refusal(why('controller'), note) });
  }
  // A VLAN on one of them (nmstate v2.2.23 ifaces/vlan.rs VlanConfig base_iface) would tag the uplink's traffic onto it.
  if (isPlainObject(iface.vlan) && namesNodeNetwork(iface.vlan['base-iface'])) out.push({ path: subPath(at, 'vlan', 'base-iface'), message: refusal(why('name'), note) });
  if (isPlainObject(iface['link-aggregation'])) bondProblems(iface['link-aggregation'], at, declared, note, out);
}

/**
 * The parts of an nmstate state (at `path`, e.g. spec.network.nmstate) that unsigned media may not carry, one
 * problem each, naming the exact key. The state's shape is checked by nmstate.ts; anything malformed is left to it.
 */
export function unsignedNmstateProblems(state: unknown, path: string, note = ''): ValidationProblem[] {
  if (!isPlainObject(state)) return [];
  const out: ValidationProblem[] = [];
  extraKeys(state, TOP_LEVEL, path, note, out);
  const list = Array.isArray(state.interfaces) ? state.interfaces : [];
  const bonds = new Set(list.filter((i) => isPlainObject(i) && i.type === 'bond' && i.state !== 'absent').map((i) => (i as Record<string, unknown>).name));
  const declared = new Map(list.filter(isPlainObject).map((iface) => [iface.name, iface.type]));
  list.forEach((iface, i) => {
    if (isPlainObject(iface)) interfaceProblems(iface, subPath(path, 'interfaces', i), bonds, declared, note, out);
  });
  referenceProblems(state, path, note, out);
  return out;
}
