// The node's known-good persistent network: the profiles in /etc/NetworkManager/system-connections (name, mode,
// content), saved in the state directory before the site state is applied and written back by the agent itself
// when a checkpoint cannot give them back (it is gone after a reboot; on the real NetworkManager a checkpoint
// restores only the profiles active on a device: real-node-network README, observations 4-6).
// NetworkManager rewrites a profile it restores (the default `autoconnect=true` dropped, keys reordered:
// early-apply.md, "The rolled-back profile is normalised"), so profiles are compared by content, not bytes.
import type { Host } from '../host/host';
import { isPlainObject } from '../siteconfig/problems';

export const PROFILE_DIR = '/etc/NetworkManager/system-connections';

export interface SavedProfile {
  name: string;
  mode: number;
  /** base64 of the file's bytes (profiles may hold secrets: the saved file is 0600 in the state directory). */
  content: string;
}

/** Saved profiles read back; undefined when the record is not what the agent writes (damaged). */
export function parseSavedProfiles(text: string): SavedProfile[] | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  const valid = Array.isArray(data) && data.every((p: unknown) => {
    const { name, mode, content } = isPlainObject(p) ? p : {};
    return typeof name === 'string' && name !== '' && !name.includes('/') && name !== '..' && typeof mode === 'number' && Number.isInteger(mode) && typeof content === 'string';
  });
  return valid ? (data as SavedProfile[]) : undefined;
}

/**
 * A keyfile's meaning: `section.key=value` lines, sorted, without comments and the keys NetworkManager drops when it
 * rewrites a profile at its default value (nm-keyfile writes no default: libnm-core-impl/nm-keyfile.c, and
 * early-apply.md saw `autoconnect=true` go). A profile that is not a keyfile (the testbed's model writes YAML)
 * is compared line by line, trimmed.
 */
export function profileMeaning(text: string): string[] {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#') && !l.startsWith(';'));
  if (!lines.some((l) => /^\[.+\]$/.test(l))) return lines.sort();
  const out: string[] = [];
  let section = '';
  for (const l of lines) {
    const header = /^\[(.+)\]$/.exec(l);
    if (header) {
      section = header[1]!;
      continue;
    }
    const eq = l.indexOf('=');
    const key = eq < 0 ? l : l.slice(0, eq).trim();
    const value = eq < 0 ? '' : l.slice(eq + 1).trim();
    if (section === 'connection' && key === 'autoconnect' && value === 'true') continue;
    out.push(`${section}.${key}=${value}`);
  }
  return out.sort();
}

export const sameProfile = (a: string, b: string): boolean => profileMeaning(a).join('\n') === profileMeaning(b).join('\n');

export async function readProfiles(host: Host): Promise<SavedProfile[]> {
  if (!(await host.exists(PROFILE_DIR))) return [];
  const out: SavedProfile[] = [];
  for (const name of (await host.listDir(PROFILE_DIR)).sort()) {
    const info = await host.stat(`${PROFILE_DIR}/${name}`);
    if (info?.kind !== 'file') continue;
    out.push({ name, mode: info.mode & 0o777, content: (await host.readFile(`${PROFILE_DIR}/${name}`)).toString('base64') });
  }
  return out;
}

const text = (p: SavedProfile) => Buffer.from(p.content, 'base64').toString('utf8');

/** The names of the profiles whose content differs from `saved` now, or that exist only on one side. */
export function profilesDiffer(saved: readonly SavedProfile[], now: readonly SavedProfile[]): string[] {
  const names = new Set([...saved.map((p) => p.name), ...now.map((p) => p.name)]);
  return [...names].filter((name) => {
    const a = saved.find((p) => p.name === name);
    const b = now.find((p) => p.name === name);
    return !a || !b || !sameProfile(text(a), text(b));
  }).sort();
}

/** Writes the saved profiles back (name, mode, bytes) and removes profiles made since. Returns what it changed. */
export async function writeProfilesBack(host: Host, saved: readonly SavedProfile[]): Promise<string[]> {
  const now = await readProfiles(host);
  const changed = profilesDiffer(saved, now);
  for (const name of changed) {
    const p = saved.find((s) => s.name === name);
    if (p) await host.writeFileAtomic(`${PROFILE_DIR}/${name}`, Buffer.from(p.content, 'base64'), p.mode);
    else await host.remove(`${PROFILE_DIR}/${name}`);
  }
  return changed;
}
