#!/usr/bin/node
// Stand-in for nmstatectl (nmstate is not packaged for Debian 12), installed as /usr/bin/nmstatectl in the testbed
// rootfs. It changes the node's real interfaces and Open vSwitch through the testbed's NetworkManager model
// (nm-model.cjs beside it) and enforces the nmstate rules that matter for a node whose uplink is a port of br-ex,
// each citing nmstate's source (nmstate/nmstate, branch base). Command line and outputs follow nmstatectl 2.x
// (rust/src/cli/ncl.rs, apply.rs): `show [--json]`; `apply [FILE...|-] [--no-commit] [--timeout N]` prints the
// applied state; `commit` and `rollback [CHECKPOINT]`; errors go to stderr as "NmstateError: <Kind>: <message>"
// with exit 1, usage errors exit 2 (clap).
//
// The checkpoint: nmstate asks NetworkManager for one before every apply (nm/nm_dbus/dbus.rs: flags
// DELETE_NEW_CONNECTIONS | DISCONNECT_NEW_DEVICES) and rolls it back on any failure; with --no-commit it is kept,
// and the daemon rolls it back by itself after --timeout seconds (default 60, query_apply/net_state.rs
// DEFAULT_ROLLBACK_TIMEOUT) even when nmstatectl's caller is dead. Here the snapshot (every profile, persistent and
// runtime, and which were active) lives in /run/nmstate-standin (lost at reboot, like NetworkManager's in-memory
// checkpoint), and the daemon's timer is a transient systemd timer of the node (systemd-run --on-active) that runs
// `nmstatectl rollback` for it; `commit` stops the timer. `rollback` restores the snapshot: profiles created since
// are removed (configure-ovs's too), the ones it had come back, and what was active is activated again.
//
// NetworkManager does the work in its daemon, not in the caller: a caller's sandbox (the agent's unit restricts
// socket families, so no DHCP client's packet socket would work in it) or death must not change what happens. So
// nmstatectl here is a client that reads its input files in the caller's context (as nmstatectl does) and hands the
// request to a transient service of the node (systemd-run --wait --pipe), which runs this same file as the "daemon"
// side (TESTBED_NM_DAEMON=1); a commit held by hold-commit waits in the client, so killing the caller kills it.
// `show` changes nothing and runs in the caller, as nmstatectl's does.
//
// Testbed files (kept from the first stand-in, the e2e scenarios use them):
//   /etc/nmstate-standin/fail: lines `VERB [once] EXIT MESSAGE` (VERB: apply|commit|rollback|show|*) make the next
//     matching call print MESSAGE to stderr and exit EXIT, changing nothing (`once`: the line is then removed);
//   /etc/nmstate-standin/hold-commit: while it exists, `commit` waits (at most 5 minutes) before it commits;
//   /var/log/nmstate-standin/calls.jsonl: one JSON line per call {time, argv, input?, exit, error?, checkpoint?};
//     the automatic rollback is a line {event: "auto-rollback", checkpoint, afterSec}.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const DAEMON = process.env.TESTBED_NM_DAEMON === '1';
const argv = process.argv.slice(2);
/**
 * `show` only reads, in the caller's own process as nmstatectl does (nispor's netlink, NetworkManager's D-Bus; the
 * agent's unit allows both): no hop to the daemon side. A client that changes the network reads its input and hands
 * the call on: the model (and the yaml package it loads) is then the daemon's alone.
 */
const HERE = DAEMON || ['show', 's'].includes(argv.find((a) => !a.startsWith('-')));
const model = HERE ? require('/usr/local/lib/testbed-nm/nm-model.cjs') : undefined;
const { ModelError, YAML } = model ?? {};
const STATE_DIR = '/etc/nmstate-standin';
const RUN_DIR = '/run/nmstate-standin';
const LOG_FILE = '/var/log/nmstate-standin/calls.jsonl';
const FAIL = path.join(STATE_DIR, 'fail');
const CHECKPOINT = path.join(RUN_DIR, 'checkpoint.json');
const COUNTER = path.join(RUN_DIR, 'counter');
const LOCK = path.join(RUN_DIR, 'lock');
const DEFAULT_TIMEOUT = 60;
/** Interface types the testbed can make. The kernel has no 8021q, bonding or dummy module (README). */
const SUPPORTED_TYPES = new Set(['ethernet', 'ovs-bridge', 'ovs-interface', 'loopback']);

