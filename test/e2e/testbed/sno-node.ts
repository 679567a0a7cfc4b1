// A relocatable single-node OpenShift on the testbed, for the agent's end-to-end scenarios (issue #7).
//
// What is real: systemd (PID 1), journald, systemctl, systemd-notify, mount/blkid, agetty's issue.d, ping and
// getent, the agent installed from `sno-reconfigure render machineconfig` through Ignition, `sno-reconfigure
// prepare` at the factory. Stand-ins only where the real thing cannot run here:
// - kubelet.service runs the cluster simulator inside the node (stand-ins/kubelet-standin): the API comes up
//   after kubelet starts and dies with the node on a power cut, as on a single node; kubelet's certificates
//   are /var/lib/kubelet/pki; the cluster persists on the node's disk (/var/lib/sim-cluster), like etcd;
// - the network is real (node-network.ts): eno1 with the installer's profile, Open vSwitch's br-ex built on it
//   at every boot by ovs-configuration.service (a configure-ovs stand-in), the testbed's NetworkManager model and
//   nmstatectl stand-in changing the real interfaces, and two LANs (factory, store) in namespaces of their own;
//   the machine has a private network namespace, so its API (on the port the seeded cluster got, kept across
//   boots) and its router (443) never meet another test's.
//
// The life of a node: factoryNode() installs the MachineConfig and the node's own units, creates the cluster
// (a running SNO: API up, kubelet certificates issued, Node Ready), boots the node at the factory LAN, runs
// `sno-reconfigure prepare`, and powers it off gracefully for shipping. The node is then "at the site": its
// LAN is the site's, and the next boot() is the technician powering it on.
import { execFileSync } from 'node:child_process';
import { chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, chmodSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument, stringify } from 'yaml';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { BANNER_PATH, DEFAULT_KUBECONFIG, DEFAULT_STATE_DIR, DONE_MARKER, KUBELET_HOLD_FILE, KUBELET_UNIT, STATE_FILES, UNIT_NAME } from '../../../src/paths';
import { STEPS } from '../../../src/steps/index';
import { createStore } from '../../sim/apiserver/index';
import { startSimulator, type SimDurations, type SimulatorOptions } from '../../sim/index';
import { csrRefileAtLeast } from '../../sim/cluster/options';
import { ensureBundle, PROJECT_ROOT } from '../../support/bundle';
import { signedMedia } from '../../support/signed-media';
import type { IgnConfig } from '../../support/ignition';
import type { Testbed } from './index';
import type { Bind, Machine } from './machine';
import type { NodeImage } from './node-image';
import { installNmstatectlOnRealNm } from './nmstatectl-standin';
import { pollUntil } from './proc';
import { FACTORY_LAN, LAN_ENV, NIC_MAC, nodeNetworkIgnition, persistentProfiles, plugCable, SITE_LAN, type Lan, type NodeNetworkOptions } from './node-network';
import { statusExitCode, STATUS_EXIT_PENDING, type StatusView } from '../../../src/engine/status';

const STAND_INS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stand-ins');

/** Where the project (simulator sources, node_modules with tsx) is bind-mounted read-only in the node. */
export const PROJECT_MOUNT = '/opt/sno-reconfigure-src';
/** The simulated cluster's home on the node's disk (state/ = its etcd; kubeconfigs/; control-url). */
export const SIM_DIR = '/var/lib/sim-cluster';
/** kubelet's certificate directory on RHCOS; a link into the simulator's state, where its kubelet keeps them. */
export const KUBELET_PKI = '/var/lib/kubelet/pki';
/** kubelet's bootstrap kubeconfig on RHCOS (checked by `prepare`). */
export const KUBELET_BOOTSTRAP_KUBECONFIG = '/etc/kubernetes/kubeconfig';
export { FACTORY_LAN, LAN_ENV, SITE_LAN, type Lan };

/** The project, and nothing else: everything the simulator reads (its CRD schemas too) is inside it. */
const PROJECT_BINDS: Bind[] = [{ hostPath: PROJECT_ROOT, nodePath: PROJECT_MOUNT, readOnly: true }, ...linkedNodeModules()];

/** A git worktree whose node_modules is a link to another clone's: that target too, at its own path, so the link resolves in the node. */
function linkedNodeModules(): Bind[] {
  const link = path.join(PROJECT_ROOT, 'node_modules');
  if (!lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) return [];
  const target = realpathSync(link);
  return [{ hostPath: target, nodePath: target, readOnly: true }];
}

export const CLUSTER = { clusterName: 'sno1', nodeName: 'sno1-node', factoryDomain: 'factory.example.com', version: '4.14.12' } as const;
/** The site's registry: resolvable through /etc/hosts (the site-config's verify.resolve checks it). */
export const SITE_REGISTRY = { name: 'registry.store42.example.com', address: '192.168.42.20' } as const;
export const SITE_DOMAIN = 'store42.example.com';

