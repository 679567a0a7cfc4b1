#!/usr/bin/node
// Stand-in for nmstatectl 2.2 on a testbed node that runs the real NetworkManager (nmstate is in no registry these
// machines reach). It applies nmstate's rules (nmstate-rules.cjs beside it, each citing nmstate/nmstate v2.2.23)
// through NetworkManager's own D-Bus API, with busctl(1):
//   - the checkpoint is NetworkManager's: CheckpointCreate([], timeout, DELETE_NEW_CONNECTIONS|DISCONNECT_NEW_DEVICES)
//     before the changes, CheckpointAdjustRollbackTimeout(timeout) before applying (query_apply/net_state.rs), and
//     NetworkManager itself rolls back when the timeout expires — this process and its caller may be dead by then;
//     `commit` is CheckpointDestroy, `rollback` CheckpointRollback (nm/checkpoint.rs, nm_dbus/nm_api.rs). What comes
//     back is what NetworkManager's checkpoint restores (only the profiles active on a device when it was taken,
//     nm-checkpoint.c), nothing more — the opposite of the older model stand-in (nmstatectl.cjs).
//   - profiles are written with Settings.AddConnection2 / Settings.Connection.Update2 and nmstate's flags TO_DISK |
//     BLOCK_AUTOCONNECT (nm/nm_dbus/dbus.rs), deleted with Delete, activated with ActivateConnection or re-applied
//     with Device.Reapply (query_apply/profile.rs).
//   - `show` reads NetworkManager (profiles, active connections, devices), the kernel (ip -j) and Open vSwitch
//     (ovs-vsctl) and prints nmstate's shape (the recorded nmstatectl 2.2.23 show of issue 35, README of the testbed).
// Command line and outputs as nmstatectl 2.2 (rust/src/cli/ncl.rs, apply.rs, error.rs): `show [IFNAME] [--json]`;
// `apply [FILE...|-] [--no-commit] [--timeout N]` logs to stderr and prints the state it applied; `commit` and
// `rollback [CHECKPOINT]` print the checkpoint argument; errors print `NmstateError: <Kind>: <message>`, exit 1.
//
// Testbed files (the agent's e2e tests use them, kept from the first stand-in):
//   /etc/nmstate-standin/fail: lines `VERB [once] EXIT MESSAGE` (VERB: apply|commit|rollback|show|*) make the next
//     matching call print MESSAGE and exit EXIT, changing nothing (`once`: the line is then removed);
//   /etc/nmstate-standin/hold-commit: while it exists, `commit` waits (at most 5 minutes) before it commits;
//   /etc/nmstate-standin/race: `port-still-active` makes apply look at the active connections as they were before
//     NetworkManager acted on the deleted bridge (nmstate looks right after deleting it, so which profile it edits
//     is a race: get_exist_profile prefers the activated one — configure-ovs's ovs-if-phys0 if still up (issue 35
//     point 2), the NIC's own profile once NetworkManager has auto-connected it (observation 2)); by default the
//     look waits for NetworkManager to settle, which gave observation 2 in the recorded runs;
//   /var/log/nmstate-standin/calls.jsonl: one JSON line per call {time, argv, input?, exit, error?, checkpoint?}.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');

const LIB = process.env.TESTBED_NMSTATE_LIB || '/usr/local/lib/testbed-nmstate';
const rules = require(fs.existsSync(path.join(__dirname, 'nmstate-rules.cjs')) ? path.join(__dirname, 'nmstate-rules.cjs') : path.join(LIB, 'nmstate-rules.cjs'));
const { NmstateError } = rules;
const YAML = require(fs.existsSync(path.join(LIB, 'node_modules', 'yaml')) ? path.join(LIB, 'node_modules', 'yaml') : 'yaml');

const STATE_DIR = '/etc/nmstate-standin';
const LOG_FILE = '/var/log/nmstate-standin/calls.jsonl';
const NM = 'org.freedesktop.NetworkManager';
const NM_PATH = '/org/freedesktop/NetworkManager';
const VERSION = 'nmstatectl 2.2.23 (testbed stand-in on the real NetworkManager: test/e2e/testbed/stand-ins/nmstatectl-nm.cjs)';

const argv = process.argv.slice(2);
const record = { time: new Date().toISOString(), argv };

function log(entry) {
  try {
    fs.mkdirSync(path.dirname(LOG_FILE), { recursive: true });
    fs.appendFileSync(LOG_FILE, `${JSON.stringify(entry)}\n`);
  } catch {
    // a read-only caller (the agent's sandbox) still gets its answer
  }
}

