#!/usr/bin/node
// The testbed's "NetworkManager" (test/e2e/testbed/README.md, "The node's network"): Debian builds NetworkManager
// without its Open vSwitch plugin and nmstate is not packaged, so this small model plays the daemon for the two
// stand-ins that need it, nmstatectl (stand-ins/nmstatectl.cjs) and configure-ovs (stand-ins/configure-ovs.sh).
// It changes the real kernel and the real Open vSwitch (ip, ovs-vsctl, busybox udhcpc) of the node's private
// network namespace, nothing else.
//
// What it keeps, as NetworkManager does:
// - profiles, one per interface and type, in nmstate's shape (YAML): persistent ones in ETC_DIR (written by
//   nmstatectl apply and by the installer), runtime ones in RUN_DIR (configure-ovs writes its bridge there;
//   /run is lost at reboot, as NM_CONN_SET_PATH's run path is on RHCOS). A runtime profile shadows the persistent
//   one of the same interface and type: configure-ovs gives its port profile ovs-if-phys0 autoconnect-priority 100
//   so NetworkManager picks it over the NIC's own (machine-config-operator release-4.14
//   templates/common/_base/files/configure-ovs-network.yaml, convert_to_bridge).
// - which profiles are active (STATE_DIR/active.json, lost at reboot);
// - activation: addresses and routes with ip(8), bridges and ports with ovs-vsctl (userspace datapath
//   datapath_type=netdev: this kernel has no openvswitch module), DHCPv4 with busybox udhcpc; then the dispatcher
//   scripts (/etc/NetworkManager/dispatcher.d/pre-up.d/* with "IFACE pre-up", then dispatcher.d/* with "IFACE up":
//   root-owned, not writable by group or others, in name order, as NetworkManager-dispatcher(8) says);
// - resolv.conf: /run/NetworkManager/resolv.conf always, /etc/resolv.conf unless a NetworkManager.conf snippet
//   says rc-manager=unmanaged or dns=none (NetworkManager.conf(5)).
// Differences that tests must not rely on: dispatcher scripts run synchronously; a DHCP lease is taken once per
// activation and never renewed; DHCPv6 and IPv6 autoconf are not modelled (nmstatectl refuses them).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const YAML = require('yaml');

const ROOT = process.env.TESTBED_NM_ROOT || '';
const ETC_DIR = `${ROOT}/etc/NetworkManager/system-connections`;
const RUN_DIR = `${ROOT}/run/NetworkManager/system-connections`;
const STATE_DIR = `${ROOT}/run/testbed-nm`;
const DISPATCHER_DIR = `${ROOT}/etc/NetworkManager/dispatcher.d`;
const NM_CONF = [`${ROOT}/etc/NetworkManager/NetworkManager.conf`, `${ROOT}/etc/NetworkManager/conf.d`];
const DHCP_SCRIPT = path.join(__dirname, 'udhcpc-event');
/** Written by testbed-lan once it has checked the namespace is the node's own: no command here touches the host. */
const READY = `${ROOT}/run/testbed-nm/private-netns`;
const SUFFIX = '.nmstate.yaml';
/** NetworkManager's default route metric for ethernet (nm-device.c, nm_device_get_route_metric_default). */
const DEFAULT_METRIC = 100;

class ModelError extends Error {
  /** kind: nmstate's ErrorKind that nmstatectl prints ("NmstateError: <kind>: <message>"). */
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function log(msg) {
  process.stderr.write(`testbed-nm: ${msg}\n`);
}

function run(argv, opts = {}) {
  const res = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: opts.timeoutMs ?? 30_000, env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...(opts.env || {}) }, input: opts.input });
  const out = { code: res.status ?? -1, stdout: res.stdout || '', stderr: (res.stderr || '') + (res.error ? String(res.error.message) : '') };
  if (out.code !== 0 && !opts.allowFail) throw new ModelError('PluginFailure', `${argv.join(' ')} failed: ${out.stderr.trim() || `exit ${out.code}`}`);
  return out;
}

function ensurePrivate() {
  if (!fs.existsSync(READY)) throw new ModelError('Bug', 'the testbed network is not set up in this namespace (testbed-lan.service has not run): refusing to touch any interface');
}

const ovs = (args, opts) => run(['ovs-vsctl', '--timeout=10', ...args], opts);
const ipJson = (args) => JSON.parse(run(['ip', '-j', ...args]).stdout || '[]');

// ---- profiles ----------------------------------------------------------------------------------------------

