// Structural checks of an nmstate desired state (spec.network.nmstate or the file of nmstateFile), before
// `nmstatectl apply` ever sees it. Not a full nmstate schema: the checks that catch the mistakes that strand a
// node (bad addresses, prefix lengths, routes, DNS servers, duplicate interfaces), following nmstate's own
// deserializers (nmstate/nmstate rust/src/lib): NetworkState accepts only the top-level keys below
// (net_state.rs, "Unsupported keys found"); InterfaceIpAddr is {ip, prefix-length} with deny_unknown_fields and
// prefix-length as a number or a numeric string (ip.rs, u8_or_string); RouteEntry.destination is mandatory for
// non-absent routes, next-hop-interface too except for blackhole/unreachable/prohibit routes, which cannot have
// a next hop (route.rs Routes::validate); interface states are up/down/absent/ignore (iface.rs InterfaceState);
// unknown interface types are accepted with a warning (iface.rs InterfaceType::Other).
import { MAX_PREFIX, ipFamily, ipFamilyWithZone, isMacAddress, parseCidr, hostnameProblem, type IpFamily } from './net';
import { Findings, describeType, isPlainObject, listForHumans, subPath } from './problems';
import { unknownFieldMessage } from './suggest';

const TOP_LEVEL_KEYS = ['interfaces', 'routes', 'route-rules', 'dns-resolver', 'hostname', 'ovs-db', 'ovn'];
const INTERFACE_TYPES = [
  'ethernet', 'bond', 'linux-bridge', 'ovs-bridge', 'ovs-interface', 'vlan', 'vxlan', 'veth', 'dummy', 'loopback',
  'mac-vlan', 'mac-vtap', 'vrf', 'infiniband', 'macsec', 'ipsec', 'hsr', 'xfrm', 'ipvlan', 'tun', 'unknown',
];
const INTERFACE_STATES = ['up', 'down', 'absent', 'ignore'];
const BOND_MODES = ['balance-rr', 'active-backup', 'balance-xor', 'broadcast', '802.3ad', 'balance-tlb', 'balance-alb', '0', '1', '2', '3', '4', '5', '6'];
const IP_ADDRESS_KEYS = ['ip', 'prefix-length', 'mptcp-flags', 'valid-life-time', 'preferred-life-time', 'valid-left', 'valid-lft', 'preferred-left', 'preferred-lft'];
const ROUTE_STATES = ['absent', 'ignore'];
const ROUTE_TYPES = ['blackhole', 'unreachable', 'prohibit'];
const CONFIG_RUNNING = ['config', 'running'];

/** nmstate takes booleans and, through its *_or_string deserializers, their string forms. */
function isBoolish(v: unknown): boolean {
  return typeof v === 'boolean' || v === 'true' || v === 'false';
}

function isTrue(v: unknown): boolean {
  return v === true || v === 'true';
}

/** An unsigned integer given as a number or a string of digits (nmstate's u*_or_string). */
function uintValue(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'string' && /^\d{1,10}$/.test(v)) return Number(v);
  return undefined;
}

class NmstateChecker {
  readonly f = new Findings();
  constructor(private readonly note: string) {}

  error(path: string, message: string): void {
    this.f.error(path, `${message}${this.note}`);
  }

  warn(path: string, message: string): void {
    this.f.warn(path, `${message}${this.note}`);
  }

  mapping(value: unknown, path: string): Record<string, unknown> | undefined {
    if (isPlainObject(value)) return value;
    this.error(path, `expected a mapping, got ${describeType(value)}`);
    return undefined;
  }

  list(value: unknown, path: string): unknown[] | undefined {
    if (Array.isArray(value)) return value;
    this.error(path, `expected a list, got ${describeType(value)}`);
    return undefined;
  }

  onlyKeys(obj: Record<string, unknown>, known: string[], path: string): void {
    for (const key of Object.keys(obj)) if (!known.includes(key)) this.error(subPath(path, key), unknownFieldMessage(key, known));
  }