export interface SnoNodeOptions {
  /** Simulator time scale (default 0.005: a 6-minute rollout takes 1.8 s, kubelet re-files an unsigned CSR after 4.5 s). */
  timeScale?: number;
  /** Simulated durations (ms) to override, e.g. a slower API start to cut the power while waiting for it. */
  durations?: Partial<SimDurations>;
  /**
   * The podman runtime: the MachineConfig rendered with `--runtime podman --node-image` this image, which the
   * factory's registry (stands-ins/registry.cjs on the node, FACTORY_REGISTRY) serves. Default: the host runtime.
   */
  podman?: { image: NodeImage };
  /** ovn (default): br-ex built by ovs-configuration at every boot; sdn: an OpenShiftSDN-style node, no br-ex. */
  network?: NodeNetworkOptions['kind'];
  /**
   * model (default): the NetworkManager model and its stand-ins; real: the real NetworkManager with the configure-ovs
   * and nodeip-configuration stand-ins driving it (node-network.ts realNodeNetworkIgnition), `release` their release.
   */
  networkManager?: NodeNetworkOptions['networkManager'];
  release?: NodeNetworkOptions['release'];
  /**
   * Render with `--internal-ip` (the factory address, kept on br-ex by the product's dispatcher script), on the model
   * node with `--node-ip-pinning dropin` (it has no nodeip-configuration.service), on the real-NetworkManager node with
   * the default pinning (nodeip-configuration's hint). Without it, `--no-local-dns`:
   * `prepare` refuses a node-local DNS that would answer with the factory address, gone at the site.
   */
  internalIp?: boolean;
}

/** The node's stable internal IP when rendered with `internalIp`: its installed address on the factory LAN. */
export const INTERNAL_IP = `${FACTORY_LAN.nodeIp}/${FACTORY_LAN.prefix}`;

/** The factory's registry mirror, on the node itself (its network is private): plain HTTP, marked insecure. */
export const FACTORY_REGISTRY = '127.0.0.1:5000';
/** Where the registry stand-in logs each request (JSON lines), and where the image it serves is bound. */
export const REGISTRY_LOG = '/var/log/registry-standin/requests.jsonl';
const REGISTRY_DIR = '/var/lib/registry-standin';
const REGISTRY_UNIT = 'testbed-registry.service';

/** NAME@DIGEST of the image as the factory's registry serves it. */
export function nodeImageRef(image: NodeImage): string {
  return `${FACTORY_REGISTRY}/${image.repository}@${image.digest}`;
}

const machineConfigTexts = new Map<string, string>();

/** `sno-reconfigure render machineconfig` of the bundle under test: the host runtime, or podman with an image. */
export function renderedMachineConfig(podmanImage?: string, extraArgs: string[] = []): string {
  // The testbed's media are unsigned, as a factory that chose --allow-unsigned-media ships them.
  const args = [...(podmanImage ? ['--runtime', 'podman', '--node-image', podmanImage] : ['--runtime', 'host']), '--allow-unsigned-media', ...extraArgs];
  const key = args.join(' ');
  let text = machineConfigTexts.get(key);
  if (text === undefined) {
    text = execFileSync(process.execPath, [ensureBundle(), 'render', 'machineconfig', ...args], { encoding: 'utf8' });
    machineConfigTexts.set(key, text);
  }
  return text;
}

const KUBELET_SERVICE = `# Testbed stand-in for RHCOS's kubelet.service (test/e2e/testbed/sno-node.ts): the cluster simulator plays kubelet
# and the control plane it would start. Enabled, as on RHCOS; the agent's MachineConfig adds a hold drop-in.
[Unit]
Description=Kubernetes Kubelet (testbed stand-in: cluster simulator)
# RHCOS's kubelet.service: Requires=kubelet-dependencies.target, After=kubelet-dependencies.target (which
# ovs-configuration.service is RequiredBy)
Requires=kubelet-dependencies.target
After=kubelet-dependencies.target testbed-lan.service

[Service]
Type=notify
NotifyAccess=all
Environment=TMPDIR=/var/tmp/kubelet-standin
ExecStart=/usr/local/libexec/kubelet-standin
# RHCOS: Restart=always, RestartSec=10
Restart=always
RestartSec=2
TimeoutStartSec=120
TimeoutStopSec=20

[Install]
WantedBy=multi-user.target
`;

/**
 * The node's chronyd as RHCOS runs it (chronyd.service, /etc/chrony.conf), but with -x: it never adjusts this
 * test machine's clock. The factory's chrony.conf is RHEL 9's default; the agent replaces it at the site.
 */