function exit(code, out, err) {
  if (out !== undefined && out !== null) process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
  if (err) process.stderr.write(err.endsWith('\n') ? err : `${err}\n`);
  log({ ...record, exit: code, ...(code !== 0 && err ? { error: err.trim() } : {}) });
  process.exit(code);
}

function info(target, msg) {
  process.stderr.write(`[${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} INFO  ${target}] ${msg}\n`);
}
/** `rules` log lines carry their target: "nmstate::module] message". */
function infoLine(line) {
  const at = line.indexOf('] ');
  info(line.slice(0, at), line.slice(at + 2));
}

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: opts.timeoutMs ?? 60_000, input: opts.input });
  if (res.error) return { code: 127, stdout: '', stderr: String(res.error.message) };
  return { code: res.status ?? 1, stdout: res.stdout ?? '', stderr: res.stderr ?? '' };
}

// ---- D-Bus through busctl --------------------------------------------------------------------------------------

class DbusError extends Error {}

/** The end index of the one complete type that starts at sig[i]. */
function typeEnd(sig, i) {
  const c = sig[i];
  if (c === 'a') return typeEnd(sig, i + 1);
  if (c === '(' || c === '{') {
    let j = i + 1;
    while (sig[j] !== ')' && sig[j] !== '}') j = typeEnd(sig, j);
    return j + 1;
  }
  return i + 1;
}
function splitTypes(sig) {
  const out = [];
  for (let i = 0; i < sig.length; ) {
    const e = typeEnd(sig, i);
    out.push(sig.slice(i, e));
    i = e;
  }
  return out;
}

/** busctl's argument list for a value of type `sig` (busctl(1) "call": arrays and dicts take their count first). */
function busArgs(sig, val) {
  const c = sig[0];
  if (c === 'v') return [val.type, ...busArgs(val.type, val.data)];
  if (c === 'a') {
    const inner = sig.slice(1);
    if (inner[0] === '{') {
      const [k, vt] = splitTypes(inner.slice(1, -1));
      const entries = Object.entries(val);
      return [String(entries.length), ...entries.flatMap(([key, x]) => [...busArgs(k, key), ...busArgs(vt, x)])];
    }
    return [String(val.length), ...val.flatMap((x) => busArgs(inner, x))];
  }
  if (c === '(') return splitTypes(sig.slice(1, -1)).flatMap((t, n) => busArgs(t, val[n]));
  if (c === 'b') return [val ? 'true' : 'false'];
  return [String(val)];
}

/** A method call; returns busctl's JSON `data` (the reply's values). Throws DbusError with NetworkManager's message. */
function call(objPath, iface, method, sig = '', ...values) {
  const types = splitTypes(sig);
  const args = ['--system', '--json=short', 'call', '--', NM, objPath, iface, method, ...(sig ? [sig, ...types.flatMap((t, n) => busArgs(t, values[n]))] : [])];
  const res = run('busctl', args);
  if (res.code !== 0) throw new DbusError((res.stderr.trim() || `busctl exit ${res.code}`).replace(/^Call failed: /, ''));
  return res.stdout.trim() ? JSON.parse(res.stdout).data : [];
}

function managedObjects() {
  return call('/org/freedesktop', 'org.freedesktop.DBus.ObjectManager', 'GetManagedObjects')[0];
}

const prop = (obj, iface, name) => obj?.[iface]?.[name]?.data;

/** NetworkManager as nmstate reads it: devices, active connections, profiles (with settings), checkpoints. */
function readNm() {
  const objs = managedObjects();
  const devices = [];
  const acs = [];
  const conns = [];
  for (const [p, o] of Object.entries(objs)) {
    if (o[`${NM}.Device`]) {
      devices.push({ path: p, name: prop(o, `${NM}.Device`, 'Interface'), ifaces: Object.keys(o), ac: prop(o, `${NM}.Device`, 'ActiveConnection'), state: prop(o, `${NM}.Device`, 'State'), reason: (prop(o, `${NM}.Device`, 'StateReason') ?? [])[1], managed: prop(o, `${NM}.Device`, 'Managed') });
    }
    if (o[`${NM}.Connection.Active`]) {
      acs.push({ path: p, uuid: prop(o, `${NM}.Connection.Active`, 'Uuid'), id: prop(o, `${NM}.Connection.Active`, 'Id'), state: prop(o, `${NM}.Connection.Active`, 'State'), conn: prop(o, `${NM}.Connection.Active`, 'Connection'), devices: prop(o, `${NM}.Connection.Active`, 'Devices') ?? [] });
    }
    if (o[`${NM}.Settings.Connection`]) {
      conns.push({ path: p, flags: prop(o, `${NM}.Settings.Connection`, 'Flags') ?? 0, filename: prop(o, `${NM}.Settings.Connection`, 'Filename') ?? '' });
    }
  }
  for (const c of conns) {
    try {
      c.settings = call(c.path, `${NM}.Settings.Connection`, 'GetSettings')[0];
    } catch {
      c.settings = undefined; // deleted meanwhile (nm_api.rs connections_get ignores these too)
    }
  }
  const checkpoints = prop(objs[NM_PATH], NM, 'Checkpoints') ?? [];
  // NetworkManager lists profiles in its own order (Settings.ListConnections); get_exist_profile depends on it
  let order = [];
  try {
    order = call(`${NM_PATH}/Settings`, `${NM}.Settings`, 'ListConnections')[0];
  } catch {
    order = conns.map((c) => c.path);
  }
  const listed = conns.filter((c) => c.settings).sort((a, b) => order.indexOf(a.path) - order.indexOf(b.path));
  return { devices, acs, conns: listed, checkpoints };
}

