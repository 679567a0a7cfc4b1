// nmstate 2.2's rules for the testbed's nmstatectl stand-in on the real NetworkManager (nmstatectl-nm.cjs): pure
// functions, no I/O, so they are unit-tested (test/unit/testbed/nmstate-rules.test.ts) apart from NetworkManager.
// Every rule cites nmstate/nmstate tag v2.2.23 (commit 71eb5b7d0f537be1a0b585bd383901add7cf9273), the version the
// recorded transcripts ran (RHEL 9 / RHCOS 4.14+ ship 2.2), path under rust/src/lib/.
//
// Profiles are NetworkManager settings as `busctl --json=short` prints GetSettings: {setting: {key: {type, data}}}.
// A connection here: {path, settings, flags, filename}; `current` (what nmstatectl-nm.cjs reads from NetworkManager
// and the kernel): {conns, activeUuids, links: [{name, type}], routesConfig: [route], bridges: {name: [port]}}.
'use strict';

/** An nmstate refusal or failure: printed as `NmstateError: <kind>: <message>` (cli/error.rs From<NmstateError>). */
class NmstateError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

// nm/nm_dbus/dbus.rs: the checkpoint nmstate asks for (every device: an empty device list) and its save flags.
const CHECKPOINT_FLAGS = 0x02 /* DELETE_NEW_CONNECTIONS */ | 0x04; /* DISCONNECT_NEW_DEVICES */
const SAVE_FLAGS = 0x01 /* TO_DISK */ | 0x20; /* BLOCK_AUTOCONNECT (Create2 and Update2 alike) */
// query_apply/net_state.rs DEFAULT_ROLLBACK_TIMEOUT and cli/apply.rs DEFAULT_TIMEOUT
const DEFAULT_TIMEOUT = 60;
// NetworkManager's NMSettingsConnectionFlags: VOLATILE profiles go away by themselves (nm/query_apply/profile.rs
// delete_exist_profiles skips them).
const NM_FLAG_VOLATILE = 0x04;
// nm/dns.rs DEFAULT_DNS_PRIORITY
const DNS_PRIORITY = 40;
const I32_MAX = 2147483647;
// nm/settings/ip.rs ADDR_GEN_MODE_EUI64: the mode nmstate writes when the state names none
const ADDR_GEN_MODE_EUI64 = 0;

/** nmstate interface type → NetworkManager setting type (nm/settings/connection.rs iface_type_to_nm). */
const NM_TYPE = {
  ethernet: '802-3-ethernet',
  veth: 'veth',
  'ovs-bridge': 'ovs-bridge',
  'ovs-interface': 'ovs-interface',
  'ovs-port': 'ovs-port',
  loopback: 'loopback',
};
/** Types the testbed can make (its kernel has no 8021q, bonding or dummy module; test/e2e/testbed/README.md). */
const SUPPORTED = new Set(['ethernet', 'veth', 'ovs-bridge', 'ovs-interface', 'loopback']);

const v = (type, data) => ({ type, data });
const isObj = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);
const clone = (x) => JSON.parse(JSON.stringify(x));
const get = (settings, section, key) => settings?.[section]?.[key]?.data;

/** The connection's own facts, from its settings. */
function describe(conn) {
  const s = conn.settings;
  return {
    uuid: get(s, 'connection', 'uuid'),
    id: get(s, 'connection', 'id'),
    type: get(s, 'connection', 'type'),
    ifname: get(s, 'connection', 'interface-name'),
    master: get(s, 'connection', 'master') ?? get(s, 'connection', 'controller'),
    slaveType: get(s, 'connection', 'slave-type') ?? get(s, 'connection', 'port-type'),
  };
}

/** The same interface for nmstate: an ethernet state matches a veth profile and back (query_apply/profile.rs create_index_for_nm_conns_by_name_type). */
function sameType(nmType, wanted) {
  return nmType === wanted || (wanted === '802-3-ethernet' && nmType === 'veth') || (wanted === 'veth' && nmType === '802-3-ethernet');
}

/**
 * nm/settings/connection.rs get_exist_profile: among the profiles for this interface name and type, the activated
 * one if any ("Prefer activated connection"), else the last one in NetworkManager's list.
 */
function getExistProfile(conns, ifname, ifaceType, activeUuids) {
  const nmType = NM_TYPE[ifaceType] ?? ifaceType;
  const found = [];
  for (const c of conns) {
    const d = describe(c);
    if (d.ifname !== ifname || !sameType(d.type, nmType)) continue;
    if (activeUuids.includes(d.uuid)) return c;
    found.push(c);
  }
  return found.pop();
}

function isUuid(s) {
  return typeof s === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}