const keyOf = (name, type) => `${name}.${type}`;
const fileOf = (dir, name, type) => path.join(dir, `${name}.${type}${SUFFIX}`);

function readDir(dir) {
  const out = new Map();
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return out;
  }
  for (const f of names.sort()) {
    if (!f.endsWith(SUFFIX)) continue;
    const p = YAML.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    if (p && typeof p.name === 'string' && typeof p.type === 'string') out.set(keyOf(p.name, p.type), p);
  }
  return out;
}

/** Every profile NetworkManager knows: runtime ones shadow the persistent one of the same interface and type. */
function profiles() {
  const all = new Map();
  for (const [k, p] of readDir(ETC_DIR)) all.set(k, { ...p, where: 'etc' });
  for (const [k, p] of readDir(RUN_DIR)) all.set(k, { ...p, where: 'run' });
  return all;
}

function writeAtomic(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  fs.writeSync(fd, data);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

function writeProfile(where, profile, origin) {
  const { where: _w, ...clean } = profile;
  const dir = where === 'run' ? RUN_DIR : ETC_DIR;
  writeAtomic(fileOf(dir, clean.name, clean.type), `# ${origin}\n${YAML.stringify(clean)}`);
}

function deleteProfile(where, name, type) {
  fs.rmSync(fileOf(where === 'run' ? RUN_DIR : ETC_DIR, name, type), { force: true });
}

function activeKeys() {
  try {
    return JSON.parse(fs.readFileSync(path.join(STATE_DIR, 'active.json'), 'utf8'));
  } catch {
    return [];
  }
}

function setActive(keys) {
  writeAtomic(path.join(STATE_DIR, 'active.json'), JSON.stringify([...new Set(keys)]));
}

// ---- what the kernel and OVS have --------------------------------------------------------------------------

function links() {
  return ipJson(['link', 'show']);
}

function linkExists(name) {
  return run(['ip', 'link', 'show', 'dev', name], { allowFail: true }).code === 0;
}

/** OVS bridges and their ports (without the bridge's own internal port). Empty when ovsdb-server is not up. */
function bridges() {
  const res = ovs(['list-br'], { allowFail: true });
  const out = new Map();
  if (res.code !== 0) return out;
  for (const br of res.stdout.split('\n').filter(Boolean)) out.set(br, ovs(['list-ports', br]).stdout.split('\n').filter(Boolean));
  return out;
}

function bridgeOf(port) {
  for (const [br, ports] of bridges()) if (ports.includes(port)) return br;
  return undefined;
}

// ---- activation --------------------------------------------------------------------------------------------

const ORDER = { 'ovs-bridge': 0, ethernet: 1, 'ovs-interface': 3 };
/** configure-ovs's activation order: the bridge, then its port (the NIC), then the internal interface with the IP. */
function activationRank(p) {
  return p.type === 'ethernet' && p.controller ? 2 : (ORDER[p.type] ?? 4);
}

function stopDhcp(dev) {
  const pidFile = path.join(STATE_DIR, 'dhcp', `${dev}.pid`);
  try {
    process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 'SIGTERM');
  } catch {
    // no client running
  }
  fs.rmSync(pidFile, { force: true });
  fs.rmSync(path.join(STATE_DIR, 'dhcp', `${dev}.json`), { force: true });
}

function flushIp(dev) {
  if (!linkExists(dev)) return;
  for (const fam of ['-4', '-6']) {
    run(['ip', fam, 'addr', 'flush', 'dev', dev, 'scope', 'global'], { allowFail: true });
    for (const proto of ['static', 'dhcp']) run(['ip', fam, 'route', 'flush', 'dev', dev, 'proto', proto], { allowFail: true });
  }
}

function routeArgs(r, dev, metric) {
  const v6 = String(r.destination).includes(':');
  const hop = r['next-hop-address'];
  const via = hop && hop !== '0.0.0.0' && hop !== '::' ? ['via', hop] : [];
  return ['ip', v6 ? '-6' : '-4', 'route', 'replace', r.destination, ...via, 'dev', dev, 'proto', 'static', 'metric', String(r.metric ?? metric), 'table', String(r['table-id'] ?? 254)];
}