// ---- the node's network in nmstate's shape ---------------------------------------------------------------------

function ipJson(args) {
  const res = run('ip', ['-j', ...args]);
  return res.code === 0 && res.stdout.trim() ? JSON.parse(res.stdout) : [];
}

/** Open vSwitch's bridges and their interfaces (the bridge's own local interface included: list-ifaces leaves it out). */
function ovsBridges() {
  const out = {};
  const brs = run('ovs-vsctl', ['--timeout=5', 'list-br']);
  if (brs.code !== 0) return out;
  for (const br of brs.stdout.split('\n').filter(Boolean)) {
    const ifs = run('ovs-vsctl', ['--timeout=5', 'list-ifaces', br]);
    out[br] = [br, ...(ifs.code === 0 ? ifs.stdout.split('\n').filter(Boolean) : [])];
  }
  return out;
}

/** Open vSwitch interface name → type ("internal", "system" for ""), from its database. */
function ovsInterfaceTypes() {
  const res = run('ovs-vsctl', ['--timeout=5', '-f', 'csv', '--no-headings', '--columns=name,type', 'list', 'Interface']);
  const out = {};
  if (res.code !== 0) return out;
  for (const line of res.stdout.split('\n').filter(Boolean)) {
    const [name, type] = line.split(',').map((x) => x.replace(/^"|"$/g, ''));
    out[name] = type || 'system';
  }
  return out;
}

const u32ToIpv4 = (n) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join('.');
function bytesToIpv6(b) {
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::').replace(/:{3,}/, '::');
}

