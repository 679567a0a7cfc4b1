// The stand-in node's network for the integration tests' nmstatectl, nmcli, systemctl (ovs-configuration.service),
// ping and ip: a model of an OpenShift node with OVN-Kubernetes (the uplink NIC a port of br-ex) or without (SDN). It
// says no where nmstate says no, so an agent that writes the wrong state fails here. The real-OVS testbed
// (test/e2e/testbed) runs the same rules against real interfaces and the real NetworkManager; this model keeps the
// integration tests fast.
//
// State: $STANDIN_DIR/net/lan.json (the wire: NICs, the factory settings, the store LAN the cable is in now) and
// state.json { runtime, checkpoint }; NetworkManager's persistent profiles are files on the node's disk, one per
// interface (a keyfile whose [connection] section names it, its settings in nmstate's shape as one JSON value), in
// $STANDIN_ROOT/etc/NetworkManager/system-connections:
// the agent's early network phase reads, saves and writes them back itself. `runtime` is what `nmstatectl show`
// reports now.
//
// Rules, each from the real tool:
// - nmstate keeps an interface's current controller when the desired state names none
//   (nmstate/nmstate base, rust/src/lib/iface.rs preserve_current_controller_info), except for the ports of a
//   controller the state removes or whose port list leaves them out (iface.rs get_changed_ports, apply_ctrller_change);
//   an OVS internal interface cannot live without its bridge (need_controller: it goes with it).
// - an interface with a controller cannot have IP, except an OVS internal interface
//   (rust/src/lib/ifaces/base.rs can_have_ip / validate_can_have_ip, InvalidArgument).
// - a desired ethernet interface that does not exist is refused (rust/src/lib/ifaces/ethernet.rs, "Ethernet
//   interface X does not exists", InvalidArgument).
// - errors print as "NmstateError: <Kind>: <message>" (rust/src/lib/error.rs Display) with exit 1.
// - `apply --no-commit --timeout N` takes a checkpoint of every device with DELETE_NEW_CONNECTIONS and
//   DISCONNECT_NEW_DEVICES (rust/src/lib/nm/nm_dbus/dbus.rs checkpoint_create); NetworkManager rolls it back by
//   itself after N seconds even when the caller is gone (modelled lazily: the next tool call after the deadline
//   rolls back first); a second checkpoint is a CheckpointConflict; a reboot loses it. A rollback gives back only
//   the profiles that were active on a device when the checkpoint was taken, and deletes the profiles made since:
//   under br-ex the NIC runs on configure-ovs's own port profile, so its /etc profile is not given back (the real
//   NetworkManager 1.42: reference real-node-network, observations 4-6). At early boot, before configure-ovs, the
//   NIC's own profile is the active one and comes back (observations 11-12).
// - ovs-configuration.service (machine-config-operator templates/common/_base/files/configure-ovs-network.yaml,
//   release-4.12 … 4.16): at boot and on a re-run with br-ex gone it drops its own br-ex, finds the interface that
//   carries the default route, makes it br-ex's port (no IP of its own) and clones its IP settings (static or DHCP)
//   onto the br-ex internal interface, routes included; it fails when no interface carries a default route. The
//   product's NetworkManager dispatcher adds the internal IP ($STANDIN_INTERNAL_IPS) when br-ex comes up.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const BR_EX = 'br-ex';

function paths(dir) {
  return { lan: path.join(dir, 'net', 'lan.json'), state: path.join(dir, 'net', 'state.json') };
}

const clone = (v) => JSON.parse(JSON.stringify(v ?? null));

// ---- addresses -----------------------------------------------------------------------------------------------
function ipToBig(ip) {
  if (ip.includes(':')) {
    const [head, tail] = ip.split('::');
    const h = head ? head.split(':') : [];
    const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
    const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
    return { v6: true, n: groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n) };
  }
  return { v6: false, n: ip.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n) };
}

function inSubnet(ip, cidr) {
  const [net, prefix] = cidr.split('/');
  const a = ipToBig(ip);
  const b = ipToBig(net);
  if (a.v6 !== b.v6) return false;
  const bits = a.v6 ? 128n : 32n;
  const shift = bits - BigInt(prefix);
  return a.n >> shift === b.n >> shift;
}