const CHRONYD_SERVICE = `# Testbed stand-in for RHCOS's chronyd.service (test/e2e/testbed/sno-node.ts): the real chronyd, -x.
[Unit]
Description=NTP client/server (testbed: never sets the clock)
After=testbed-lan.service

[Service]
Type=forking
PIDFile=/run/chrony/chronyd.pid
ExecStart=/usr/sbin/chronyd -x -u root -f /etc/chrony.conf

[Install]
WantedBy=multi-user.target
`;
const FACTORY_CHRONY_CONF = 'pool 2.rhel.pool.ntp.org iburst\nsourcedir /run/chrony-dhcp\ndriftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\nkeyfile /etc/chrony.keys\nntsdumpdir /var/lib/chrony\nleapsectz right/UTC\nlogdir /var/log/chrony\n';
/** The site's NTP server, on the node's own loopback (the real chronyd serving its clock, -x). */
export const SITE_NTP = '127.0.0.1';
const SITE_NTP_SERVICE = `# Testbed: the site's NTP server (a real chronyd serving on ${SITE_NTP}:123, -x).
[Unit]
Description=Testbed site NTP server
After=testbed-lan.service

[Service]
ExecStart=/usr/sbin/chronyd -d -x -u root -f /etc/testbed/site-ntp.conf

[Install]
WantedBy=multi-user.target
`;
const SITE_NTP_CONF = `port 123\nbindaddress ${SITE_NTP}\nlocal stratum 8\nallow ${SITE_NTP}\nbindcmdaddress /\ncmdport 0\npidfile /run/testbed-site-ntp.pid\n`;

function dataUrl(text: string | Buffer): string {
  return `data:;base64,${Buffer.from(text).toString('base64')}`;
}

const REGISTRY_SERVICE = `# Testbed: the factory's registry mirror (test/e2e/testbed/stand-ins/registry.cjs), serving the Node image.
[Unit]
Description=Testbed registry mirror (stand-in)
After=testbed-lan.service

[Service]
ExecStart=/usr/bin/node /usr/local/libexec/registry-standin ${REGISTRY_DIR} ${FACTORY_REGISTRY} ${REGISTRY_LOG}

[Install]
WantedBy=multi-user.target
`;

/**
 * What the podman runtime needs at the factory besides the MachineConfig: the registry stand-in, podman told
 * that it speaks plain HTTP, and the kubelet's pull secret (on RHCOS the MCO writes it; here no auths needed).
 */
function podmanFactoryIgnition(): IgnConfig {
  const file = (p: string, text: string | Buffer, mode = 0o644) => ({ path: p, mode, overwrite: true, contents: { source: dataUrl(text) } });
  return {
    ignition: { version: '3.2.0' },
    storage: {
      files: [
        file('/usr/local/libexec/registry-standin', readFileSync(path.join(STAND_INS, 'registry.cjs')), 0o755),
        file('/etc/containers/registries.conf.d/50-testbed-registry.conf', `[[registry]]\nlocation = "${FACTORY_REGISTRY}"\ninsecure = true\n`),
        file('/var/lib/kubelet/config.json', '{"auths":{}}\n', 0o600),
      ],
    },
    systemd: { units: [{ name: REGISTRY_UNIT, enabled: true, contents: REGISTRY_SERVICE }] },
  };
}

/** What the node has besides the agent: kubelet (stand-in), its LAN, the site registry's name in /etc/hosts. */
function baseIgnition(simOptions: SimulatorOptions): IgnConfig {
  const file = (p: string, text: string | Buffer, mode = 0o644) => ({ path: p, mode, overwrite: true, contents: { source: dataUrl(text) } });
  const hosts = `127.0.0.1\tlocalhost\n127.0.1.1\t${CLUSTER.nodeName}\n::1\tlocalhost ip6-localhost ip6-loopback\n${SITE_REGISTRY.address}\t${SITE_REGISTRY.name}\n`;
  return {
    ignition: { version: '3.2.0' },
    storage: {
      files: [
        file('/usr/local/libexec/kubelet-standin', readFileSync(path.join(STAND_INS, 'kubelet-standin')), 0o755),
        file('/etc/kubelet-standin/options.json', `${JSON.stringify(simOptions, null, 2)}\n`),
        file('/etc/hosts', hosts),
        file('/etc/chrony.conf', FACTORY_CHRONY_CONF),
        file('/etc/testbed/site-ntp.conf', SITE_NTP_CONF),
      ],
    },
    systemd: {
      units: [
        { name: KUBELET_UNIT, enabled: true, contents: KUBELET_SERVICE },
        { name: 'chronyd.service', enabled: true, contents: CHRONYD_SERVICE },
        { name: 'testbed-site-ntp.service', enabled: true, contents: SITE_NTP_SERVICE },
      ],
    },
  };
}

/**
 * Retries `check` (assertions) until it passes or `timeoutMs` ends, then throws its last error. For what
 * settles a moment after the event a test waited for: journald reads a unit's stdout asynchronously, and the
 * agent shows a phase on StatusText, in its journal file and on the banner one after the other.
 */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() >= deadline) throw e;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** The podman runtime's launcher (src/render/podman.ts) speaks for itself with this prefix. */
const LAUNCHER_PREFIX = 'sno-reconfigure-podman:';
const LOG_SOURCES = new Set<string>([...STEPS.map((s) => s.name), 'api', 'csr']);