function dhcp4(dev, p) {
  fs.mkdirSync(path.join(STATE_DIR, 'dhcp'), { recursive: true });
  const metric = String(p['route-metric'] ?? DEFAULT_METRIC);
  const env = { TESTBED_NM_METRIC: metric, TESTBED_NM_AUTO_GATEWAY: p.ipv4['auto-gateway'] === false ? 'false' : 'true', TESTBED_NM_STATE: path.join(STATE_DIR, 'dhcp') };
  // -q: exit once bound (the lease is not renewed: tests last minutes, dnsmasq leases hours); -n: fail when no
  // server answers (5 discovers, 1 s apart), as NetworkManager's ipv4.dhcp-timeout makes activation fail.
  const res = run(['busybox', 'udhcpc', '-f', '-q', '-n', '-t', '5', '-T', '1', '-A', '1', '-i', dev, '-s', DHCP_SCRIPT], { env, allowFail: true, timeoutMs: 20_000 });
  if (res.code !== 0) throw new ModelError('PluginFailure', `Connection activation failed on ${dev}: no DHCPv4 lease (IP configuration could not be reserved)`);
}

function configureIp(dev, p) {
  const metric = p['route-metric'] ?? DEFAULT_METRIC;
  for (const fam of [4, 6]) {
    const ip = p[`ipv${fam}`];
    if (!ip || ip.enabled !== true) continue;
    if (fam === 4 && ip.dhcp === true) dhcp4(dev, p);
    for (const a of ip.address || []) {
      run(['ip', `-${fam}`, 'addr', 'replace', `${a.ip}/${a['prefix-length']}`, 'dev', dev, ...(fam === 6 ? ['nodad'] : [])]);
    }
  }
  for (const r of p.routes || []) {
    // NetworkManager does not fail an activation for a route the kernel refuses (a gateway off every subnet of the
    // device): it logs it and keeps the route in the profile. nmstate verifies routes against the profiles.
    const res = run(routeArgs(r, dev, metric), { allowFail: true });
    if (res.code !== 0) log(`route ${r.destination} via ${r['next-hop-address'] ?? '-'} on ${dev} not added: ${res.stderr.trim()}`);
  }
}

function dispatch(iface, action, connection) {
  const dir = action === 'pre-up' ? path.join(DISPATCHER_DIR, 'pre-up.d') : DISPATCHER_DIR;
  let names = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const n of names) {
    const file = path.join(dir, n);
    const st = fs.statSync(file, { throwIfNoEntry: false });
    // NetworkManager-dispatcher(8): only regular files owned by root, executable, not writable by group or others
    if (!st || !st.isFile() || st.uid !== 0 || (st.mode & 0o022) !== 0 || (st.mode & 0o100) === 0) continue;
    const res = run([file, iface, action], { allowFail: true, timeoutMs: 30_000, env: { CONNECTION_ID: connection, DEVICE_IFACE: iface, NM_DISPATCHER_ACTION: action } });
    fs.mkdirSync(STATE_DIR, { recursive: true });
    fs.appendFileSync(path.join(STATE_DIR, 'dispatcher.log'), `${JSON.stringify({ time: new Date().toISOString(), script: file, iface, action, exit: res.code })}\n`);
    if (res.code !== 0) log(`dispatcher script ${file} ${iface} ${action} exited ${res.code}: ${res.stderr.trim()}`);
  }
}

function waitForLink(name, ms) {
  const until = Date.now() + ms;
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (!linkExists(name)) {
    if (Date.now() > until) return false;
    Atomics.wait(cell, 0, 0, 50);
  }
  return true;
}

/** Brings one profile up on the real devices, then runs the dispatcher. Throws ModelError when it cannot. */
function activate(p) {
  ensurePrivate();
  if (p.type === 'ovs-bridge') {
    const mac = p['mac-address'] ? [`other-config:hwaddr="${p['mac-address'].toLowerCase()}"`] : [];
    ovs(['--may-exist', 'add-br', p.name, '--', 'set', 'bridge', p.name, 'datapath_type=netdev', ...mac]);
  } else if (p.type === 'ethernet') {
    if (!linkExists(p.name)) throw new ModelError('PluginFailure', `Connection activation failed: no device ${p.name}`);
    stopDhcp(p.name);
    flushIp(p.name);
    const br = bridgeOf(p.name);
    if (p.controller) {
      if (br && br !== p.controller) ovs(['del-port', br, p.name]);
      ovs(['--may-exist', 'add-port', p.controller, p.name]);
      run(['ip', 'link', 'set', p.name, 'up']);
    } else {
      if (br) ovs(['del-port', br, p.name]);
      run(['ip', 'link', 'set', p.name, 'up']);
      configureIp(p.name, p);
    }
  } else if (p.type === 'ovs-interface') {
    // the bridge's internal port: OVS creates its TAP device a moment after add-br
    if (!waitForLink(p.name, 5000)) throw new ModelError('PluginFailure', `Connection activation failed: OVS has no internal interface ${p.name} (is its bridge up?)`);
    stopDhcp(p.name);
    flushIp(p.name);
    run(['ip', 'link', 'set', p.name, 'up']);
    configureIp(p.name, p);
  } else {
    throw new ModelError('NotSupportedError', `the testbed cannot activate a ${p.type} profile (${p.name})`);
  }
  setActive([...activeKeys().filter((k) => k !== keyOf(p.name, p.type)), keyOf(p.name, p.type)]);
  if (p.type !== 'ovs-bridge' && !(p.type === 'ethernet' && p.controller)) {
    dispatch(p.name, 'pre-up', p.name);
    dispatch(p.name, 'up', p.name);
  }
  writeResolvConf();
  log(`activated ${p.name} (${p.type}${p.controller ? `, port of ${p.controller}` : ''}) from its ${p.where === 'run' ? 'runtime' : 'persistent'} profile`);
}