const addrsOf = (ipcfg) => (ipcfg && ipcfg.enabled !== false && Array.isArray(ipcfg.address) ? ipcfg.address.map((a) => `${a.ip}/${a['prefix-length']}`) : []);
const isTrue = (v) => v === true || v === 'true';

// ---- state ---------------------------------------------------------------------------------------------------
const SUFFIX = '.nmconnection';
const profileDir = (dir, env) => path.join(env.STANDIN_ROOT || path.join(dir, '..', 'root'), 'etc', 'NetworkManager', 'system-connections');
const isDefaultRoute = (r) => r.destination === '0.0.0.0/0' || r.destination === '::/0';

/** The profile files now: file name → text (ours only: one per interface, nmstate's shape). */
function readFiles(pdir) {
  const out = {};
  if (!fs.existsSync(pdir)) return out;
  for (const f of fs.readdirSync(pdir)) if (f.endsWith(SUFFIX)) out[f] = fs.readFileSync(path.join(pdir, f), 'utf8');
  return out;
}

function writeFiles(pdir, files) {
  fs.mkdirSync(pdir, { recursive: true });
  const now = readFiles(pdir);
  for (const f of Object.keys(now)) if (!(f in files)) fs.rmSync(path.join(pdir, f));
  for (const [f, text] of Object.entries(files)) if (now[f] !== text) fs.writeFileSync(path.join(pdir, f), text, { mode: 0o600 });
}

/** { ifaces, routes, dns } from the files: each interface's routes and DNS live in its own profile, as in NetworkManager. */
function fromFiles(files) {
  const profiles = { ifaces: [], routes: [], dns: undefined };
  for (const f of Object.keys(files).sort()) {
    const m = /^state=(.*)$/m.exec(files[f]);
    const p = m ? JSON.parse(m[1]) : {};
    if (p.interface) profiles.ifaces.push(p.interface);
    profiles.routes.push(...(p.routes || []));
    if (p.dns) profiles.dns = p.dns;
  }
  return profiles;
}

function toFiles(profiles) {
  const dnsOn = (profiles.routes.find((r) => isDefaultRoute(r) && profiles.ifaces.some((i) => i.name === r['next-hop-interface'])) || {})['next-hop-interface'] || (profiles.ifaces[0] || {}).name;
  const files = {};
  for (const i of profiles.ifaces) {
    const routes = profiles.routes.filter((r) => r['next-hop-interface'] === i.name);
    const settings = { interface: i, ...(routes.length ? { routes } : {}), ...(profiles.dns && i.name === dnsOn ? { dns: profiles.dns } : {}) };
    files[`${i.name}${SUFFIX}`] = `[connection]\nid=${i.name}\ninterface-name=${i.name}\n\n[nmstate]\nstate=${JSON.stringify(settings)}\n`;
  }
  return files;
}

// `env`: the caller's environment, for the node's root, the internal IPs the dispatcher adds to br-ex and the kubelet's node IPs.
function load(dir, env = process.env) {
  const p = paths(dir);
  const pdir = profileDir(dir, env);
  const ips = (v) => (v || '').split(',').filter(Boolean);
  const lan = { ...JSON.parse(fs.readFileSync(p.lan, 'utf8')), internalIps: ips(env.STANDIN_INTERNAL_IPS), nodeIps: ips(env.STANDIN_NODE_IPS) };
  let state;
  try {
    state = JSON.parse(fs.readFileSync(p.state, 'utf8'));
  } catch {
    const f = lan.factory;
    const profiles = {
      ifaces: lan.nics.map((name, i) =>
        i === 0
          ? { name, type: 'ethernet', state: 'up', ipv4: f.dhcp ? { enabled: true, dhcp: true } : { enabled: true, dhcp: false, address: [{ ip: f.address, 'prefix-length': f.prefix }] }, ipv6: { enabled: false } }
          : { name, type: 'ethernet', state: 'up', ipv4: { enabled: false }, ipv6: { enabled: false } },
      ),
      routes: f.dhcp ? [] : [{ destination: '0.0.0.0/0', 'next-hop-address': f.gateway, 'next-hop-interface': lan.nics[0] }],
      dns: { server: [f.gateway] },
    };
    writeFiles(pdir, toFiles(profiles));
    state = { runtime: boot(lan, profiles).runtime };
    fs.writeFileSync(p.state, JSON.stringify(state, null, 2));
  }
  const model = {
    lan,
    state,
    profileDir: pdir,
    get profiles() {
      return (this._profiles ??= fromFiles(readFiles(pdir)));
    },
    set profiles(v) {
      this._profiles = v;
    },
    save() {
      if (this._profiles) writeFiles(pdir, toFiles(this._profiles));
      fs.writeFileSync(p.state, JSON.stringify(state, null, 2));
    },
  };
  return model;
}