/** "<step>: <what happened>. What to do: <remedy>" back into its parts (the journal carries the priority). */
export function parseAgentSentence(message: string): NonNullable<AgentLogEntry['log']> {
  const at = message.indexOf('. What to do: ');
  const body = at < 0 ? message : message.slice(0, at);
  const colon = body.indexOf(': ');
  const source = colon > 0 ? body.slice(0, colon) : '';
  return {
    ...(LOG_SOURCES.has(source) ? { step: source, msg: body.slice(colon + 2) } : { msg: body }),
    ...(at < 0 ? {} : { remedy: message.slice(at + '. What to do: '.length) }),
  };
}

export interface AgentLogEntry {
  priority: number;
  message: string;
  identifier: string;
  pid: string;
  /** The agent's own line (not the launcher's, not systemd's), read back into its parts (src/log.ts prose). */
  log?: { msg: string; step?: string; remedy?: string };
}

export interface StatusJson {
  phase: string;
  status?: string;
  siteConfig?: { name?: string; digest?: string };
  starts?: number;
  steps: { name: string; state: string; attempts: number; error?: string }[];
  lastError?: { message: string; remedy?: string; step?: string; problems?: { path: string; message: string }[] };
  report?: string;
}

/** The agent's journal file (written atomically by the agent): what it is doing, read straight from the disk. */
export interface AgentJournal {
  phase: string;
  status?: string;
  digest?: string;
  starts: number;
  steps: Record<string, { state: string; attempts: number }>;
  lastError?: { message: string; step?: string };
}

export class SnoNode {
  constructor(
    readonly bed: Testbed,
    readonly machine: Machine,
    /** How the technician runs the agent's commands on this node: `sno-reconfigure`, or `sno-reconfigure-podman`. */
    readonly cli = 'sno-reconfigure',
    private readonly binds: Bind[] = PROJECT_BINDS,
  ) {}

  /** What `prepare` said at the factory (stdout, stderr, exit code). */
  factoryPrepare: { code: number; stdout: string; stderr: string } | undefined;

  /**
   * A second node from the same factory: a copy of this node's disk while it is off (e.g. right after factoryNode),
   * for cases that each need a prepared node of the same kind without each paying for the factory (install, seed,
   * boot, prepare, power-off). The copy is independent: its own disk, namespaces and LANs; binds into the disk's
   * directory (podman's container storage) point at the copy's.
   */
  async clone(): Promise<SnoNode> {
    const m = await this.bed.cloneMachine(this.machine);
    const from = this.machine.disk.dir;
    const binds = this.binds.map((b) => (b.hostPath === from || b.hostPath.startsWith(`${from}/`) ? { ...b, hostPath: path.join(m.disk.dir, path.relative(from, b.hostPath)) } : b));
    const node = new SnoNode(this.bed, m, this.cli, binds);
    node.factoryPrepare = this.factoryPrepare;
    return node;
  }

  /**
   * `prepare`, run as a technician does: once the cluster is healthy, which the dry run says (after a boot the API
   * comes up a little later). Returns the real run's outcome.
   */
  async prepare(): Promise<{ code: number; stdout: string; stderr: string }> {
    let dry = { code: -1, stdout: '', stderr: '' };
    await pollUntil(
      async () => {
        dry = await this.machine.exec([this.cli, 'prepare', '--dry-run'], { timeoutMs: 120_000 });
        return dry.code === 0 ? true : undefined;
      },
      90_000,
      () => new Error(`${this.machine.name}: prepare --dry-run kept refusing:\n${dry.stdout}${dry.stderr}`),
      500,
    );
    return this.machine.exec([this.cli, 'prepare'], { timeoutMs: 300_000 });
  }

  /** Powers the node on (private network, the project bind-mounted for the kubelet stand-in). */
  async boot(opts: { waitFor?: 'none' } = {}): Promise<void> {
    await this.machine.boot({ network: 'private', binds: this.binds, timeoutMs: 90_000, ...opts });
  }

  /** The LAN the node's cable is plugged into from its next boot on (the node powered off). */
  moveTo(lan: Lan): void {
    if (this.machine.running) throw new Error('moveTo: power the node off first, or use moveCable');
    this.machine.writeFile(LAN_ENV, `CABLE=${lan.name}\n`);
  }

  /** "Moving the cable": the NIC's peer goes to `lan` now if the node runs (and stays there at later boots). */
  async moveCable(lan: Lan): Promise<void> {
    await plugCable(this.machine, lan.name);
  }

  exists(nodePath: string): boolean {
    return existsSync(this.machine.running ? this.machine.livePath(nodePath) : this.machine.path(nodePath));
  }

  readIfExists(nodePath: string): string | undefined {
    return this.exists(nodePath) ? this.machine.readFile(nodePath) : undefined;
  }

  /** The agent's journal file, if a run has started. */
  agentJournal(): AgentJournal | undefined {
    const text = this.readIfExists(`${DEFAULT_STATE_DIR}/${STATE_FILES.journal}`);
    if (!text) return undefined;
    try {
      return JSON.parse(text) as AgentJournal;
    } catch {
      return undefined; // replaced while read: the next poll sees the new one
    }
  }

