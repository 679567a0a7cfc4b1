// Finding the site-config volume by filesystem label (DESIGN.md section 4: case-insensitive). Three
// sources, because udev may be slow or absent: /dev/disk/by-label (udev's links), `lsblk` (reads udev's
// database: without udev it shows no labels), and probing with `blkid` (reads the superblocks itself; the
// only one that finds a labelled loop device on a machine without udev — measured on these machines).
import * as path from 'node:path';
import type { Host } from '../host/host';

export interface VolumeCandidate {
  /** Device path as the host tools see it (for mount). */
  device: string;
  /** Device path on the node (/dev/sdb1): the same device found two ways has the same one. */
  nodeDevice: string;
  label: string;
  uuid?: string;
  fstype?: string;
  foundBy: 'by-label' | 'lsblk' | 'blkid';
}

/** udev escapes bytes outside [A-Za-z0-9#+-.:=@_] in by-label names as \xNN. */
export function decodeUdevName(name: string): string {
  return name.replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function labelMatches(label: string | undefined | null, wanted: string[]): boolean {
  if (!label) return false;
  const l = label.trim().toLowerCase();
  return wanted.some((w) => w.toLowerCase() === l);
}

async function fromByLabel(host: Host, wanted: string[]): Promise<VolumeCandidate[]> {
  const names = (await host.listDir('/dev/disk/by-label')).filter((n) => labelMatches(decodeUdevName(n), wanted));
  return Promise.all(
    names.map(async (n) => {
      const link = `/dev/disk/by-label/${n}`;
      // Resolve udev's relative link (../../sdb1) so the same device found by lsblk is not tried twice.
      const target = await host.readLink(link).then((t) => path.posix.resolve('/dev/disk/by-label', t), () => link);
      return { device: host.toolPath(target), nodeDevice: target, label: decodeUdevName(n), foundBy: 'by-label' as const };
    }),
  );
}

interface LsblkDevice {
  name?: string;
  label?: string | null;
  fstype?: string | null;
  path?: string;
  uuid?: string | null;
  children?: LsblkDevice[];
}

export function parseLsblk(json: string, wanted: string[]): VolumeCandidate[] {
  let parsed: { blockdevices?: LsblkDevice[] };
  try {
    parsed = JSON.parse(json) as { blockdevices?: LsblkDevice[] };
  } catch {
    return [];
  }
  const out: VolumeCandidate[] = [];
  const walk = (devs: LsblkDevice[] | undefined) => {
    for (const d of devs ?? []) {
      if (labelMatches(d.label, wanted) && (d.path || d.name)) {
        out.push({ device: d.path ?? `/dev/${d.name}`, nodeDevice: d.path ?? `/dev/${d.name}`, label: d.label!, ...(d.uuid ? { uuid: d.uuid } : {}), ...(d.fstype ? { fstype: d.fstype } : {}), foundBy: 'lsblk' });
      }
      walk(d.children);
    }
  };
  walk(parsed.blockdevices);
  return out;
}

/** `blkid -o export` prints KEY=value blocks separated by blank lines. */
export function parseBlkidExport(text: string, wanted: string[]): VolumeCandidate[] {
  return text
    .split(/\n\s*\n/)
    .map((block) => Object.fromEntries(block.split('\n').map((l) => l.trim()).filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])))
    .filter((f: Record<string, string>) => f.DEVNAME && labelMatches(f.LABEL, wanted))
    .map((f: Record<string, string>) => ({ device: f.DEVNAME!, nodeDevice: f.DEVNAME!, label: f.LABEL!, ...(f.UUID ? { uuid: f.UUID } : {}), ...(f.TYPE ? { fstype: f.TYPE } : {}), foundBy: 'blkid' as const }));
}

/** Every block device whose filesystem label is one of `labels`, each device once. */
export async function findLabelledVolumes(host: Host, labels: string[]): Promise<VolumeCandidate[]> {
  const found: VolumeCandidate[] = [...(await fromByLabel(host, labels))];
  const lsblk = await host.run('lsblk', ['--json', '-o', 'NAME,LABEL,FSTYPE,PATH,UUID'], { timeoutMs: 15_000 });
  if (lsblk.code === 0) found.push(...parseLsblk(lsblk.stdout, labels));
  if (found.length === 0) {
    // -c /dev/null: bypass blkid's cache so a newly attached device is probed now.
    const blkid = await host.run('blkid', ['-c', '/dev/null', '-o', 'export'], { timeoutMs: 30_000 });
    if (blkid.code === 0) found.push(...parseBlkidExport(blkid.stdout, labels));
  }
  // The same device found twice: the first find is kept, with what a later one knows (udev's link tells no
  // filesystem type or UUID, lsblk does; mount gets -t explicitly). Devices, not UUIDs: two sticks cloned from one
  // image (dd, FAT made with mkfs.fat --invariant) share a UUID and may hold different sites, so each is a source of
  // its own, compared with the others before any is used (an ISO image written to a stick, whose disk and partition
  // both show it, is two sources that agree).
  const kept = new Map<string, VolumeCandidate>();
  const out: VolumeCandidate[] = [];
  for (const c of found) {
    const first = kept.get(c.nodeDevice);
    if (first) {
      first.fstype ??= c.fstype;
      first.uuid ??= c.uuid;
    } else {
      out.push(c);
      kept.set(c.nodeDevice, c);
    }
  }
  return out;
}
