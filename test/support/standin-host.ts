// A temp node for tests of the agent: a host root, the stand-in host tools on PATH, and helpers to attach
// "volumes", inject failures and read back what the agent asked the host to do.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach } from 'node:test';
import { LocalHost } from '../../src/host/host';
import { KUBELET_HOLD_FILE } from '../../src/paths';
import { ensureBundle } from './bundle';

const TOOL_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stand-ins', 'host-tool.cjs');
/** The simplest tools are a shell script, not a Node start per call (stand-ins/shell-tools.sh). */
const SHELL_TOOLS_SCRIPT = path.join(path.dirname(TOOL_SCRIPT), 'shell-tools.sh');
const SHELL_TOOLS = ['agetty', 'systemd-notify', 'dig', 'getent', 'lsblk', 'blkid'];
/** The others: a bash client that hands the call to this process's tool server (stand-ins/tool-server.cjs). */
const TOOL_CLIENT_SCRIPT = path.join(path.dirname(TOOL_SCRIPT), 'tool-client.sh');
const TOOL_SERVER_SCRIPT = path.join(path.dirname(TOOL_SCRIPT), 'tool-server.cjs');
export const STAND_IN_TOOLS = ['systemctl', 'nmstatectl', 'mount', 'umount', 'lsblk', 'blkid', 'ping', 'getent', 'dig', 'ip', 'chronyc', 'systemd-notify', 'agetty', 'node-power-cycle', 'nmcli'];

let toolServerPortFile: string | undefined;
/**
 * The file naming the port of this process's tool server, started at the first stand-in node: a Node process of its
 * own (a test may call a tool synchronously, which a server on this event loop could not answer) that ends when
 * this process does (its stdin closes). Until it listens, calls run in a Node process each, as tool-client.sh says.
 */
function toolServer(): string {
  if (toolServerPortFile !== undefined) return toolServerPortFile;
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-tool-server-'));
  const portFile = path.join(dir, 'port');
  const server = spawn(process.execPath, [TOOL_SERVER_SCRIPT, portFile], { stdio: ['pipe', 'ignore', 'inherit'] });
  server.unref();
  (server.stdin as Socket).unref();
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  toolServerPortFile = portFile;
  return portFile;
}

/**
 * The stand-in node's wire (test/support/stand-ins/network-model.cjs): its NICs, whether it is an OVN-Kubernetes
 * node (the first NIC a port of br-ex, rebuilt by ovs-configuration.service) or an SDN one, the factory settings it
 * was installed with, and the store LAN its cable is in now (subnets, the hosts that answer, DHCP leases, a VLAN tag).
 */
export interface StandInLan {
  nics: string[];
  ovn: boolean;
  factory: { address: string; prefix: number; gateway: string; dhcp?: boolean };
  store: { subnets: string[]; hosts: string[]; vlan?: number; dhcp?: { ipv4?: { address: string; gateway: string }; ipv6?: { address: string; gateway: string } } };
}

/** The default wire: two NICs, OVN, installed at the factory on 172.31.250.0/24, now cabled into the store's /24 of `siteAddress`. */
export function defaultLan(siteAddress: string): StandInLan {
  const net = siteAddress.replace(/\.\d+$/, '');
  return {
    nics: ['eno1', 'eno2'],
    ovn: true,
    factory: { address: '172.31.250.10', prefix: 24, gateway: '172.31.250.1' },
    store: { subnets: [`${net}.0/24`], hosts: [`${net}.1`], dhcp: { ipv4: { address: `${siteAddress}/24`, gateway: `${net}.1` } } },
  };
}

export interface ToolCall {
  tool: string;
  args: string[];
  time: number;
  env: { NOTIFY_SOCKET?: string };
}

export interface StandInNode {
  /** Temp dir holding root/, bin/ and standin/. */
  dir: string;
  root: string;
  bin: string;
  standinDir: string;
  /** Environment for the agent: stand-ins first on PATH. */
  env: NodeJS.ProcessEnv;
  calls(tool?: string): ToolCall[];
  /** Make `tool` (or `tool-verb`) fail; content = its stderr. */
  fail(name: string, stderr?: string): void;
  heal(name: string): void;
  /** Make `tool` (or `tool-verb`, e.g. systemctl-disable) hang until the returned release() is called. */
  hold(name: string): () => void;
  /** A block device with a filesystem label holding `files` (relative path → content). */
  /** A labelled volume; `uuid`: its filesystem UUID (UUID-<name> when not given; two sticks cloned from one image share one). */
  attachVolume(name: string, label: string, files: Record<string, string | Buffer>, opts?: { uuid?: string }): void;
  detachVolume(name: string): void;
  units(): Record<string, { enabled: string; active: string }>;
  nmstateHistory(): string[];
  /** The node's network now: `nmstatectl show`'s interfaces and routes, the persistent profiles, a checkpoint if any. */
  network(): { runtime: { ifaces: Record<string, unknown>[]; routes: Record<string, unknown>[] }; profiles: { ifaces: Record<string, unknown>[] }; checkpoint?: unknown };
  /** configure-ovs runs (one line each: rebuilt br-ex / failed: why). */
  configureOvsRuns(): string[];
  /**
   * A power cut and boot: the checkpoint is lost, NetworkManager brings the profiles up, the agent's early network
   * phase runs (its journal lines returned), then configure-ovs builds br-ex from the persistent profiles.
   */
  powerCycle(): string;
  /** The boot up to the early network phase (checkpoint lost, the profiles up, no br-ex), and the rest of it (configure-ovs). */
  bootUntilEarlyPhase(): void;
  finishBoot(): void;
  /** The agent asked for a reboot (`systemctl reboot`) and the boot has not been played yet. */
  rebootRequested(): boolean;
  /** Re-cables the node (a new wire); the network state is kept. */
  setLan(lan: StandInLan): void;
  /** chronyd as the stand-in chronyc reports it (offset in seconds, positive when the clock is ahead). */
  setChrony(state: { synchronised: boolean; source?: string; offset?: number }): void;
  chrony(): { synchronised: boolean; source: string; offset: number; added: string[] };
  mounts(): Record<string, { device: string; options: string }>;
  cleanup(): void;
}

