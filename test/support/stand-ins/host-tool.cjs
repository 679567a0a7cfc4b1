#!/usr/bin/env node
// Stand-in host tools for tests of the agent against a temp root (DESIGN.md section 7): one script,
// symlinked under each tool's name. Every call is recorded in $STANDIN_DIR/calls.jsonl; state lives in
// $STANDIN_DIR; a file $STANDIN_DIR/fail/<tool>[-<verb>] makes that call fail (its content = stderr), and a file
// $STANDIN_DIR/hold/<tool>[-<verb>] keeps it waiting until the file is removed (a tool that hangs).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');

// STANDIN_TOOL_NAME: shell-tools.sh hands a call it leaves to this script on under the tool's own name.
const tool = process.env.STANDIN_TOOL_NAME ?? path.basename(process.argv[1]);
const args = process.argv.slice(2);
const dir = process.env.STANDIN_DIR;
if (!dir) {
  process.stderr.write(`${tool} stand-in: STANDIN_DIR is not set\n`);
  process.exit(99);
}
const p = (...parts) => path.join(dir, ...parts);
const readJson = (file, dflt) => {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return dflt;
  }
};
const writeJson = (file, v) => fs.writeFileSync(file, JSON.stringify(v, null, 2));
let stdin = '';
try {
  if (!process.stdin.isTTY) stdin = fs.readFileSync(0, 'utf8');
} catch {
  stdin = '';
}
fs.appendFileSync(p('calls.jsonl'), `${JSON.stringify({ tool, args, time: Date.now(), env: { NOTIFY_SOCKET: process.env.NOTIFY_SOCKET } })}\n`);

function failIfAsked(verb) {
  for (const name of verb ? [`${tool}-${verb}`, tool] : [tool]) {
    const f = p('fail', name);
    if (fs.existsSync(f)) {
      process.stderr.write(fs.readFileSync(f, 'utf8') || `${tool} ${verb ?? ''}: injected failure\n`);
      process.exit(1);
    }
  }
}

async function holdIfAsked(verb) {
  const names = verb ? [`${tool}-${verb}`, tool] : [tool];
  while (names.some((n) => fs.existsSync(p('hold', n)))) await new Promise((r) => setTimeout(r, 20));
}

function copyDir(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, e.name);
    const b = path.join(to, e.name);
    if (e.isDirectory()) copyDir(a, b);
    else if (e.isFile()) fs.copyFileSync(a, b);
    else if (e.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(a), b);
  }
}

/** Devices: $STANDIN_DIR/devices/<name>/ holds the files, <name>.label the filesystem label, <name>.fstype its type (vfat when absent). */
function devices() {
  const d = p('devices');
  if (!fs.existsSync(d)) return [];
  return fs
    .readdirSync(d, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => ({ name: e.name, path: `/dev/${e.name}`, label: fs.existsSync(path.join(d, `${e.name}.label`)) ? fs.readFileSync(path.join(d, `${e.name}.label`), 'utf8').trim() : null, uuid: `UUID-${e.name}`, fstype: fs.existsSync(path.join(d, `${e.name}.fstype`)) ? fs.readFileSync(path.join(d, `${e.name}.fstype`), 'utf8').trim() : 'vfat' }));
}

function post(url, body) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (e) => {
      process.stderr.write(`${tool}: cannot reach the simulator: ${e.message}\n`);
      resolve(0);
    });
    req.end(JSON.stringify(body ?? {}));
  });
}

const UNIT_DEFAULTS = { 'kubelet.service': { enabled: 'masked', active: 'inactive' }, 'sno-reconfigure.service': { enabled: 'enabled', active: 'active' } };

async function systemctl() {
  const positional = args.filter((a) => !a.startsWith('-'));
  const [verb, ...names] = positional;
  await holdIfAsked(verb);
  const units = readJson(p('units.json'), UNIT_DEFAULTS);
  const unit = (n) => (units[n] ??= { enabled: 'disabled', active: 'inactive' });
  failIfAsked(verb);
  switch (verb) {
    case 'is-active':
      process.stdout.write(`${unit(names[0]).active}\n`);
      process.exit(unit(names[0]).active === 'active' ? 0 : 3);
      break;
    case 'is-enabled':
      process.stdout.write(`${unit(names[0]).enabled}\n`);
      process.exit(unit(names[0]).enabled === 'enabled' ? 0 : 1);
      break;
    case 'unmask':
      for (const n of names) if (unit(n).enabled === 'masked') unit(n).enabled = 'disabled';
      break;
    case 'mask':
      for (const n of names) unit(n).enabled = 'masked';
      break;
    case 'enable':
      for (const n of names) {
        if (unit(n).enabled === 'masked') {
          process.stderr.write(`Failed to enable unit: Unit file /etc/systemd/system/${n} is masked.\n`);
          process.exit(1);
        }
        unit(n).enabled = 'enabled';
      }
      break;
    case 'disable':
      for (const n of names) unit(n).enabled = 'disabled';
      break;
    case 'start':
      for (const n of names) {
        if (unit(n).enabled === 'masked') {
          process.stderr.write(`Failed to start ${n}: Unit ${n} is masked.\n`);
          process.exit(1);
        }
        unit(n).active = 'active';
        unit(n).since = new Date().toISOString();
        if (n === 'kubelet.service' && process.env.SIM_CONTROL_URL) await post(`${process.env.SIM_CONTROL_URL}/sim/kubelet/start`);
      }
      break;
    case 'stop':
      for (const n of names) unit(n).active = 'inactive';
      break;
    case 'restart':
      if (names.includes('ovs-configuration.service')) ovsConfiguration();
    // falls through
    case 'try-restart':
      for (const n of names) if (verb === 'restart' || unit(n).active === 'active') unit(n).since = new Date().toISOString();
      break;
    case 'show': {
      const since = unit(names[names.length - 1]).since;
      if (since) process.stdout.write(`${new Date(since).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/^/, 'Sun ')}\n`);
      else process.stdout.write('\n');
      break;
    }
    case 'daemon-reload':
      break;
    // The node stays up: the call is recorded (calls('systemctl')) and a test plays the boot itself.
    case 'reboot':
      break;
    default:
      process.stderr.write(`systemctl stand-in: unsupported verb ${verb}\n`);
      process.exit(1);
  }
  writeJson(p('units.json'), units);
}