// ---- the merge: desired over current, and the refusals nmstate makes before it takes a checkpoint --------------

function parseInterfaces(state) {
  if (state.interfaces === undefined) return [];
  if (!Array.isArray(state.interfaces)) throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: interfaces: invalid type, expected a sequence');
  return state.interfaces.map((raw) => {
    if (!isObj(raw) || typeof raw.name !== 'string' || raw.name === '') throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: interfaces: missing field `name`');
    return clone(raw);
  });
}

/**
 * The merged state (query_apply/net_state.rs apply_with_nm_backend → MergedNetworkState::new, before the checkpoint):
 * {ifaces: [{name, type, state, desired, current, changed, forApply}], routes: {indexed, changedIfaces}, dns, logs}.
 * Throws NmstateError for what nmstate refuses.
 */
function merge(state, current) {
  if (!isObj(state)) throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: invalid type, expected a mapping');
  const logs = [];
  const cur = current.interfaces;
  const ifaces = [];
  for (const d of parseInterfaces(state)) {
    if (d.type === undefined || d.type === 'unknown') {
      // ifaces/inter_ifaces.rs resolve_unknown_ifaces: an interface without a type takes its current one
      const found = cur.filter((c) => c.name === d.name && c.type !== 'ovs-bridge');
      if (found.length === 0) throw new NmstateError('InvalidArgument', `Failed to find unknown type interface ${d.name} in current state`);
      d.type = found[0].type;
    }
    if (!SUPPORTED.has(d.type)) throw new NmstateError('NotSupportedError', `Interface ${d.name} of type ${d.type} is not supported by the testbed's nmstatectl stand-in: the testbed kernel has no module for it, or the stand-in does not model it (test/e2e/testbed/README.md)`);
    // nmstate 2.2 takes `type: veth` without a `veth` section (what show reports for a veth NIC) as an ethernet:
    // the recorded nmstatectl 2.2.23 run (demo-extra-veth.log, issue 35) edits the 802-3-ethernet profile
    if (d.type === 'veth' && !d.veth) d.type = 'ethernet';
    d.state = d.state ?? 'up';
    if (!['up', 'down', 'absent'].includes(d.state)) throw new NmstateError('InvalidArgument', `Provide file is not valid NetworkState or NetworkPolicy: interfaces: unknown variant \`${d.state}\`, expected one of \`up\`, \`down\`, \`absent\``);
    // an ethernet state matches the veth the kernel reports (ifaces/inter_ifaces.rs: veth is ethernet to nmstate)
    const c = cur.find((x) => x.name === d.name && (x.type === d.type || (d.type === 'ethernet' && x.type === 'veth') || (d.type === 'veth' && x.type === 'ethernet')));
    ifaces.push({ name: d.name, type: d.type, state: d.state, desired: d, current: c, changed: true });
  }
  // OVS bridges and internal interfaces: released (`state: absent`) as nmstate does; building or changing one is
  // configure-ovs's work on this testbed and not modelled — one listed as it is now is left alone (unchanged).
  for (const i of ifaces.filter((x) => (x.type === 'ovs-bridge' || x.type === 'ovs-interface') && x.state !== 'absent')) {
    const curPorts = JSON.stringify((i.current?.bridge?.port ?? []).map((p) => p.name).sort());
    const wantPorts = i.desired.bridge?.port === undefined ? curPorts : JSON.stringify((i.desired.bridge.port ?? []).map((p) => p?.name).sort());
    const sameIp = ['ipv4', 'ipv6'].every((f) => i.desired[f] === undefined || JSON.stringify(stripIp(i.desired[f])) === JSON.stringify(stripIp(i.current?.[f])));
    if (!i.current || curPorts !== wantPorts || !sameIp || i.state !== 'up') {
      throw new NmstateError('NotSupportedError', `Interface ${i.name} of type ${i.type}: the testbed's nmstatectl stand-in only releases OVS bridges and interfaces (state: absent) or leaves them as they are; configure-ovs builds them (test/e2e/testbed/README.md)`);
    }
    i.changed = false;
  }
  const find = (name, type) => ifaces.find((i) => i.name === name && (type === undefined || i.type === type || (type === 'ethernet' && i.type === 'veth')));
  // ifaces/ethernet.rs: an ethernet that is desired up and not there is refused (no veth of ours creates it)
  for (const i of ifaces) {
    if ((i.type === 'ethernet' || i.type === 'veth') && i.state === 'up' && !i.current && !i.desired.veth) {
      throw new NmstateError('InvalidArgument', `Ethernet interface ${i.name} does not exists`);
    }
  }
  // Controllers: ifaces/inter_ifaces_controller.rs handle_changed_ports — the ports of an OVS bridge marked absent
  // (or left out of its port list) are detached (controller ""); an interface that cannot live without a controller
  // (an OVS internal interface) is then marked absent (iface.rs apply_ctrller_change, the INFO line recorded in
  // the recorded nmstatectl 2.2.23 run (demo2a.log, issue 35)).
  const ctrlChange = new Map();
  for (const br of ifaces.filter((i) => i.type === 'ovs-bridge')) {
    const curPorts = br.current?.bridge?.port?.map((p) => p.name) ?? [];
    if (br.state === 'absent') {
      for (const p of curPorts) ctrlChange.set(p, { ctrl: '', from: br.name });
    } else if (br.desired.bridge?.port !== undefined) {
      const wanted = (br.desired.bridge.port ?? []).map((p) => p?.name);
      for (const p of curPorts) if (!wanted.includes(p)) ctrlChange.set(p, { ctrl: '', from: br.name });
      for (const p of wanted) ctrlChange.set(p, { ctrl: br.name });
    }
  }
  for (const [port, change] of ctrlChange) {
    const isInternal = change.ctrl === '' ? cur.some((c) => c.name === port && c.type === 'ovs-interface') : port === change.ctrl;
    let i = isInternal ? find(port, 'ovs-interface') : ifaces.find((x) => x.name === port && x.type !== 'ovs-bridge' && x.type !== 'ovs-interface');
    if (!i) {
      const c = cur.find((x) => x.name === port && (isInternal ? x.type === 'ovs-interface' : x.type !== 'ovs-bridge' && x.type !== 'ovs-interface'));
      i = { name: port, type: isInternal ? 'ovs-interface' : (c?.type ?? 'ethernet'), state: c ? 'up' : 'up', desired: undefined, current: c, changed: true };
      ifaces.push(i);
      logs.push(`nmstate::ifaces::inter_ifaces_controller] Include interface ${port} to edit as its controller required so`);
    }
    i.controller = change.ctrl;
    if (change.ctrl !== '') i.controllerType = 'ovs-bridge';
    if (i.type === 'ovs-interface' && change.ctrl === '' && i.current?.controller) {
      logs.push(`nmstate::iface] Interface ${i.name} cannot live without controller, marking as absent as it has been detached from its original controller ${i.current.controller}`);
      i.state = 'absent';
    }
  }
  for (const i of ifaces) {
    if (i.controller === undefined) {
      // an interface named without `controller` keeps the one it has (ifaces/base.rs BaseInterface merge)
      const explicit = i.desired && Object.prototype.hasOwnProperty.call(i.desired, 'controller');
      i.controller = explicit ? i.desired.controller ?? '' : (i.current?.controller ?? '');
      if (i.controller && !i.controllerType) i.controllerType = i.current?.controllerType ?? (ifaces.find((x) => x.name === i.controller && x.type === 'ovs-bridge') ? 'ovs-bridge' : undefined);
    }
  }
  // IP settings: desired over current (ifaces/base.rs, ip.rs merge); an interface with a controller has none
  for (const i of ifaces.filter((x) => x.state !== 'absent' && x.type !== 'ovs-bridge')) {
    i.ipv4 = mergeIp(i.current?.ipv4, i.desired?.ipv4);
    i.ipv6 = mergeIp(i.current?.ipv6, i.desired?.ipv6);
    const canHaveIp = !i.controller || i.type === 'ovs-interface'; // ifaces/base.rs can_have_ip
    // ifaces/base.rs validate_can_have_ip (a desired interface only)
    if (!canHaveIp && i.desired && i.state === 'up' && (i.desired.ipv4?.enabled === true || i.desired.ipv6?.enabled === true)) {
      throw new NmstateError('InvalidArgument', `Interface ${i.name} cannot have IP enabled as it is attached to a controller where IP is not allowed`);
    }
    if (!canHaveIp) {
      i.ipv4 = undefined;
      i.ipv6 = undefined;
    }
    for (const [fam, ip] of [[4, i.ipv4], [6, i.ipv6]]) {
      for (const a of ip?.address ?? []) {
        if (!isObj(a) || typeof a.ip !== 'string' || !Number.isInteger(a['prefix-length'])) throw new NmstateError('InvalidArgument', `Provide file is not valid NetworkState or NetworkPolicy: interfaces: ipv${fam}.address: missing field \`ip\` or \`prefix-length\``);
      }
      // nm/settings/ip.rs gen_nm_ipv6_setting
      if (fam === 6 && ip?.enabled && !ip.dhcp && ip.autoconf) throw new NmstateError('NotImplementedError', 'Autoconf without DHCP is not supported yet');
    }
  }
  const routes = mergeRoutes(state.routes, current.routesConfig ?? [], ifaces);
  for (const name of routes.changedIfaces) {
    if (!ifaces.some((i) => i.name === name && i.type !== 'ovs-bridge')) {
      const c = cur.find((x) => x.name === name && x.type !== 'ovs-bridge');
      if (c) ifaces.push({ name, type: c.type, state: 'up', desired: undefined, current: c, changed: true, controller: c.controller ?? '', ipv4: c.ipv4, ipv6: c.ipv6 });
    }
  }
  const dns = mergeDns(state['dns-resolver'], current, ifaces);
  return { ifaces, routes, dns, logs };
}