/** The current state: interfaces, configured routes, DNS, and what apply needs from NetworkManager. */
function readCurrent() {
  const nm = readNm();
  const links = ipJson(['-d', 'link', 'show']);
  const addrs = ipJson(['addr', 'show']);
  const kroutes = [...ipJson(['-4', 'route', 'show', 'table', 'all']), ...ipJson(['-6', 'route', 'show', 'table', 'all'])];
  const bridges = ovsBridges();
  const ovsTypes = ovsInterfaceTypes();
  const settingsByPath = new Map(nm.conns.map((c) => [c.path, c.settings]));
  const acByPath = new Map(nm.acs.map((a) => [a.path, a]));
  const deviceOf = (name, pred) => nm.devices.find((d) => d.name === name && pred(d));
  const ctrlOf = (name) => Object.keys(bridges).find((br) => bridges[br].includes(name));
  const activeSettings = (dev) => {
    const ac = dev && acByPath.get(dev.ac);
    return ac ? { ac, settings: settingsByPath.get(ac.conn) } : {};
  };
  const interfaces = [];
  const routesConfig = [];
  const dnsIfaces = [];
  const dnsConfig = [];
  for (const l of links) {
    const kind = l.linkinfo?.info_kind;
    if (l.ifname === 'ovs-system' || l.ifname === 'ovs-netdev') continue;
    // an OVS internal interface (on the netdev datapath its kernel side is a TAP) is an ovs-interface
    // (nm/query_apply/ovs.rs merge_ovs_netdev_tun_iface); NetworkManager also has an OvsInterface device for a
    // system port, which stays the ethernet/veth it is
    const internal = ovsTypes[l.ifname] === 'internal';
    const ovsIf = internal ? deviceOf(l.ifname, (d) => d.ifaces.includes(`${NM}.Device.OvsInterface`)) : undefined;
    let type;
    if (internal) type = 'ovs-interface';
    else if (kind === 'tun') continue; // nispor: "Got unsupported interface type tun"
    else if (l.ifname === 'lo') type = 'loopback';
    else if (kind === 'veth') type = 'veth';
    else if (!kind && l.link_type === 'ether') type = 'ethernet';
    else continue;
    const dev = ovsIf ?? deviceOf(l.ifname, (d) => !['OvsPort', 'OvsBridge', 'OvsInterface', 'Tun'].some((t) => d.ifaces.includes(`${NM}.Device.${t}`)));
    const { ac, settings } = activeSettings(dev);
    const ctrl = ctrlOf(l.ifname);
    const iface = { name: l.ifname, type, state: (l.flags ?? []).includes('UP') || type === 'ovs-interface' ? 'up' : 'down' };
    if (ac && ac.id && ac.id !== l.ifname) iface['profile-name'] = ac.id;
    if (l.address && type !== 'loopback') iface['mac-address'] = l.address.toUpperCase();
    else if (type === 'loopback') iface['mac-address'] = '00:00:00:00:00:00';
    iface.mtu = l.mtu;
    const a = addrs.find((x) => x.ifname === l.ifname);
    for (const fam of [4, 6]) {
      const key = `ipv${fam}`;
      const method = settings?.[key]?.method?.data;
      const list = (a?.addr_info ?? []).filter((x) => x.family === (fam === 4 ? 'inet' : 'inet6') && (x.scope === 'global' || (type === 'loopback' && x.scope === 'host')));
      // nmstate shows a learned address with its lifetimes (nispor: "<n>sec"); a static one has none
      const FOREVER = 4294967295;
      const address = list.map((x) => ({ ip: x.local, 'prefix-length': x.prefixlen, ...(x.valid_life_time !== undefined && x.valid_life_time !== FOREVER ? { 'valid-left': `${x.valid_life_time}sec`, 'preferred-left': `${x.preferred_life_time}sec` } : {}) }));
      if (ctrl && type !== 'ovs-interface') iface[key] = { enabled: false };
      else if (method === 'auto' || method === 'dhcp') iface[key] = { enabled: true, dhcp: true, ...(fam === 6 ? { autoconf: method === 'auto' } : {}), address };
      else if (method === 'manual' || address.length) iface[key] = { enabled: true, dhcp: false, ...(fam === 6 ? { autoconf: false } : {}), address };
      else iface[key] = { enabled: false };
      const metric = settings?.[key]?.['route-metric']?.data;
      if (iface[key].enabled && metric !== undefined && metric >= 0) iface[key]['auto-route-metric'] = metric;
      // the configured routes: the profile's gateway and routes (nm/show.rs, nm/route.rs), with the kernel's metric
      if (settings && iface[key].enabled) {
        const gw = settings[key]?.gateway?.data;
        const dflt = fam === 4 ? '0.0.0.0/0' : '::/0';
        if (gw && method === 'manual') {
          const kr = kroutes.find((r) => r.dst === 'default' && r.dev === l.ifname && r.gateway === gw && (r.table === undefined || r.table === 'main'));
          const m = metric !== undefined && metric >= 0 ? metric : kr?.metric ?? 0;
          routesConfig.push({ destination: dflt, 'next-hop-interface': l.ifname, 'next-hop-address': gw, ...(m ? { metric: m } : {}), 'table-id': 254 });
        }
        for (const r of settings[key]?.['route-data']?.data ?? []) {
          const m = r.metric?.data;
          routesConfig.push({ destination: `${r.dest.data}/${r.prefix.data}`, 'next-hop-interface': l.ifname, ...(r['next-hop'] ? { 'next-hop-address': r['next-hop'].data } : {}), ...(m ? { metric: m } : {}), 'table-id': r.table?.data || 254 });
        }
        const dns = settings[key]?.dns?.data ?? [];
        if (dns.length) {
          dnsIfaces.push(l.ifname);
          dnsConfig.push(...dns.map((d) => (fam === 4 ? u32ToIpv4(d) : bytesToIpv6(d))));
        }
      }
    }
    if (ctrl) {
      iface.controller = ctrl;
      iface.controllerType = 'ovs-bridge';
    }
    interfaces.push(iface);
  }
  for (const [br, ports] of Object.entries(bridges)) {
    interfaces.push({ name: br, type: 'ovs-bridge', state: 'up', bridge: { port: ports.map((p) => ({ name: p })).sort((x, y) => (x.name < y.name ? -1 : 1)) } });
  }
  const running = kroutes
    .filter((r) => r.protocol !== 'kernel' && r.type !== 'local' && r.type !== 'broadcast' && r.type !== 'multicast' && r.dev && r.table !== 'local')
    .map((r) => ({ destination: r.dst === 'default' ? (r.gateway?.includes(':') ? '::/0' : '0.0.0.0/0') : r.dst.includes('/') ? r.dst : `${r.dst}/${r.dst.includes(':') ? 128 : 32}`, 'next-hop-interface': r.dev, ...(r.gateway ? { 'next-hop-address': r.gateway } : {}), ...(r.metric ? { metric: r.metric } : {}), 'table-id': r.table === undefined || r.table === 'main' ? 254 : Number(r.table) }));
  const resolv = (() => {
    try {
      return fs.readFileSync('/etc/resolv.conf', 'utf8');
    } catch {
      return '';
    }
  })();
  const dnsRunning = {
    server: [...resolv.matchAll(/^nameserver\s+(\S+)/gm)].map((m) => m[1]),
    search: [...resolv.matchAll(/^search\s+(.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/)),
  };
  return { nm, interfaces, routesConfig, routesRunning: running, dnsIfaces, dnsConfig: { server: [...new Set(dnsConfig)], search: [] }, dnsRunning };
}

/** nmstatectl show's document (the order and fields of the recorded nmstatectl 2.2.23 show of issue 35; ethtool and LLDP left out). */
function showDocument(cur, only) {
  const hostname = (run('hostname', []).stdout || '').trim();
  const ifaces = cur.interfaces
    .filter((i) => !only || i.name === only)
    .map((i) => {
      const { controllerType: _t, ...rest } = i;
      return rest;
    });
  return {
    hostname: { running: hostname, config: hostname },
    'dns-resolver': { running: cur.dnsRunning, config: cur.dnsConfig },
    'route-rules': { config: [] },
    routes: { running: cur.routesRunning.filter((r) => !only || r['next-hop-interface'] === only), config: cur.routesConfig.filter((r) => !only || r['next-hop-interface'] === only) },
    interfaces: ifaces,
    'ovs-db': { external_ids: {}, other_config: {} },
    ovn: {},
  };
}

// ---- the testbed hooks -----------------------------------------------------------------------------------------

function injectedFailure(verb) {
  const file = path.join(STATE_DIR, 'fail');
  let lines;
  try {
    lines = fs.readFileSync(file, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(\S+)\s+(?:(once)\s+)?(\d+)\s*(.*)$/.exec(lines[i]);
    if (!m || (m[1] !== verb && m[1] !== '*')) continue;
    if (m[2]) {
      lines.splice(i, 1);
      fs.writeFileSync(file, lines.join('\n'));
    }
    return { exit: Number(m[3]), message: m[4] || `NmstateError: injected ${verb} failure` };
  }
  return undefined;
}

function raceSetting() {
  try {
    return fs.readFileSync(path.join(STATE_DIR, 'race'), 'utf8').trim();
  } catch {
    return '';
  }
}

// ---- verbs -----------------------------------------------------------------------------------------------------

function parseOptions(args, valued) {
  const opts = {};
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-' || !a.startsWith('-')) positional.push(a);
    else if (valued.includes(a)) {
      if (i + 1 >= args.length) exit(2, undefined, `error: a value is required for '${a} <${a.slice(2).toUpperCase()}>' but none was supplied`);
      opts[a] = args[++i];
    } else if (a.includes('=') && valued.includes(a.split('=')[0])) opts[a.split('=')[0]] = a.slice(a.indexOf('=') + 1);
    else opts[a] = true;
  }
  return { opts, positional };
}

function nmFail(e) {
  if (e instanceof NmstateError) return exit(1, undefined, `NmstateError: ${e.kind}: ${e.message}`);
  // nm/error.rs nm_error_to_nmstate: NetworkManager's other errors are "Bug: <kind>: <message>"
  return exit(1, undefined, `NmstateError: Bug: ${e instanceof DbusError ? `DBusError: ${e.message}` : e.stack || e}`);
}

function show(args) {
  const { opts, positional } = parseOptions(args, []);
  const failure = injectedFailure('show');
  if (failure) exit(failure.exit, undefined, failure.message);
  let doc;
  try {
    doc = showDocument(readCurrent(), positional[0]);
  } catch (e) {
    return nmFail(e);
  }
  return exit(0, opts['--json'] ? JSON.stringify(doc, null, 2) : YAML.stringify(doc, { indentSeq: false }), undefined);
}

function readInput(positional) {
  try {
    if (positional.length === 0 || positional[0] === '-') return fs.readFileSync(0, 'utf8');
    return positional.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  } catch (e) {
    return exit(1, undefined, `std::io::Error: ${e.message}`);
  }
}

/** The profile's device (by interface name), for Reapply. */
function devicePath(nm, ifname, nmType) {
  const ovs = nmType === 'ovs-interface' || nmType === 'ovs-bridge' || nmType === 'ovs-port';
  const want = { 'ovs-interface': 'OvsInterface', 'ovs-bridge': 'OvsBridge', 'ovs-port': 'OvsPort' }[nmType];
  return nm.devices.find((d) => d.name === ifname && (ovs ? d.ifaces.includes(`${NM}.Device.${want}`) : !['OvsInterface', 'OvsBridge', 'OvsPort'].some((t) => d.ifaces.includes(`${NM}.Device.${t}`))))?.path;
}

/**
 * NetworkManager after it has acted on the deletions (at most `ms`): no connection activating or deactivating and no
 * device between PREPARE and SECONDARIES or DEACTIVATING, twice in a row — by then a device whose port profile lost
 * its bridge has been torn down and, if a profile of its own may autoconnect, brought up on it (NM_ACTIVE_CONNECTION
 * _STATE_ACTIVATING 1 / DEACTIVATING 3; NMDeviceState 40..90, 110).
 */
function settle(ms) {
  const until = Date.now() + ms;
  const busy = (nm) => nm.acs.some((a) => a.state === 1 || a.state === 3) || nm.devices.some((d) => (d.state >= 40 && d.state <= 90) || d.state === 110);
  let quiet = 0;
  let nm = readNm();
  while (Date.now() < until) {
    quiet = busy(nm) ? 0 : quiet + 1;
    if (quiet >= 2) return nm;
    sleepMs(150);
    nm = readNm();
  }
  return nm;
}

/**
 * nm/checkpoint.rs nm_checkpoint_rollback → nm_dbus/nm_api.rs wait_checkpoint_rollback: after CheckpointRollback, wait
 * (at most 60 s, every 0.5 s) until no device is deactivating (110) or changing for a new activation (reason 60); a
 * timeout is only a warning.
 */
function rollbackTo(checkpoint) {
  call(NM_PATH, NM, 'CheckpointRollback', 'o', checkpoint);
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (!readNm().devices.some((d) => d.state === 110 || d.reason === 60)) return;
    sleepMs(500);
  }
  process.stderr.write(`[${new Date().toISOString()} WARN  nmstate::nm::checkpoint] Bug: Timeout: Timeout on waiting rollback\n`);
}