/** The call as the caller made it (file names included), for the call log. */
const callerArgv = process.env.TESTBED_NM_ARGV ? JSON.parse(process.env.TESTBED_NM_ARGV) : argv;
const record = { time: new Date().toISOString(), argv: callerArgv };

function log(entry) {
  fs.mkdirSync(path.dirname(LOG_FILE), { recursive: true });
  fs.appendFileSync(LOG_FILE, `${JSON.stringify(entry)}\n`);
}

function exit(code, out, err) {
  if (out) process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
  if (err) process.stderr.write(err.endsWith('\n') ? err : `${err}\n`);
  if (!record.quiet) log({ ...record, exit: code, ...(code !== 0 && err ? { error: err.trim() } : {}) });
  unlock();
  process.exit(code);
}

const fail = (kind, message) => exit(1, '', `NmstateError: ${kind}: ${message}`);

function info(msg) {
  process.stderr.write(`[${new Date().toISOString()} INFO  nmstate::query_apply::net_state] ${msg}\n`);
}

function sleepMs(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// One call at a time changes the network (NetworkManager serialises them in its daemon).
let locked = false;
function lock() {
  fs.mkdirSync(RUN_DIR, { recursive: true });
  const until = Date.now() + 120_000;
  for (;;) {
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      locked = true;
      return;
    } catch {
      let holder = 0;
      try {
        holder = Number(fs.readFileSync(LOCK, 'utf8'));
        process.kill(holder, 0);
      } catch {
        fs.rmSync(LOCK, { force: true }); // its holder is dead
        continue;
      }
      if (Date.now() > until) exit(1, '', `NmstateError: Bug: another nmstatectl (pid ${holder}) holds the lock`);
      sleepMs(50);
    }
  }
}
function unlock() {
  if (locked) fs.rmSync(LOCK, { force: true });
  locked = false;
}

/** The first `fail` line for this verb: {exit, message}; removes it when marked `once`. */
function injectedFailure(verb) {
  let lines;
  try {
    lines = fs.readFileSync(FAIL, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(\S+)\s+(?:(once)\s+)?(\d+)\s*(.*)$/.exec(lines[i]);
    if (!m || (m[1] !== verb && m[1] !== '*')) continue;
    if (m[2]) {
      lines.splice(i, 1);
      model.writeAtomic(FAIL, lines.join('\n'));
    }
    return { exit: Number(m[3]), message: m[4] || `NmstateError: injected ${verb} failure` };
  }
  return undefined;
}

function parseOptions(args, valued) {
  const opts = {};
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-' || !a.startsWith('-')) positional.push(a);
    else if (valued.includes(a)) {
      if (i + 1 >= args.length) exit(2, '', `error: a value is required for '${a} <${a.slice(2).toUpperCase()}>' but none was supplied`);
      opts[a] = args[++i];
    } else if (a.includes('=') && valued.includes(a.split('=')[0])) opts[a.split('=')[0]] = a.slice(a.indexOf('=') + 1);
    else opts[a] = true;
  }
  return { opts, positional };
}

// ---- checkpoints -------------------------------------------------------------------------------------------

function readCheckpoint() {
  try {
    return JSON.parse(fs.readFileSync(CHECKPOINT, 'utf8'));
  } catch {
    return undefined;
  }
}

function snapshot() {
  const files = (dir) => {
    const out = {};
    try {
      for (const f of fs.readdirSync(dir)) if (f.endsWith('.nmstate.yaml')) out[f] = fs.readFileSync(path.join(dir, f), 'utf8');
    } catch {
      // no profiles there
    }
    return out;
  };
  return { etc: files(model.ETC_DIR), run: files(model.RUN_DIR), active: model.activeKeys() };
}