/** The IP settings that say what is configured (addresses, DHCP, enabled), for comparing a listed interface with its current one. */
function stripIp(ip) {
  if (!ip) return undefined;
  return { enabled: !!ip.enabled, dhcp: !!ip.dhcp, address: (ip.address ?? []).filter((a) => !isDynamicAddress(a)).map((a) => `${a.ip}/${a['prefix-length']}`) };
}

/** ip.rs InterfaceIpAddr::is_auto (nmstate v2.2.23): learned (DHCP, autoconf), shown with a lifetime that is not forever. */
function isDynamicAddress(a) {
  return a['valid-left'] !== undefined && a['valid-left'] !== 'forever';
}

/** ip.rs InterfaceIpv4/6 merge: what the state says over what is there; `enabled: false` drops the rest. */
function mergeIp(cur, desired) {
  if (desired === undefined) return cur ? clone(cur) : undefined;
  if (!isObj(desired)) throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: ipv4/ipv6: invalid type, expected a mapping');
  if (desired.enabled === false) return { enabled: false };
  const base = cur?.enabled ? clone(cur) : {};
  const merged = { ...base, ...clone(desired), enabled: true };
  // a DHCP state without addresses drops the static ones; a static state keeps only the ones it lists
  if (desired.dhcp === true && desired.address === undefined) delete merged.address;
  if (desired.dhcp === false && base.dhcp) delete merged['auto-dns'];
  return merged;
}

