// Reading the site-config off removable media: mount read-only with nosuid,nodev,noexec on a private 0700
// directory, copy into the state directory, unmount at once (the stick may be pulled any time; nothing may
// run from it). A copy of a directory (the drop directory) goes through the same limits.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Host } from '../host/host';

export class MediaError extends Error {
  constructor(message: string, readonly remedy: string) {
    super(message);
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

/** Copies a directory tree (regular files and directories only; symlinks and devices are skipped). */
export async function copyTree(fromAbs: string, toAbs: string, limits = COPY_LIMITS): Promise<CopyResult> {
  const hash = createHash('sha256');
  let files = 0;
  let bytes = 0;
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > limits.maxDepth) throw new MediaError(`the media nests directories deeper than ${limits.maxDepth} levels at ${rel}`, 'Put only the site-config files on the media.');
    const entries = (await fs.readdir(path.join(fromAbs, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    await fs.mkdir(path.join(toAbs, rel), { recursive: true, mode: 0o700 });
    for (const e of entries) {
      const relPath = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        await walk(relPath, depth + 1);
      } else if (e.isFile()) {
        const st = await fs.stat(path.join(fromAbs, relPath));
        if (++files > limits.maxFiles) throw new MediaError(`the media holds more than ${limits.maxFiles} files`, 'Put only the site-config files on the media.');
        if (st.size > limits.maxFileBytes) throw new MediaError(`${relPath} is ${st.size} bytes, more than a site-config file can be (${limits.maxFileBytes})`, 'Remove large files from the media.');
        bytes += st.size;
        if (bytes > limits.maxTotalBytes) throw new MediaError(`the media holds more than ${limits.maxTotalBytes} bytes`, 'Put only the site-config files on the media.');
        const data = await fs.readFile(path.join(fromAbs, relPath));
        hash.update(`${relPath}\0${data.length}\0`).update(data);
        await fs.writeFile(path.join(toAbs, relPath), data, { mode: 0o600 });
      }
      // Symlinks, sockets, devices: never followed or copied (a symlink could point anywhere on the node).
    }
  };
  await walk('', 0);
  return { files, bytes, treeDigest: hash.digest('hex') };
}

/** Replaces `toNode` (a node path) with a fresh copy of `fromAbs`, atomically (staging dir + rename). */
export async function snapshotInto(host: Host, fromAbs: string, toNode: string): Promise<CopyResult> {
  const target = host.resolve(toNode);
  const staging = `${target}.staging`;
  await fs.rm(staging, { recursive: true, force: true });
  try {
    const result = await copyTree(fromAbs, staging);
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(staging, target);
    return result;
  } catch (e) {
    await fs.rm(staging, { recursive: true, force: true });
    if (e instanceof MediaError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new MediaError(`reading the site-config failed (${code ?? (e as Error).message}) — was the media removed while it was being read?`, 'Re-insert the media and leave it in until the console says it was read.');
  }
}

/** Mounts `device` read-only on a private directory, snapshots it into `toNode`, unmounts at once. */
export async function copyFromVolume(host: Host, device: string, toNode: string, fstype?: string): Promise<CopyResult> {
  await host.mkdirp(MOUNT_BASE, 0o700);
  await fs.chmod(host.resolve(MOUNT_BASE), 0o700);
  const mountNode = `${MOUNT_BASE}/media-${randomBytes(6).toString('hex')}`;
  await host.mkdirp(mountNode, 0o700);
  const args = ['-o', 'ro,nosuid,nodev,noexec', ...(fstype ? ['-t', fstype] : []), device, host.toolPath(mountNode)];
  const mounted = await host.run('mount', args, { timeoutMs: 60_000 });
  try {
    if (mounted.code !== 0) {
      throw new MediaError(`cannot mount ${device}: ${mounted.stderr.trim() || `exit ${mounted.code}`}`, 'The media may be damaged or use a filesystem the node cannot read; write the site-config to a FAT, ext4 or ISO9660 volume.');
    }
    return await snapshotInto(host, host.resolve(mountNode), toNode);
  } finally {
    if (mounted.code === 0) {
      const un = await host.run('umount', [host.toolPath(mountNode)], { timeoutMs: 60_000 });
      // A yanked stick can leave the mount busy or dead: detach it lazily rather than leave it behind.
      if (un.code !== 0) await host.run('umount', ['-l', host.toolPath(mountNode)], { timeoutMs: 60_000 });
    }
    await fs.rmdir(host.resolve(mountNode)).catch(() => undefined);
  }
}

/**
 * The drop directory holds files a technician copies over the network, maybe slowly: take it only when
 * nothing in it changed for `stableMs` (chokidar's awaitWriteFinish wakes us; this is the same rule for
 * the periodic rescan).
 */
export async function dropDirIsStable(dirAbs: string, stableMs: number, now = Date.now()): Promise<boolean> {
  let newest = 0;
  const walk = async (d: string, depth: number): Promise<void> => {
    if (depth > COPY_LIMITS.maxDepth) return;
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p, depth + 1);
      else if (e.isFile()) newest = Math.max(newest, (await fs.stat(p)).mtimeMs);
    }
  };
  await walk(dirAbs, 0);
  return newest > 0 && now - newest >= stableMs;
}