  /** Polls the agent's journal file until `accept` holds; the error shows the last one and the unit's log. */
  async waitForAgent(what: string, accept: (j: AgentJournal | undefined) => boolean, timeoutMs = 120_000, intervalMs = 25): Promise<AgentJournal | undefined> {
    let last: AgentJournal | undefined;
    await pollUntil(
      () => {
        last = this.agentJournal();
        return accept(last) ? true : undefined;
      },
      timeoutMs,
      async () => new Error(`${this.machine.name}: the agent did not reach "${what}" in ${timeoutMs} ms; journal file: ${JSON.stringify(last)}\n${await this.tail()}`),
      intervalMs,
    );
    return last;
  }

  /** The last lines of the agent's and kubelet's logs, for failure messages. */
  async tail(lines = 40): Promise<string> {
    if (!this.machine.running) return '(node is off)';
    const agent = (await this.machine.journalctl('-u', UNIT_NAME, '-n', String(lines), '-o', 'cat')).stdout;
    const kubelet = (await this.machine.journalctl('-u', KUBELET_UNIT, '-n', '15', '-o', 'cat')).stdout;
    return `--- journalctl -u ${UNIT_NAME}\n${agent}--- journalctl -u ${KUBELET_UNIT}\n${kubelet}`;
  }

  /** `journalctl -u sno-reconfigure.service -o json` (extra arguments: -p, -b, …), parsed. */
  async agentLog(...extra: string[]): Promise<AgentLogEntry[]> {
    const out = (await this.machine.journalctl('-u', UNIT_NAME, '-o', 'json', ...extra)).stdout;
    return out
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const e = JSON.parse(l) as Record<string, unknown>;
        const raw = e.MESSAGE;
        const message = typeof raw === 'string' ? raw : Array.isArray(raw) ? Buffer.from(raw as number[]).toString('utf8') : '';
        const identifier = String(e.SYSLOG_IDENTIFIER ?? '');
        const log = identifier === 'sno-reconfigure' && !message.startsWith(LAUNCHER_PREFIX) ? parseAgentSentence(message) : undefined;
        return { priority: Number(e.PRIORITY), message, identifier, pid: String(e._PID ?? ''), ...(log ? { log } : {}) };
      });
  }

  /** `sno-reconfigure status --json` on the node; its exit code must be the one its phase documents. */
  async status(): Promise<StatusJson> {
    const res = await this.statusCommand(['--json']);
    const view = JSON.parse(res.stdout) as StatusJson;
    const expected = statusExitCode(view.phase as Parameters<typeof statusExitCode>[0], view.lastError as StatusView['lastError']);
    if (res.code !== expected) throw new Error(`sno-reconfigure status exited ${res.code} for phase ${view.phase}, expected ${expected}`);
    return view;
  }

  /** `sno-reconfigure status` as the technician reads it. */
  async statusText(): Promise<string> {
    return (await this.statusCommand([])).stdout;
  }

  /** Exits 0 done, 1 failed or refused, 3 pending (the command-line contract); anything else is an error. */
  private async statusCommand(args: string[]): Promise<{ code: number; stdout: string }> {
    const res = await this.machine.exec([this.cli, 'status', ...args], { timeoutMs: 30_000 });
    if (![0, 1, STATUS_EXIT_PENDING].includes(res.code ?? -1)) throw new Error(`sno-reconfigure status failed (exit ${res.code}): ${res.stderr}`);
    return { code: res.code ?? -1, stdout: res.stdout };
  }

  async unit(name: string, props: string[]): Promise<Record<string, string>> {
    return this.machine.unitProperties(name, props);
  }

  /**
   * Samples systemd's StatusText of the agent's unit (what `systemctl status` shows) until stop(): the distinct
   * values in the order seen. Sampling can miss a phase shorter than the interval; it never invents one.
   */
  sampleStatusText(intervalMs = 100): { stop(): Promise<string[]> } {
    const seen: string[] = [];
    let running = true;
    const loop = (async () => {
      // Across reboots (the agent's own, for the early network phase): while the node is down there is nothing to read.
      while (running) {
        if (!this.machine.running) {
          await new Promise((r) => setTimeout(r, intervalMs));
          continue;
        }
        const res = await this.machine.exec(['systemctl', 'show', '-p', 'StatusText', '--value', UNIT_NAME], { timeoutMs: 10_000 }).catch(() => undefined);
        const text = res?.code === 0 ? res.stdout.trim() : '';
        if (text && seen[seen.length - 1] !== text) seen.push(text);
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
        return seen;
      },
    };
  }

  /** nmstatectl calls so far (the stand-in's log): `apply --no-commit`, `commit`, `rollback`, … */
  nmstateCalls(): string[] {
    const text = this.readIfExists('/var/log/nmstate-standin/calls.jsonl') ?? '';
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { argv?: string[] })
      .flatMap((e) => (e.argv ? [e.argv] : [])) // the checkpoint's own timer is an event, not a call
      .map((argv) => argv.filter((a) => !a.startsWith('/') && a !== '-' && !/^\d+$/.test(a) && a !== '--timeout').join(' '));
  }

  /** Waits until the agent's run ended in success: done marker, unit disabled and inactive. */
  async waitForSuccess(timeoutMs = 180_000): Promise<void> {
    await this.waitForAgent('succeeded', (j) => j?.phase === 'succeeded', timeoutMs, 200);
    await this.machine.waitForUnit(UNIT_NAME, ['ActiveState', 'UnitFileState'], (u) => u.ActiveState === 'inactive' && u.UnitFileState === 'disabled', 60_000);
  }

  /** The console banner's text without its timestamp line. */
  banner(): string | undefined {
    return this.readIfExists(BANNER_PATH)
      ?.split('\n')
      .filter((l) => !/^ \(\d{4}-\d{2}-\d{2}T/.test(l))
      .join('\n');
  }

  /** The persisted cluster (the simulator's etcd on the node's disk), read on the host. */
  clusterStore() {
    const file = this.machine.path(`${SIM_DIR}/state/store.json`);
    return createStore({ clusterVersion: CLUSTER.version, persistPath: file });
  }

  /**
   * What a finished relocation leaves behind, without what legitimately differs between runs (times, CSR names,
   * attempt counts): the node's units, files and network, the report, and the cluster's configuration.
   */
  async endState(): Promise<Record<string, unknown>> {
    const m = this.machine;
    const units: Record<string, Record<string, string>> = {};
    for (const u of [UNIT_NAME, KUBELET_UNIT]) units[u] = await this.unit(u, ['UnitFileState', 'ActiveState', 'LoadState']);
    const report = JSON.parse(m.readFile(`${DEFAULT_STATE_DIR}/${STATE_FILES.report}`)) as { result: string; siteConfig: { name: string; digest: string }; steps: { name: string; state: string }[] };
    const done = JSON.parse(m.readFile(DONE_MARKER)) as { siteConfig: string; digest: string };
    const serving = new X509Certificate(m.readFile(`${KUBELET_PKI}/kubelet-server-current.pem`));
    return {
      units,
      holdFile: this.exists(KUBELET_HOLD_FILE),
      doneMarker: { siteConfig: done.siteConfig, digest: done.digest },
      // Each node's cluster issued its own certificates: compare the hand-off kubeconfig's expiry as a date, not which.
      banner: this.banner()?.replace(/expires \d{4}-\d\d-\d\dT[\d:.]+Z/, 'expires <NotAfter>'),
      // the device the stick got (loop0, loop3…) is the test host's business, not the node's state
      report: { result: report.result, siteConfig: JSON.parse(JSON.stringify(report.siteConfig).replace(/\/dev\/loop\d+/g, '/dev/loopN')) as unknown, steps: report.steps.map((s) => `${s.name}:${s.state}`) },
      network: persistentProfiles(m),
      kubeletServingCert: { subject: serving.subject, ips: serving.subjectAltName },
      cluster: clusterFacts(this.clusterStore()),
    };
  }
}