/**
 * NetworkManager's rollback of a checkpoint: the profiles that were active when it was taken come back, profiles
 * made since go (DELETE_NEW_CONNECTIONS), the devices as they were.
 */
function rollback(model) {
  const cp = model.state.checkpoint;
  const files = readFiles(model.profileDir);
  for (const f of Object.keys(files)) if (!cp.existing.includes(f)) delete files[f];
  Object.assign(files, cp.files);
  writeFiles(model.profileDir, files);
  model._profiles = undefined;
  model.state.runtime = cp.runtime;
  delete model.state.checkpoint;
}

/** NetworkManager's timer: a checkpoint past its deadline is rolled back before anything else happens. */
function expireCheckpoint(model) {
  const cp = model.state.checkpoint;
  if (cp && Date.now() > cp.deadline) {
    rollback(model);
    model.save();
    return true;
  }
  return false;
}

// ---- the wire ------------------------------------------------------------------------------------------------
/** Whether `name` reaches the store LAN's switch port (untagged, or with the LAN's VLAN tag). */
function carrier(lan, ifaces, name, tag) {
  const i = ifaces.find((x) => x.name === name && x.type !== 'ovs-bridge');
  if (!i || i.state === 'down' || i.state === 'absent') return false;
  if (i.type === 'ethernet') return lan.nics.includes(name) && (lan.store.vlan ?? null) === tag;
  if (i.type === 'vlan') return tag === null && carrier(lan, ifaces, i.vlan && i.vlan['base-iface'], Number(i.vlan && i.vlan.id));
  if (i.type === 'bond') {
    const la = i['link-aggregation'] || {};
    return [...(la.port || []), ...(la.slaves || [])].some((p) => carrier(lan, ifaces, p, tag));
  }
  if (i.type === 'ovs-interface' && name === BR_EX) {
    const bridge = ifaces.find((x) => x.name === BR_EX && x.type === 'ovs-bridge');
    const up = bridge ? bridge.bridge.port.map((p) => p.name).find((p) => p !== BR_EX) : undefined;
    return up !== undefined && carrier(lan, ifaces, up, tag);
  }
  return false;
}

/** A DHCP (or autoconf) interface on the store LAN gets the lease and the default route through the LAN gateway. */
function leases(lan, ifaces, routes) {
  for (const i of ifaces) {
    for (const fam of ['ipv4', 'ipv6']) {
      const cfg = i[fam];
      if (!cfg || !(isTrue(cfg.dhcp) || isTrue(cfg.autoconf)) || cfg.enabled === false || i.controller) continue;
      const lease = lan.store.dhcp && lan.store.dhcp[fam];
      if (!lease || !carrier(lan, ifaces, i.name, null)) {
        cfg.address = [];
        continue;
      }
      const [ip, prefix] = lease.address.split('/');
      cfg.address = [{ ip, 'prefix-length': Number(prefix) }];
      routes.push({ destination: fam === 'ipv4' ? '0.0.0.0/0' : '::/0', 'next-hop-address': lease.gateway, 'next-hop-interface': i.name });
    }
  }
}