  check(state: unknown, path: string): void {
    const top = this.mapping(state, path);
    if (!top) return;
    this.onlyKeys(top, TOP_LEVEL_KEYS, path);
    if (Object.keys(top).length === 0) this.warn(path, 'is empty: applying it changes nothing');
    if ('interfaces' in top) this.interfaces(top.interfaces, subPath(path, 'interfaces'));
    if ('routes' in top) this.routes(top.routes, subPath(path, 'routes'));
    if ('route-rules' in top) this.routeRules(top['route-rules'], subPath(path, 'route-rules'));
    if ('dns-resolver' in top) this.dns(top['dns-resolver'], subPath(path, 'dns-resolver'));
    if ('hostname' in top) this.hostname(top.hostname, subPath(path, 'hostname'));
    for (const key of ['ovs-db', 'ovn']) if (key in top && top[key] !== null) this.mapping(top[key], subPath(path, key));
  }

  interfaces(value: unknown, path: string): void {
    const list = this.list(value, path);
    if (!list) return;
    this.uplinkRules(list, path);
    const seen: Array<{ name: string; type?: string; index: number }> = [];
    list.forEach((entry, i) => {
      const p = subPath(path, i);
      const iface = this.mapping(entry, p);
      if (!iface) return;
      const name = iface.name;
      if (name === undefined) this.error(subPath(p, 'name'), 'is required: every interface needs a name');
      else if (typeof name !== 'string' || name === '') this.error(subPath(p, 'name'), `expected a non-empty string, got ${describeType(name)}`);
      let type: string | undefined;
      if (iface.type !== undefined) {
        if (typeof iface.type !== 'string') this.error(subPath(p, 'type'), `expected a string, got ${describeType(iface.type)}`);
        else {
          type = iface.type;
          if (!INTERFACE_TYPES.includes(type)) {
            this.warn(subPath(p, 'type'), `'${type}' is not an interface type nmstate knows (${INTERFACE_TYPES.slice(0, 8).join(', ')}, ...); nmstate will treat it as unknown`);
          }
        }
      }
      let state = 'up';
      if (iface.state !== undefined) {
        if (typeof iface.state !== 'string' || !INTERFACE_STATES.includes(iface.state)) {
          this.error(subPath(p, 'state'), `must be one of ${listForHumans(INTERFACE_STATES)}`);
        } else state = iface.state;
      }
      if (typeof name === 'string' && name !== '') {
        // The same name with different types is legal: an OVS bridge and its internal ovs-interface (br-ex).
        const dup = seen.find((s) => s.name === name && (s.type === undefined || type === undefined || s.type === type));
        if (dup) this.error(subPath(p, 'name'), `interface '${name}' is already defined at ${subPath(path, dup.index)}`);
        seen.push({ name, ...(type !== undefined ? { type } : {}), index: i });
      }
      if (iface['mac-address'] !== undefined && (typeof iface['mac-address'] !== 'string' || !isMacAddress(iface['mac-address']))) {
        this.error(subPath(p, 'mac-address'), "must be a MAC address like '52:54:00:12:34:56'");
      }
      if (state === 'absent') return;
      if (iface.mtu !== undefined && uintValue(iface.mtu) === undefined) this.error(subPath(p, 'mtu'), 'must be a positive integer');
      for (const family of [4, 6] as const) {
        const key = family === 4 ? 'ipv4' : 'ipv6';
        if (iface[key] !== undefined && iface[key] !== null) this.ip(iface[key], family, subPath(p, key));
      }
      if (type === 'vlan') this.vlan(iface.vlan, subPath(p, 'vlan'));
      if (type === 'bond' && iface['link-aggregation'] !== undefined) this.bond(iface['link-aggregation'], subPath(p, 'link-aggregation'));
    });
  }

  /**
   * The site describes the uplink, never br-ex (DESIGN.md section 4; docs/network.md): configure-ovs regenerates
   * br-ex at every boot (machine-config-operator configure-ovs-network.yaml, release-4.12 … 4.16). And nmstate
   * refuses an address on an interface with a controller unless it is an OVS internal interface
   * (nmstate/nmstate base, rust/src/lib/ifaces/base.rs can_have_ip / validate_can_have_ip).
   */
  uplinkRules(list: unknown[], path: string): void {
    const controllerOf = new Map<string, string>();
    for (const e of list) if (isPlainObject(e) && e.state !== 'absent') for (const port of portsOf(e)) if (port !== e.name) controllerOf.set(port, String(e.name));
    list.forEach((e, i) => {
      if (!isPlainObject(e) || typeof e.name !== 'string') return;
      const p = subPath(path, i);
      if (e.name === 'br-ex') return this.error(subPath(p, 'name'), "names br-ex, which OpenShift rebuilds on the uplink at every boot (a state written on it is lost): describe the uplink itself — the NIC, bond or VLAN, e.g. eno1 — with its addresses, routes and DNS servers");
      const ctrl = typeof e.controller === 'string' && e.controller !== '' ? e.controller : controllerOf.get(e.name);
      if (!ctrl || e.type === 'ovs-interface' || e.state === 'absent') return;
      for (const key of ['ipv4', 'ipv6']) {
        const ip = e[key];
        if (isPlainObject(ip) && isTrue(ip.enabled)) this.error(subPath(p, key, 'enabled'), `gives ${e.name} an address, but this state makes it a port of ${ctrl} and nmstate refuses an address on a port: put the addresses on ${ctrl}, ${key} disabled here`);
      }
    });
  }

