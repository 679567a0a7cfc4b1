#!/usr/bin/env node
// Stand-in host tools for tests of the agent against a temp root (DESIGN.md section 7): one module whose calls
// ./tool-server.cjs runs for ./tool-client.sh, symlinked under each tool's name (or, without a server, this script
// runs one call as a program under the name it was started with). Every call is recorded in $STANDIN_DIR/calls.jsonl; state lives in
// $STANDIN_DIR; a file $STANDIN_DIR/fail/<tool>[-<verb>] makes that call fail (its content = stderr), and a file
// $STANDIN_DIR/hold/<tool>[-<verb>] keeps it waiting until the file is removed (a tool that hangs).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');

const readJson = (file, dflt) => {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return dflt;
  }
};
const writeJson = (file, v) => fs.writeFileSync(file, JSON.stringify(v, null, 2));
const net = require('./network-model.cjs');
const UNIT_DEFAULTS = { 'kubelet.service': { enabled: 'masked', active: 'inactive' }, 'sno-reconfigure.service': { enabled: 'enabled', active: 'active' } };

/** A call's end: its exit status (the CLI's process.exit; the tool server's answer). */
class Exit {
  constructor(code) {
    this.code = code;
  }
}

/**
 * One tool call: `tool` with `args`, the caller's environment (STANDIN_DIR and the few variables the tools read),
 * its stdin and working directory. Resolves to the exit status and what the tool wrote; re-entrant, so the tool
 * server (./tool-server.cjs) runs many calls in one process, the way separate processes would.
 */