/** What NetworkManager brings up from the profiles (no OVS: configure-ovs's bridge profiles live in /run). */
function render(lan, profiles) {
  const ifaces = clone(profiles.ifaces);
  for (const nic of lan.nics) if (!ifaces.some((i) => i.name === nic)) ifaces.push({ name: nic, type: 'ethernet', state: 'up', ipv4: { enabled: false }, ipv6: { enabled: false } });
  const routes = clone(profiles.routes);
  leases(lan, ifaces, routes);
  return { ifaces, routes, dns: clone(profiles.dns) };
}

/** configure-ovs: br-ex on the interface that carries the default route, its IP settings cloned onto br-ex. */
function configureOvs(lan, runtime) {
  if (!lan.ovn) return { ok: true, runtime };
  const rt = clone(runtime);
  rt.ifaces = rt.ifaces.filter((i) => i.name !== BR_EX);
  const isDefault = (r) => r.destination === '0.0.0.0/0' || r.destination === '::/0';
  const viaRoute = rt.routes.find((r) => isDefault(r) && rt.ifaces.some((i) => i.name === r['next-hop-interface'] && !i.controller));
  const uplink = viaRoute && rt.ifaces.find((i) => i.name === viaRoute['next-hop-interface']);
  if (!uplink) return { ok: false, runtime: rt, why: 'no interface carries a default route' };
  const internal = lan.internalIps || [];
  const brIface = { name: BR_EX, type: 'ovs-interface', state: 'up', controller: BR_EX, ipv4: clone(uplink.ipv4) || { enabled: false }, ipv6: clone(uplink.ipv6) || { enabled: false } };
  for (const cidr of internal) {
    const fam = cidr.includes(':') ? 'ipv6' : 'ipv4';
    const [ip, prefix] = cidr.split('/');
    if ((brIface[fam].address || []).some((a) => a.ip === ip)) continue; // the dispatcher adds it only when absent
    brIface[fam] = { ...brIface[fam], enabled: true, address: [...(brIface[fam].address || []), { ip, 'prefix-length': Number(prefix || (fam === 'ipv4' ? 32 : 128)) }] };
  }
  uplink.controller = BR_EX;
  uplink.ipv4 = { enabled: false };
  uplink.ipv6 = { enabled: false };
  rt.ifaces.push({ name: BR_EX, type: 'ovs-bridge', state: 'up', bridge: { port: [{ name: uplink.name }, { name: BR_EX }] } }, brIface);
  rt.routes = rt.routes.map((r) => (r['next-hop-interface'] === uplink.name ? { ...r, 'next-hop-interface': BR_EX } : r));
  return { ok: true, runtime: rt };
}

function boot(lan, profiles) {
  return configureOvs(lan, render(lan, profiles));
}

// ---- nmstate -------------------------------------------------------------------------------------------------
class NmstateError extends Error {
  constructor(kind, message) {
    super(`NmstateError: ${kind}: ${message}`);
  }
}

function portsOf(i) {
  if (!i) return [];
  const la = i['link-aggregation'] || {};
  const br = (i.bridge && i.bridge.port) || [];
  return [...br.map((p) => p.name), ...(la.port || []), ...(la.slaves || [])];
}