/** nm/query_apply/apply.rs nm_apply, under the checkpoint. */
function nmApply(merged) {
  const before = readNm();
  const deleted = new Set();
  const del = (list, nm) => {
    for (const d of list) {
      if (deleted.has(d.uuid)) continue;
      infoLine(d.log);
      const c = nm.conns.find((x) => rules.describe(x).uuid === d.uuid);
      if (c) {
        try {
          call(c.path, `${NM}.Settings.Connection`, 'Delete');
        } catch {
          // already gone (NetworkManager removes a volatile profile by itself)
        }
      }
      deleted.add(d.uuid);
    }
  };
  del(rules.absentDeletions(merged, before.conns), before);
  // The look at the profiles and active connections: after the deletions, as nmstate does (apply.rs)
  const race = raceSetting();
  const look = race === 'port-still-active' ? readNm() : deleted.size ? settle(3000) : before;
  const activeUuids = race === 'port-still-active' ? before.acs.map((a) => a.uuid).filter((u) => !deleted.has(u)) : look.acs.map((a) => a.uuid);
  const conns = look.conns.filter((c) => !deleted.has(rules.describe(c).uuid));
  const stored = rules.profilesToStore(merged, conns, activeUuids, (n) => [...randomBytes(n)]);
  // apply.rs gen_nm_conn_need_to_deactivate_first: an active profile that loses routes goes down first
  for (const p of stored) {
    if (!p.existing) continue;
    const uuid = rules.describe(p.existing).uuid;
    const ac = look.acs.find((a) => a.uuid === uuid);
    if (ac && rules.loosesRoutes(p.existing.settings, p.settings)) {
      info('nmstate::nm::query_apply::profile', `Deactivating connection ${uuid}: ${rules.describe(p.existing).ifname}/${rules.describe(p.existing).type}`);
      call(NM_PATH, NM, 'DeactivateConnection', 'o', ac.path);
    }
  }
  // profile.rs save_nm_profiles: Update2 for an existing profile, AddConnection2 for a new one (TO_DISK | BLOCK_AUTOCONNECT)
  for (const p of stored) {
    const d = rules.describe({ settings: p.settings });
    const what = `UUID Some(${JSON.stringify(d.uuid)}), ID Some(${JSON.stringify(d.id)}), type Some(${JSON.stringify(d.type)}) name Some(${JSON.stringify(d.ifname)})`;
    if (p.existing) {
      info('nmstate::nm::query_apply::profile', `Modifying connection ${what}`);
      call(p.existing.path, `${NM}.Settings.Connection`, 'Update2', 'a{sa{sv}}ua{sv}', p.settings, rules.SAVE_FLAGS, {});
    } else {
      info('nmstate::nm::query_apply::profile', `Creating connection ${what}`);
      call(`${NM_PATH}/Settings`, `${NM}.Settings`, 'AddConnection2', 'a{sa{sv}}ua{sv}', p.settings, rules.SAVE_FLAGS, {});
    }
  }
  del(rules.otherProfilesToDelete(stored, conns), look);
  del(rules.orphanOvsPorts(merged, conns, stored, deleted), look);
  // profile.rs activate_nm_profiles
  const now = readNm();
  const activeNow = now.acs.map((a) => a.uuid);
  for (const p of rules.activationOrder(stored)) {
    const d = rules.describe({ settings: p.settings });
    const conn = now.conns.find((c) => rules.describe(c).uuid === d.uuid);
    if (!conn) throw new NmstateError('Bug', `NotFound: Connection with UUID ${d.uuid} not found`);
    const activate = () => {
      try {
        call(NM_PATH, NM, 'ActivateConnection', 'ooo', conn.path, '/', '/');
      } catch (e) {
        throw new NmstateError('InvalidArgument', `Connection(ActivationFailed): ${e.message}`);
      }
    };
    if (activeNow.includes(d.uuid)) {
      info('nmstate::nm::query_apply::profile', `Reapplying connection ${d.uuid}: ${d.ifname}/${d.type}`);
      const dev = devicePath(now, d.ifname, d.type);
      try {
        if (!dev) throw new DbusError('no device');
        // the profile as nmstate built it (the *-data forms only): NetworkManager's own copy also carries the legacy
        // `routes` (aau), whose metric 0 means "default" and would turn route2's explicit metric 0 into 100
        call(dev, `${NM}.Device`, 'Reapply', 'a{sa{sv}}tu', p.settings, 0, 0);
      } catch {
        activate(); // profile.rs reapply_or_activate
      }
    } else {
      info('nmstate::nm::query_apply::profile', `Activating connection ${d.uuid}: ${d.ifname}/${d.type}`);
      activate();
    }
  }
  for (const p of stored.filter((x) => x.deactivate)) {
    const uuid = rules.describe({ settings: p.settings }).uuid;
    const ac = now.acs.find((a) => a.uuid === uuid);
    if (ac) call(NM_PATH, NM, 'DeactivateConnection', 'o', ac.path);
  }
  verify(stored);
}