  ip(value: unknown, family: IpFamily, path: string): void {
    const ip = this.mapping(value, path);
    if (!ip) return;
    for (const key of ['enabled', 'dhcp', 'autoconf']) {
      if (ip[key] !== undefined && !isBoolish(ip[key])) this.error(subPath(path, key), `must be true or false, got ${describeType(ip[key])}`);
    }
    if (ip.address === undefined || ip.address === null) return;
    const addresses = this.list(ip.address, subPath(path, 'address'));
    if (!addresses) return;
    addresses.forEach((entry, j) => {
      const p = subPath(path, 'address', j);
      const addr = this.mapping(entry, p);
      if (!addr) return;
      this.onlyKeys(addr, IP_ADDRESS_KEYS, p);
      const text = addr.ip;
      if (text === undefined) this.error(subPath(p, 'ip'), 'is required');
      else if (typeof text !== 'string') this.error(subPath(p, 'ip'), `expected an IP address string, got ${describeType(text)}`);
      else {
        const actual = ipFamily(text);
        if (actual === undefined) {
          this.error(subPath(p, 'ip'), text.includes('/')
            ? `'${text}' includes a prefix: put the address in 'ip' and the prefix in 'prefix-length'`
            : `'${text}' is not a valid IPv${family} address`);
        } else if (actual !== family) {
          this.error(subPath(p, 'ip'), `'${text}' is an IPv${actual} address, but it is under ipv${family}`);
        }
      }
      const prefix = addr['prefix-length'];
      if (prefix === undefined) this.error(subPath(p, 'prefix-length'), 'is required');
      else {
        const n = uintValue(prefix);
        if (n === undefined || n > MAX_PREFIX[family]) this.error(subPath(p, 'prefix-length'), `must be an integer from 0 to ${MAX_PREFIX[family]} for IPv${family}`);
      }
    });
    if (addresses.length > 0 && (isTrue(ip.dhcp) || isTrue(ip.autoconf))) {
      this.warn(subPath(path, 'address'), 'static addresses are ignored by nmstate while dhcp/autoconf is enabled');
    }
  }

  vlan(value: unknown, path: string): void {
    if (value === undefined) return this.error(path, "is required for a 'vlan' interface (base-iface and id)");
    const vlan = this.mapping(value, path);
    if (!vlan) return;
    if (typeof vlan['base-iface'] !== 'string' || vlan['base-iface'] === '') this.error(subPath(path, 'base-iface'), 'is required: the interface the VLAN sits on');
    const id = uintValue(vlan.id);
    if (id === undefined || id > 4094) this.error(subPath(path, 'id'), vlan.id === undefined ? 'is required: the VLAN ID (0-4094)' : 'must be a VLAN ID from 0 to 4094');
  }

  bond(value: unknown, path: string): void {
    const la = this.mapping(value, path);
    if (!la) return;
    if (la.mode !== undefined && (typeof la.mode !== 'string' || !BOND_MODES.includes(la.mode))) {
      this.error(subPath(path, 'mode'), `must be one of ${listForHumans(BOND_MODES.slice(0, 7))}`);
    }
    for (const key of ['port', 'slaves']) {
      if (la[key] === undefined || la[key] === null) continue;
      const ports = this.list(la[key], subPath(path, key));
      ports?.forEach((port, k) => {
        if (typeof port !== 'string' || port === '') this.error(subPath(path, key, k), 'must be an interface name');
      });
    }
  }