/** Each desired interface's controller after nmstate's merge ('' = none), or throws nmstate's error. */
function mergeControllers(lan, current, desired) {
  const cur = (name) => current.ifaces.find((i) => i.name === name && i.type !== 'ovs-bridge');
  const attached = new Map();
  const detached = new Set();
  for (const d of desired) {
    const isCtrl = portsOf(d).length > 0 || d.state === 'absent';
    if (!isCtrl) continue;
    const was = current.ifaces.find((i) => i.name === d.name && (d.type ? i.type === d.type : portsOf(i).length > 0));
    const now = d.state === 'absent' ? [] : portsOf(d);
    for (const p of portsOf(was)) if (!now.includes(p)) detached.add(p);
    for (const p of now) attached.set(p, d.name);
  }
  const out = new Map();
  for (const d of desired) {
    if (d.state === 'absent') continue;
    const c = cur(d.name);
    if (d.type === 'ethernet' || (!d.type && !c)) {
      if (!c && !lan.nics.includes(d.name)) throw new NmstateError('InvalidArgument', `Ethernet interface ${d.name} does not exists`);
    }
    let ctrl;
    if (typeof d.controller === 'string') ctrl = d.controller;
    else if (attached.has(d.name)) ctrl = attached.get(d.name);
    else if (detached.has(d.name)) ctrl = '';
    else ctrl = (c && c.controller) || '';
    const ipOn = [d.ipv4, d.ipv6].some((ip) => ip && isTrue(ip.enabled));
    if (ctrl && ipOn && d.type !== 'ovs-interface') {
      throw new NmstateError('InvalidArgument', `Interface ${d.name} cannot have IP enabled as it is attached to a controller where IP is not allowed`);
    }
    out.set(d.name, ctrl);
  }
  for (const p of attached.keys()) if (!out.has(p)) out.set(p, attached.get(p));
  for (const p of detached) if (!out.has(p)) out.set(p, '');
  return out;
}

function sameRoute(a, b) {
  return a.destination === b.destination && (!b['next-hop-interface'] || a['next-hop-interface'] === b['next-hop-interface']) && (!b['next-hop-address'] || a['next-hop-address'] === b['next-hop-address']);
}

function apply(model, desiredState, opts) {
  const { lan, state } = model;
  const desired = Array.isArray(desiredState.interfaces) ? desiredState.interfaces : [];
  const controllers = mergeControllers(lan, state.runtime, desired);
  if (opts.noCommit) {
    if (state.checkpoint) throw new NmstateError('CheckpointConflict', 'Another checkpoint exists, please wait its timeout or destroy it');
    // The profiles active now: a NIC that is br-ex's port runs on configure-ovs's profile, not on its own.
    const files = readFiles(model.profileDir);
    const active = state.runtime.ifaces.filter((i) => i.type !== 'ovs-bridge' && i.state === 'up' && i.controller !== BR_EX).map((i) => `${i.name}${SUFFIX}`);
    state.checkpoint = { files: Object.fromEntries(Object.entries(files).filter(([f]) => active.includes(f))), existing: Object.keys(files), runtime: clone(state.runtime), deadline: Date.now() + opts.timeout * 1000 };
  }
  const profiles = model.profiles;
  let brExGone = !state.runtime.ifaces.some((i) => i.name === BR_EX);
  for (const d of desired) {
    if (d.name === BR_EX) {
      if (d.state === 'absent') brExGone = true;
      continue;
    }
    const idx = profiles.ifaces.findIndex((i) => i.name === d.name);
    if (d.state === 'absent') {
      if (idx >= 0) profiles.ifaces.splice(idx, 1);
      continue;
    }
    const merged = { ...(idx >= 0 ? profiles.ifaces[idx] : { type: d.type || 'ethernet', state: 'up' }), ...clone(d) };
    if (idx >= 0) profiles.ifaces[idx] = merged;
    else profiles.ifaces.push(merged);
  }
  for (const [name, ctrl] of controllers) {
    if (name === BR_EX) continue;
    let p = profiles.ifaces.find((i) => i.name === name);
    if (!p) profiles.ifaces.push((p = { name, type: 'ethernet', state: 'up' }));
    if (ctrl && ctrl !== BR_EX) {
      p.controller = ctrl;
      p.ipv4 = { enabled: false };
      p.ipv6 = { enabled: false };
    } else delete p.controller;
  }
  // Current routes through an interface whose IP family the state disables are dropped (nmstate base,
  // rust/src/lib/route.rs: ifaces_with_ipv4_disabled / ifaces_with_ipv6_disabled in the routes merge).
  for (const d of desired) {
    for (const [fam, dest] of [['ipv4', '0.0.0.0/0'], ['ipv6', '::/0']]) {
      if (d.state !== 'absent' && d[fam] && d[fam].enabled === false) profiles.routes = profiles.routes.filter((r) => !(r['next-hop-interface'] === d.name && (r.destination.includes(':') === (dest === '::/0'))));
    }
  }
  const routes = (desiredState.routes && desiredState.routes.config) || [];
  for (const r of routes) {
    profiles.routes = profiles.routes.filter((x) => !sameRoute(x, r));
    if (r.state !== 'absent') profiles.routes.push(clone(r));
  }
  const dns = desiredState['dns-resolver'] && desiredState['dns-resolver'].config;
  if (dns) profiles.dns = clone(dns);
  const fresh = render(lan, profiles);
  if (!brExGone) {
    // br-ex stays: its bridge, internal interface, port and routes are configure-ovs's, untouched by this state.
    // A port the state moves to another controller (a bond) leaves br-ex: the bridge may end up without an uplink.
    const keep = state.runtime.ifaces.filter((i) => i.name === BR_EX || (i.controller === BR_EX && !controllers.get(i.name)));
    const bridge = keep.find((i) => i.name === BR_EX && i.type === 'ovs-bridge');
    if (bridge) bridge.bridge.port = bridge.bridge.port.filter((p) => p.name === BR_EX || keep.some((k) => k.name === p.name));
    fresh.ifaces = [...fresh.ifaces.filter((i) => !keep.some((k) => k.name === i.name)), ...keep];
    fresh.routes = [...fresh.routes.filter((r) => !keep.some((k) => k.name === r['next-hop-interface'])), ...state.runtime.routes.filter((r) => r['next-hop-interface'] === BR_EX)];
  }
  state.runtime = fresh;
  model.save();
}

