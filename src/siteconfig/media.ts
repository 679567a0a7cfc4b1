// Reading the site-config off removable media: mount read-only with nosuid,nodev,noexec on a private 0700
// directory, copy into the state directory, unmount at once (the stick may be pulled any time; nothing may
// run from it). A copy of a directory (the drop directory) goes through the same limits.
import { createHash, randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { CommandError } from '../host/command-error';
import type { Host } from '../host/host';

export class MediaError extends Error {
  constructor(message: string, readonly remedy: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MediaError';
  }
}

/** A site-config needs a few small files; a volume full of other data is refused rather than copied. */
export const COPY_LIMITS = { maxFiles: 256, maxFileBytes: 8 * 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024, maxDepth: 6 };

export interface CopyResult {
  files: number;
  bytes: number;
  /** sha256 over every copied relative path and its bytes: tells a changed config from the same one. */
  treeDigest: string;
}

const MOUNT_BASE = '/run/sno-reconfigure';

const REMOVED_REMEDY = 'Re-insert the media and leave it in until the console says it was read.';

/** Something that was there a moment ago is gone: the media was pulled, or the drop directory emptied. */
function vanished(what: string): MediaError {
  return new MediaError(`reading the site-config failed (${what} disappeared) — was the media removed while it was being read?`, REMOVED_REMEDY);
}

function under(dir: string, rel: string): string {
  return rel ? path.posix.join(dir, rel) : dir;
}

/** Directory entries in the order the tree digest has always hashed them. */
async function entriesOf(host: Host, dir: string): Promise<string[]> {
  return (await host.listDir(dir)).sort((a, b) => a.localeCompare(b));
}

/** Copies a directory tree between node paths (regular files and directories only; symlinks and devices are skipped). */
export async function copyTree(host: Host, fromNode: string, toNode: string, limits = COPY_LIMITS): Promise<CopyResult> {
  const hash = createHash('sha256');
  let files = 0;
  let bytes = 0;
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > limits.maxDepth) throw new MediaError(`the media nests directories deeper than ${limits.maxDepth} levels at ${rel}`, 'Put only the site-config files on the media.');
    if ((await host.stat(under(fromNode, rel)))?.kind !== 'directory') throw vanished(rel || 'the media');
    const names = await entriesOf(host, under(fromNode, rel));
    await host.mkdirp(under(toNode, rel), 0o700);
    for (const name of names) {
      const relPath = rel ? `${rel}/${name}` : name;
      const info = await host.stat(under(fromNode, relPath));
      if (info === undefined) throw vanished(relPath);
      if (info.kind === 'directory') {
        await walk(relPath, depth + 1);
      } else if (info.kind === 'file') {
        if (++files > limits.maxFiles) throw new MediaError(`the media holds more than ${limits.maxFiles} files`, 'Put only the site-config files on the media.');
        if (info.size > limits.maxFileBytes) throw new MediaError(`${relPath} is ${info.size} bytes, more than a site-config file can be (${limits.maxFileBytes})`, 'Remove large files from the media.');
        bytes += info.size;
        if (bytes > limits.maxTotalBytes) throw new MediaError(`the media holds more than ${limits.maxTotalBytes} bytes`, 'Put only the site-config files on the media.');
        const data = await host.readFile(under(fromNode, relPath));
        hash.update(`${relPath}\0${data.length}\0`).update(data);
        await host.writeFileAtomic(under(toNode, relPath), data, 0o600);
      }
      // Symlinks, sockets, devices: never followed or copied (a symlink could point anywhere on the node).
    }
  };
  await walk('', 0);
  return { files, bytes, treeDigest: hash.digest('hex') };
}

/** Replaces `toNode` with a fresh copy of `fromNode` (both node paths), atomically (staging dir + rename). */
export async function snapshotInto(host: Host, fromNode: string, toNode: string): Promise<CopyResult> {
  const staging = `${toNode}.staging`;
  await host.remove(staging);
  try {
    const result = await copyTree(host, fromNode, staging);
    await host.remove(toNode);
    await host.rename(staging, toNode);
    return result;
  } catch (e) {
    await host.remove(staging);
    if (e instanceof MediaError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new MediaError(`reading the site-config failed (${code ?? (e as Error).message}) — was the media removed while it was being read?`, REMOVED_REMEDY, { cause: e });
  }
}

/** Mounts `device` read-only on a private directory, snapshots it into `toNode`, unmounts at once. */
export async function copyFromVolume(host: Host, device: string, toNode: string, fstype?: string): Promise<CopyResult> {
  await host.mkdirp(MOUNT_BASE, 0o700);
  await host.chmod(MOUNT_BASE, 0o700);
  const mountNode = `${MOUNT_BASE}/media-${randomBytes(6).toString('hex')}`;
  await host.mkdirp(mountNode, 0o700);
  const args = ['-o', 'ro,nosuid,nodev,noexec', ...(fstype ? ['-t', fstype] : []), device, host.toolPath(mountNode)];
  try {
    await host.runChecked('mount', args, { timeoutMs: 60_000 });
  } catch (e) {
    await host.removeEmptyDir(mountNode).catch(() => undefined);
    if (!(e instanceof CommandError)) throw e;
    throw new MediaError(`cannot mount ${device} (${e.detail})`, 'The media may be damaged or use a filesystem the node cannot read; write the site-config to a FAT, ext4 or ISO9660 volume.', { cause: e });
  }
  try {
    return await snapshotInto(host, mountNode, toNode);
  } finally {
    const un = await host.run('umount', [host.toolPath(mountNode)], { timeoutMs: 60_000 });
    // A yanked stick can leave the mount busy or dead: detach it lazily rather than leave it behind.
    if (un.code !== 0) await host.run('umount', ['-l', host.toolPath(mountNode)], { timeoutMs: 60_000 });
    await host.removeEmptyDir(mountNode).catch(() => undefined);
  }
}

/**
 * The drop directory holds files a technician copies over the network, maybe slowly: take it only when
 * nothing in it changed for `stableMs` (an inotify watch wakes the scan; this is the same rule for the
 * periodic rescan).
 */
export async function dropDirIsStable(host: Host, dirNode: string, stableMs: number, now = Date.now()): Promise<boolean> {
  let newest = 0;
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > COPY_LIMITS.maxDepth) return;
    for (const name of await host.listDir(dir)) {
      const p = path.posix.join(dir, name);
      const info = await host.stat(p);
      if (info?.kind === 'directory') await walk(p, depth + 1);
      else if (info?.kind === 'file') newest = Math.max(newest, info.mtimeMs);
    }
  };
  await walk(dirNode, 0);
  return newest > 0 && now - newest >= stableMs;
}