const routeText = (r) => `${r.destination ?? ''} ${r['next-hop-interface'] ?? ''} ${r['next-hop-address'] ?? ''} ${r.metric ?? ''} ${r['table-id'] ?? ''}`.replace(/\s+/g, ' ').trim();

/** route.rs RouteEntry::is_match: the fields an absent entry names must match. */
function routeMatches(absent, r) {
  if (absent.destination && absent.destination !== r.destination) return false;
  if (absent['next-hop-interface'] !== undefined && absent['next-hop-interface'] !== r['next-hop-interface']) return false;
  if (absent['next-hop-address'] !== undefined && absent['next-hop-address'] !== r['next-hop-address']) return false;
  if (absent['table-id'] !== undefined && absent['table-id'] !== 0 && absent['table-id'] !== r['table-id']) return false;
  return true;
}

/**
 * route.rs MergedRoutes::new: the current configured routes stay (observation 13: the factory gateway is carried
 * into the new profile) unless an absent entry matches them or their interface goes away / loses that IP family;
 * the desired ones are added; all sorted and indexed by next-hop interface.
 */
function mergeRoutes(desiredRoutes, curConfig, ifaces) {
  const cfg = desiredRoutes?.config;
  if (cfg !== undefined && !Array.isArray(cfg)) throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: routes.config: invalid type, expected a sequence');
  const desired = (cfg ?? []).map((r) => {
    if (!isObj(r)) throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: routes.config: invalid type, expected a mapping');
    return clone(r);
  });
  const absentIfaces = ifaces.filter((i) => i.state === 'absent').map((i) => i.name);
  const famOff = (name, six) => {
    const i = ifaces.find((x) => x.name === name && x.type !== 'ovs-bridge');
    const ip = i ? (six ? i.ipv6 : i.ipv4) : undefined;
    return i !== undefined && !ip?.enabled;
  };
  const isSix = (r) => String(r.destination ?? '').includes(':');
  const changed = new Set();
  for (const r of desired.filter((x) => x.state !== 'absent')) {
    if (typeof r.destination !== 'string') throw new NmstateError('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: routes.config: missing field `destination`');
    const via = r['next-hop-interface'];
    if (via === undefined) continue;
    if (absentIfaces.includes(via)) throw new NmstateError('InvalidArgument', `The next hop interface of desired Route '${routeText(r)}' has been marked as absent`);
    if (famOff(via, isSix(r))) throw new NmstateError('InvalidArgument', `The next hop interface of desired Route '${routeText(r)}' has been marked as IPv${isSix(r) ? 6 : 4} disabled`);
    changed.add(via);
  }
  const absents = desired.filter((x) => x.state === 'absent');
  for (const a of absents) for (const r of curConfig) if (routeMatches(a, r) && r['next-hop-interface']) changed.add(r['next-hop-interface']);
  const flat = [];
  for (const r of curConfig) {
    const via = r['next-hop-interface'];
    if (!via || absentIfaces.includes(via) || famOff(via, isSix(r))) continue;
    if (absents.some((a) => routeMatches(a, r))) continue;
    flat.push(clone(r));
  }
  for (const r of desired.filter((x) => x.state !== 'absent')) flat.push(r);
  // route.rs sort_key: (IPv6 before IPv4), table (none is the main table 254), next-hop interface, destination,
  // next-hop address, weight — so the factory route (table 254, via .111.1) comes before a new one (the early-apply record of issue 35)
  const key = (r) => [isSix(r) ? 0 : 1, r['table-id'] || 254, r['next-hop-interface'] ?? 'lo', r.destination ?? '', r['next-hop-address'] ?? '', r.weight ?? 0];
  flat.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let n = 0; n < ka.length; n++) if (ka[n] !== kb[n]) return ka[n] < kb[n] ? -1 : 1;
    return 0;
  });
  const dedup = flat.filter((r, n) => n === 0 || JSON.stringify(r) !== JSON.stringify(flat[n - 1]));
  const indexed = {};
  for (const r of dedup) if (r['next-hop-interface']) (indexed[r['next-hop-interface']] ??= []).push(r);
  return { indexed, changedIfaces: [...changed] };
}