  routes(value: unknown, path: string): void {
    const routes = this.mapping(value, path);
    if (!routes) return;
    this.onlyKeys(routes, CONFIG_RUNNING, path);
    if (routes.running !== undefined) this.warn(subPath(path, 'running'), 'is ignored when applying; desired routes go under config');
    if (routes.config === undefined || routes.config === null) return;
    const list = this.list(routes.config, subPath(path, 'config'));
    list?.forEach((entry, i) => this.route(entry, subPath(path, 'config', i)));
  }

  route(entry: unknown, path: string): void {
    const route = this.mapping(entry, path);
    if (!route) return;
    let absent = false;
    if (route.state !== undefined) {
      if (typeof route.state !== 'string' || !ROUTE_STATES.includes(route.state)) this.error(subPath(path, 'state'), `must be ${listForHumans(ROUTE_STATES)} (omit it for a route to add)`);
      absent = route.state === 'absent';
    }
    let unicast = true;
    if (route['route-type'] !== undefined) {
      if (typeof route['route-type'] !== 'string' || !ROUTE_TYPES.includes(route['route-type'])) this.error(subPath(path, 'route-type'), `must be one of ${listForHumans(ROUTE_TYPES)}`);
      else unicast = false;
    }
    let destFamily: IpFamily | undefined;
    const dest = route.destination;
    if (dest === undefined || dest === null) {
      if (!absent) this.error(subPath(path, 'destination'), 'is required for a route to add (e.g. 0.0.0.0/0 for the default route)');
    } else if (typeof dest !== 'string') {
      this.error(subPath(path, 'destination'), `expected an IP network string, got ${describeType(dest)}`);
    } else if (!(absent && dest === '')) {
      const cidr = parseCidr(dest);
      if (typeof cidr === 'string') this.error(subPath(path, 'destination'), cidr);
      else destFamily = cidr.family;
    }
    const hop = route['next-hop-address'];
    if (hop !== undefined && hop !== null) {
      if (typeof hop !== 'string') this.error(subPath(path, 'next-hop-address'), `expected an IP address string, got ${describeType(hop)}`);
      else if (!(absent && hop === '')) {
        const fam = ipFamily(hop);
        if (fam === undefined) this.error(subPath(path, 'next-hop-address'), `'${hop}' is not a valid IP address`);
        else if (destFamily !== undefined && fam !== destFamily) this.error(subPath(path, 'next-hop-address'), `'${hop}' is IPv${fam} but the destination is IPv${destFamily}`);
      }
    }
    const iface = route['next-hop-interface'];
    if (iface !== undefined && iface !== null && (typeof iface !== 'string' || iface === '')) this.error(subPath(path, 'next-hop-interface'), 'must be an interface name');
    if (!absent && unicast && (iface === undefined || iface === null)) {
      this.error(subPath(path, 'next-hop-interface'), 'is required for a route to add (the interface the route leaves through)');
    }
    if (!absent && !unicast && ((typeof iface === 'string' && iface !== 'lo') || (typeof hop === 'string' && hop !== ''))) {
      this.error(path, `a ${String(route['route-type'])} route cannot have a next hop`);
    }
    if (route.source !== undefined && (typeof route.source !== 'string' || ipFamily(route.source) === undefined)) {
      this.error(subPath(path, 'source'), 'must be an IP address');
    }
  }

  routeRules(value: unknown, path: string): void {
    const rules = this.mapping(value, path);
    if (!rules) return;
    this.onlyKeys(rules, CONFIG_RUNNING, path);
    if (rules.config === undefined || rules.config === null) return;
    const list = this.list(rules.config, subPath(path, 'config'));
    list?.forEach((entry, i) => {
      const p = subPath(path, 'config', i);
      const rule = this.mapping(entry, p);
      if (!rule) return;
      const families: IpFamily[] = [];
      for (const key of ['ip-to', 'ip-from']) {
        const v = rule[key];
        if (v === undefined || v === null || v === '') continue;
        if (typeof v !== 'string') {
          this.error(subPath(p, key), `expected an IP network string, got ${describeType(v)}`);
          continue;
        }
        const cidr = parseCidr(v);
        if (typeof cidr === 'string') this.error(subPath(p, key), cidr);
        else families.push(cidr.family);
      }
      if (families.length === 2 && families[0] !== families[1]) this.error(subPath(p, 'ip-from'), 'ip-to and ip-from must be of the same IP family');
    });
  }