async function runTool({ tool, args, env, stdin = '', cwd = process.cwd(), gone = () => false }) {
  const stdout = [];
  const stderr = [];
  const out = (s) => stdout.push(s);
  const err = (s) => stderr.push(s);
  const exit = (code) => {
    throw new Exit(code);
  };
  const dir = env.STANDIN_DIR;
  const p = (...parts) => path.join(dir, ...parts);
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
    nmcli,
    // agetty, systemd-notify, dig, getent, and lsblk and blkid but for labels beyond ASCII: ./shell-tools.sh.
  };
  try {
    if (!dir) {
      err(`${tool} stand-in: STANDIN_DIR is not set\n`);
      exit(99);
    }
    fs.appendFileSync(p('calls.jsonl'), `${JSON.stringify({ tool, args, time: Date.now(), env: { NOTIFY_SOCKET: env.NOTIFY_SOCKET } })}\n`);
    const fn = tools[tool];
    if (!fn) {
      err(`unknown stand-in ${tool}\n`);
      exit(127);
    }
    await fn();
    return { code: 0, stdout: stdout.join(''), stderr: stderr.join('') };
  } catch (e) {
    if (e instanceof Exit) return { code: e.code, stdout: stdout.join(''), stderr: stderr.join('') };
    err(`${tool} stand-in crashed: ${e.stack}\n`);
    return { code: 98, stdout: stdout.join(''), stderr: stderr.join('') };
  }

  function failIfAsked(verb) {
    for (const name of verb ? [`${tool}-${verb}`, tool] : [tool]) {
      const f = p('fail', name);
      if (fs.existsSync(f)) {
        err(fs.readFileSync(f, 'utf8') || `${tool} ${verb ?? ''}: injected failure\n`);
        exit(1);
      }
    }
  }

  async function holdIfAsked(verb) {
    const names = verb ? [`${tool}-${verb}`, tool] : [tool];
    let held = false;
    while (names.some((n) => fs.existsSync(p('hold', n)))) {
      held = true;
      if (gone()) exit(137);
      await new Promise((r) => setTimeout(r, 20));
    }
    // A caller that died while the call was held never has it run (a killed process's nmstatectl commit).
    if (held && gone()) exit(137);
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

  /** Devices: $STANDIN_DIR/devices/<name>/ holds the files, <name>.label the filesystem label, <name>.fstype its type (vfat when absent), <name>.uuid its UUID (UUID-<name> when absent). */
  function devices() {
    const d = p('devices');
    if (!fs.existsSync(d)) return [];
    return fs
      .readdirSync(d, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => ({ name: e.name, path: `/dev/${e.name}`, label: fs.existsSync(path.join(d, `${e.name}.label`)) ? fs.readFileSync(path.join(d, `${e.name}.label`), 'utf8').trim() : null, uuid: fs.existsSync(path.join(d, `${e.name}.uuid`)) ? fs.readFileSync(path.join(d, `${e.name}.uuid`), 'utf8').trim() : `UUID-${e.name}`, fstype: fs.existsSync(path.join(d, `${e.name}.fstype`)) ? fs.readFileSync(path.join(d, `${e.name}.fstype`), 'utf8').trim() : 'vfat' }));
  }

  function post(url, body) {
    return new Promise((resolve) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', (e) => {
        err(`${tool}: cannot reach the simulator: ${e.message}\n`);
        resolve(0);
      });
      req.end(JSON.stringify(body ?? {}));
    });
  }


  async function systemctl() {
    const positional = args.filter((a) => !a.startsWith('-'));
    const [verb, ...names] = positional;
    await holdIfAsked(verb);
    const units = readJson(p('units.json'), UNIT_DEFAULTS);
    const unit = (n) => (units[n] ??= { enabled: 'disabled', active: 'inactive' });
    failIfAsked(verb);
    switch (verb) {
      case 'is-active':
        out(`${unit(names[0]).active}\n`);
        exit(unit(names[0]).active === 'active' ? 0 : 3);
        break;
      case 'is-enabled':
        out(`${unit(names[0]).enabled}\n`);
        exit(unit(names[0]).enabled === 'enabled' ? 0 : 1);
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
            err(`Failed to enable unit: Unit file /etc/systemd/system/${n} is masked.\n`);
            exit(1);
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
            err(`Failed to start ${n}: Unit ${n} is masked.\n`);
            exit(1);
          }
          unit(n).active = 'active';
          unit(n).since = new Date().toISOString();
          if (n === 'kubelet.service' && env.SIM_CONTROL_URL) await post(`${env.SIM_CONTROL_URL}/sim/kubelet/start`);
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
        if (since) out(`${new Date(since).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/^/, 'Sun ')}\n`);
        else out('\n');
        break;
      }
      case 'daemon-reload':
        break;
      // The node stays up: the call is recorded (calls('systemctl')) and marked, and the caller (the agent) is stopped
      // with SIGTERM as systemd stops the services at a reboot; the test harness plays the boot (test/support/scenario.ts).
      case 'reboot': {
        fs.writeFileSync(p('reboot-requested'), `${Date.now()}\n`);
        // Only where the harness plays boots (test/support/scenario.ts): a unit test calling it is not stopped.
        const caller = env.STANDIN_STOP_ON_REBOOT ? Number(env.STANDIN_CALLER_PID) : 0;
        try {
          if (caller > 1) process.kill(caller, 'SIGTERM');
        } catch {
          // gone already
        }
        break;
      }
      default:
        err(`systemctl stand-in: unsupported verb ${verb}\n`);
        exit(1);
    }
    writeJson(p('units.json'), units);
  }

  /** nmstatectl over the node's network model (network-model.cjs has the rules and their sources). */
  async function nmstatectl() {
    await holdIfAsked(args[0]);
    const model = net.load(dir, env);
    net.expireCheckpoint(model);
    const hist = (line) => fs.appendFileSync(path.join(dir, 'nmstate', 'history.log'), `${line}\n`);
    fs.mkdirSync(p('nmstate'), { recursive: true });
    const verb = args[0];
    failIfAsked(verb);
    try {
      if (verb === 'show') {
        const state = net.show(model);
        out(args.includes('--json') ? JSON.stringify(state, null, 2) : require('yaml').stringify(state));
      } else if (verb === 'apply') {
        const file = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--timeout' && i > 0)[0];
        const desired = require('yaml').parse(file ? fs.readFileSync(path.resolve(cwd, file), 'utf8') : stdin) || {};
        const noCommit = args.includes('--no-commit');
        const t = args.indexOf('--timeout');
        net.apply(model, desired, { noCommit, timeout: t > 0 ? Number(args[t + 1]) : 60 });
        hist(`apply${noCommit ? ' --no-commit' : ''}`);
      } else if (verb === 'commit' || verb === 'rollback') {
        const cp = model.state.checkpoint;
        if (!cp) throw new net.NmstateError('NotFoundError', 'No checkpoint');
        if (verb === 'rollback') net.rollback(model);
        else delete model.state.checkpoint;
        model.save();
        hist(verb);
      } else {
        err(`nmstatectl stand-in: unsupported ${args.join(' ')}\n`);
        exit(1);
      }
    } catch (e) {
      if (!(e instanceof net.NmstateError)) throw e;
      err(`${e.message}\n`);
      exit(1);
    }
  }

  /** `systemctl restart ovs-configuration.service`: configure-ovs re-run over the model (network-model.cjs). */
  function ovsConfiguration() {
    const model = net.load(dir, env);
    net.expireCheckpoint(model);
    if (!model.lan.ovn) {
      err('Failed to restart ovs-configuration.service: Unit ovs-configuration.service not found.\n');
      exit(5);
    }
    const res = net.configureOvs(model.lan, net.render(model.lan, model.profiles));
    model.state.runtime = res.runtime;
    model.save();
    fs.appendFileSync(p('net', 'configure-ovs.log'), `${res.ok ? 'rebuilt br-ex' : `failed: ${res.why}`}\n`);
    if (!res.ok) {
      err('Job for ovs-configuration.service failed because the control process exited with error code.\n');
      exit(1);
    }
  }

  /**
   * `node-power-cycle` (tests only): a power cut and the boot up to the early network phase — the checkpoint is lost,
   * NetworkManager brings the interfaces up from their profiles, no br-ex yet. `node-power-cycle --configure-ovs`: the
   * rest of the boot, ovs-configuration.service building br-ex from the profiles (the harness runs the agent's early
   * phase in between, as sno-reconfigure-network.service is ordered).
   */
  function powerCycle() {
    const model = net.load(dir, env);
    if (args.includes('--configure-ovs')) {
      const res = net.boot(model.lan, model.profiles);
      model.state.runtime = res.runtime;
      if (model.lan.ovn) fs.appendFileSync(p('net', 'configure-ovs.log'), `${res.ok ? 'rebuilt br-ex' : `failed: ${res.why}`}\n`);
    } else {
      delete model.state.checkpoint;
      model.state.runtime = net.render(model.lan, model.profiles);
      fs.rmSync(p('reboot-requested'), { force: true });
      if (env.STANDIN_ROOT) fs.writeFileSync(path.join(env.STANDIN_ROOT, 'proc/sys/kernel/random/boot_id'), `${require('node:crypto').randomUUID()}\n`);
    }
    model.save();
  }

  /** nmcli (nmcli(1)): `connection reload` reads the profile files (the model always does); `connection up id X` re-activates X from its profile. */
  function nmcli() {
    failIfAsked(args[1]);
    const model = net.load(dir, env);
    net.expireCheckpoint(model);
    if (args[0] !== 'connection' || !['reload', 'up'].includes(args[1])) {
      err(`nmcli stand-in: unsupported ${args.join(' ')}\n`);
      exit(2);
    }
    if (args[1] === 'up') {
      const id = args[args.length - 1];
      if (!model.profiles.ifaces.some((i) => i.name === id)) {
        err(`Error: unknown connection '${id}'.\n`);
        exit(10);
      }
      const fresh = net.render(model.lan, model.profiles);
      model.state.runtime = model.state.runtime.ifaces.some((i) => i.name === net.BR_EX) ? net.configureOvs(model.lan, fresh).runtime : fresh;
      model.save();
    }
  }

  function mount() {
    failIfAsked();
    const positional = args.filter((a, i) => !a.startsWith('-') && !['-o', '-t'].includes(args[i - 1]));
    const [device, target] = positional;
    const name = path.basename(device);
    const src = p('devices', name);
    if (!fs.existsSync(src)) {
      err(`mount: ${device}: special device does not exist.\n`);
      exit(32);
    }
    if (fs.existsSync(p('devices', `${name}.nodriver`))) {
      // util-linux 2.38 libmount/src/context_mount.c (mnt_context_get_mount_excode, ENODEV): the kernel has no such filesystem.
      const type = args[args.indexOf('-t') + 1];
      err(`mount: ${target}: unknown filesystem type '${type}'.\n`);
      exit(32);
    }
    if (fs.existsSync(p('devices', `${name}.unreadable`))) {
      err(`mount: ${target}: wrong fs type, bad option, bad superblock on ${device}, missing codepage or helper program, or other error.\n`);
      exit(32);
    }
    copyDir(src, target);
    writeJson(p('mounts.json'), { ...readJson(p('mounts.json'), {}), [target]: { device, options: args[args.indexOf('-o') + 1] } });
  }

  function umount() {
    failIfAsked();
    const target = args.filter((a) => !a.startsWith('-'))[0];
    const mounts = readJson(p('mounts.json'), {});
    if (!mounts[target]) {
      err(`umount: ${target}: not mounted.\n`);
      exit(32);
    }
    for (const e of fs.readdirSync(target)) fs.rmSync(path.join(target, e), { recursive: true, force: true });
    delete mounts[target];
    writeJson(p('mounts.json'), mounts);
  }

  function lsblk() {
    failIfAsked();
    // Without udev (as on these dev machines) lsblk shows no labels; $STANDIN_DIR/udev turns them on.
    const udev = fs.existsSync(p('udev'));
    out(JSON.stringify({ blockdevices: devices().map((d) => ({ name: d.name, label: udev ? d.label : null, fstype: udev ? d.fstype : null, path: d.path, uuid: udev ? d.uuid : null })) }));
  }

  function blkid() {
    failIfAsked();
    const blocks = devices()
      .filter((d) => d.label)
      .map((d) => `DEVNAME=${d.path}\nLABEL=${d.label}\nUUID=${d.uuid}\nTYPE=${d.fstype}`);
    if (blocks.length === 0) exit(2);
    out(`${blocks.join('\n\n')}\n`);
  }

  function ping() {
    const target = args[args.length - 1];
    const model = net.load(dir, env);
    net.expireCheckpoint(model);
    if (fs.existsSync(p('fail', 'ping')) || fs.existsSync(p('fail', `ping-${target}`)) || !net.reachable(model, target)) {
      out(`PING ${target} 56(84) bytes of data.\n\n--- ${target} ping statistics ---\n1 packets transmitted, 0 received, 100% packet loss, time 0ms\n`);
      exit(1);
    }
    out(`PING ${target} 56(84) bytes of data.\n64 bytes from ${target}: icmp_seq=1 ttl=64 time=0.042 ms\n`);
  }

  function ip() {
    const model = net.load(dir, env);
    net.expireCheckpoint(model);
    out(JSON.stringify(net.ipAddr(model)));
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
      if (!state.synchronised) return out(fixture('tracking-unsynced.txt'));
      const hex = state.source.split('.').map((n) => Number(n).toString(16).padStart(2, '0')).join('').toUpperCase();
      const off = `${Math.abs(state.offset).toFixed(9)} seconds ${state.offset >= 0 ? 'fast' : 'slow'} of NTP time`;
      return out(fixture('tracking-synced.txt').replace(/^(Reference ID\s*: ).*$/m, `$1${hex} (${state.source})`).replace(/^(System time\s*: ).*$/m, `$1${off}`));
    }
    if (verb === 'makestep') {
      if (!state.synchronised) {
        out(fixture('makestep-failure.txt'));
        exit(1);
      }
      state.offset = 0.000001;
    } else if (verb === 'add') {
      state.added = [...(state.added ?? []), args.slice(args.indexOf('add') + 1).join(' ')];
    } else {
      err(`chronyc stand-in: unsupported command ${verb}\n`);
      exit(1);
    }
    writeJson(file, state);
    out('200 OK\n');
  }
}

module.exports = { runTool };

// As a program (the tool server not running, or a test calling it directly): one call from this process's own
// name, arguments, environment and stdin. STANDIN_TOOL_NAME: a shell stand-in hands a call on under its own name.
if (require.main === module) {
  let stdin = '';
  try {
    if (!process.stdin.isTTY) stdin = fs.readFileSync(0, 'utf8');
  } catch {
    stdin = '';
  }
  const tool = process.env.STANDIN_TOOL_NAME ?? path.basename(process.argv[1]);
  runTool({ tool, args: process.argv.slice(2), env: process.env, stdin }).then((r) => {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    process.exitCode = r.code;
  });
}