/** nmstatectl over the node's network model (network-model.cjs has the rules and their sources). */
function nmstatectl() {
  const net = require('./network-model.cjs');
  const model = net.load(dir);
  net.expireCheckpoint(model);
  const hist = (line) => fs.appendFileSync(path.join(dir, 'nmstate', 'history.log'), `${line}\n`);
  fs.mkdirSync(p('nmstate'), { recursive: true });
  const verb = args[0];
  failIfAsked(verb);
  try {
    if (verb === 'show') {
      const state = net.show(model);
      process.stdout.write(args.includes('--json') ? JSON.stringify(state, null, 2) : require('yaml').stringify(state));
    } else if (verb === 'apply') {
      const file = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--timeout' && i > 0)[0];
      const desired = require('yaml').parse(file ? fs.readFileSync(file, 'utf8') : stdin) || {};
      const noCommit = args.includes('--no-commit');
      const t = args.indexOf('--timeout');
      net.apply(model, desired, { noCommit, timeout: t > 0 ? Number(args[t + 1]) : 60 });
      hist(`apply${noCommit ? ' --no-commit' : ''}`);
    } else if (verb === 'commit' || verb === 'rollback') {
      const cp = model.state.checkpoint;
      if (!cp) throw new net.NmstateError('NotFoundError', 'No checkpoint');
      if (verb === 'rollback') {
        model.state.profiles = cp.profiles;
        model.state.runtime = cp.runtime;
      }
      delete model.state.checkpoint;
      model.save();
      hist(verb);
    } else {
      process.stderr.write(`nmstatectl stand-in: unsupported ${args.join(' ')}\n`);
      process.exit(1);
    }
  } catch (e) {
    if (!(e instanceof net.NmstateError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}

/** `systemctl restart ovs-configuration.service`: configure-ovs re-run over the model (network-model.cjs). */
function ovsConfiguration() {
  const net = require('./network-model.cjs');
  const model = net.load(dir);
  net.expireCheckpoint(model);
  if (!model.lan.ovn) {
    process.stderr.write('Failed to restart ovs-configuration.service: Unit ovs-configuration.service not found.\n');
    process.exit(5);
  }
  const res = net.configureOvs(model.lan, net.render(model.lan, model.state.profiles));
  model.state.runtime = res.runtime;
  model.save();
  fs.appendFileSync(p('net', 'configure-ovs.log'), `${res.ok ? 'rebuilt br-ex' : `failed: ${res.why}`}\n`);
  if (!res.ok) {
    process.stderr.write('Job for ovs-configuration.service failed because the control process exited with error code.\n');
    process.exit(1);
  }
}

/** `node-power-cycle` (tests only): a reboot — the checkpoint is lost, configure-ovs rebuilds br-ex from the profiles. */
function powerCycle() {
  const net = require('./network-model.cjs');
  const model = net.load(dir);
  delete model.state.checkpoint;
  model.state.runtime = net.boot(model.lan, model.state.profiles).runtime;
  model.save();
}

function mount() {
  failIfAsked();
  const positional = args.filter((a, i) => !a.startsWith('-') && !['-o', '-t'].includes(args[i - 1]));
  const [device, target] = positional;
  const name = path.basename(device);
  const src = p('devices', name);
  if (!fs.existsSync(src)) {
    process.stderr.write(`mount: ${device}: special device does not exist.\n`);
    process.exit(32);
  }
  if (fs.existsSync(p('devices', `${name}.nodriver`))) {
    // util-linux 2.38 libmount/src/context_mount.c (mnt_context_get_mount_excode, ENODEV): the kernel has no such filesystem.
    const type = args[args.indexOf('-t') + 1];
    process.stderr.write(`mount: ${target}: unknown filesystem type '${type}'.\n`);
    process.exit(32);
  }
  if (fs.existsSync(p('devices', `${name}.unreadable`))) {
    process.stderr.write(`mount: ${target}: wrong fs type, bad option, bad superblock on ${device}, missing codepage or helper program, or other error.\n`);
    process.exit(32);
  }
  copyDir(src, target);
  writeJson(p('mounts.json'), { ...readJson(p('mounts.json'), {}), [target]: { device, options: args[args.indexOf('-o') + 1] } });
}

function umount() {
  failIfAsked();
  const target = args.filter((a) => !a.startsWith('-'))[0];
  const mounts = readJson(p('mounts.json'), {});
  if (!mounts[target]) {
    process.stderr.write(`umount: ${target}: not mounted.\n`);
    process.exit(32);
  }
  for (const e of fs.readdirSync(target)) fs.rmSync(path.join(target, e), { recursive: true, force: true });
  delete mounts[target];
  writeJson(p('mounts.json'), mounts);
}

function lsblk() {
  failIfAsked();
  // Without udev (as on these dev machines) lsblk shows no labels; $STANDIN_DIR/udev turns them on.
  const udev = fs.existsSync(p('udev'));
  process.stdout.write(JSON.stringify({ blockdevices: devices().map((d) => ({ name: d.name, label: udev ? d.label : null, fstype: udev ? d.fstype : null, path: d.path, uuid: udev ? d.uuid : null })) }));
}

function blkid() {
  failIfAsked();
  const blocks = devices()
    .filter((d) => d.label)
    .map((d) => `DEVNAME=${d.path}\nLABEL=${d.label}\nUUID=${d.uuid}\nTYPE=${d.fstype}`);
  if (blocks.length === 0) process.exit(2);
  process.stdout.write(`${blocks.join('\n\n')}\n`);
}

function ping() {
  const target = args[args.length - 1];
  const net = require('./network-model.cjs');
  const model = net.load(dir);
  net.expireCheckpoint(model);
  if (fs.existsSync(p('fail', 'ping')) || fs.existsSync(p('fail', `ping-${target}`)) || !net.reachable(model, target)) {
    process.stdout.write(`PING ${target} 56(84) bytes of data.\n\n--- ${target} ping statistics ---\n1 packets transmitted, 0 received, 100% packet loss, time 0ms\n`);
    process.exit(1);
  }
  process.stdout.write(`PING ${target} 56(84) bytes of data.\n64 bytes from ${target}: icmp_seq=1 ttl=64 time=0.042 ms\n`);
}

function ip() {
  const net = require('./network-model.cjs');
  const model = net.load(dir);
  net.expireCheckpoint(model);
  process.stdout.write(JSON.stringify(net.ipAddr(model)));
}

/**
 * `chronyc`: the node's chronyd as $STANDIN_DIR/chrony.json says it is — { synchronised, source, offset (seconds,
 * positive when the clock is ahead), added: [] }. Output is real chrony 4.3 output (test/fixtures/chrony) with
 * only the reference and offset lines changed. `makestep` sets a synchronised clock right; `add` adds a source.
 */
function chronyc() {
  failIfAsked(args.find((a) => !a.startsWith('-')));
  const file = p('chrony.json');
  const state = readJson(file, { synchronised: true, source: '192.0.2.123', offset: 0.000012, added: [] });
  const fixture = (name) => fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'chrony', name), 'utf8');
  const verb = args.filter((a) => a !== '-n')[0];
  if (verb === 'tracking') {
    if (!state.synchronised) return process.stdout.write(fixture('tracking-unsynced.txt'));
    const hex = state.source.split('.').map((n) => Number(n).toString(16).padStart(2, '0')).join('').toUpperCase();
    const off = `${Math.abs(state.offset).toFixed(9)} seconds ${state.offset >= 0 ? 'fast' : 'slow'} of NTP time`;
    return process.stdout.write(fixture('tracking-synced.txt').replace(/^(Reference ID\s*: ).*$/m, `$1${hex} (${state.source})`).replace(/^(System time\s*: ).*$/m, `$1${off}`));
  }
  if (verb === 'makestep') {
    if (!state.synchronised) {
      process.stdout.write(fixture('makestep-failure.txt'));
      process.exit(1);
    }
    state.offset = 0.000001;
  } else if (verb === 'add') {
    state.added = [...(state.added ?? []), args.slice(args.indexOf('add') + 1).join(' ')];
  } else {
    process.stderr.write(`chronyc stand-in: unsupported command ${verb}\n`);
    process.exit(1);
  }
  writeJson(file, state);
  process.stdout.write('200 OK\n');
}

const tools = {
  systemctl,
  nmstatectl,
  mount,
  umount,
  lsblk,
  blkid,
  ping,
  ip,
  chronyc,
  'node-power-cycle': powerCycle,
  // agetty, systemd-notify, dig, getent, and lsblk and blkid but for labels beyond ASCII: ./shell-tools.sh.
};
const fn = tools[tool];
if (!fn) {
  process.stderr.write(`unknown stand-in ${tool}\n`);
  process.exit(127);
}
Promise.resolve(fn()).catch((e) => {
  process.stderr.write(`${tool} stand-in crashed: ${e.stack}\n`);
  process.exit(98);
});