type Store = ReturnType<typeof createStore>;
type Cond = { type: string; status: string };
const conditions = (o: KubeObject | undefined): Record<string, string> =>
  Object.fromEntries((((o?.status as { conditions?: Cond[] } | undefined)?.conditions ?? []) as Cond[]).map((c) => [c.type, c.status]).sort());

/** The cluster configuration a relocation may change, and its health; names and keys, never secret values. */
export function clusterFacts(store: Store): Record<string, unknown> {
  const spec = (o: KubeObject | undefined) => (o as { spec?: unknown } | undefined)?.spec;
  const csrs = store.list(R.csrs) as (KubeObject & { spec?: { username?: string }; status?: { conditions?: { type: string; reason?: string }[] } })[];
  const pullSecret = store.get(R.secrets, 'pull-secret', 'openshift-config') as { data?: Record<string, string> } | undefined;
  const dockerconfig = pullSecret?.data?.['.dockerconfigjson'];
  const auths = dockerconfig ? Object.keys((JSON.parse(Buffer.from(dockerconfig, 'base64').toString('utf8')) as { auths?: Record<string, unknown> }).auths ?? {}).sort() : [];
  return {
    dns: spec(store.get(R.dnses, 'cluster')),
    ingress: spec(store.get(R.ingresses, 'cluster')),
    apiServer: spec(store.get(R.apiServers, 'cluster')),
    image: spec(store.get(R.images, 'cluster')),
    defaultIngressController: spec(store.get(R.ingressControllers, 'default', 'openshift-ingress-operator')),
    imageDigestMirrorSets: store.list(R.imageDigestMirrorSets).map((o) => ({ name: o.metadata?.name, spec: spec(o) })),
    pullSecretRegistries: auths,
    clusterVersion: conditions(store.get(R.clusterVersions, 'version')),
    clusterOperators: Object.fromEntries(store.list(R.clusterOperators).map((co) => [co.metadata?.name, conditions(co)])),
    node: conditions(store.get(R.nodes, CLUSTER.nodeName)),
    pendingCsrs: csrs.filter((c) => !(c.status?.conditions ?? []).some((x) => x.type === 'Approved' || x.type === 'Denied')).map((c) => c.spec?.username),
    approvedBy: [...new Set(csrs.flatMap((c) => (c.status?.conditions ?? []).filter((x) => x.type === 'Approved').map((x) => x.reason)))].sort(),
  };
}