/** Back to a snapshot: every profile as it was (newer ones removed), the same ones active. */
function restore(snap) {
  model.deactivateAll();
  for (const [dir, files] of [
    [model.ETC_DIR, snap.etc],
    [model.RUN_DIR, snap.run],
  ]) {
    fs.mkdirSync(dir, { recursive: true });
    for (const f of fs.readdirSync(dir)) if (f.endsWith('.nmstate.yaml') && !(f in files)) fs.rmSync(path.join(dir, f), { force: true });
    for (const [f, text] of Object.entries(files)) model.writeAtomic(path.join(dir, f), text);
  }
  const wanted = new Set(snap.active);
  for (const br of model.bridges().keys()) if (!wanted.has(model.keyOf(br, 'ovs-bridge'))) model.run(['ovs-vsctl', '--timeout=10', '--if-exists', 'del-br', br]);
  const all = model.profiles();
  return model.activateAll(snap.active.map((k) => all.get(k)).filter(Boolean), { keepGoing: true });
}

function nextCheckpointPath() {
  let n = 0;
  try {
    n = Number(fs.readFileSync(COUNTER, 'utf8')) || 0;
  } catch {
    // first checkpoint of this boot
  }
  n += 1;
  model.writeAtomic(COUNTER, String(n));
  return { n, path: `/org/freedesktop/NetworkManager/Checkpoint/${n}` };
}

const timerUnit = (n) => `nmstate-checkpoint-${n}`;

function stopTimer(cp) {
  if (cp.timer) model.run(['systemctl', 'stop', `${cp.timer}.timer`], { allowFail: true });
}

// ---- apply: nmstate's rules --------------------------------------------------------------------------------

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function parseState(text) {
  let state;
  try {
    state = YAML.parse(text);
  } catch (e) {
    fail('InvalidArgument', `Provide file is not valid NetworkState or NetworkPolicy: ${String(e.message).split('\n')[0]}`);
  }
  if (!isObj(state)) fail('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: not a mapping');
  if (state.interfaces !== undefined && !Array.isArray(state.interfaces)) fail('InvalidArgument', 'interfaces: invalid type, expected a sequence');
  for (const i of state.interfaces || []) if (!isObj(i) || typeof i.name !== 'string' || !i.name) fail('InvalidArgument', 'interfaces: every interface needs a name');
  return state;
}

function testbedLimit(iface) {
  const why = {
    vlan: 'the testbed kernel has no 8021q module, so a VLAN interface cannot be created here',
    bond: 'the testbed kernel has no bonding module, so a bond cannot be created here',
  }[iface.type];
  return `Interface ${iface.name} of type ${iface.type} is not supported by the testbed's nmstatectl stand-in: ${why || 'it models ethernet, ovs-bridge and ovs-interface only'} (test/e2e/testbed/README.md)`;
}

/** Desired IP settings over the base profile's, as nmstate merges desired with current. */
function mergeIp(base, desired) {
  if (desired === undefined) return base;
  if (!isObj(desired)) fail('InvalidArgument', 'ipv4/ipv6: invalid type, expected a mapping');
  if (desired.enabled === false) return { enabled: false };
  const merged = { ...(base && base.enabled ? base : {}), ...desired, enabled: desired.enabled ?? base?.enabled ?? true };
  if (desired.dhcp === true && desired.address === undefined) delete merged.address;
  return merged;
}

function checkIp(name, fam, ip) {
  if (!ip || !ip.enabled) return;
  if (fam === 6 && (ip.dhcp === true || ip.autoconf === true)) {
    fail('NotSupportedError', `Interface ${name}: DHCPv6 and IPv6 autoconf are not modelled by the testbed's NetworkManager (test/e2e/testbed/README.md); use static IPv6 addresses`);
  }
  for (const a of ip.address || []) {
    if (!isObj(a) || typeof a.ip !== 'string' || !Number.isInteger(a['prefix-length'])) fail('InvalidArgument', `Interface ${name}: ipv${fam}.address entries need ip and prefix-length`);
    if (fam === 4 ? a.ip.includes(':') : !a.ip.includes(':')) fail('InvalidArgument', `Interface ${name}: ${a.ip} is not an IPv${fam} address`);
  }
}

const routeMatches = (absent, r) => ['destination', 'next-hop-address', 'next-hop-interface', 'metric', 'table-id'].every((k) => absent[k] === undefined || String(absent[k]) === String(k === 'next-hop-interface' ? r[k] : r[k]));

