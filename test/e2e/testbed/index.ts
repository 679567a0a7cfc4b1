// The end-to-end testbed: nodes booted under real systemd in namespaces, with site-config media, stand-in
// host tools, and cleanup that holds even when a test fails. README.md beside this file tells how to use it
// and what differs from a real node.
import { readdirSync, existsSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Machine, bootedNamespaces, cgroupBase } from './machine';
import { cloneDisk, newDisk, removeDisk, type DiskOptions, type Disk } from './rootfs';
import { attach, detach, makeVolume, type LoopDevice, type VolumeFiles, type VolumeOptions } from './media';
import { registerDir, unregisterDir, testbedLoopDevices, sweepStale, hostMountsContaining, TEMP_PREFIX } from './cleanup';
import { processesInNamespace } from './proc';
import { applyIgnition, ignitionFromMachineConfig, type ApplyResult, type IgnConfig } from '../../support/ignition';

export { Machine, MachineNotRunningError, type Bind, type BootOptions, type ExecOptions, type MachineWiring, type SystemState } from './machine';
export { ensureRootfsImage, cloneDisk, newDisk, recipeKey, ROOTFS_RECIPE, MASKED_UNITS, installStandIn, type Disk, type DiskOptions, type RootfsImage } from './rootfs';
export { makeVolume, attach, detach, type LoopDevice, type VolumeFiles, type VolumeOptions } from './media';
export { preflight, TestbedUnavailableError } from './preflight';
export { CommandError, isAlive, type RunResult } from './proc';
export { cgroupBase } from './machine';
export type { IgnConfig, IgnUnit, IgnFile, ApplyResult } from '../../support/ignition';
export { TEMP_PREFIX } from './cleanup';
export { ensureNetworkManagerBuild, NM_BUILD_RECIPE, type NetworkManagerBuild } from './network-manager';

/** Owns what a test creates; `cleanup()` (in an `after` hook) removes all of it, failures included. */
export class Testbed {
  private readonly machines: Machine[] = [];
  private readonly loops = new Set<LoopDevice>();
  private mediaDir: string | undefined;

  /** A new node with a fresh disk from the cached rootfs; not booted yet (write its files first, then boot()). */
  async machine(opts: DiskOptions = {}): Promise<Machine> {
    const m = new Machine(await newDisk(opts));
    this.machines.push(m);
    return m;
  }

  /**
   * A new node with a copy of a stopped node's disk (cloneDisk): the same installation, booted as often, and
   * independent from now on. Cheaper than installing and preparing a second node the same way.
   */
  async cloneMachine(original: Machine): Promise<Machine> {
    if (original.running) throw new Error(`cloneMachine: machine ${original.name} is running; power it off first`);
    const m = new Machine(await cloneDisk(original.disk));
    m.bootCount = original.bootCount;
    this.machines.push(m);
    return m;
  }

  /** A filesystem image with `files` (see makeVolume), kept until cleanup. */
  async volume(files: VolumeFiles, label = 'SITE-CONFIG', opts: VolumeOptions = {}): Promise<string> {
    if (!this.mediaDir) {
      this.mediaDir = mkdtempSync(path.join(os.tmpdir(), `${TEMP_PREFIX}${process.pid}-media-`));
      registerDir(this.mediaDir);
    }
    return makeVolume(files, label, { dir: this.mediaDir, ...opts });
  }

  async attach(image: string, opts: { readOnly?: boolean } = {}): Promise<LoopDevice> {
    const loop = await attach(image, opts);
    this.loops.add(loop);
    return loop;
  }

  async detach(loop: LoopDevice): Promise<void> {
    for (const m of this.machines) if (m.pluggedDevices().includes(loop)) await m.unplug(loop);
    await detach(loop);
    this.loops.delete(loop);
  }

