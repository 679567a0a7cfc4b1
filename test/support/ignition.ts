// Decodes the Ignition config of a rendered MachineConfig and applies it into a root directory the way
// Ignition and the machine-config-daemon would on a node: files with their modes, units and drop-ins under
// /etc/systemd/system, masks as links to /dev/null, `enabled` through `systemctl --root=ROOT enable|disable`
// (what the MCD runs). The systemd end-to-end tests install the agent into their rootfs with this.
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';

export interface IgnFile {
  path: string;
  mode?: number;
  overwrite?: boolean;
  contents?: { source?: string; compression?: string };
}

export interface IgnUnit {
  name: string;
  enabled?: boolean;
  mask?: boolean;
  contents?: string;
  dropins?: { name: string; contents?: string }[];
}

export interface IgnConfig {
  ignition: { version: string };
  storage?: { files?: IgnFile[] };
  systemd?: { units?: IgnUnit[] };
}

/** spec.config of a MachineConfig given as YAML or JSON text. */
export function ignitionFromMachineConfig(text: string): IgnConfig {
  const mc = parse(text) as { kind?: string; spec?: { config?: IgnConfig } };
  if (mc?.kind !== 'MachineConfig' || !mc.spec?.config?.ignition) throw new Error('not a MachineConfig with spec.config.ignition');
  return mc.spec.config;
}

/** RFC 2397 data URL → bytes (base64 or percent-encoded). */
export function decodeDataUrl(source: string): Buffer {
  const m = /^data:([^,]*),(.*)$/s.exec(source);
  if (!m) throw new Error(`not a data: URL: ${source.slice(0, 40)}…`);
  const meta = m[1] ?? '';
  const payload = m[2] ?? '';
  return meta.split(';').includes('base64') ? Buffer.from(payload, 'base64') : Buffer.from(decodeURIComponent(payload), 'utf8');
}

/** The bytes a file will have on the node (data URL decoded, gzip undone). */
export function decodeFileContents(file: IgnFile): Buffer {
  const source = file.contents?.source;
  if (source === undefined) return Buffer.alloc(0);
  const raw = decodeDataUrl(source);
  if (file.contents?.compression === 'gzip') return gunzipSync(raw);
  if (file.contents?.compression) throw new Error(`${file.path}: unsupported compression ${file.contents.compression}`);
  return raw;
}

export interface ApplyOptions {
  /** Run `systemctl --root` for enabled/disabled units (default true). */
  systemctl?: boolean;
}

export interface ApplyResult {
  files: string[];
  units: string[];
  enabled: string[];
  masked: string[];
}

function under(root: string, nodePath: string): string {
  if (!path.posix.isAbsolute(nodePath)) throw new Error(`Ignition paths must be absolute: ${nodePath}`);
  return path.join(root, path.posix.normalize(nodePath));
}

async function writeFile(target: string, data: Buffer | string, mode: number): Promise<void> {
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
  await fs.rm(target, { force: true });
  await fs.writeFile(target, data, { mode });
  await fs.chmod(target, mode);
}

export async function applyIgnition(config: IgnConfig, root: string, opts: ApplyOptions = {}): Promise<ApplyResult> {
  const result: ApplyResult = { files: [], units: [], enabled: [], masked: [] };
  for (const file of config.storage?.files ?? []) {
    await writeFile(under(root, file.path), decodeFileContents(file), file.mode ?? 0o644);
    result.files.push(file.path);
  }
  const unitDir = '/etc/systemd/system';
  for (const unit of config.systemd?.units ?? []) {
    const unitPath = under(root, `${unitDir}/${unit.name}`);
    if (unit.mask) {
      await fs.mkdir(path.dirname(unitPath), { recursive: true });
      await fs.rm(unitPath, { force: true });
      await fs.symlink('/dev/null', unitPath);
      result.masked.push(unit.name);
    } else if (unit.contents !== undefined) {
      await writeFile(unitPath, unit.contents, 0o644);
      result.units.push(unit.name);
    }
    for (const dropin of unit.dropins ?? []) {
      if (dropin.contents === undefined) continue;
      await writeFile(under(root, `${unitDir}/${unit.name}.d/${dropin.name}`), dropin.contents, 0o644);
    }
    if (unit.enabled !== undefined && opts.systemctl !== false && !unit.mask) {
      execFileSync('systemctl', [`--root=${root}`, unit.enabled ? 'enable' : 'disable', unit.name], { stdio: ['ignore', 'pipe', 'pipe'] });
      if (unit.enabled) result.enabled.push(unit.name);
    }
  }
  return result;
}