/**
 * The profiles an apply writes and deletes, after nmstate's checks; exits with nmstate's error when it refuses.
 * current: showState(); profiles: the model's profiles; active: keys of the active ones.
 */
function plan(state, current, profiles, active) {
  const cur = current.interfaces;
  const desired = [];
  for (const raw of state.interfaces || []) {
    const d = { ...raw };
    if (d.type === undefined) {
      // rust/src/lib/ifaces/inter_ifaces.rs: an interface without a type takes the type it has now
      const found = cur.filter((c) => c.name === d.name);
      if (found.length === 0) fail('InvalidArgument', `Failed to find unknown type interface ${d.name} in current state`);
      if (found.length > 1) fail('InvalidArgument', `Found 2+ interface matching desired unknown type interface ${d.name}: ${JSON.stringify(found.map((f) => f.type))}`);
      d.type = found[0].type;
    }
    if (!SUPPORTED_TYPES.has(d.type)) fail('NotSupportedError', testbedLimit(d));
    d.state = d.state ?? 'up';
    if (!['up', 'down', 'absent'].includes(d.state)) fail('InvalidArgument', `Interface ${d.name}: state must be up, down or absent`);
    if (d.type !== 'loopback') desired.push(d);
  }
  const byKey = new Map(desired.map((d) => [model.keyOf(d.name, d.type), d]));
  // Ports whose controller changes: rust/src/lib/ifaces/inter_ifaces_controller.rs handle_changed_ports — the
  // ports of a bridge marked absent, or left out of a bridge's port list, are detached (controller ""); the ones
  // listed are attached; an internal interface named in the list is created with the bridge.
  const ctrlChange = new Map();
  for (const d of desired.filter((x) => x.type === 'ovs-bridge')) {
    const now = cur.find((c) => c.name === d.name && c.type === 'ovs-bridge');
    const nowPorts = (now?.bridge?.port || []).map((p) => p.name);
    if (d.state === 'absent') {
      for (const p of nowPorts) if (p !== d.name) ctrlChange.set(p, '');
      // the bridge's internal interface is orphaned: removed with it (inter_ifaces.rs mark_orphan_interface_as_absent)
      if (!byKey.has(model.keyOf(d.name, 'ovs-interface'))) byKey.set(model.keyOf(d.name, 'ovs-interface'), { name: d.name, type: 'ovs-interface', state: 'absent' });
      continue;
    }
    if (d.bridge?.port !== undefined) {
      if (!Array.isArray(d.bridge.port)) fail('InvalidArgument', `Interface ${d.name}: bridge.port must be a list`);
      const wanted = d.bridge.port.map((p) => p?.name);
      for (const p of nowPorts) if (!wanted.includes(p)) ctrlChange.set(p, '');
      for (const p of wanted) ctrlChange.set(p, d.name);
    }
  }
  const writes = [];
  const deletes = [];
  for (const [port, ctrl] of ctrlChange) {
    const isInternal = ctrl && port === ctrl;
    const type = isInternal ? 'ovs-interface' : (cur.find((c) => c.name === port && c.type !== 'ovs-bridge')?.type ?? 'ethernet');
    const k = model.keyOf(port, type);
    if (!byKey.has(k)) byKey.set(k, { name: port, type, state: 'up', implicit: true });
  }
  for (const d of byKey.values()) {
    if (d.state === 'absent') {
      deletes.push({ name: d.name, type: d.type });
      continue;
    }
    const now = cur.find((c) => c.name === d.name && c.type === d.type);
    const base = profiles.get(model.keyOf(d.name, d.type)) || {};
    // rust/src/lib/iface.rs preserve_current_controller_info: a desired interface that names no controller keeps
    // the one it has now (unless its controller's change above detached or attached it)
    let controller = d.controller;
    if (controller === undefined) controller = ctrlChange.has(d.name) && d.type !== 'ovs-bridge' ? ctrlChange.get(d.name) : now?.controller;
    if (d.type === 'ovs-interface' && !controller) controller = d.name;
    const p = { name: d.name, type: d.type, state: d.state };
    if (controller && d.type !== 'ovs-bridge') p.controller = controller;
    for (const f of ['mac-address', 'mtu', 'route-metric']) if ((d[f] ?? base[f]) !== undefined) p[f] = d[f] ?? base[f];
    if (d.type !== 'ovs-bridge') {
      p.ipv4 = mergeIp(d.implicit ? (controller ? { enabled: false } : base.ipv4) : base.ipv4, d.ipv4) ?? { enabled: false };
      p.ipv6 = mergeIp(d.implicit ? (controller ? { enabled: false } : base.ipv6) : base.ipv6, d.ipv6) ?? { enabled: false };
      // rust/src/lib/ifaces/base.rs validate_can_have_ip / can_have_ip: only an interface without a controller, an
      // OVS internal interface, or a VRF port may have IP
      if (p.controller && d.type !== 'ovs-interface') {
        if (!d.implicit && (d.ipv4?.enabled === true || d.ipv6?.enabled === true)) {
          fail('InvalidArgument', `Interface ${d.name} cannot have IP enabled as it is attached to a controller where IP is not allowed`);
        }
        p.ipv4 = { enabled: false };
        p.ipv6 = { enabled: false };
      }
      checkIp(d.name, 4, p.ipv4);
      checkIp(d.name, 6, p.ipv6);
    } else {
      const ports = d.bridge?.port ? d.bridge.port.map((x) => ({ name: x.name })) : (base.bridge?.port ?? now?.bridge?.port ?? [{ name: d.name }]);
      p.bridge = { port: ports };
    }
    // rust/src/lib/ifaces/ethernet.rs: a new ethernet interface that is not a veth the state creates must exist
    if (d.type === 'ethernet' && d.state === 'up' && !model.linkExists(d.name)) fail('InvalidArgument', `Ethernet interface ${d.name} does not exists`);
    if (d.type === 'ovs-interface' && d.state === 'up') {
      const brUp = desired.some((x) => x.type === 'ovs-bridge' && x.name === p.controller && x.state === 'up') || (cur.some((c) => c.type === 'ovs-bridge' && c.name === p.controller) && !deletes.some((x) => x.type === 'ovs-bridge' && x.name === p.controller) && !desired.some((x) => x.type === 'ovs-bridge' && x.name === p.controller && x.state === 'absent'));
      if (!brUp) fail('InvalidArgument', `OVS interface ${d.name} has no OVS bridge ${p.controller} to be attached to`);
    }
    if (base.routes) p.routes = base.routes;
    if (base['dns-resolver']) p['dns-resolver'] = base['dns-resolver'];
    writes.push(p);
  }
  // Routes: desired ones go to the profile of their next-hop interface; `state: absent` removes the matching ones
  // (rust/src/lib/route.rs; the next-hop interface must be up with the route's IP family enabled).
  const routeCfg = state.routes?.config;
  if (routeCfg !== undefined && !Array.isArray(routeCfg)) fail('InvalidArgument', 'routes.config must be a list');
  const profileFor = (name) => writes.find((w) => w.name === name && w.type !== 'ovs-bridge');
  const deleted = (k) => deletes.some((x) => model.keyOf(x.name, x.type) === k);
  /** The profile of `name` this apply writes, taken from the existing one when the state does not name it. */
  const loadForChange = (name) => {
    const w = profileFor(name);
    if (w) return w;
    const candidates = [...profiles.keys()].filter((x) => profiles.get(x).name === name && profiles.get(x).type !== 'ovs-bridge' && !deleted(x));
    const k = candidates.find((x) => active.includes(x)) || candidates[0];
    if (!k) return undefined;
    const { where: _w, ...p } = profiles.get(k);
    writes.push(p);
    return p;
  };
  for (const r of (routeCfg || []).filter((x) => isObj(x) && x.state === 'absent')) {
    for (const [k, p] of profiles) {
      if (!deleted(k) && (p.routes || []).some((x) => routeMatches(r, { ...x, 'next-hop-interface': p.name }))) {
        const w = loadForChange(p.name);
        if (w) w.routes = (w.routes || []).filter((x) => !routeMatches(r, { ...x, 'next-hop-interface': p.name }));
      }
    }
    for (const w of writes) if (w.routes) w.routes = w.routes.filter((x) => !routeMatches(r, { ...x, 'next-hop-interface': w.name }));
  }
  for (const r of (routeCfg || []).filter((x) => !(isObj(x) && x.state === 'absent'))) {
    if (!isObj(r) || typeof r.destination !== 'string') fail('InvalidArgument', 'routes.config: every route needs a destination');
    const via = r['next-hop-interface'];
    if (typeof via !== 'string') fail('InvalidArgument', `Route ${r.destination}: next-hop-interface is required by the testbed's stand-in`);
    const fam = r.destination.includes(':') ? 6 : 4;
    const text = `${r.destination} via ${r['next-hop-address'] ?? ''} dev ${via}`;
    if (deletes.some((x) => x.name === via)) fail('InvalidArgument', `The next hop interface of desired Route '${text}' has been marked as absent`);
    const w = loadForChange(via);
    if (!w || !w[`ipv${fam}`]?.enabled) fail('InvalidArgument', `The next hop interface of desired Route '${text}' has been marked as IPv${fam} disabled`);
    const { state: _s, ...clean } = r;
    w.routes = [...(w.routes || []).filter((x) => !(x.destination === clean.destination && String(x['next-hop-address']) === String(clean['next-hop-address']))), { ...clean, 'next-hop-interface': via }];
  }
  // DNS: rust/src/lib/nm/dns.rs stores the servers in the profile of an interface with IP enabled (preferring the
  // one with the default route); the previous DNS settings go from every other profile.
  const dnsCfg = state['dns-resolver']?.config;
  if (dnsCfg !== undefined) {
    const servers = dnsCfg?.server ?? [];
    const search = dnsCfg?.search ?? [];
    for (const [k, p] of profiles) if (p['dns-resolver'] && !deleted(k)) delete loadForChange(p.name)['dns-resolver'];
    for (const w of writes) delete w['dns-resolver'];
    if (servers.length || search.length) {
      const ipOn = writes.filter((w) => w.type !== 'ovs-bridge' && (w.ipv4?.enabled || w.ipv6?.enabled));
      const holder = ipOn.find((w) => (w.routes || []).some((x) => x.destination === '0.0.0.0/0' || x.destination === '::/0')) || ipOn[0];
      if (!holder) fail('InvalidArgument', `Failed to find suitable(IP enabled) interface for DNS server ${JSON.stringify(servers)}`);
      holder['dns-resolver'] = { ...(servers.length ? { server: servers } : {}), ...(search.length ? { search } : {}) };
    }
  }
  for (const w of writes) for (const k of Object.keys(w)) if (w[k] === undefined) delete w[k];
  return { writes, deletes };
}

