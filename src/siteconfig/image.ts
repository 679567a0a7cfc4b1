// A site-config medium given as an image file (`validate site-config.img`): a FAT image for a USB stick or an
// ISO 9660 image for BMC virtual media, as docs/factory-and-site.md makes them. Its files are copied out with
// the same tools that made it — mtools' `mcopy` (no mount, no root) and `xorriso`'s extractor — into a private
// temporary directory, which is then validated like any folder. Nothing is mounted; the image is only read.
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Host } from '../host/host';
import { CommandError } from '../host/command-error';

export type ImageKind = 'fat' | 'iso9660';

/** Images larger than this are not site-config media (and are not copied out). */
export const MAX_IMAGE_BYTES = 2 * 1024 ** 3;

/**
 * The filesystem an image file holds, from its first 36 KiB: ISO 9660's "CD001" volume descriptor at 32769;
 * a FAT boot sector's 0x55AA signature with its filesystem type string ("FAT12", "FAT16", "FAT32").
 */
export function imageKindOf(head: Buffer): ImageKind | undefined {
  if (head.length >= 0x8006 && head.toString('latin1', 0x8001, 0x8006) === 'CD001') return 'iso9660';
  if (head.length >= 512 && head[510] === 0x55 && head[511] === 0xaa) {
    const fat1x = head.toString('latin1', 54, 59);
    const fat32 = head.toString('latin1', 82, 87);
    if (/^FAT1[26]$/.test(fat1x) || fat32 === 'FAT32') return 'fat';
  }
  return undefined;
}

/** What `file` holds, or undefined when it is not a FAT or ISO 9660 image (read from the head of the file). */
export async function readImageKind(file: string): Promise<{ kind: ImageKind; size: number } | undefined> {
  // An image file, or the stick itself (a block device, `media check /dev/sdb1`); never a FIFO (it would block).
  const st = await stat(file);
  if (!st.isFile() && !st.isBlockDevice()) return undefined;
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(st.isFile() ? Math.min(st.size, 36 * 1024) : 36 * 1024);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const kind = imageKindOf(head.subarray(0, bytesRead));
    // A block device's size is not in stat: it is what the tool reads, as for a stick that is mounted.
    return kind ? { kind, size: st.isFile() ? st.size : 0 } : undefined;
  } finally {
    await fh.close();
  }
}

const TOOLS: Record<ImageKind, { tool: string; pkg: string; args: (image: string, dir: string) => string[] }> = {
  // -s recursive, -n never ask before overwriting, -i the image; '::/*' is everything at the root.
  fat: { tool: 'mcopy', pkg: 'mtools', args: (image, dir) => ['-s', '-n', '-i', image, '::/*', dir] },
  // Extract the whole tree of the ISO (Rock Ridge / Joliet names kept) into dir.
  iso9660: { tool: 'xorriso', pkg: 'xorriso', args: (image, dir) => ['-osirrox', 'on', '-indev', image, '-extract', '/', dir] },
};

/**
 * Copies the files of an image out into a new private directory and returns it with its remover. Throws an
 * Error a person can act on when the image is too large or the tool is missing (naming its package) or fails.
 */
export async function extractImage(host: Host, image: string, kind: ImageKind, size: number): Promise<{ dir: string; remove: () => Promise<void> }> {
  if (size > MAX_IMAGE_BYTES) throw new Error(`${image} is ${Math.round(size / 1024 ** 2)} MiB: site-config media images are expected to be small (at most ${MAX_IMAGE_BYTES / 1024 ** 3} GiB)`);
  const { tool, pkg, args } = TOOLS[kind];
  const dir = await mkdtemp(path.join(tmpdir(), 'sno-reconfigure-image-'));
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    const found = await host.run('sh', ['-c', `command -v ${tool}`]);
    if (found.code !== 0) throw new Error(`reading ${kind === 'fat' ? 'a FAT' : 'an ISO 9660'} image needs ${tool}: install the ${pkg} package`);
    await host.runChecked(tool, args(image, dir), { timeoutMs: 120_000, shown: `${tool} (copying the files out of ${path.basename(image)})` });
    return { dir, remove };
  } catch (e) {
    await remove();
    if (e instanceof CommandError) throw new Error(`cannot read the ${kind === 'fat' ? 'FAT' : 'ISO 9660'} image ${image}: ${e.detail}`, { cause: e });
    throw e;
  }
}
