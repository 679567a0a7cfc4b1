// A node under a real service manager: /lib/systemd/systemd as PID 1 of new PID, mount, UTS, IPC and cgroup
// namespaces, chrooted into the node's rootfs (DESIGN.md section 7). Measured here: boot to `running` in
// 0.5-1 s (systemd-analyze: 0.25-0.8 s of userspace). Deviations from the design's recipe, and why:
// - cgroup: a cgroup namespace rooted at a per-machine cgroup v2 directory with cgroup2 mounted on
//   /sys/fs/cgroup (unified, like RHEL 9), instead of the host's hybrid hierarchies: two machines running at
//   once (the test runner runs two files at a time) would otherwise share one `name=systemd` tree, and
//   `cgroup.kill` gives a reliable way to kill stragglers.
// - /dev: a private tmpfs with the basic nodes bound from the host, and block devices only when plugged
//   (Machine.plug), instead of the host's /dev: with the host's /dev every machine would see every test's
//   site-config stick, and systemd would write status to the host's real console and create nodes in it.
//   /dev/console is a log file (consoleLog()).
// - /proc/sys, /proc/sysrq-trigger and /sys are read-only, as container managers mount them: the node shares
//   the host's kernel, so systemd-sysctl, binfmt and udev skip themselves instead of changing the host.
// The network namespace is the host's unless boot({network: 'private'}): the node then reaches a simulator
// listening on the host's 127.0.0.1.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { resolveUnderRoot } from '../../../src/host/host';
import { cgroup2Mount } from './preflight';
import { childrenOf, isAlive, pidNamespaceOf, pollUntil, processesInNamespace, run, CommandError, type RunOptions, type RunResult } from './proc';
import { killMachineSync, registerMachine, removeCgroupTree, sweepStale, unregisterMachine, TEMP_PREFIX, type LiveMachine } from './cleanup';
import { missingNodeLibraries, type Disk } from './rootfs';
import type { LoopDevice } from './media';
import { testbedNodeBinary } from './node-runtime';

/**
 * How long a boot may take to reach its wanted state: 5–15 s on an idle 2-core machine, over 60 s seen with two other
 * testbed nodes booting beside it (npm test starts its longest files, the testbed ones, together). A deadline costs
 * time only when it fails.
 */
const BOOT_TIMEOUT_MS = 180_000;

export type SystemState = 'initializing' | 'starting' | 'running' | 'degraded' | 'maintenance' | 'stopping' | 'offline' | 'unknown';

/** Host directories or files bind-mounted into the machine (e.g. the project, for a simulator run as a unit). */
export interface Bind {
  hostPath: string;
  nodePath: string;
  readOnly?: boolean;
}

/** What the machine is wired to; kept across reboots until a boot gives new values. */
export interface MachineWiring {
  /**
   * host (default): the host's network namespace, so the node reaches a simulator on the host's 127.0.0.1.
   * private: a network namespace with only `lo` (up): two machines can both listen on 6443.
   */
  network?: 'host' | 'private';
  binds?: Bind[];
}

export interface BootOptions extends MachineWiring {
  /** Return once `systemctl is-system-running` reports one of these (default ['running']); 'none': once PID 1 runs. */
  waitFor?: SystemState[] | 'none';
  timeoutMs?: number;
}

export interface ExecOptions extends RunOptions {
  /** Extra environment for the command (the node's environment is otherwise clean: PATH and LANG only). */
  env?: Record<string, string>;
}

/** PATH of a root shell on RHEL/RHCOS. */
const NODE_PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Host cgroup under which every machine gets its own: `<cgroup2>/sno-testbed/<owner pid>-<machine>-<boot>`. */
export function cgroupBase(prefix = TEMP_PREFIX): string {
  const mount = cgroup2Mount();
  if (!mount) throw new Error('no cgroup2 hierarchy on the host');
  return path.join(mount, prefix.replace(/-$/, ''));
}

/**
 * PID namespaces of the machines not yet seen gone: leftovers() checks none of them has a process. Each is
 * pinned by an open fd on /proc/<pid1>/ns/pid until the machine is seen gone: the kernel reuses namespace
 * inode numbers, so without the pin a dead machine's `pid:[N]` could name another test's live machine.
 */