function readInput(positional) {
  if (positional.length === 0 || positional[0] === '-') {
    try {
      return fs.readFileSync(0, 'utf8');
    } catch {
      return '';
    }
  }
  try {
    return positional.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  } catch (e) {
    return exit(1, '', `NmstateError: Bug: ${e.message}`);
  }
}

function apply(args) {
  const known = ['--no-commit', '--timeout', '--no-verify', '-k', '--kernel', '--memory-only', '-s', '--show-secrets', '-v', '-q'];
  const { opts, positional } = parseOptions(args, ['--timeout']);
  for (const o of Object.keys(opts)) if (!known.includes(o)) exit(2, '', `error: unexpected argument '${o}' found`);
  let timeoutSec = DEFAULT_TIMEOUT;
  if (opts['--timeout'] !== undefined) {
    if (!/^\d+$/.test(String(opts['--timeout']))) exit(65, '', `NmstateError: InvalidArgument: invalid digit found in string: --timeout ${opts['--timeout']}`);
    timeoutSec = Number(opts['--timeout']);
  }
  if (opts['--memory-only'] || opts['-k'] || opts['--kernel']) fail('NotSupportedError', 'the testbed stand-in applies persistent profiles only (no --memory-only or --kernel)');
  const input = readInput(positional);
  record.input = input;
  if (!input.trim()) fail('InvalidArgument', 'Provide file is not valid NetworkState or NetworkPolicy: empty state');
  lock();
  const failure = injectedFailure('apply');
  if (failure) {
    info('Rollbacked to checkpoint (injected failure)');
    exit(failure.exit, '', failure.message);
  }
  const noCommit = opts['--no-commit'] === true;
  model.ensurePrivate();
  const state = parseState(input);
  // nmstate merges and validates the desired state against the current one before it asks for a checkpoint
  const { writes, deletes } = plan(state, model.showState(), model.profiles(), model.activeKeys());
  if (readCheckpoint()) fail('Bug', 'Failed to create checkpoint: a checkpoint already exists for these devices (commit or rollback it first)');

  const snap = snapshot();
  const cp = nextCheckpointPath();
  const checkpoint = { path: cp.path, created: Date.now(), timeoutSec, snapshot: snap };
  if (noCommit) {
    // NetworkManager's own timer: a transient timer unit of the node, independent of this process and its caller
    checkpoint.timer = timerUnit(cp.n);
    model.writeAtomic(CHECKPOINT, JSON.stringify(checkpoint));
    model.run(['systemd-run', '--quiet', `--unit=${checkpoint.timer}`, `--on-active=${timeoutSec}s`, '--timer-property=AccuracySec=100ms', '--setenv=TESTBED_NM_DAEMON=1', '/usr/bin/nmstatectl', 'rollback', '--expired', cp.path]);
    record.checkpoint = cp.path;
  }
  info(`Created checkpoint ${cp.path}`);
  try {
    const all = model.profiles();
    const act = model.activeKeys();
    // down first: what goes away, then what changes
    for (const d of [...deletes].sort((a, b) => (a.type === 'ovs-bridge' ? 1 : 0) - (b.type === 'ovs-bridge' ? 1 : 0))) {
      if (act.includes(model.keyOf(d.name, d.type)) || (d.type === 'ovs-bridge' && model.bridges().has(d.name))) model.deactivate(d.name, d.type);
      model.deleteProfile('etc', d.name, d.type);
      model.deleteProfile('run', d.name, d.type);
    }
    for (const w of writes) if (act.includes(model.keyOf(w.name, w.type)) && all.get(model.keyOf(w.name, w.type))?.where === 'run') model.deleteProfile('run', w.name, w.type);
    for (const w of writes) {
      // nmstate saves what it changes to disk (persistent profiles), replacing the runtime one of the interface
      model.writeProfile('etc', w, 'nmstatectl apply (testbed stand-in)');
      model.deleteProfile('run', w.name, w.type);
    }
    const up = writes.filter((w) => w.state === 'up').map((w) => ({ ...w, where: 'etc' }));
    model.activateAll(up);
    for (const w of writes.filter((x) => x.state === 'down')) model.deactivate(w.name, w.type);
    verify(up);
  } catch (e) {
    const msg = e instanceof ModelError ? `${e.kind}: ${e.message}` : `Bug: ${e.message}`;
    restore(snap);
    if (noCommit) {
      stopTimer(checkpoint);
      fs.rmSync(CHECKPOINT, { force: true });
    }
    info(`Rollbacked to checkpoint ${cp.path}`);
    exit(1, '', `NmstateError: ${msg}`);
  }
  if (noCommit) info(`Skipping commit for checkpoint ${cp.path}`);
  exit(0, input, '');
}

