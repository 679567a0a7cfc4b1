// The two kinds of site-config media `media build` writes from a site's folder: a FAT image for a USB stick and
// an ISO 9660 image for BMC virtual media, both labelled SITE-CONFIG (DESIGN.md section 4), reproducible, and
// each with a volume identity derived from its content: the agent knows a volume by its filesystem UUID
// (src/engine/detect.ts), so two different site-configs must never share one.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { CommandError } from '../host/command-error';
import type { Host } from '../host/host';
import { BuildError } from './inventory';

/** The FAT/ISO volume label the node looks for (DESIGN.md section 4), upper-case as FAT stores it. */
export const LABEL = 'SITE-CONFIG';

/** The tools the images need, each named with the Debian/RHEL package that has it. */
const TOOLS = { fat: [['mkfs.fat', 'dosfstools'], ['mcopy', 'mtools']], iso: [['xorriso', 'xorriso']] } as const;

export async function checkTools(host: Host, formats: readonly ('fat' | 'iso')[]): Promise<void> {
  for (const f of formats) {
    for (const [tool, pkg] of TOOLS[f]) {
      const res = await host.run('sh', ['-c', `command -v ${tool}`], { timeoutMs: 10_000 });
      if (res.code !== 0) throw new BuildError(`${tool} is not installed; install the ${pkg} package (it makes the ${f === 'fat' ? 'FAT' : 'ISO 9660'} images)`);
    }
  }
}

/** Files under `dir` (relative, sorted; folders too, before their files). */
async function treeOf(host: Host, dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await host.listDir(path.posix.join(dir, rel))).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    if ((await host.stat(path.posix.join(dir, p)))?.kind === 'directory') out.push(p, ...(await treeOf(host, dir, p)));
    else out.push(p);
  }
  return out;
}

/** sha256 over every path and file of the folder: what the volume's identity is derived from. */
async function contentHash(host: Host, dir: string, files: readonly string[]): Promise<Buffer> {
  const h = createHash('sha256');
  for (const f of files) {
    const p = path.posix.join(dir, f);
    h.update(`${f}\0`);
    if ((await host.stat(p))?.kind !== 'directory') h.update(await host.readFile(p)).update('\0');
  }
  return h.digest();
}

/**
 * The FAT volume serial (BS_VolID) in the boot sector: offset 39 on FAT12/16, 67 on FAT32 (and in FAT32's
 * backup boot sector, whose sector number is at offset 50) — Microsoft's FAT specification, "FAT: General
 * Overview of On-Disk Format" v1.03, sections 3.1–3.2. mkfs.fat 4.2 ignores `-i` when `--invariant` is given
 * (it always writes 1234-ABCD), so the serial is written here after mkfs.fat.
 */
export function setFatSerial(image: Buffer, serial: Buffer): void {
  const fat32 = image.toString('latin1', 82, 87) === 'FAT32';
  // Stored little-endian: blkid shows the serial 0x1a2b3c4d as 1A2B-3C4D.
  const le = Buffer.from(serial.subarray(0, 4)).reverse();
  le.copy(image, fat32 ? 67 : 39);
  if (fat32) {
    const backup = image.readUInt16LE(50);
    if (backup > 0 && backup < 0xffff) le.copy(image, backup * image.readUInt16LE(11) + 67);
  }
}

/**
 * An ISO 9660 volume has no serial: blkid shows its modification date (16 digits, YYYYMMDDhhmmsscc) as its UUID,
 * which is what GRUB and udev's by-uuid use. A date derived from the content, between 2000 and 2099.
 */
export function isoDateOf(hash: Buffer): string {
  const centiseconds = hash.readBigUInt64BE(0) % 315_576_000_000n;
  const d = new Date(Date.UTC(2000, 0, 1) + Number(centiseconds / 100n) * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}${two(Number(centiseconds % 100n))}`;
}

/** A FAT image just big enough (at least a 1.44 MB floppy's size), labelled SITE-CONFIG, `dd`-able to a stick. */
export async function fatImage(host: Host, siteDir: string, image: string, epoch: number): Promise<void> {
  const files = await treeOf(host, siteDir);
  let bytes = 0;
  for (const f of files) bytes += (await host.stat(path.posix.join(siteDir, f)))?.size ?? 0;
  const kib = Math.max(1440, Math.ceil((bytes * 2) / 1024) + 512);
  const serial = (await contentHash(host, siteDir, files)).subarray(0, 4);
  const env = { SOURCE_DATE_EPOCH: String(epoch) };
  await runTool(host, 'mkfs.fat', ['-C', '-n', LABEL, '--invariant', host.toolPath(image), String(kib)], env);
  const top = files.filter((f) => !f.includes('/'));
  await runTool(host, 'mcopy', ['-s', '-i', host.toolPath(image), ...top.map((f) => host.toolPath(path.posix.join(siteDir, f))), '::/'], env);
  const written = await host.readFile(image);
  setFatSerial(written, serial);
  await host.writeFileAtomic(image, written, 0o644);
}

/** An ISO 9660 image with Joliet and Rock Ridge names, volume ID SITE-CONFIG, for BMC virtual media. */
export async function isoImage(host: Host, siteDir: string, image: string, epoch: number): Promise<void> {
  const files = await treeOf(host, siteDir);
  const date = isoDateOf(await contentHash(host, siteDir, files));
  // File times come from the files themselves: set them all to the build's epoch.
  await runTool(host, 'touch', ['-h', '-d', `@${epoch}`, host.toolPath(siteDir), ...files.map((f) => host.toolPath(path.posix.join(siteDir, f)))], {});
  await runTool(host, 'xorriso', ['-as', 'mkisofs', '-quiet', '-V', LABEL, '-J', '-r', `--modification-date=${date}`, '-o', host.toolPath(image), host.toolPath(siteDir)], { SOURCE_DATE_EPOCH: String(epoch) });
}

async function runTool(host: Host, cmd: string, args: string[], env: Record<string, string>): Promise<void> {
  try {
    await host.runChecked(cmd, args, { timeoutMs: 120_000, env });
  } catch (e) {
    if (e instanceof CommandError) throw new BuildError(`${cmd} failed: ${e.detail}`, { cause: e });
    throw e;
  }
}
