// Site-config media: a filesystem image made without mounting anything on the host (mkfs.vfat + mcopy, or
// mkfs.ext4 -d), attached as a loop device. A machine sees a device only once it is plugged into it
// (Machine.plug): each machine has a private /dev, so two machines running at once never see each other's
// sticks, and plugging/unplugging a running machine is a real hot-plug of the device node.
import { mkdirSync, mkdtempSync, writeFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runOk, run, pollUntil } from './proc';
import { registerDir, registerLoop, unregisterLoop, TEMP_PREFIX } from './cleanup';

/** Relative path on the volume → file contents. Directories are created as needed. */
export type VolumeFiles = Record<string, string | Buffer>;

export interface VolumeOptions {
  /**
   * vfat (default): a FAT32 USB stick; labels up to 11 characters. ext4: labels up to 16 characters, and the
   * kernel here can mount it for real (this VM's kernel has no VFAT, see stand-ins/mount.vfat).
   */
  fs?: 'vfat' | 'ext4';
  /** Directory for the image (default: a new registered temp dir). */
  dir?: string;
  sizeMiB?: number;
}

const LABEL_LIMIT = { vfat: 11, ext4: 16 } as const;

function validateRelPath(rel: string): string {
  const norm = path.posix.normalize(rel);
  if (!rel || norm.startsWith('..') || path.posix.isAbsolute(norm)) throw new Error(`makeVolume: file path "${rel}" must be relative and stay inside the volume`);
  return norm;
}

/** Writes `files` into a new filesystem image labelled `label`; returns the image path. */
export async function makeVolume(files: VolumeFiles, label = 'SITE-CONFIG', opts: VolumeOptions = {}): Promise<string> {
  const fs = opts.fs ?? 'vfat';
  if (label.length === 0 || label.length > LABEL_LIMIT[fs]) throw new Error(`makeVolume: a ${fs} label has 1 to ${LABEL_LIMIT[fs]} characters; "${label}" has ${label.length}`);
  let dir = opts.dir;
  if (!dir) {
    dir = mkdtempSync(path.join(os.tmpdir(), `${TEMP_PREFIX}${process.pid}-media-`));
    registerDir(dir);
  }
  const staging = mkdtempSync(path.join(dir, 'staging-'));
  for (const [rel, data] of Object.entries(files)) {
    const target = path.join(staging, validateRelPath(rel));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, data);
  }
  const image = path.join(dir, `${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${path.basename(staging).slice(8)}.img`);
  // FAT32 needs at least 32 MiB with 512-byte sectors; the file is sparse, so the size costs nothing.
  const sizeMiB = opts.sizeMiB ?? 64;
  writeFileSync(image, '');
  await runOk(['truncate', '-s', `${sizeMiB}M`, image]);
  if (fs === 'vfat') {
    await runOk(['mkfs.vfat', '-F', '32', '-n', label, image]);
    const top = readdirSync(staging);
    if (top.length) {
      // mtools refuses to touch a "disk" whose geometry it cannot check; an image file has none.
      await runOk(['mcopy', '-s', '-p', '-i', image, ...top.map((n) => path.join(staging, n)), '::/'], { env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } });
    }
  } else {
    await runOk(['mkfs.ext4', '-q', '-F', '-L', label, '-d', staging, image]);
  }
  await runOk(['rm', '-rf', staging]);
  return image;
}

export interface LoopDevice {
  /** e.g. /dev/loop3 */
  device: string;
  image: string;
  major: number;
  minor: number;
  readOnly: boolean;
}

/** Attaches an image as a loop device on the host (`losetup --find --show`). */
export async function attach(image: string, opts: { readOnly?: boolean } = {}): Promise<LoopDevice> {
  statSync(image);
  const device = (await runOk(['losetup', '--find', '--show', ...(opts.readOnly ? ['--read-only'] : []), image])).trim();
  registerLoop(device);
  const [major, minor] = readFileSync(`/sys/block/${path.basename(device)}/dev`, 'utf8').trim().split(':').map(Number);
  return { device, image, major: major!, minor: minor!, readOnly: !!opts.readOnly };
}

/** Detaches a loop device and waits until the kernel has released it (a mount may hold it a moment longer). */
export async function detach(loop: LoopDevice): Promise<void> {
  // losetup -d on a device still held (a mount in a namespace being torn down) only sets autoclear: wait.
  await run(['losetup', '-d', loop.device]);
  await pollUntil(
    () => (backingFileOf(loop.device) === loop.image ? undefined : true),
    10_000,
    () => new Error(`${loop.device} (${loop.image}) is still attached 10 s after losetup -d: something still holds it`),
    50,
  );
  unregisterLoop(loop.device);
}

function backingFileOf(device: string): string | undefined {
  try {
    return readFileSync(`/sys/block/${path.basename(device)}/loop/backing_file`, 'utf8').trim().replace(/ \(deleted\)$/, '');
  } catch {
    return undefined;
  }
}