/**
 * `kubelet`: how the node's kubelet is — 'held' (what `prepare` leaves with our MachineConfig: enabled, kept
 * down by the hold file), 'masked' (a node prepared by hand), or 'running' (a factory node before `prepare`).
 */
/** The key `core` has at the factory (as the simulator's 99-master-ssh holds it). */
export const FACTORY_SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFactoryKeyForSimulatedSNO factory@example.com';

export function createStandInNode(opts: { nodeName?: string; nodeIps?: string[]; simControlUrl?: string; extraEnv?: NodeJS.ProcessEnv; kubelet?: 'held' | 'masked' | 'running'; siteAddress?: string; lan?: StandInLan } = {}): StandInNode {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-node-'));
  const root = path.join(dir, 'root');
  const bin = path.join(dir, 'bin');
  const standinDir = path.join(dir, 'standin');
  for (const d of [root, bin, standinDir, path.join(standinDir, 'fail'), path.join(standinDir, 'devices'), path.join(standinDir, 'net'), path.join(standinDir, 'nmstate'), path.join(root, 'etc'), path.join(root, 'run')]) mkdirSync(d, { recursive: true });
  writeFileSync(path.join(standinDir, 'net', 'lan.json'), JSON.stringify(opts.lan ?? defaultLan(opts.siteAddress ?? opts.nodeIps?.[0] ?? '192.168.42.10')));
  chmodSync(TOOL_SCRIPT, 0o755);
  chmodSync(SHELL_TOOLS_SCRIPT, 0o755);
  chmodSync(TOOL_CLIENT_SCRIPT, 0o755);
  for (const t of STAND_IN_TOOLS) symlinkSync(SHELL_TOOLS.includes(t) ? SHELL_TOOLS_SCRIPT : TOOL_CLIENT_SCRIPT, path.join(bin, t));
  writeFileSync(path.join(root, 'etc', 'hostname'), `${opts.nodeName ?? 'sno1-node'}\n`);
  // The kernel's boot ID, a new one at each boot (node-power-cycle).
  mkdirSync(path.join(root, 'proc/sys/kernel/random'), { recursive: true });
  writeFileSync(path.join(root, 'proc/sys/kernel/random/boot_id'), `${randomUUID()}\n`);
  // RHCOS's users: Ignition creates `core` at first boot, its home under /var/home (/home links there), and the
  // MCD keeps the cluster's keys in authorized_keys.d/ignition (RHCOS 9).
  writeFileSync(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:CoreOS Admin:/var/home/core:/bin/bash\n');
  mkdirSync(path.join(root, 'var/home/core/.ssh/authorized_keys.d'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(root, 'var/home/core/.ssh/authorized_keys.d/ignition'), `${FACTORY_SSH_KEY}\n`, { mode: 0o600 });
  const kubelet = opts.kubelet ?? 'held';
  writeFileSync(path.join(standinDir, 'units.json'), JSON.stringify({ 'kubelet.service': { enabled: kubelet === 'masked' ? 'masked' : 'enabled', active: kubelet === 'running' ? 'active' : 'inactive' }, 'sno-reconfigure.service': { enabled: 'enabled', active: 'active' } }));
  if (kubelet === 'held') {
    mkdirSync(path.join(root, 'etc', 'sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(root, KUBELET_HOLD_FILE), 'held by sno-reconfigure prepare\n');
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    STANDIN_DIR: standinDir,
    STANDIN_TOOL_SERVER: toolServer(),
    STANDIN_ROOT: root,
    STANDIN_NODE_IPS: (opts.nodeIps ?? ['192.168.42.10']).join(','),
    // The tests and the demo read the agent's records as JSON lines (src/log.ts); a technician's terminal gets sentences.
    SNO_RECONFIGURE_LOG_FORMAT: 'json',
    ...(opts.simControlUrl ? { SIM_CONTROL_URL: opts.simControlUrl } : {}),
    ...opts.extraEnv,
  };
  delete env.NOTIFY_SOCKET;
  delete env.WATCHDOG_USEC;
  delete env.JOURNAL_STREAM;
  const bootPhase = (args: string[]) => {
    const res = spawnSync(path.join(bin, 'node-power-cycle'), args, { env, encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`power cycle failed: ${res.stderr}`);
  };
  const readLines = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);
  return {
    dir,
    root,
    bin,
    standinDir,
    env,
    calls: (tool) => readLines(path.join(standinDir, 'calls.jsonl')).map((l) => JSON.parse(l) as ToolCall).filter((c) => !tool || c.tool === tool),
    fail: (name, stderr = '') => writeFileSync(path.join(standinDir, 'fail', name), stderr),
    heal: (name) => rmSync(path.join(standinDir, 'fail', name), { force: true }),
    hold: (name) => {
      mkdirSync(path.join(standinDir, 'hold'), { recursive: true });
      writeFileSync(path.join(standinDir, 'hold', name), '');
      return () => rmSync(path.join(standinDir, 'hold', name), { force: true });
    },
    attachVolume: (name, label, files, opts) => {
      const d = path.join(standinDir, 'devices', name);
      for (const [rel, content] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(d, rel)), { recursive: true });
        writeFileSync(path.join(d, rel), content);
      }
      writeFileSync(path.join(standinDir, 'devices', `${name}.label`), label);
      if (opts?.uuid !== undefined) writeFileSync(path.join(standinDir, 'devices', `${name}.uuid`), opts.uuid);
      // The kernel's device node (devtmpfs), there while the stick is: a pulled stick has none.
      mkdirSync(path.join(root, 'dev'), { recursive: true });
      if (!existsSync(path.join(root, 'dev', name))) writeFileSync(path.join(root, 'dev', name), '');
    },
    detachVolume: (name) => {
      rmSync(path.join(standinDir, 'devices', name), { recursive: true, force: true });
      rmSync(path.join(standinDir, 'devices', `${name}.label`), { force: true });
      rmSync(path.join(standinDir, 'devices', `${name}.uuid`), { force: true });
      rmSync(path.join(root, 'dev', name), { force: true });
    },
    units: () => {
      const f = path.join(standinDir, 'units.json');
      return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as Record<string, { enabled: string; active: string }>) : {};
    },
    nmstateHistory: () => readLines(path.join(standinDir, 'nmstate', 'history.log')),
    network: () => {
      spawnSync(path.join(bin, 'ip'), ['-j', 'addr'], { env });
      const profileDir = path.join(root, 'etc/NetworkManager/system-connections');
      const ifaces = (existsSync(profileDir) ? readdirSync(profileDir).sort() : [])
        .map((f) => /^state=(.*)$/m.exec(readFileSync(path.join(profileDir, f), 'utf8'))?.[1])
        .flatMap((json) => (json ? [(JSON.parse(json) as { interface: Record<string, unknown> }).interface] : []));
      return { ...JSON.parse(readFileSync(path.join(standinDir, 'net', 'state.json'), 'utf8')), profiles: { ifaces } };
    },
    setLan: (lan) => {
      writeFileSync(path.join(standinDir, 'net', 'lan.json'), JSON.stringify(lan));
      rmSync(path.join(standinDir, 'net', 'state.json'), { force: true });
    },
    configureOvsRuns: () => readLines(path.join(standinDir, 'net', 'configure-ovs.log')),
    powerCycle: () => {
      bootPhase([]);
      // sno-reconfigure-network.service: after NetworkManager, before ovs-configuration (src/render/unit.ts).
      // Exit 1 (the known good not brought back) fails the unit, not the boot: what it said is returned.
      const early = spawnSync(process.execPath, [ensureBundle(), 'early-network', '--root', root], { env, encoding: 'utf8', timeout: 10 * 60_000 });
      if (early.status !== 0 && early.status !== 1) throw new Error(`the early network phase crashed (exit ${early.status}): ${early.stdout.slice(-2000)}${early.stderr.slice(-2000)}`);
      bootPhase(['--configure-ovs']);
      return early.stdout;
    },
    bootUntilEarlyPhase: () => bootPhase([]),
    finishBoot: () => bootPhase(['--configure-ovs']),
    rebootRequested: () => existsSync(path.join(standinDir, 'reboot-requested')),
    setChrony: (state) => writeFileSync(path.join(standinDir, 'chrony.json'), JSON.stringify({ source: '192.0.2.123', offset: 0.000012, added: [], ...state })),
    chrony: () => {
      const f = path.join(standinDir, 'chrony.json');
      return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : { synchronised: true, source: '192.0.2.123', offset: 0.000012, added: [] };
    },
    mounts: () => {
      const f = path.join(standinDir, 'mounts.json');
      return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as Record<string, { device: string; options: string }>) : {};
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A new stand-in node, and a LocalHost on its root, before each test of the enclosing suite; removed after it. */
export function standInNodeEachTest(use: (node: StandInNode, host: LocalHost) => void): void {
  let node: StandInNode | undefined;
  beforeEach(() => {
    node = createStandInNode();
    use(node, new LocalHost({ root: node.root, env: node.env }));
  });
  afterEach(() => node?.cleanup());
}