/** Takes one profile down: its addresses and routes go, a bridge is deleted (its ports are freed). */
function deactivate(name, type) {
  ensurePrivate();
  if (type === 'ovs-bridge') ovs(['--if-exists', 'del-br', name]);
  else {
    stopDhcp(name);
    flushIp(name);
    if (type === 'ethernet') {
      const br = bridgeOf(name);
      if (br) ovs(['del-port', br, name]);
    }
  }
  setActive(activeKeys().filter((k) => k !== keyOf(name, type)));
  if (type !== 'ovs-bridge') dispatch(name, 'down', name);
  writeResolvConf();
}

/** Activates profiles in configure-ovs's order (bridge, port, internal interface). */
function activateAll(list, { keepGoing = false } = {}) {
  const failures = [];
  for (const p of [...list].sort((a, b) => activationRank(a) - activationRank(b))) {
    try {
      activate(p);
    } catch (e) {
      if (!keepGoing) throw e;
      failures.push(e);
      log(`could not activate ${p.name} (${p.type}): ${e.message}`);
    }
  }
  return failures;
}

/** Every active profile down, in reverse activation order. */
function deactivateAll() {
  const all = profiles();
  const act = activeKeys()
    .map((k) => all.get(k) || { name: k.slice(0, k.lastIndexOf('.')), type: k.slice(k.lastIndexOf('.') + 1) })
    .sort((a, b) => activationRank(b) - activationRank(a));
  for (const p of act) deactivate(p.name, p.type);
}

// ---- DNS ---------------------------------------------------------------------------------------------------

function dhcpLease(dev) {
  try {
    return JSON.parse(fs.readFileSync(path.join(STATE_DIR, 'dhcp', `${dev}.json`), 'utf8'));
  } catch {
    return undefined;
  }
}

/** DNS of the active profiles (static first, in activation order), then what DHCP gave. */
function runningDns() {
  const all = profiles();
  const server = [];
  const search = [];
  const act = activeKeys().map((k) => all.get(k)).filter(Boolean);
  for (const p of act) {
    for (const s of p['dns-resolver']?.server || []) server.push(s);
    for (const s of p['dns-resolver']?.search || []) search.push(s);
  }
  for (const p of act) {
    const lease = p.ipv4?.dhcp && p.ipv4['auto-dns'] !== false ? dhcpLease(p.name) : undefined;
    for (const s of (lease?.dns || '').split(/\s+/).filter(Boolean)) server.push(s);
    if (lease?.domain) search.push(lease.domain);
  }
  return { server: [...new Set(server)], search: [...new Set(search)] };
}

function rcManagerUnmanaged() {
  const files = [];
  for (const f of NM_CONF) {
    try {
      if (fs.statSync(f).isDirectory()) for (const n of fs.readdirSync(f).sort()) if (n.endsWith('.conf')) files.push(path.join(f, n));
      else files.push(f);
    } catch {
      // absent
    }
  }
  return files.some((f) => /^\s*(rc-manager\s*=\s*unmanaged|dns\s*=\s*none)\s*$/m.test(fs.readFileSync(f, 'utf8')));
}

