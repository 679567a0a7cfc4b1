// Can this machine host a testbed node? Every missing piece is named with what to do about it. The suite
// FAILS when this throws: an end-to-end test that skips itself would pass while proving nothing.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { ensureDebianPackages } from '../../support/apt';
import { run } from './proc';

export class TestbedUnavailableError extends Error {
  constructor(readonly reasons: string[]) {
    super(`this machine cannot host the systemd testbed:\n  - ${reasons.join('\n  - ')}`);
    this.name = 'TestbedUnavailableError';
  }
}

/** Host tools the testbed drives, and the Debian packages that carry them. */
const HOST_TOOLS: Record<string, string> = {
  unshare: 'util-linux',
  nsenter: 'util-linux',
  losetup: 'mount',
  mount: 'mount',
  chroot: 'coreutils',
  tar: 'tar',
  flock: 'util-linux',
  debootstrap: 'debootstrap',
  'mkfs.vfat': 'dosfstools',
  mcopy: 'mtools',
  'mkfs.ext4': 'e2fsprogs',
  ip: 'iproute2', // lo up in a machine with a private network
};

function onPath(tool: string): boolean {
  return (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').concat(['/usr/sbin', '/sbin']).some((d) => existsSync(path.join(d, tool)));
}

/** Where the unified (v2) cgroup hierarchy is mounted on the host: the machines get their cgroups under it. */
export function cgroup2Mount(): string | undefined {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    // mountinfo(5): ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    if (right.split(' ')[0] === 'cgroup2') return left.split(' ')[4];
  }
  return undefined;
}

let checked: Promise<void> | undefined;

/** Checks (once per process) that the namespace recipe can run here; installs the host packages it needs. */
export function preflight(): Promise<void> {
  checked ??= doPreflight();
  return checked;
}

async function doPreflight(): Promise<void> {
  const reasons: string[] = [];
  if (process.platform !== 'linux') throw new TestbedUnavailableError([`the testbed needs Linux namespaces; this is ${process.platform}`]);
  if (process.getuid?.() !== 0) throw new TestbedUnavailableError([`the testbed must run as root (mount, unshare, losetup); uid is ${process.getuid?.()}`]);
  try {
    ensureDebianPackages([...new Set(Object.values(HOST_TOOLS))]);
  } catch (e) {
    reasons.push(`installing the host tools failed: ${(e as Error).message.split('\n').slice(-5).join(' | ')}`);
  }
  for (const [tool, pkg] of Object.entries(HOST_TOOLS)) if (!onPath(tool)) reasons.push(`${tool} is missing (Debian package ${pkg})`);
  if (!cgroup2Mount()) reasons.push('no cgroup2 hierarchy is mounted on the host (each machine gets its own cgroup v2 subtree)');
  if (!readFileSync('/proc/filesystems', 'utf8').includes('\tcgroup2')) reasons.push('the kernel has no cgroup2 filesystem');
  if (!existsSync('/dev/loop-control')) reasons.push('/dev/loop-control is missing: the kernel has no loop device support (site-config media)');
  if (reasons.length) throw new TestbedUnavailableError(reasons);
  const probe = await run(['unshare', '--pid', '--fork', '--mount', '--uts', '--ipc', '--cgroup', '--propagation', 'private', 'true'], { timeoutMs: 20_000 });
  if (probe.code !== 0) throw new TestbedUnavailableError([`unshare --pid --fork --mount --uts --ipc --cgroup failed here: ${probe.stderr.trim() || `exit ${probe.code}`}`]);
}

/**
 * The Debian mirror apt on this machine uses (only Debian's packages are reachable here). Reads the one-line
 * `.list` and deb822 `.sources` formats; the first `main` entry for the base suite wins. SNO_TESTBED_MIRROR
 * overrides it.
 */
export function debianMirror(suite: string): string {
  if (process.env.SNO_TESTBED_MIRROR) return process.env.SNO_TESTBED_MIRROR;
  const files = ['/etc/apt/sources.list'];
  try {
    for (const f of readdirSync('/etc/apt/sources.list.d').sort()) {
      if (f.endsWith('.list') || f.endsWith('.sources')) files.push(path.join('/etc/apt/sources.list.d', f));
    }
  } catch {
    // no sources.list.d
  }
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const found = file.endsWith('.sources') ? fromDeb822(text, suite) : fromOneLine(text, suite);
    if (found) return found.replace(/\/+$/, '');
  }
  throw new TestbedUnavailableError([`no Debian mirror for suite "${suite}" (component main) in /etc/apt/sources.list or /etc/apt/sources.list.d; set SNO_TESTBED_MIRROR`]);
}

function fromOneLine(text: string, suite: string): string | undefined {
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').replace(/\[[^\]]*\]/, '').trim();
    const [type, uri, dist, ...components] = line.split(/\s+/);
    if (type === 'deb' && uri && dist === suite && components.includes('main')) return uri;
  }
  return undefined;
}

function fromDeb822(text: string, suite: string): string | undefined {
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields: Record<string, string> = {};
    for (const line of stanza.split('\n')) {
      const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
      if (m) fields[m[1]!.toLowerCase()] = m[2]!;
    }
    if (fields.enabled === 'no') continue;
    if (!(fields.types ?? '').split(/\s+/).includes('deb')) continue;
    if (!(fields.suites ?? '').split(/\s+/).includes(suite)) continue;
    if (!(fields.components ?? '').split(/\s+/).includes('main')) continue;
    const uri = (fields.uris ?? '').split(/\s+/)[0];
    if (uri) return uri;
  }
  return undefined;
}

/** Fails with a clear reason when the mirror does not answer (before a debootstrap that would time out). */
export async function checkMirror(mirror: string, suite: string): Promise<void> {
  const url = `${mirror}/dists/${suite}/Release`;
  try {
    const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(20_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  } catch (e) {
    throw new TestbedUnavailableError([`the Debian mirror does not answer (${url}): ${(e as Error).message}; the first run builds the rootfs with debootstrap from it`]);
  }
}
