// Applies the parts of an Ignition v3 config that a MachineConfig carries (storage.files with data: URLs,
// storage.directories, storage.links, systemd.units with contents/dropins/enabled/mask) to a node's root,
// the way Ignition does on first boot (coreos/ignition internal/exec/util/unit.go): `mask` is a symlink
// /etc/systemd/system/NAME -> /dev/null; `enabled` is a line `enable NAME` in
// /etc/systemd/system-preset/20-ignition.preset, which systemd applies on first boot. The testbed disk is not
// a first boot (it has a machine-id), so the preset is applied here with the node's own `systemctl preset`.
// It is the testbed's fallback until test/support/ignition.ts (the shared, complete implementation) exists.
import { gunzipSync } from 'node:zlib';
import { chmodSync, existsSync, lstatSync, mkdirSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import * as path from 'node:path';
import { resolveUnderRoot } from '../../../src/host/host';
import { runOk } from './proc';

export interface IgnitionFile {
  path: string;
  mode?: number;
  overwrite?: boolean;
  contents?: { source?: string; compression?: string | null };
}
export interface IgnitionUnit {
  name: string;
  enabled?: boolean;
  mask?: boolean;
  contents?: string;
  dropins?: { name: string; contents?: string }[];
}
export interface IgnitionConfig {
  ignition: { version: string };
  storage?: { files?: IgnitionFile[]; directories?: { path: string; mode?: number }[]; links?: { path: string; target: string; hard?: boolean }[] };
  systemd?: { units?: IgnitionUnit[] };
}

const PRESET = '/etc/systemd/system-preset/20-ignition.preset';

/** Decodes an RFC 2397 data URL (`data:[<mediatype>][;base64],<data>`), the only source a MachineConfig may use offline. */
export function decodeDataUrl(source: string, where: string): Buffer {
  const m = /^data:([^,]*?)(;base64)?,(.*)$/s.exec(source);
  if (!m) throw new Error(`${where}: only data: URLs can be applied offline; got "${source.slice(0, 40)}"`);
  return m[2] ? Buffer.from(m[3]!, 'base64') : Buffer.from(decodeURIComponent(m[3]!), 'utf8');
}

export async function applyIgnitionLite(root: string, config: IgnitionConfig): Promise<void> {
  if (!/^3\./.test(config.ignition?.version ?? '')) throw new Error(`ignition.version: expected a 3.x config, got "${config.ignition?.version}"`);
  for (const d of config.storage?.directories ?? []) {
    const target = resolveUnderRoot(root, d.path);
    mkdirSync(target, { recursive: true });
    if (d.mode !== undefined) chmodSync(target, d.mode);
  }
  for (const [i, f] of (config.storage?.files ?? []).entries()) {
    const where = `storage.files[${i}] (${f.path})`;
    const target = resolveUnderRoot(root, f.path);
    if (existsSync(target) && f.overwrite === false) throw new Error(`${where}: exists and overwrite is false`);
    let data = f.contents?.source !== undefined ? decodeDataUrl(f.contents.source, where) : Buffer.alloc(0);
    if (f.contents?.compression === 'gzip') data = gunzipSync(data);
    else if (f.contents?.compression) throw new Error(`${where}: compression "${f.contents.compression}" is not supported (gzip or none)`);
    mkdirSync(path.dirname(target), { recursive: true });
    rmSync(target, { force: true });
    // Ignition config spec v3 (doc/configuration-v3_x.md, storage.files.mode): files default to 0644
    writeFileSync(target, data, { mode: f.mode ?? 0o644 });
    chmodSync(target, f.mode ?? 0o644);
  }
  for (const l of config.storage?.links ?? []) {
    const target = resolveUnderRoot(root, l.path);
    mkdirSync(path.dirname(target), { recursive: true });
    rmSync(target, { force: true });
    symlinkSync(l.target, target);
  }
  const toPreset: string[] = [];
  for (const u of config.systemd?.units ?? []) {
    const unitPath = resolveUnderRoot(root, `/etc/systemd/system/${u.name}`);
    if (u.contents !== undefined) {
      mkdirSync(path.dirname(unitPath), { recursive: true });
      writeFileSync(unitPath, u.contents, { mode: 0o644 });
    }
    for (const d of u.dropins ?? []) {
      const dropin = resolveUnderRoot(root, `/etc/systemd/system/${u.name}.d/${d.name}`);
      mkdirSync(path.dirname(dropin), { recursive: true });
      writeFileSync(dropin, d.contents ?? '', { mode: 0o644 });
    }
    if (u.mask) {
      try {
        lstatSync(unitPath);
        rmSync(unitPath, { force: true });
      } catch {
        // absent
      }
      symlinkSync('/dev/null', unitPath);
    }
    if (u.enabled !== undefined) {
      const presetFile = resolveUnderRoot(root, PRESET);
      mkdirSync(path.dirname(presetFile), { recursive: true });
      appendFileSync(presetFile, `${u.enabled ? 'enable' : 'disable'} ${u.name}\n`);
      toPreset.push(u.name);
    }
  }
  if (toPreset.length) await runOk(['chroot', root, 'systemctl', 'preset', ...toPreset]);
}