export const bootedNamespaces = new Set<string>();

let machineSeq = 0;

interface Live extends LiveMachine {
  unsharePid: number;
}

const PID1_SCRIPT = `set -euo pipefail
R="$TB_ROOT"
mount --bind "$R" "$R"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
for p in sys sysrq-trigger; do
  [ -e "$R/proc/$p" ] || continue
  mount --bind "$R/proc/$p" "$R/proc/$p"; mount -o remount,bind,ro "$R/proc/$p"
done
# A boot ID of this boot, not the host kernel's (which every boot of the machine would share): the journal
# tells boots apart by it (journalctl -b -1). systemd-nspawn does the same (nspawn.c setup_boot_id).
mount --bind "$TB_BOOT_ID" "$R/proc/sys/kernel/random/boot_id"
# A node with a network namespace of its own may set its own network sysctls (NetworkManager writes
# /proc/sys/net/ipv6/conf/*/…, as on a node): they are that namespace's, the host's are never reachable from it.
if [ "$TB_NETWORK" = private ]; then mount --bind "$R/proc/sys/net" "$R/proc/sys/net"; mount -o remount,bind,rw "$R/proc/sys/net"; fi
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
mount -t cgroup2 -o nosuid,nodev,noexec,nsdelegate cgroup2 "$R/sys/fs/cgroup"
mount -t tmpfs -o mode=755,nosuid,size=4m tmpfs "$R/dev"
for n in null zero full random urandom tty fuse; do
  [ -e "/dev/$n" ] || continue
  touch "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"
done
mkdir -m 755 "$R/dev/pts"; mkdir -m 1777 "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5,nosuid,noexec devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/dev/shm"
# /dev/net/tun: Open vSwitch's userspace datapath makes each bridge's internal port a TAP device (README "The
# node's network"); the node can create TAP devices only in its own network namespace.
if [ -e /dev/net/tun ]; then mkdir -p "$R/dev/net"; touch "$R/dev/net/tun"; mount --bind /dev/net/tun "$R/dev/net/tun"; fi
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"; ln -s /proc/self/fd/1 "$R/dev/stdout"; ln -s /proc/self/fd/2 "$R/dev/stderr"
touch "$R/dev/console"; mount --bind "$TB_CONSOLE" "$R/dev/console"
for d in $TB_DEVS; do
  IFS=: read -r name major minor <<<"$d"
  mknod -m 660 "$R/dev/$name" b "$major" "$minor"; chown 0:6 "$R/dev/$name"
done
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
while IFS=$'\t' read -r host node ro; do
  [ -n "$host" ] || continue
  if [ -d "$host" ]; then mkdir -p "$R$node"; else mkdir -p "$(dirname "$R$node")"; [ -e "$R$node" ] || touch "$R$node"; fi
  mount --rbind "$host" "$R$node"
  [ "$ro" = ro ] && mount -o remount,bind,ro "$R$node"
done <<<"$TB_BINDS"
if [ "$TB_NETWORK" = private ]; then ip link set lo up; fi
[ -e "$R/usr/bin/node" ] || touch "$R/usr/bin/node"
mount --bind "$TB_NODE" "$R/usr/bin/node"; mount -o remount,bind,ro "$R/usr/bin/node"
for lib in $TB_LIBS; do
  mkdir -p "$(dirname "$R$lib")"; [ -e "$R$lib" ] || touch "$R$lib"
  mount --bind "$lib" "$R$lib"; mount -o remount,bind,ro "$R$lib"
done
exec chroot "$R" /usr/bin/env -i container=unshare /lib/systemd/systemd --system
`;

export class MachineNotRunningError extends Error {
  constructor(name: string, what: string) {
    super(`machine ${name} is not running (${what})`);
    this.name = 'MachineNotRunningError';
  }
}

export class Machine {
  readonly name: string;
  /** Boots so far (the journal's `-b -N` counts the same way). */
  bootCount = 0;
  /** Milliseconds from spawning PID 1 to the awaited system state, for the last boot. */
  lastBootMs: number | undefined;
  /** Reboots the node asked for itself (`systemctl reboot`), each booted again as a server would; the last error, if any. */
  requestedReboots = 0;
  requestedRebootError: Error | undefined;
  private live: Live | undefined;
  private readonly plugged = new Map<string, LoopDevice>();
  private nodeLibs: string[] | undefined;
  private readonly wiring: MachineWiring = {};