function writeResolvConf() {
  const dns = runningDns();
  const text = `# Generated by NetworkManager (testbed model, test/e2e/testbed/stand-ins/nm-model.cjs)\n${dns.search.length ? `search ${dns.search.join(' ')}\n` : ''}${dns.server.map((s) => `nameserver ${s}\n`).join('')}`;
  writeAtomic(`${ROOT}/run/NetworkManager/resolv.conf`, text);
  if (!rcManagerUnmanaged()) writeAtomic(`${ROOT}/etc/resolv.conf`, text);
}

// ---- nmstate's view ----------------------------------------------------------------------------------------

/** Hidden devices: OVS's own datapath device, not an interface nmstate reports. */
const HIDDEN = new Set(['ovs-netdev', 'ovs-system']);

function ipOf(addrInfo, fam) {
  return addrInfo.filter((a) => a.family === (fam === 4 ? 'inet' : 'inet6') && a.scope === 'global').map((a) => ({ ip: a.local, 'prefix-length': a.prefixlen }));
}

/** `nmstatectl show` of what is really there: interfaces, routes, DNS, in nmstate's shape. */
function showState() {
  const brs = bridges();
  const portOf = new Map();
  for (const [br, ports] of brs) for (const port of ports) portOf.set(port, br);
  const all = profiles();
  const active = new Map(activeKeys().map((k) => [k, all.get(k)]).filter(([, p]) => p));
  const addrs = new Map(ipJson(['addr', 'show']).map((l) => [l.ifname, l.addr_info || []]));
  const interfaces = [];
  for (const l of links()) {
    const name = l.ifname;
    if (HIDDEN.has(name)) continue;
    if (name === 'lo') {
      interfaces.push({ name: 'lo', type: 'loopback', state: 'up', ipv4: { enabled: true, address: [{ ip: '127.0.0.1', 'prefix-length': 8 }] }, ipv6: { enabled: true, address: [{ ip: '::1', 'prefix-length': 128 }] } });
      continue;
    }
    const internal = brs.has(name);
    const type = internal ? 'ovs-interface' : 'ethernet';
    const controller = internal ? name : portOf.get(name);
    const iface = { name, type, state: (l.flags || []).includes('UP') ? 'up' : 'down', 'mac-address': String(l.address || '').toUpperCase(), mtu: l.mtu };
    if (controller) iface.controller = controller;
    const prof = active.get(keyOf(name, type));
    for (const fam of [4, 6]) {
      const k = `ipv${fam}`;
      if (controller && !internal) {
        iface[k] = { enabled: false };
        continue;
      }
      const address = ipOf(addrs.get(name) || [], fam);
      const dhcp = fam === 4 && prof?.ipv4?.dhcp === true;
      const enabled = address.length > 0 || prof?.[k]?.enabled === true;
      iface[k] = enabled ? { enabled: true, ...(fam === 4 ? { dhcp } : { dhcp: false, autoconf: false }), address } : { enabled: false };
    }
    interfaces.push(iface);
  }
  for (const [br, ports] of brs) {
    interfaces.push({ name: br, type: 'ovs-bridge', state: 'up', bridge: { port: [...ports, br].sort().map((n) => ({ name: n })) } });
  }
  const config = [];
  for (const p of active.values()) for (const r of p.routes || []) config.push({ ...r, 'next-hop-interface': p.name });
  const running = [];
  for (const fam of ['-4', '-6']) {
    for (const r of ipJson([fam, 'route', 'show', 'table', 'main'])) {
      if (!['static', 'dhcp', 'boot'].includes(r.protocol) && !r.gateway) continue;
      const dst = r.dst === 'default' ? (fam === '-4' ? '0.0.0.0/0' : '::/0') : r.dst.includes('/') ? r.dst : `${r.dst}/${fam === '-4' ? 32 : 128}`;
      running.push({ destination: dst, 'next-hop-interface': r.dev, 'next-hop-address': r.gateway || (fam === '-4' ? '0.0.0.0' : '::'), metric: r.metric ?? 0, 'table-id': 254 });
    }
  }
  const cfgDns = { server: [], search: [] };
  for (const p of active.values()) {
    cfgDns.server.push(...(p['dns-resolver']?.server || []));
    cfgDns.search.push(...(p['dns-resolver']?.search || []));
  }
  return { 'dns-resolver': { running: runningDns(), config: cfgDns }, routes: { running, config }, interfaces };
}

// ---- the boot of NetworkManager ----------------------------------------------------------------------------

/** NetworkManager at boot: every persistent profile with state up is activated (autoconnect). */
function boot() {
  ensurePrivate();
  setActive([]);
  const failures = activateAll([...profiles().values()].filter((p) => p.state !== 'down' && p.state !== 'absent'), { keepGoing: true });
  writeResolvConf();
  return failures;
}