/**
 * nm/dns.rs store_dns_config_to_iface: the servers go to one interface per family — a desired one with static IP
 * first (is_iface_prefered_for_dns), in the order the state lists them — with dns-priority 40; the interfaces that
 * held DNS before are purged.
 */
function mergeDns(desiredDns, current, ifaces) {
  const cfg = desiredDns?.config;
  if (cfg === undefined) return undefined;
  const servers = cfg?.server ?? [];
  const search = cfg?.search ?? [];
  const options = cfg?.options ?? [];
  const pick = (six) => {
    const ok = (i) => i.changed && i.state === 'up' && i.type !== 'ovs-bridge' && i.type !== 'loopback' && (six ? i.ipv6 : i.ipv4)?.enabled;
    const preferred = ifaces.filter((i) => i.desired && ok(i) && !(six ? i.ipv6 : i.ipv4).dhcp);
    return preferred[0]?.name ?? ifaces.filter((i) => i.desired && ok(i))[0]?.name;
  };
  const v4 = servers.filter((s) => !s.includes(':'));
  const v6 = servers.filter((s) => s.includes(':'));
  const out = { servers, search, options, v4Iface: undefined, v6Iface: undefined, purge: current.dnsIfaces ?? [] };
  if (v4.length) {
    out.v4Iface = pick(false);
    if (!out.v4Iface) throw new NmstateError('InvalidArgument', `Failed to find suitable(IP enabled) interface for DNS server ${JSON.stringify(v4)}`);
  }
  if (v6.length) {
    out.v6Iface = pick(true);
    if (!out.v6Iface) throw new NmstateError('InvalidArgument', `Failed to find suitable(IP enabled) interface for DNS server ${JSON.stringify(v6)}`);
  }
  for (const name of [...out.purge, out.v4Iface, out.v6Iface].filter(Boolean)) {
    if (!ifaces.some((i) => i.name === name && i.type !== 'ovs-bridge')) {
      const c = current.interfaces.find((x) => x.name === name && x.type !== 'ovs-bridge');
      if (c) ifaces.push({ name, type: c.type, state: 'up', desired: undefined, current: c, changed: true, controller: c.controller ?? '', ipv4: c.ipv4, ipv6: c.ipv6 });
    }
  }
  return out;
}

// ---- apply: which profiles go, which are written, which are activated --------------------------------------

/**
 * nm/query_apply/apply.rs delete_ifaces: every profile of an absent interface (by name and type), and the OVS port
 * profile an OVS interface profile points to by UUID. Returns [{uuid, log}].
 */