  constructor(readonly disk: Disk) {
    this.name = `m${++machineSeq}`;
  }

  /** The node's `/` on the host (its disk: persists across reboots). */
  get root(): string {
    return this.disk.root;
  }

  get running(): boolean {
    return this.live !== undefined && isAlive(this.live.pid1);
  }

  /** Host PID of the namespace's PID 1 (systemd). */
  get pid(): number {
    if (!this.live) throw new MachineNotRunningError(this.name, 'no PID 1');
    return this.live.pid1;
  }

  /** Host cgroup of the machine while it runs. */
  get cgroup(): string {
    if (!this.live) throw new MachineNotRunningError(this.name, 'no cgroup');
    return this.live.cgroup;
  }

  /** Host path of a node path on the disk. /run, /tmp and /dev are tmpfs inside the machine: see livePath. */
  path(nodePath: string): string {
    return resolveUnderRoot(this.root, nodePath);
  }

  /** Host path that sees the node's mounts (its /run, /tmp, /dev and anything it mounted), while it runs. */
  livePath(nodePath: string): string {
    return `/proc/${this.pid}/root${path.posix.normalize(`/${nodePath}`)}`;
  }

  readFile(nodePath: string): string {
    return readFileSync(this.running ? this.livePath(nodePath) : this.path(nodePath), 'utf8');
  }