/** query_apply/net_state.rs: the result is verified (5 tries, 1 s apart); here the static addresses of what was written. */
function verify(stored) {
  const want = [];
  for (const p of stored.filter((x) => x.activate)) {
    for (const fam of [4, 6]) {
      const ip = p.iface[`ipv${fam}`];
      // static addresses are verified with DHCP on too (ip.rs: only dynamic ones are dropped before the comparison)
      if (ip?.enabled) for (const a of (ip.address ?? []).filter((x) => x['valid-left'] === undefined || x['valid-left'] === 'forever')) want.push({ name: p.iface.name, fam, addr: `${a.ip}/${a['prefix-length']}` });
    }
  }
  for (let n = 0; ; n++) {
    const have = new Map(ipJson(['addr', 'show']).map((l) => [l.ifname, (l.addr_info ?? []).map((a) => `${a.local}/${a.prefixlen}`)]));
    const missing = want.find((w) => !(have.get(w.name) ?? []).includes(w.addr));
    if (!missing) return;
    if (n >= 4) throw new NmstateError('VerificationError', `Verification failure: ${missing.name}.interface.ipv${missing.fam}.address desire '${missing.addr}', current '${(have.get(missing.name) ?? []).join(',')}'`);
    info('nmstate::query_apply::net_state', `Retrying on: VerificationError: ${missing.name} has no ${missing.addr} yet`);
    sleepMs(1000);
  }
}