  /** Makes a volume, attaches it and plugs it into `machine` (now, or at its next boot). */
  async insertMedia(machine: Machine, files: VolumeFiles, label = 'SITE-CONFIG', opts: VolumeOptions & { readOnly?: boolean } = {}): Promise<LoopDevice> {
    const loop = await this.attach(await this.volume(files, label, opts), { readOnly: opts.readOnly });
    await machine.plug(loop);
    return loop;
  }

  /** The technician swaps sticks: the old one is unplugged and detached, a new one with `files` plugged in. */
  async replaceMedia(machine: Machine, old: LoopDevice, files: VolumeFiles, label = 'SITE-CONFIG', opts: VolumeOptions & { readOnly?: boolean } = {}): Promise<LoopDevice> {
    await this.detach(old);
    return this.insertMedia(machine, files, label, opts);
  }

  /**
   * Installs an Ignition config into a stopped machine's root the way Ignition and the machine-config-daemon
   * do (test/support/ignition.ts: files, units, drop-ins, masks, `systemctl --root enable`).
   */
  async installIgnition(machine: Machine, config: IgnConfig): Promise<ApplyResult> {
    if (machine.running) throw new Error(`installIgnition: machine ${machine.name} is running; Ignition writes the disk before systemd starts`);
    return applyIgnition(config, machine.root);
  }

  /** Installs a rendered MachineConfig (YAML or JSON text, e.g. `sno-reconfigure render machineconfig`). */
  async installMachineConfig(machine: Machine, machineConfigText: string): Promise<ApplyResult> {
    return this.installIgnition(machine, ignitionFromMachineConfig(machineConfigText));
  }

  /** Stops every machine (power cut), detaches every loop device, removes every disk and image. */
  async cleanup(): Promise<void> {
    const errors: unknown[] = [];
    for (const m of this.machines) {
      try {
        await m.powerCut();
      } catch (e) {
        errors.push(e);
      }
    }
    for (const loop of this.loops) {
      try {
        await detach(loop);
      } catch (e) {
        errors.push(e);
      }
    }
    this.loops.clear();
    const disks: Disk[] = this.machines.map((m) => m.disk);
    this.machines.length = 0;
    for (const disk of disks) {
      try {
        await removeDisk(disk);
        unregisterDir(disk.dir);
      } catch (e) {
        errors.push(e);
      }
    }
    if (this.mediaDir) {
      try {
        await removeDisk({ dir: this.mediaDir, root: this.mediaDir, kind: 'copy' });
        unregisterDir(this.mediaDir);
      } catch (e) {
        errors.push(e);
      }
      this.mediaDir = undefined;
    }
    if (errors.length) throw new AggregateError(errors, `testbed cleanup failed: ${errors.map((e) => (e as Error).message).join('; ')}`);
  }
}

export interface Leftovers {
  /** Host PIDs still alive in a PID namespace of a machine this process booted. */
  processes: number[];
  loopDevices: string[];
  /** Host mounts under this process's testbed temp dirs (the testbed makes none outside its namespaces). */
  mounts: string[];
  cgroups: string[];
  tempDirs: string[];
}

/** What this process's testbed left on the host; all empty after a correct cleanup. */
export function leftovers(): Leftovers {
  const mine = `${TEMP_PREFIX}${process.pid}-`;
  const base = cgroupBase();
  return {
    processes: [...bootedNamespaces].flatMap((ns) => processesInNamespace(ns)),
    loopDevices: testbedLoopDevices(mine).map((l) => `${l.device} (${l.backingFile})`),
    mounts: hostMountsContaining(mine),
    cgroups: existsSync(base) ? readdirSync(base).filter((n) => n.startsWith(`${process.pid}-`)) : [],
    tempDirs: readdirSync(os.tmpdir()).filter((n) => n.startsWith(mine)),
  };
}

/** Sweeps what testbed processes that died without cleanup left behind (machines, loop devices, temp dirs). */
export function sweepStaleNow(prefix = TEMP_PREFIX): string[] {
  return sweepStale(cgroupBase(prefix), prefix, { force: true });
}