  dns(value: unknown, path: string): void {
    const dns = this.mapping(value, path);
    if (!dns) return;
    this.onlyKeys(dns, CONFIG_RUNNING, path);
    if (dns.config === undefined || dns.config === null) return;
    const config = this.mapping(dns.config, subPath(path, 'config'));
    if (!config) return;
    this.onlyKeys(config, ['server', 'search', 'options'], subPath(path, 'config'));
    if (config.server !== undefined && config.server !== null) {
      this.list(config.server, subPath(path, 'config', 'server'))?.forEach((s, i) => {
        if (typeof s !== 'string' || ipFamilyWithZone(s) === undefined) {
          this.error(subPath(path, 'config', 'server', i), `${typeof s === 'string' ? `'${s}'` : describeType(s)} is not an IP address: DNS servers are given by address`);
        }
      });
    }
    if (config.search !== undefined && config.search !== null) {
      this.list(config.search, subPath(path, 'config', 'search'))?.forEach((s, i) => {
        const problem = typeof s === 'string' ? hostnameProblem(s) : `expected a domain name, got ${describeType(s)}`;
        if (problem !== undefined) this.error(subPath(path, 'config', 'search', i), typeof s === 'string' ? `'${s}' ${problem}` : problem);
      });
    }
    if (config.options !== undefined && config.options !== null) {
      this.list(config.options, subPath(path, 'config', 'options'))?.forEach((s, i) => {
        if (typeof s !== 'string') this.error(subPath(path, 'config', 'options', i), `expected a string, got ${describeType(s)}`);
      });
    }
  }

  hostname(value: unknown, path: string): void {
    const h = this.mapping(value, path);
    if (!h) return;
    this.onlyKeys(h, CONFIG_RUNNING, path);
    for (const key of CONFIG_RUNNING) {
      const v = h[key];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') this.error(subPath(path, key), `expected a host name string, got ${describeType(v)}`);
      else if (v !== '' && hostnameProblem(v) !== undefined) this.error(subPath(path, key), `'${v}' ${hostnameProblem(v)!}`);
    }
    if (typeof h.config === 'string' && h.config !== '') {
      this.warn(subPath(path, 'config'), 'sets the host name: OpenShift does not support changing the node name, so it must equal the current node name (checked when the agent starts)');
    }
  }
}

/** Problems of an nmstate desired state at `path`; `note` (e.g. " (in network.yaml)") is appended to each message. */
export function validateNmstate(state: unknown, path: string, note = ''): Findings {
  const checker = new NmstateChecker(note);
  checker.check(state, path);
  return checker.f;
}

/** The ports an interface lists as a controller: an OVS or Linux bridge's `bridge.port[].name`, a bond's `link-aggregation.port` (`slaves` before nmstate 2). */
export function portsOf(raw: Record<string, unknown>): string[] {
  const la = isPlainObject(raw['link-aggregation']) ? raw['link-aggregation'] : {};
  const bridge = isPlainObject(raw.bridge) ? raw.bridge : {};
  const ports = [...(Array.isArray(bridge.port) ? bridge.port.map((p) => (isPlainObject(p) ? p.name : p)) : []), ...(Array.isArray(la.port) ? la.port : []), ...(Array.isArray(la.slaves) ? la.slaves : [])];
  return ports.filter((p): p is string => typeof p === 'string' && p !== '');
}

/** The host name an nmstate state would configure, if any (checkAgainstCluster compares it with the node name). */
export function nmstateHostname(state: Record<string, unknown>): string | undefined {
  const h = state.hostname;
  if (isPlainObject(h) && typeof h.config === 'string' && h.config !== '') return h.config;
  return undefined;
}

/** The static addresses an nmstate state gives the node's interfaces. */
export function addressesFromNmstate(state: Record<string, unknown> | undefined): string[] {
  const ifaces = Array.isArray(state?.interfaces) ? (state.interfaces as Record<string, unknown>[]) : [];
  const out: string[] = [];
  for (const iface of ifaces) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      const fam = iface[family] as { address?: { ip?: unknown }[] } | undefined;
      for (const a of fam?.address ?? []) if (typeof a.ip === 'string') out.push(a.ip);
    }
  }
  return out;
}