function apply(args) {
  const { opts, positional } = parseOptions(args, ['--timeout']);
  for (const o of Object.keys(opts)) if (!['--no-commit', '--timeout', '--no-verify', '-s', '--show-secrets'].includes(o)) exit(2, undefined, `error: unexpected argument '${o}' found`);
  let timeout = rules.DEFAULT_TIMEOUT;
  if (opts['--timeout'] !== undefined) {
    // cli/apply.rs: u32::from_str, EX_DATAERR on failure
    if (!/^\d+$/.test(String(opts['--timeout']))) exit(65, undefined, 'invalid digit found in string');
    timeout = Number(opts['--timeout']);
  }
  const input = readInput(positional).replace(/\u00a0/g, ' '); // cli/apply.rs: non-breaking spaces become spaces
  record.input = input;
  const failure = injectedFailure('apply');
  if (failure) exit(failure.exit, undefined, failure.message);
  let state;
  try {
    state = YAML.parse(input) ?? {};
  } catch (e) {
    return exit(1, undefined, `Provide file is not valid NetworkState or NetworkPolicy: ${String(e.message).split('\n')[0]}`);
  }
  let merged;
  let current;
  try {
    current = readCurrent();
    merged = rules.merge(state, current); // before the checkpoint: a refusal changes nothing
  } catch (e) {
    return nmFail(e);
  }
  for (const l of merged.logs) infoLine(l);
  let checkpoint;
  try {
    checkpoint = call(NM_PATH, NM, 'CheckpointCreate', 'aouu', [], timeout, rules.CHECKPOINT_FLAGS)[0];
  } catch (e) {
    // nm_dbus/dbus.rs checkpoint_create: NetworkManager's InvalidArguments means another checkpoint holds the devices
    if ((readNm().checkpoints ?? []).length) return exit(1, undefined, 'NmstateError: Bug: CheckpointConflict: Another checkpoint exists, please wait its timeout or destroy it');
    return nmFail(e);
  }
  record.checkpoint = checkpoint;
  info('nmstate::query_apply::net_state', `Created checkpoint ${checkpoint}`);
  try {
    call(NM_PATH, NM, 'CheckpointAdjustRollbackTimeout', 'ou', checkpoint, timeout);
    nmApply(merged);
  } catch (e) {
    try {
      rollbackTo(checkpoint);
    } catch (r) {
      process.stderr.write(`[${new Date().toISOString()} WARN  nmstate::query_apply::net_state] nm_checkpoint_rollback() failed: ${r.message}\n`);
    }
    info('nmstate::query_apply::net_state', `Rollbacked to checkpoint ${checkpoint}`);
    return nmFail(e);
  }
  if (opts['--no-commit']) info('nmstate::query_apply::net_state', `Skipping commit for checkpoint ${checkpoint}`);
  else {
    call(NM_PATH, NM, 'CheckpointDestroy', 'o', checkpoint);
    info('nmstate::query_apply::net_state', `Destroyed checkpoint ${checkpoint}`);
  }
  return exit(0, YAML.stringify(appliedDocument(state), { indentSeq: false }), undefined);
}