function absentDeletions(merged, conns) {
  const out = [];
  const seen = new Set();
  // MergedInterfaces::iter: the userspace interfaces (OVS bridges) before the kernel ones (the recorded nmstatectl 2.2.23 run (demo2a.log, issue 35))
  const absent = merged.ifaces.filter((x) => x.state === 'absent');
  for (const i of [...absent.filter((x) => x.type === 'ovs-bridge'), ...absent.filter((x) => x.type !== 'ovs-bridge')]) {
    const nmType = NM_TYPE[i.type] ?? i.type;
    for (const c of conns) {
      const d = describe(c);
      if (d.ifname !== i.name || !sameType(d.type, nmType)) continue;
      if (!seen.has(d.uuid)) {
        seen.add(d.uuid);
        out.push({ uuid: d.uuid, log: `nmstate::nm::query_apply::apply] Deleting NM connection for absent interface ${i.name}/${i.type}: ${d.uuid}` });
      }
      if (d.slaveType === 'ovs-port' && d.master && !seen.has(d.master)) {
        seen.add(d.master);
        out.push({ uuid: d.master, log: `nmstate::nm::query_apply::apply] Deleting NM OVS port connection ${d.master} for absent OVS interface ${i.name}` });
      }
    }
  }
  // apply.rs delete_orphan_ports: an OVS port profile whose controller (by UUID) was deleted
  for (const c of conns) {
    const d = describe(c);
    if (d.type === 'ovs-port' && d.master && seen.has(d.master) && !seen.has(d.uuid)) {
      seen.add(d.uuid);
      out.push({ uuid: d.uuid, log: `nmstate::nm::query_apply::apply] Deleting NM orphan profile ${d.ifname ?? ''}/${d.type}: ${d.uuid}` });
    }
  }
  return out;
}

function ipv4ToU32(ip) {
  const p = ip.split('.').map(Number);
  return ((p[3] << 24) >>> 0) + (p[2] << 16) + (p[1] << 8) + p[0]; // network byte order read as a host (little-endian) u32
}
function ipv6Bytes(ip) {
  const [head, tail] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}

/** nm/settings/ip.rs gen_nm_ipv4_setting / gen_nm_ipv6_setting, over the existing section. */
function ipSection(fam, ip, base, routes, dns) {
  const six = fam === 6;
  const sec = base ? clone(base) : {};
  // the legacy forms would fight the *-data ones NetworkManager prefers: the *-data ones are written
  for (const k of ['addresses', 'routes', 'address-labels']) delete sec[k];
  if (!ip) {
    if (!base) sec.method = v('s', 'disabled');
    return sec;
  }
  // nm/settings/ip.rs gen_nm_ipv4_setting/gen_nm_ipv6_setting (nmstate v2.2.23): the static addresses are written
  // whatever the method — with DHCP on, NetworkManager adds them beside the lease (method auto + address1=) — and
  // only dynamic ones (InterfaceIpAddr::is_auto: a valid lifetime that is not forever) are left out.
  const addrs = ip.enabled ? (ip.address ?? []).filter((a) => !isDynamicAddress(a)) : [];
  let method;
  if (!ip.enabled) method = 'disabled';
  else if (six) method = ip.dhcp ? (ip.autoconf ? 'auto' : 'dhcp') : addrs.length ? 'manual' : 'link-local';
  else method = ip.dhcp ? 'auto' : addrs.length ? 'manual' : 'disabled';
  sec.method = v('s', method);
  sec['address-data'] = v('aa{sv}', addrs.map((a) => ({ address: v('s', a.ip), prefix: v('u', a['prefix-length']) })));
  if (six) sec['addr-gen-mode'] = v('i', ip['addr-gen-mode'] === 'stable-privacy' ? 1 : ADDR_GEN_MODE_EUI64);
  if (ip.enabled && (ip.dhcp || (six && ip.autoconf))) {
    // nm/settings/ip.rs (nmstate v2.2.23): a dynamic IPv4 gets dhcp-client-id "mac" unless the state names one
    // (Dhcpv4ClientId: ll → mac, iaid+duid → duid); a dynamic IPv6 dhcp-duid "ll" and dhcp-iaid "mac". configure-ovs
    // copies both into br-ex's clone, so the lease follows the NIC's MAC through the move.
    if (six) {
      sec['dhcp-duid'] = v('s', ip['dhcp-duid'] ?? 'll');
      sec['dhcp-iaid'] = v('s', 'mac');
    } else {
      const id = ip['dhcp-client-id'];
      sec['dhcp-client-id'] = v('s', id === undefined || id === 'll' ? 'mac' : id === 'iaid+duid' ? 'duid' : String(id));
    }
  }
  if (ip.enabled && ip.dhcp) {
    if (ip['auto-route-metric'] !== undefined) sec['route-metric'] = v('x', ip['auto-route-metric']);
    if (ip['auto-dns'] !== undefined) sec['ignore-auto-dns'] = v('b', !ip['auto-dns']);
    if (ip['auto-gateway'] !== undefined) sec['never-default'] = v('b', !ip['auto-gateway']);
    if (ip['auto-routes'] !== undefined) sec['ignore-auto-routes'] = v('b', !ip['auto-routes']);
    delete sec.gateway;
    sec['route-data'] = v('aa{sv}', []);
  }
  if (!ip.enabled) {
    // "Clean up static routes if ip is disabled"
    sec['route-data'] = v('aa{sv}', []);
    delete sec.gateway;
  } else if (routes !== undefined) {
    sec['route-data'] = v('aa{sv}', routes.filter((r) => String(r.destination).includes(':') === six).map((r) => routeData(r)));
    delete sec.gateway;
  }
  if (dns) {
    // nm/settings/dns.rs apply_nm_dns_setting
    sec.dns = six ? v('aay', dns.server.map(ipv6Bytes)) : v('au', dns.server.map(ipv4ToU32));
    delete sec['dns-data']; // NetworkManager 1.42's string form of the same list: the one written is `dns`
    sec['dns-search'] = v('as', dns.search);
    sec['dns-options'] = v('as', dns.options);
    if (dns.priority !== undefined) sec['dns-priority'] = v('i', dns.priority);
    else delete sec['dns-priority'];
  }
  // nm/settings/ip.rs fix_ip_dhcp_timeout: every IP section nmstate writes
  sec['dhcp-timeout'] = v('i', I32_MAX);
  return sec;
}