/** nmstate verifies the result against the desired state (VerificationError): static addresses are on their devices. */
function verify(up) {
  const addrs = new Map(JSON.parse(model.run(['ip', '-j', 'addr', 'show']).stdout).map((l) => [l.ifname, (l.addr_info || []).map((a) => `${a.local}/${a.prefixlen}`)]));
  for (const w of up) {
    for (const fam of [4, 6]) {
      for (const a of w[`ipv${fam}`]?.enabled ? w[`ipv${fam}`].address || [] : []) {
        if (!(addrs.get(w.name) || []).includes(`${a.ip}/${a['prefix-length']}`)) throw new ModelError('VerificationError', `Verification failure: ${w.name}.interface.ipv${fam}.address desire '${a.ip}/${a['prefix-length']}', current absent`);
      }
    }
  }
}

/** Sleeps while `file` exists (polling every 100 ms), at most `maxMs`. */
function waitWhileExists(file, maxMs) {
  const until = Date.now() + maxMs;
  while (fs.existsSync(file) && Date.now() < until) sleepMs(100);
}

function commitOrRollback(verb, args) {
  const { opts, positional } = parseOptions(args, []);
  const expired = opts['--expired'] === true;
  if (expired) record.quiet = true; // NetworkManager's own timer, not a call: logged as an event below
  lock();
  const cp = readCheckpoint();
  const wanted = positional[0];
  if (!cp || (wanted && wanted !== cp.path)) fail('NotFoundError', `No checkpoint ${wanted ? `${wanted} ` : ''}found to ${verb}`);
  record.checkpoint = cp.path;
  const failure = expired ? undefined : injectedFailure(verb);
  if (failure) exit(failure.exit, '', failure.message);
  if (!expired) stopTimer(cp);
  if (verb === 'rollback') {
    model.ensurePrivate();
    const failures = restore(cp.snapshot);
    if (failures.length) process.stderr.write(`nmstatectl (testbed): after the rollback, could not activate: ${failures.map((e) => e.message).join('; ')}\n`);
  }
  fs.rmSync(CHECKPOINT, { force: true });
  if (expired) log({ time: new Date().toISOString(), event: 'auto-rollback', checkpoint: cp.path, afterSec: cp.timeoutSec });
  exit(0, cp.path, '');
}