module.exports = { ModelError, ETC_DIR, RUN_DIR, STATE_DIR, keyOf, profiles, readDir, writeProfile, deleteProfile, activeKeys, setActive, activate, deactivate, activateAll, deactivateAll, showState, bridges, linkExists, boot, writeAtomic, run, ensurePrivate, YAML };

// ---- testbed-nm: the command configure-ovs and the boot unit use (in place of nmcli) -------------------------

function cli(argv) {
  const [verb, ...rest] = argv;
  switch (verb) {
    case 'boot': {
      const failures = boot();
      return failures.length ? 0 : 0;
    }
    case 'show':
      process.stdout.write(`${JSON.stringify(showState(), null, 2)}\n`);
      return 0;
    case 'profile': {
      // profile NAME TYPE: the effective profile as JSON (exit 1 if none)
      const p = profiles().get(keyOf(rest[0], rest[1]));
      if (!p) return 1;
      process.stdout.write(`${JSON.stringify(p)}\n`);
      return 0;
    }
    case 'active-profile': {
      // active-profile IFACE: "TYPE WHERE" of the active profile that holds IFACE's IP settings
      const all = profiles();
      const k = activeKeys().find((x) => all.get(x)?.name === rest[0] && all.get(x)?.type !== 'ovs-bridge');
      if (!k) return 1;
      process.stdout.write(`${all.get(k).type} ${all.get(k).where}\n`);
      return 0;
    }
    case 'rollback-runtime': {
      // configure-ovs's rollback_nm: its runtime profiles go, their devices go down, the persistent ones come back
      const run = readDir(RUN_DIR);
      const back = [];
      for (const p of [...run.values()].sort((a, b) => activationRank(b) - activationRank(a))) {
        if (activeKeys().includes(keyOf(p.name, p.type))) deactivate(p.name, p.type);
        deleteProfile('run', p.name, p.type);
        const persistent = readDir(ETC_DIR).get(keyOf(p.name, p.type));
        if (persistent) back.push({ ...persistent, where: 'etc' });
      }
      for (const br of bridges().keys()) ovs(['--if-exists', 'del-br', br]);
      activateAll(back, { keepGoing: true });
      return 0;
    }
    case 'build-bridge': {
      // build-bridge BRIDGE UPLINK METRIC: convert_to_bridge — runtime profiles for the bridge, the uplink as its
      // port, and the bridge's internal interface with the uplink's IP settings, MAC and MTU; then activation
      const [br, uplink, metric] = rest;
      const all = profiles();
      const k = activeKeys().find((x) => all.get(x)?.name === uplink && all.get(x)?.type !== 'ovs-bridge');
      const old = k && all.get(k);
      if (!old) {
        log(`ERROR: cannot find connection for interface: ${uplink}`);
        return 1;
      }
      const mac = String(links().find((l) => l.ifname === uplink)?.address || '').toUpperCase();
      const bridge = { name: br, type: 'ovs-bridge', state: 'up', 'mac-address': mac, bridge: { port: [{ name: uplink }, { name: br }] } };
      const port = { name: uplink, type: old.type, state: 'up', controller: br, ipv4: { enabled: false }, ipv6: { enabled: false } };
      const internal = { name: br, type: 'ovs-interface', state: 'up', controller: br, 'mac-address': mac, 'route-metric': Number(metric) };
      for (const f of ['ipv4', 'ipv6', 'dns-resolver']) if (old[f]) internal[f] = old[f];
      if (old.routes) internal.routes = old.routes.map((r) => ({ ...r, 'next-hop-interface': br }));
      for (const p of [bridge, port, internal]) writeProfile('run', p, `configure-ovs (testbed stand-in): ${p.type} ${p.name}, cloned from the active profile of ${uplink}`);
      deactivate(uplink, old.type);
      activateAll([bridge, port, internal].map((p) => ({ ...p, where: 'run' })));
      return 0;
    }
    default:
      log(`usage: testbed-nm boot|show|profile NAME TYPE|active-profile IFACE|rollback-runtime|build-bridge BRIDGE UPLINK METRIC`);
      return 2;
  }
}

if (require.main === module) {
  try {
    process.exitCode = cli(process.argv.slice(2));
  } catch (e) {
    log(e instanceof ModelError ? `${e.kind}: ${e.message}` : String(e.stack || e));
    process.exitCode = 1;
  }
}