/** The site-config the technician brings (YAML), for this cluster and the site LAN. */
/** The key the site's technicians log in with (spec.ssh). */
export const SITE_SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILIuxglGbYZ7y5raTu96j18a5ek7uLZT+hcz5uSD8a8G field-ops@store42.example.com';

export function siteConfigYaml(opts: { name?: string; spec?: Record<string, unknown> } = {}): string {
  const registryPort = `${SITE_REGISTRY.name}:8443`;
  const spec: Record<string, unknown> = {
    clusterName: CLUSTER.clusterName,
    hostname: CLUSTER.nodeName,
    baseDomain: SITE_DOMAIN,
    network: {
      nmstate: {
        interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: SITE_LAN.nodeIp, 'prefix-length': SITE_LAN.prefix }] } }],
        routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': SITE_LAN.gateway, 'next-hop-interface': 'eno1' }] },
        'dns-resolver': { config: { server: [SITE_LAN.gateway] } },
      },
      verify: { ping: [SITE_LAN.gateway], resolve: [SITE_REGISTRY.name] },
    },
    pullSecret: { auths: { [registryPort]: { auth: Buffer.from('store42:not-a-real-password').toString('base64'), email: 'ops@store42.example.com' } } },
    imageDigestMirrors: [{ source: 'quay.io/openshift-release-dev/ocp-release', mirrors: [`${registryPort}/ocp/release`] }],
    // Short waits: the simulated cluster is fast, and a test must fail in minutes, not the field's 45.
    timeouts: { network: '2m', clock: '1m', kubelet: '2m', apiReady: '3m', csr: '3m', settle: '5m', settleStability: '2s' },
    ...opts.spec,
  };
  return stringify({ apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name: opts.name ?? 'store-0042' }, spec });
}

/**
 * The files of a signed stick for this machine: a fresh signing key trusted on the node (as a factory installs it),
 * bound to the machine by its NIC's MAC (the testbed has no DMI serial or UUID) with an issue date, every other file
 * pinned. What unsigned media may not carry — SSH keys, a proxy, a CA — needs one (src/siteconfig/trust.ts).
 */
export function signedStickFiles(m: Machine, files: Record<string, string>): Record<string, string> {
  const doc = parseDocument(files['site-config.yaml'] ?? '');
  doc.setIn(['spec', 'match'], { macAddress: NIC_MAC.toLowerCase() });
  const root = m.running ? m.livePath('/') : m.path('/');
  return signedMedia(root, { ...files, 'site-config.yaml': doc.toString() }, Object.keys(files).filter((f) => f !== 'site-config.yaml'));
}