  writeFile(nodePath: string, data: string | Buffer, mode = 0o644): void {
    const target = this.running ? this.livePath(nodePath) : this.path(nodePath);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, data, { mode });
  }

  removeFile(nodePath: string): void {
    rmSync(this.running ? this.livePath(nodePath) : this.path(nodePath), { force: true });
  }

  bootLog(): string {
    return readIfExists(path.join(this.disk.dir, `boot-${this.bootCount}.log`));
  }

  /** What systemd and units wrote to /dev/console during the last boot. */
  consoleLog(): string {
    return readIfExists(path.join(this.disk.dir, `console-${this.bootCount}.log`));
  }

  async boot(opts: BootOptions = {}): Promise<void> {
    if (this.live) throw new Error(`machine ${this.name} is already running (PID 1 = ${this.live.pid1})`);
    if (opts.network !== undefined) this.wiring.network = opts.network;
    if (opts.binds !== undefined) this.wiring.binds = opts.binds;
    for (const b of this.wiring.binds ?? []) if (!existsSync(b.hostPath)) throw new Error(`boot: bind source ${b.hostPath} does not exist`);
    const base = cgroupBase();
    sweepStale(base, TEMP_PREFIX);
    const started = Date.now();
    this.bootCount += 1;
    const cgroup = path.join(base, `${process.pid}-${this.name}-${this.bootCount}`);
    mkdirSync(cgroup, { recursive: true });
    // The agent and the stand-ins run on the Node major of the podman runtime's image (testbed/node-runtime.ts).
    const nodeBinary = await testbedNodeBinary();
    this.nodeLibs ??= await missingNodeLibraries(this.root, nodeBinary);
    const pid1Script = path.join(this.disk.dir, 'pid1.sh');
    writeFileSync(pid1Script, PID1_SCRIPT, { mode: 0o755 });
    const consoleLog = path.join(this.disk.dir, `console-${this.bootCount}.log`);
    writeFileSync(consoleLog, '');
    const bootIdFile = path.join(this.disk.dir, 'boot_id');
    writeFileSync(bootIdFile, `${randomUUID()}\n`, { mode: 0o444 });
    const logFd = openSync(path.join(this.disk.dir, `boot-${this.bootCount}.log`), 'w');
    const env: NodeJS.ProcessEnv = {
      PATH: NODE_PATH_ENV,
      TB_ROOT: this.root,
      TB_CONSOLE: consoleLog,
      TB_NODE: nodeBinary,
      TB_LIBS: this.nodeLibs.join(' '),
      TB_DEVS: [...this.plugged.values()].map((l) => `${path.basename(l.device)}:${l.major}:${l.minor}`).join(' '),
      TB_CGROUP: cgroup,
      TB_BOOT_ID: bootIdFile,
      TB_PID1: pid1Script,
      TB_NETWORK: this.wiring.network ?? 'host',
      TB_BINDS: (this.wiring.binds ?? []).map((b) => `${b.hostPath}\t${path.posix.normalize(`/${b.nodePath}`)}\t${b.readOnly ? 'ro' : 'rw'}`).join('\n'),
    };
    const netFlag = this.wiring.network === 'private' ? ' --net' : '';
    // The outer shell joins the machine's cgroup *before* unshare, so the new cgroup namespace is rooted there.
    const outer = `echo $$ > "$TB_CGROUP/cgroup.procs" && exec unshare --pid --fork --mount --uts --ipc --cgroup${netFlag} --propagation private /bin/bash "$TB_PID1"`;
    const child = spawn('/bin/bash', ['-c', outer], { env, detached: true, stdio: ['ignore', logFd, logFd] });
    closeSync(logFd);
    child.unref();
    const unsharePid = child.pid;
    if (!unsharePid) throw new Error(`machine ${this.name}: spawning unshare failed`);
    // A reboot the node asks for (`systemctl reboot`, e.g. the agent's reboot for the early network phase): reboot(2)
    // in a PID namespace ends its init with SIGHUP (poweroff/halt: SIGINT; pid_namespaces(7)), and unshare --fork
    // dies of the same signal. The machine boots again on the same disk and wiring, as a server does.
    child.once('exit', (_code, signal) => {
      if (signal !== 'SIGHUP' || this.live?.unsharePid !== unsharePid) return;
      this.requestedReboots += 1;
      void this.powerCut()
        .then(() => this.boot({ waitFor: 'none' }))
        .catch((e: unknown) => {
          this.requestedRebootError = e as Error;
        });
    });
    try {
      await this.attach(unsharePid, cgroup);
    } catch (e) {
      // nothing is registered yet: take down what started, so a failed boot leaves nothing behind
      killMachineSync({ pid1: unsharePid, pidNamespace: '', nsFd: -1, cgroup });
      await pollUntil(() => (isAlive(unsharePid) ? undefined : true), 10_000, () => new Error(`unshare ${unsharePid} survives SIGKILL`), 20).catch(() => undefined);
      removeCgroupTree(cgroup);
      throw e;
    }
    const waitFor = opts.waitFor ?? ['running'];
    if (waitFor !== 'none') await this.waitForSystemState(waitFor, opts.timeoutMs ?? BOOT_TIMEOUT_MS);
    this.lastBootMs = Date.now() - started;
  }

  /** Finds PID 1 (unshare's child) and pins its PID namespace; registers the machine with the safety net. */
  private async attach(unsharePid: number, cgroup: string): Promise<void> {
    const pid1 = await pollUntil(
      () => {
        const kids = childrenOf(unsharePid);
        if (kids.length) return kids[0];
        if (!isAlive(unsharePid)) throw new Error(`machine ${this.name}: unshare exited before starting PID 1:\n${this.bootLog()}`);
        return undefined;
      },
      10_000,
      () => new Error(`machine ${this.name}: no PID 1 10 s after unshare:\n${this.bootLog()}`),
      5,
    );
    const pidNamespace = await pollUntil(
      () => {
        const ns = pidNamespaceOf(pid1);
        // the child is in the new namespace from its first instruction; compare with unshare's own
        return ns && ns !== pidNamespaceOf(unsharePid) ? ns : undefined;
      },
      5000,
      () => new Error(`machine ${this.name}: PID 1 (${pid1}) has no PID namespace of its own:\n${this.bootLog()}`),
      5,
    );
    const nsFd = openSync(`/proc/${pid1}/ns/pid`, 'r');
    if (pidNamespaceOf(pid1) !== pidNamespace) {
      closeSync(nsFd);
      throw new Error(`machine ${this.name}: PID 1 (${pid1}) died during boot:\n${this.bootLog()}`);
    }
    this.live = { pid1, unsharePid, pidNamespace, nsFd, cgroup };
    registerMachine(this.live);
    bootedNamespaces.add(pidNamespace);
  }

  /** Runs argv inside the machine (all its namespaces, its root), with a clean environment. */
  async exec(argv: readonly string[], opts: ExecOptions = {}): Promise<RunResult> {
    if (!this.running) throw new MachineNotRunningError(this.name, `cannot run ${argv.join(' ')}`);
    const envArgs = Object.entries({ PATH: NODE_PATH_ENV, LANG: 'C.UTF-8', ...opts.env }).map(([k, v]) => `${k}=${v}`);
    const full = ['nsenter', '-t', String(this.pid), '-m', '-u', '-i', '-n', '-p', '-C', '-r', '-w', '--', '/usr/bin/env', '-i', ...envArgs, ...argv];
    return run(full, { ...opts, env: { PATH: NODE_PATH_ENV } });
  }

  /** Like exec, but a non-zero exit throws (with the command's output); returns stdout. */
  async execOk(argv: readonly string[], opts: ExecOptions = {}): Promise<string> {
    const res = await this.exec(argv, opts);
    if (res.code !== 0) throw new CommandError(argv, res);
    return res.stdout;
  }

  systemctl(...args: string[]): Promise<RunResult> {
    return this.exec(['systemctl', ...args]);
  }

  journalctl(...args: string[]): Promise<RunResult> {
    return this.exec(['journalctl', '--no-pager', ...args]);
  }

  async systemState(): Promise<string> {
    const res = await this.exec(['systemctl', 'is-system-running'], { timeoutMs: 15_000 });
    return res.stdout.trim() || 'unknown';
  }

  /** Waits until `systemctl is-system-running` says one of `states`; fails early, with the reason, on another end state. */
  async waitForSystemState(states: SystemState | SystemState[], timeoutMs = BOOT_TIMEOUT_MS): Promise<SystemState> {
    const wanted = Array.isArray(states) ? states : [states];
    let last = 'unknown';
    return pollUntil<SystemState>(
      async () => {
        if (!this.running) throw new Error(`machine ${this.name}: PID 1 died while waiting for ${wanted.join('|')}:\n${this.bootLog()}`);
        last = await this.systemState();
        if ((wanted as string[]).includes(last)) return last as SystemState;
        if (['running', 'degraded', 'maintenance'].includes(last)) throw await this.stateError(wanted, last);
        return undefined;
      },
      timeoutMs,
      () => this.stateError(wanted, last),
    );
  }

  private async stateError(wanted: string[], last: string): Promise<Error> {
    const failed = this.running ? (await this.systemctl('--failed', '--no-legend', '--plain')).stdout.trim() : '';
    const journal = this.running ? (await this.journalctl('-b', '-n', '40', '-o', 'short-monotonic')).stdout : '';
    // Still starting: the jobs systemd is waiting for say which unit holds the boot.
    const jobList = this.running && last === 'starting' ? (await this.systemctl('list-jobs', '--no-legend', '--plain')).stdout.trim() : '';
    const jobs = this.running && last === 'starting' ? `jobs still running:\n${jobList || '(none)'}\n` : '';
    // What each failed unit said, and each unit whose start job still runs (the one holding the boot: e.g. a
    // configure-ovs waiting out its retry), which the last lines of the whole journal rarely hold.
    const holding = jobList.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f[2] === 'start' && f[3] === 'running').map((f) => f[1]);
    const units = [...failed.split('\n').map((l) => l.trim().split(/\s+/)[0]), ...holding].filter((u): u is string => !!u);
    const said = this.running ? (await Promise.all(units.map(async (u) => `--- ${u}:\n${(await this.journalctl('-b', '-u', u, '-n', '25', '-o', 'cat')).stdout}`))).join('\n') : '';
    return new Error(`machine ${this.name}: system state is "${last}", wanted ${wanted.join('|')}.\nfailed units:\n${failed || '(none)'}\n${said}\n${jobs}last journal lines:\n${journal}\nboot log:\n${this.bootLog()}`);
  }

  /** `systemctl show` properties of a unit, e.g. {ActiveState: 'active', StatusText: '...'}. */
  async unitProperties(unit: string, props: string[]): Promise<Record<string, string>> {
    const out = await this.execOk(['systemctl', 'show', `--property=${props.join(',')}`, unit]);
    const result: Record<string, string> = {};
    for (const line of out.split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) result[line.slice(0, eq)] = line.slice(eq + 1);
    }
    return result;
  }

  /** Polls a unit's properties until `accept` returns true; the error shows the last values and the unit's journal. */
  async waitForUnit(unit: string, props: string[], accept: (p: Record<string, string>) => boolean, timeoutMs = 30_000): Promise<Record<string, string>> {
    let last: Record<string, string> = {};
    return pollUntil(
      async () => {
        last = await this.unitProperties(unit, props);
        return accept(last) ? last : undefined;
      },
      timeoutMs,
      async () => new Error(`machine ${this.name}: ${unit} did not reach the expected state in ${timeoutMs} ms; last ${JSON.stringify(last)}\n${(await this.journalctl('-u', unit, '-n', '30')).stdout}`),
    );
  }

  /**
   * Power cut: SIGKILL to PID 1, so the kernel kills every process of the namespace at once. Unlike a real
   * power cut this does not lose the page cache: data written but not fsync'ed survives here. Tests of
   * write ordering need fsync'ed data to prove anything (the agent's atomic writes do fsync).
   */
  async powerCut(): Promise<void> {
    const live = this.live;
    if (!live) return;
    try {
      process.kill(live.pid1, 'SIGKILL');
    } catch {
      // already dead
    }
    const gone = (): true | undefined => (!isAlive(live.pid1) && !isAlive(live.unsharePid) && processesInNamespace(live.pidNamespace).length === 0 ? true : undefined);
    try {
      await pollUntil(gone, 5000, () => new Error('namespace still has processes'), 10);
    } catch {
      killMachineSync(live); // stragglers (should not happen: the kernel kills the namespace with its init)
      await pollUntil(gone, 10_000, () => new Error(`machine ${this.name}: processes of PID namespace ${live.pidNamespace} survive SIGKILL: ${processesInNamespace(live.pidNamespace).join(' ')}`), 20);
    }
    await pollUntil(
      () => {
        removeCgroupTree(live.cgroup);
        return existsSync(live.cgroup) ? undefined : true;
      },
      10_000,
      () => new Error(`machine ${this.name}: cgroup ${live.cgroup} cannot be removed`),
      20,
    );
    unregisterMachine(live);
    bootedNamespaces.delete(live.pidNamespace);
    closeSync(live.nsFd);
    this.live = undefined;
  }

  /** Graceful poweroff (units stop in order, the journal is flushed); a power cut if it takes longer than timeoutMs. */
  async shutdown(timeoutMs = 30_000): Promise<{ graceful: boolean }> {
    const live = this.live;
    if (!live) return { graceful: true };
    await this.exec(['systemctl', 'poweroff', '--no-block'], { timeoutMs: 10_000 });
    let graceful = true;
    try {
      await pollUntil(() => (isAlive(live.pid1) ? undefined : true), timeoutMs, () => new Error('poweroff timed out'), 20);
    } catch {
      graceful = false;
    }
    await this.powerCut();
    return { graceful };
  }

  /** Stop (power cut by default, like pulling the plug; or a graceful poweroff) and boot again on the same disk. */
  async reboot(opts: BootOptions & { graceful?: boolean } = {}): Promise<void> {
    if (opts.graceful) await this.shutdown();
    else await this.powerCut();
    await this.boot(opts);
  }

  /** Plugs a loop device into the machine: its node appears in the machine's /dev now (or at boot). */
  async plug(loop: LoopDevice): Promise<void> {
    const name = path.basename(loop.device);
    this.plugged.set(name, loop);
    if (!this.running) return;
    const node = this.livePath(`/dev/${name}`);
    await run(['rm', '-f', node]);
    const res = await run(['mknod', '-m', '660', node, 'b', String(loop.major), String(loop.minor)]);
    if (res.code !== 0) throw new CommandError(['mknod', node], res);
    await run(['chown', '0:6', node]);
  }

  /** Unplugs: the device node disappears from the machine's /dev (a mount of it keeps what it has). */
  async unplug(loop: LoopDevice): Promise<void> {
    const name = path.basename(loop.device);
    this.plugged.delete(name);
    if (this.running) await run(['rm', '-f', this.livePath(`/dev/${name}`)]);
  }

  pluggedDevices(): LoopDevice[] {
    return [...this.plugged.values()];
  }
}

function readIfExists(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