function show(args) {
  const { opts } = parseOptions(args, []);
  const failure = injectedFailure('show');
  if (failure) exit(failure.exit, '', failure.message);
  const state = model.showState();
  exit(0, opts['--json'] ? JSON.stringify(state, null, 2) : YAML.stringify(state), '');
}

/** The client side: input read here, the request run by the "daemon" (a transient service), its exit code passed on. */
function client() {
  const verb = argv.find((a) => !a.startsWith('-'));
  if (argv.includes('--version') || argv.includes('-V') || verb === 'version') exit(0, 'nmstatectl 2.2.0 (testbed stand-in)', '');
  let daemonArgs = argv;
  let input = '';
  if (['apply', 'set', 'a'].includes(verb)) {
    const rest = argv.slice(argv.indexOf(verb) + 1);
    const { positional } = parseOptions(rest, ['--timeout']);
    input = readInput(positional);
    daemonArgs = [verb, ...rest.filter((a) => !positional.includes(a)), '-'];
  }
  if (verb === 'commit') waitWhileExists(path.join(STATE_DIR, 'hold-commit'), 5 * 60_000);
  const { spawnSync } = require('node:child_process');
  const res = spawnSync('systemd-run', ['--quiet', '--wait', '--pipe', '--collect', '--service-type=exec', '--setenv=TESTBED_NM_DAEMON=1', `--setenv=TESTBED_NM_ARGV=${JSON.stringify(argv)}`, '/usr/bin/nmstatectl', ...daemonArgs], { input, stdio: ['pipe', 'inherit', 'inherit'] });
  if (res.error) {
    process.stderr.write(`NmstateError: Bug: the testbed's NetworkManager could not be reached (systemd-run: ${res.error.message})\n`);
    process.exit(1);
  }
  process.exit(res.status ?? 1);
}

function main() {
  if (!HERE) return client();
  const verb = argv.find((a) => !a.startsWith('-'));
  if (!verb) exit(2, '', 'Usage: nmstatectl <apply|commit|rollback|show|version> [OPTIONS]\nerror: a subcommand is required');
  const rest = argv.slice(argv.indexOf(verb) + 1);
  try {
    switch (verb) {
      case 'apply':
      case 'set':
      case 'a':
        return apply(rest);
      case 'commit':
        return commitOrRollback('commit', rest);
      case 'rollback':
        return commitOrRollback('rollback', rest);
      case 'show':
      case 's':
        return show(rest);
      default:
        return exit(2, '', `error: the stand-in nmstatectl does not implement '${verb}' (apply, commit, rollback, show, version)`);
    }
  } catch (e) {
    return exit(1, '', e instanceof ModelError ? `NmstateError: ${e.kind}: ${e.message}` : `NmstateError: Bug: ${e.stack || e}`);
  }
}

main();