/** RHCOS's `core` user as Ignition leaves it (uid 1000, home under /var/home), with the MCD's key fragment. */
export const CORE = { uid: 1000, gid: 1000, home: '/var/home/core' } as const;
function addCoreUser(m: Machine): void {
  m.writeFile('/etc/passwd', `${m.readFile('/etc/passwd')}core:x:${CORE.uid}:${CORE.gid}:CoreOS Admin:${CORE.home}:/bin/bash\n`);
  m.writeFile('/etc/group', `${m.readFile('/etc/group')}core:x:${CORE.gid}:\n`);
  const ssh = `${CORE.home}/.ssh`;
  for (const dir of [CORE.home, ssh, `${ssh}/authorized_keys.d`]) {
    mkdirSync(m.path(dir), { recursive: true, mode: 0o700 });
    chownSync(m.path(dir), CORE.uid, CORE.gid);
  }
  m.writeFile(`${ssh}/authorized_keys.d/ignition`, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFactoryKeyForSimulatedSNO factory@example.com\n', 0o600);
  chownSync(m.path(`${ssh}/authorized_keys.d/ignition`), CORE.uid, CORE.gid);
}

/** Seeds a running cluster on the node's disk, as the factory installation left it; the kubeconfigs where RHCOS has them. */
async function seedCluster(m: Machine, simOptions: SimulatorOptions): Promise<void> {
  const dir = m.path(SIM_DIR);
  const sim = await startSimulator({ ...simOptions, dir, stateDir: path.join(dir, 'state'), kubelet: 'running' });
  try {
    for (const [from, to] of [
      [sim.kubeconfigs.localhost, DEFAULT_KUBECONFIG],
      [sim.kubeconfigs.bootstrap, KUBELET_BOOTSTRAP_KUBECONFIG],
    ] as const) {
      mkdirSync(path.dirname(m.path(to)), { recursive: true });
      copyFileSync(from, m.path(to));
      chmodSync(m.path(to), 0o600);
    }
  } finally {
    await sim.stop();
  }
  mkdirSync(path.dirname(m.path(KUBELET_PKI)), { recursive: true });
  symlinkSync(path.posix.relative(path.posix.dirname(KUBELET_PKI), `${SIM_DIR}/state/kubelet/pki`), m.path(KUBELET_PKI));
}

/**
 * A node as it leaves the factory: agent installed from the MachineConfig, cluster running, `sno-reconfigure
 * prepare` done, powered off gracefully, and moved to the site LAN. The next boot() is the first at the site.
 */
export async function factoryNode(bed: Testbed, opts: SnoNodeOptions = {}): Promise<SnoNode> {
  const realNm = opts.networkManager === 'real';
  // the model-based nmstatectl on a model node; on a real-NetworkManager node the one on its D-Bus API
  const m = await bed.machine({ hostname: CLUSTER.nodeName, realNetworkManager: realNm, nmstatectl: !realNm });
  if (realNm) installNmstatectlOnRealNm(m.root);
  const podman = opts.podman;
  // The model node has no nodeip-configuration: kubelet's node IP is pinned by the agent's drop-in. The real-NetworkManager
  // node runs nodeip-configuration (stand-ins/nodeip-configuration.cjs): the product's default, its hint.
  const internalIpArgs = realNm ? ['--internal-ip', INTERNAL_IP] : ['--internal-ip', INTERNAL_IP, '--node-ip-pinning', 'dropin'];
  const installed = await bed.installMachineConfig(m, renderedMachineConfig(podman ? nodeImageRef(podman.image) : undefined, opts.internalIp ? internalIpArgs : ['--no-local-dns']));
  if (!installed.units.includes(UNIT_NAME)) throw new Error(`the rendered MachineConfig installed no ${UNIT_NAME}: ${JSON.stringify(installed)}`);
  const simOptions: SimulatorOptions = {
    clusterName: CLUSTER.clusterName,
    baseDomain: CLUSTER.factoryDomain,
    nodeName: CLUSTER.nodeName,
    nodeIPs: [FACTORY_LAN.nodeIp],
    version: CLUSTER.version,
    timeScale: opts.timeScale ?? 0.005,
    durations: { csrRefile: csrRefileAtLeast(60_000, opts.timeScale ?? 0.005), ...opts.durations },
  };
  await bed.installIgnition(m, baseIgnition(simOptions));
  await bed.installIgnition(
    m,
    nodeNetworkIgnition({
      kind: opts.network ?? 'ovn',
      cable: 'factory',
      networkManager: opts.networkManager ?? 'model',
      ...(opts.release ? { release: opts.release } : {}),
      // on the real NetworkManager an OpenShiftSDN-style node is one without ovs-configuration: no br-ex
      ...(realNm && opts.network === 'sdn' ? { ovsConfigurationAtBoot: false } : {}),
    }),
  );
  addCoreUser(m);
  let binds: Bind[] = PROJECT_BINDS;
  if (podman) {
    await bed.installIgnition(m, podmanFactoryIgnition());
    // Container storage cannot be an overlay on the node's overlayfs disk: a directory of the host's own
    // filesystem, kept with the disk (so it persists across boots like /var/lib/containers does).
    const storage = path.join(m.disk.dir, 'containers');
    mkdirSync(storage, { recursive: true });
    binds = [...PROJECT_BINDS, { hostPath: podman.image.dir, nodePath: REGISTRY_DIR, readOnly: true }, { hostPath: storage, nodePath: '/var/lib/containers' }];
  }
  await seedCluster(m, simOptions);
  const node = new SnoNode(bed, m, podman ? 'sno-reconfigure-podman' : 'sno-reconfigure', binds);
  await node.boot();
  await m.waitForUnit(KUBELET_UNIT, ['ActiveState'], (u) => u.ActiveState === 'active', 60_000);
  const prepared = await node.prepare();
  if (prepared.code !== 0 || !prepared.stdout.includes('Prepared.')) {
    const failed = (await m.systemctl('--failed', '--no-legend', '--plain')).stdout;
    const journal = (await m.journalctl('-b', '-p', 'warning', '-n', '30', '-o', 'short-monotonic')).stdout;
    throw new Error(`factory: ${node.cli} prepare failed (exit ${prepared.code}):\n${prepared.stdout}${prepared.stderr}\nfailed units:\n${failed}\nlast warnings of the boot:\n${journal}`);
  }
  node.factoryPrepare = prepared;
  const off = await m.shutdown(60_000);
  if (!off.graceful) throw new Error('factory: the node did not power off gracefully');
  node.moveTo(SITE_LAN);
  // The site has no registry: from now on the image must come from the node's own storage or archive.
  if (podman) rmSync(m.path(`/etc/systemd/system/multi-user.target.wants/${REGISTRY_UNIT}`));
  return node;
}