/** What apply prints: the state it was given, in nmstate's key order (cli/query.rs sort_netstate). */
function appliedDocument(state) {
  const out = {};
  if (state['dns-resolver']) out['dns-resolver'] = state['dns-resolver'];
  out['route-rules'] = state['route-rules'] ?? {};
  if (state.routes) out.routes = state.routes;
  if (state.interfaces) out.interfaces = state.interfaces;
  out['ovs-db'] = state['ovs-db'] ?? {};
  out.ovn = state.ovn ?? {};
  return out;
}

function commitOrRollback(verb, args) {
  const { positional } = parseOptions(args, []);
  const wanted = positional[0] ?? '';
  if (verb === 'commit') {
    const hold = path.join(STATE_DIR, 'hold-commit');
    const until = Date.now() + 5 * 60_000;
    while (fs.existsSync(hold) && Date.now() < until) sleepMs(100);
  }
  const failure = injectedFailure(verb);
  if (failure) exit(failure.exit, undefined, failure.message);
  try {
    let cp = wanted;
    if (!cp) {
      // nm_dbus/nm_api.rs last_active_checkpoint: the first of NetworkManager's checkpoints
      const cps = readNm().checkpoints;
      if (!cps.length) throw new NmstateError('Bug', 'NotFound: Not active checkpoints');
      cp = cps[0];
    }
    record.checkpoint = cp;
    if (verb === 'commit') call(NM_PATH, NM, 'CheckpointDestroy', 'o', cp);
    else rollbackTo(cp);
  } catch (e) {
    return nmFail(e);
  }
  // cli/apply.rs commit/rollback print the checkpoint they were given ("" without one)
  return exit(0, wanted, undefined);
}

function main() {
  const verb = argv.find((a) => !a.startsWith('-'));
  if (argv.includes('--version') || argv.includes('-V') || verb === 'version') return exit(0, VERSION, undefined);
  if (!verb) return exit(2, undefined, 'Usage: nmstatectl <apply|commit|rollback|show|version> [OPTIONS]\nerror: a subcommand is required');
  const rest = argv.slice(argv.indexOf(verb) + 1);
  switch (verb) {
    case 'show':
    case 's':
      return show(rest);
    case 'apply':
    case 'set':
    case 'a':
      return apply(rest);
    case 'commit':
    case 'rollback':
      return commitOrRollback(verb, rest);
    default:
      return exit(2, undefined, `error: the stand-in nmstatectl does not implement '${verb}' (apply, commit, rollback, show, version)`);
  }
}

if (require.main === module) main();

module.exports = { busArgs, splitTypes, showDocument };
