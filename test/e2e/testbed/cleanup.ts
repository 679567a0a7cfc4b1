// Everything the testbed creates on the host is registered here, so that it is removed even when a test
// fails or the test process is interrupted: machines (their PID namespace and cgroup), loop devices and
// temp dirs. Three layers: the owner's own cleanup (Testbed.cleanup), a synchronous `exit`/signal safety
// net in this process, and a sweep at start-up of what a killed earlier run left (names carry its PID).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAlive, processesInNamespace } from './proc';

/**
 * Temp dirs (and the cgroup base) are named after the owning process so a later run can sweep what a killed
 * run left behind. SNO_TESTBED_PREFIX gives a process a namespace of its own that no other run sweeps (the
 * cleanup tests use it for the test processes they kill on purpose).
 */
export const TEMP_PREFIX = testbedPrefix();

function testbedPrefix(): string {
  const p = process.env.SNO_TESTBED_PREFIX ?? 'sno-testbed-';
  if (!/^[a-z][a-z0-9-]*-$/.test(p)) throw new Error(`SNO_TESTBED_PREFIX: expected lowercase letters, digits and dashes ending in "-", got "${p}"`);
  return p;
}

/** What the safety net needs to know about a running machine. */
export interface LiveMachine {
  pid1: number;
  pidNamespace: string;
  /** An open fd on the namespace: keeps its inode number from being reused while we compare with it. */
  nsFd: number;
  /** Host path of the machine's cgroup (v2). */
  cgroup: string;
}

const machines = new Set<LiveMachine>();
const loops = new Set<string>();
const mounts = new Set<string>();
const dirs = new Set<string>();

export function registerMachine(m: LiveMachine): void {
  machines.add(m);
  installSafetyNet();
}
export function unregisterMachine(m: LiveMachine): void {
  machines.delete(m);
}
export function registerLoop(device: string): void {
  loops.add(device);
  installSafetyNet();
}
export function unregisterLoop(device: string): void {
  loops.delete(device);
}
/** Host mounts (the machines' overlay disks). */
export function registerMount(mountPoint: string): void {
  mounts.add(mountPoint);
  installSafetyNet();
}
export function unregisterMount(mountPoint: string): void {
  mounts.delete(mountPoint);
}
export function registerDir(dir: string): void {
  dirs.add(dir);
  installSafetyNet();
}
export function unregisterDir(dir: string): void {
  dirs.delete(dir);
}

/** Kills every process of a machine now: PID 1 (the kernel then kills its namespace) and its cgroup. */
export function killMachineSync(m: LiveMachine): void {
  try {
    writeFileSync(path.join(m.cgroup, 'cgroup.kill'), '1');
  } catch {
    // cgroup gone, or a kernel before 5.14 without cgroup.kill
  }
  for (const pid of [m.pid1, ...(m.pidNamespace ? processesInNamespace(m.pidNamespace) : [])]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Removes a machine's cgroup directory tree, leaves first (only empty cgroups can be removed). */
export function removeCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) removeCgroupTree(path.join(dir, entry.name));
  }
  try {
    rmdirSync(dir);
  } catch {
    // still populated: processes are dying; the caller retries
  }
}

let installed = false;

function installSafetyNet(): void {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupEverythingSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      cleanupEverythingSync();
      process.kill(process.pid, sig);
    });
  }
}

/** The last resort: synchronous, so it can run in an `exit` handler. */
export function cleanupEverythingSync(): void {
  for (const m of machines) killMachineSync(m);
  const deadline = Date.now() + 5000;
  for (const m of machines) {
    while (Date.now() < deadline && (isAlive(m.pid1) || processesInNamespace(m.pidNamespace).length > 0)) sleepSync(20);
    removeCgroupTree(m.cgroup);
  }
  machines.clear();
  for (const dev of loops) detachLoopSync(dev);
  loops.clear();
  for (const mp of mounts) unmountLazySync(mp);
  mounts.clear();
  for (const dir of dirs) removeTreeSync(dir);
  dirs.clear();
}

function unmountLazySync(mountPoint: string): void {
  try {
    execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  } catch {
    // not mounted
  }
}

/** rm -rf that never crosses into another filesystem (a mount left inside must not be emptied). */
function removeTreeSync(dir: string): void {
  try {
    execFileSync('rm', ['-rf', '--one-file-system', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Mount points on the host whose path contains `fragment`, deepest first. */
export function hostMountsContaining(fragment: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((mp) => mp.includes(fragment))
    .sort((a, b) => b.length - a.length);
}

export function detachLoopSync(device: string): void {
  try {
    execFileSync('losetup', ['-d', device], { stdio: 'ignore' });
  } catch {
    // already detached
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Loop devices whose backing file lies under a testbed temp dir: `{device, backingFile}`. */
export function testbedLoopDevices(prefix: string): { device: string; backingFile: string }[] {
  let out: string;
  try {
    out = execFileSync('losetup', ['--list', '--json', '--output', 'NAME,BACK-FILE'], { encoding: 'utf8' });
  } catch {
    return [];
  }
  if (!out.trim()) return [];
  const parsed = JSON.parse(out) as { loopdevices?: { name: string; 'back-file': string | null }[] };
  return (parsed.loopdevices ?? [])
    .filter((l) => (l['back-file'] ?? '').includes(`/${prefix}`))
    .map((l) => ({ device: l.name, backingFile: (l['back-file'] ?? '').replace(/ \(deleted\)$/, '') }));
}

function ownerIsDead(name: string, prefix: string): boolean {
  const m = new RegExp(`${prefix}(\\d+)-`).exec(name);
  if (!m) return false;
  const pid = Number(m[1]);
  if (pid === process.pid) return false;
  if (!isAlive(pid)) return true;
  // PID reused by something that is not a node test process
  try {
    return !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node');
  } catch {
    return true;
  }
}

let swept = false;

/**
 * Removes machines, loop devices and temp dirs of earlier test processes that died without cleaning up
 * (once per process unless `force`). Returns what it removed.
 */
export function sweepStale(cgroupBase: string, prefix: string, opts: { force?: boolean } = {}): string[] {
  if (swept && !opts.force) return [];
  swept = true;
  const removed: string[] = [];
  if (existsSync(cgroupBase)) {
    for (const entry of readdirSync(cgroupBase, { withFileTypes: true })) {
      if (!entry.isDirectory() || !ownerIsDead(entry.name, '')) continue;
      const cg = path.join(cgroupBase, entry.name);
      try {
        writeFileSync(path.join(cg, 'cgroup.kill'), '1');
      } catch {
        // nothing to kill
      }
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && existsSync(cg)) {
        removeCgroupTree(cg);
        if (existsSync(cg)) sleepSync(50);
      }
      removed.push(cg);
    }
  }
  for (const l of testbedLoopDevices(prefix)) {
    if (ownerIsDead(l.backingFile, prefix)) {
      detachLoopSync(l.device);
      removed.push(l.device);
    }
  }
  for (const name of readdirSync(os.tmpdir())) {
    if (name.startsWith(prefix) && ownerIsDead(name, prefix)) {
      const dir = path.join(os.tmpdir(), name);
      for (const mp of hostMountsContaining(`${dir}/`)) {
        unmountLazySync(mp);
        removed.push(mp);
      }
      removeTreeSync(dir);
      removed.push(dir);
    }
  }
  return removed;
}