function show(model) {
  const rt = model.state.runtime;
  return { interfaces: rt.ifaces, routes: { running: rt.routes, config: rt.routes }, 'dns-resolver': { running: rt.dns || {}, config: rt.dns || {} } };
}

/** `ping`: the store LAN's hosts answer on-link, anything else through a default route whose gateway answers. */
function reachable(model, target) {
  const { lan } = model;
  const rt = model.state.runtime;
  const onWire = rt.ifaces.filter((i) => carrier(lan, rt.ifaces, i.name, null));
  const mine = onWire.flatMap((i) => [...addrsOf(i.ipv4), ...addrsOf(i.ipv6)].map((cidr) => ({ iface: i.name, cidr })));
  const lanAddr = (ip) => lan.store.subnets.some((s) => inSubnet(ip, s));
  const onLink = (ip) => mine.some((m) => lanAddr(m.cidr.split('/')[0]) && inSubnet(ip, m.cidr));
  if (onLink(target)) return lan.store.hosts.includes(target);
  const v6 = target.includes(':');
  return rt.routes.some((r) => r.destination === (v6 ? '::/0' : '0.0.0.0/0') && onWire.some((i) => i.name === r['next-hop-interface']) && onLink(r['next-hop-address']) && lan.store.hosts.includes(r['next-hop-address']));
}

/** `ip -j addr`: the runtime addresses, and the internal/kubelet addresses on br-ex as before ($STANDIN_NODE_IPS). */
function ipAddr(model) {
  const rt = model.state.runtime;
  const extra = model.lan.nodeIps || [];
  const links = rt.ifaces
    .filter((i) => i.type !== 'ovs-bridge')
    .map((i, n) => ({ ifindex: n + 2, ifname: i.name, addr_info: [...addrsOf(i.ipv4), ...addrsOf(i.ipv6)].map((c) => ({ family: c.includes(':') ? 'inet6' : 'inet', local: c.split('/')[0], prefixlen: Number(c.split('/')[1]), scope: 'global' })) }));
  const host = links.find((l) => l.ifname === BR_EX) || links.find((l) => l.addr_info.length) || links[0];
  for (const a of extra) if (host && !host.addr_info.some((x) => x.local === a)) host.addr_info.push({ family: a.includes(':') ? 'inet6' : 'inet', local: a, scope: 'global' });
  return [{ ifindex: 1, ifname: 'lo', addr_info: [{ family: 'inet', local: '127.0.0.1', scope: 'host' }] }, ...links];
}

module.exports = { load, expireCheckpoint, rollback, apply, show, configureOvs, render, boot, reachable, ipAddr, NmstateError, BR_EX };