/** nm/settings/route.rs gen_nm_ip_routes: no metric is metric 0; the main table is left implicit. */
function routeData(r) {
  const [dest, prefix] = String(r.destination).split('/');
  const out = { dest: v('s', dest), prefix: v('u', Number(prefix ?? (dest.includes(':') ? 128 : 32))), metric: v('u', r.metric === undefined || r.metric === -1 ? 0 : r.metric) };
  if (r['next-hop-address'] !== undefined) out['next-hop'] = v('s', r['next-hop-address']);
  if (r['table-id'] !== undefined && r['table-id'] !== 0) out.table = v('u', r['table-id']);
  return out;
}

function uuid4(random) {
  const b = random(16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * nm/profile.rs perpare_nm_conns + nm/settings/connection.rs iface_to_nm_connections for the changed, non-absent
 * interfaces: [{iface, existing (connection or undefined), settings, activate}]. `conns`/`activeUuids` are read
 * after the absent interfaces' profiles were deleted (apply.rs nm_apply), so which profile is edited depends on
 * what NetworkManager has active at that moment (get_exist_profile prefers the activated one).
 */
function profilesToStore(merged, conns, activeUuids, random) {
  const out = [];
  const ifaces = merged.ifaces.filter((i) => i.state !== 'absent' && i.changed);
  ifaces.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const i of ifaces) {
    const existing = getExistProfile(conns, i.name, i.type, activeUuids);
    const s = existing ? clone(existing.settings) : {};
    const con = s.connection ?? {};
    if (!existing) {
      // connection.rs gen_nm_conn_setting: a new profile is named after the interface ("-br", "-if" for OVS)
      const id = i.type === 'ovs-bridge' ? `${i.name}-br` : i.type === 'ovs-interface' ? `${i.name}-if` : i.name;
      con.id = v('s', id);
      con.uuid = v('s', uuid4(random));
      con.type = v('s', NM_TYPE[i.type] === 'veth' ? '802-3-ethernet' : NM_TYPE[i.type]);
    }
    con['interface-name'] = v('s', i.name);
    con.autoconnect = v('b', true);
    if (i.type === 'ovs-bridge') con['autoconnect-slaves'] = v('i', 1);
    if (i.controller === '') {
      delete con.master;
      delete con['slave-type'];
      delete con.controller;
      delete con['port-type'];
      // "When detaching a OVS system interface from OVS bridge, we should remove its NmSettingOvsIface setting"
      delete s['ovs-interface'];
    }
    s.connection = con;
    const routes = merged.routes.indexed[i.name] ?? (merged.routes.changedIfaces.includes(i.name) ? [] : undefined);
    const canHaveIp = !i.controller || i.type === 'ovs-interface';
    if (canHaveIp && i.type !== 'ovs-bridge') {
      const dnsFor = (six) => {
        const d = merged.dns;
        if (!d) return undefined;
        const holder = six ? d.v6Iface : d.v4Iface;
        const servers = d.servers.filter((x) => x.includes(':') === six);
        if (holder === i.name) {
          const preferred = (d.servers[0] ?? '').includes(':') === six;
          return preferred ? { server: servers, search: d.search, options: d.options, priority: DNS_PRIORITY } : { server: servers, search: [], options: [], priority: DNS_PRIORITY + 10 };
        }
        if (d.purge.includes(i.name)) return { server: [], search: [], options: [] };
        return undefined;
      };
      s.ipv4 = ipSection(4, i.ipv4, s.ipv4, routes, dnsFor(false));
      s.ipv6 = ipSection(6, i.ipv6, s.ipv6, routes, dnsFor(true));
    } else if (i.type !== 'ovs-bridge') {
      delete s.ipv4;
      delete s.ipv6;
    }
    // profile.rs can_skip_activation: a port whose controller goes down or away is not activated
    const ctrlGone = i.controller && merged.ifaces.some((x) => x.name === i.controller && x.type === 'ovs-bridge' && x.state !== 'up');
    out.push({ iface: i, existing, settings: s, activate: i.state === 'up' && !ctrlGone, deactivate: i.state === 'down' });
  }
  return out;
}

/**
 * query_apply/profile.rs delete_exist_profiles: every other (not volatile) profile of an interface name and type
 * that was written — configure-ovs's ovs-if-phys0 when nmstate wrote the NIC's own profile (observation 2), or the
 * NIC's factory profile when it wrote ovs-if-phys0 (issue 35 point 2).
 */
function otherProfilesToDelete(stored, conns) {
  const keep = new Set(stored.map((p) => get(p.settings, 'connection', 'uuid')));
  const keys = stored.map((p) => [get(p.settings, 'connection', 'interface-name'), get(p.settings, 'connection', 'type')]);
  const out = [];
  for (const c of conns) {
    const d = describe(c);
    if (!d.uuid || !d.ifname || !d.type || keep.has(d.uuid)) continue;
    if ((c.flags ?? 0) & NM_FLAG_VOLATILE) continue;
    if (keys.some(([n, t]) => n === d.ifname && sameType(d.type, t))) out.push({ uuid: d.uuid, log: `nmstate::nm::query_apply::profile] Deleting existing connection UUID ${d.uuid}, id Some(${JSON.stringify(d.id)}) type Some(${JSON.stringify(d.type)}) name Some(${JSON.stringify(d.ifname)})` });
  }
  return out;
}

/**
 * query_apply/ovs.rs delete_orphan_ovs_ports: an interface that was a port of an OVS bridge and is now not: the OVS
 * port profile its existing profile points to by UUID goes (get_exist_profile with no active list: the last one).
 */
function orphanOvsPorts(merged, conns, stored, deleted) {
  const out = [];
  const activating = new Set(stored.filter((p) => p.activate).map((p) => get(p.settings, 'connection', 'uuid')));
  for (const i of merged.ifaces.filter((x) => x.changed && x.state !== 'absent' && x.type !== 'ovs-interface' && x.type !== 'ovs-bridge')) {
    if (i.controllerType === 'ovs-bridge' && i.controller) continue;
    if (i.current?.controllerType !== 'ovs-bridge') continue;
    const exist = getExistProfile(conns, i.name, i.type, []);
    if (!exist) continue;
    const d = describe(exist);
    if (d.slaveType !== 'ovs-port' || !isUuid(d.master) || activating.has(d.master) || deleted.has(d.master)) continue;
    out.push({ uuid: d.master, log: `nmstate::nm::query_apply::ovs] Deleting orphan OVS port connection ${d.master} as interface ${i.name}(${i.type === 'veth' ? 'ethernet' : i.type}) detached from OVS bridge` });
  }
  return out;
}

/** query_apply/profile.rs activate_nm_profiles: controllers first, then the rest; an active one is reapplied. */
function activationOrder(stored) {
  const controllers = new Set(['bond', 'bridge', 'ovs-bridge', 'ovs-port', 'vrf']);
  const isCtrl = (p) => controllers.has(get(p.settings, 'connection', 'type'));
  return [...stored.filter((p) => p.activate && isCtrl(p)), ...stored.filter((p) => p.activate && !isCtrl(p))];
}

/** apply.rs gen_nm_conn_need_to_deactivate_first: an active profile that loses a route is taken down first (bz 1837254). */
function loosesRoutes(oldSettings, newSettings) {
  for (const fam of ['ipv4', 'ipv6']) {
    const routes = (s) => (get(s, fam, 'route-data') ?? []).map((r) => JSON.stringify([r.dest?.data, r.prefix?.data, r['next-hop']?.data, r.metric?.data, r.table?.data]));
    const now = routes(newSettings);
    if (routes(oldSettings).some((r) => !now.includes(r))) return true;
  }
  return false;
}

module.exports = {
  NmstateError,
  CHECKPOINT_FLAGS,
  SAVE_FLAGS,
  DEFAULT_TIMEOUT,
  NM_FLAG_VOLATILE,
  describe,
  getExistProfile,
  merge,
  mergeRoutes,
  absentDeletions,
  profilesToStore,
  otherProfilesToDelete,
  orphanOvsPorts,
  activationOrder,
  loosesRoutes,
  ipv4ToU32,
  ipv6Bytes,
};
