// The node's disk: a Debian 12 rootfs built once with debootstrap and cached as a tarball keyed by a hash of
// the recipe, so a re-run costs a tar extraction (measured < 1 s) instead of a debootstrap (measured ~65 s).
// Each machine gets a fresh copy in its own temp dir. overlayfs also works inside the namespace (measured:
// mount 0.3 s) but was not used: the tests write a node's files before it boots (the way Ignition would) and
// read them after it stops, which an overlay only allows through a merged mount on the host.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, copyFileSync, lstatSync, unlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkMirror, debianMirror, preflight } from './preflight';
import { runOk, run } from './proc';
import { registerDir, TEMP_PREFIX } from './cleanup';

export const ROOTFS_RECIPE = {
  /** Bump when the build script below changes in a way the package list does not show. */
  version: 1,
  suite: 'bookworm',
  variant: 'minbase',
  packages: [
    'systemd',
    'systemd-sysv',
    'dbus',
    'iproute2',
    'util-linux', // blkid, lsblk, findmnt, agetty
    'mount',
    'dosfstools',
    'mtools', // the read-only vfat mount helper (stand-ins/mount.vfat) reads the FAT with mcopy
    'libstdc++6', // the host's node binary links it (ldd /usr/bin/node)
    'iputils-ping', // site-config `verify.ping`
    'procps',
  ],
};

/** Removed after debootstrap: nothing on the node reads them, and a smaller tarball extracts faster. */
const TRIM = ['var/cache/apt/archives/*.deb', 'var/lib/apt/lists/*_*', 'usr/share/doc/*', 'usr/share/man/*', 'usr/share/locale/*', 'usr/share/info/*'];

function buildScript(): string {
  return `set -euo pipefail
[ -f "$TARBALL" ] && exit 0
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! debootstrap --variant="$VARIANT" --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR" > "$work/debootstrap.log" 2>&1; then
  echo "debootstrap failed; last lines of its log:" >&2; tail -n 40 "$work/debootstrap.log" >&2; exit 1
fi
cd "$work/rootfs"
rm -rf ${TRIM.join(' ')}
cd /
tar -C "$work/rootfs" --numeric-owner -cf "$work/rootfs.tar" .
# drop the tarballs of older recipes: each is ~150 MB
rm -f "$CACHE"/rootfs-*.tar
mv "$work/rootfs.tar" "$TARBALL"
`;
}

export function recipeKey(): string {
  const arch = process.arch;
  return createHash('sha256').update(JSON.stringify({ ...ROOTFS_RECIPE, arch, trim: TRIM, script: buildScript() })).digest('hex').slice(0, 16);
}

export function cacheDir(): string {
  return path.join(process.env.HOME || os.homedir(), '.cache', 'sno-reconfigure');
}

export interface RootfsImage {
  tarball: string;
  key: string;
  /** True when this call ran debootstrap (the first run on a machine). */
  built: boolean;
  ms: number;
}

/** The cached rootfs tarball, built on first use (serialized with flock across test processes). */
export async function ensureRootfsImage(): Promise<RootfsImage> {
  await preflight();
  const started = Date.now();
  const key = recipeKey();
  const dir = cacheDir();
  mkdirSync(dir, { recursive: true });
  const tarball = path.join(dir, `rootfs-${key}.tar`);
  if (existsSync(tarball)) return { tarball, key, built: false, ms: Date.now() - started };
  const mirror = debianMirror(ROOTFS_RECIPE.suite);
  await checkMirror(mirror, ROOTFS_RECIPE.suite);
  const env = {
    ...process.env,
    TARBALL: tarball,
    CACHE: dir,
    VARIANT: ROOTFS_RECIPE.variant,
    PACKAGES: ROOTFS_RECIPE.packages.join(','),
    SUITE: ROOTFS_RECIPE.suite,
    MIRROR: mirror,
  };
  await runOk(['flock', path.join(dir, 'rootfs.lock'), 'bash', '-c', buildScript()], { env, timeoutMs: 20 * 60_000 });
  return { tarball, key, built: true, ms: Date.now() - started };
}

const STAND_INS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stand-ins');

/**
 * Units masked on every testbed node, each for a reason of the namespace (not of the product):
 * gettys would run agetty on /dev/console, which here is a log file; the audit socket would pour the host's
 * kernel audit stream into the node's journal; the timers are apt/e2scrub housekeeping that would start
 * downloads or disk scans during a test (their `Persistent=` makes them fire right after the first boot).
 */
export const MASKED_UNITS = [
  'getty@.service',
  'autovt@.service',
  'serial-getty@.service',
  'console-getty.service',
  'container-getty@.service',
  'systemd-journald-audit.socket',
  'apt-daily.timer',
  'apt-daily-upgrade.timer',
  'dpkg-db-backup.timer',
  'e2scrub_all.timer',
  'e2scrub_reap.service',
  'fstrim.timer',
];

export interface DiskOptions {
  hostname?: string;
  /** Parent directory for the disk's temp dir (default os.tmpdir()). */
  parentDir?: string;
  /** Install the stand-in nmstatectl at /usr/bin/nmstatectl (default true). */
  nmstatectl?: boolean;
}

export interface Disk {
  /** The machine's directory: the rootfs plus the testbed's own files (boot script, logs). */
  dir: string;
  /** The rootfs: the node's `/`. */
  root: string;
  hostname: string;
}

/** A fresh node disk from the cached rootfs: its own machine-id and hostname, testbed masks and stand-ins. */
export async function newDisk(opts: DiskOptions = {}): Promise<Disk> {
  const image = await ensureRootfsImage();
  const dir = mkdtempSync(path.join(opts.parentDir ?? os.tmpdir(), `${TEMP_PREFIX}${process.pid}-`));
  registerDir(dir);
  const root = path.join(dir, 'rootfs');
  mkdirSync(root);
  await runOk(['tar', '-C', root, '--numeric-owner', '-xf', image.tarball], { timeoutMs: 5 * 60_000 });
  const hostname = opts.hostname ?? 'sno-node';
  // machine-id: a node has its own; the journal of each boot is kept under it across reboots.
  writeFileSync(path.join(root, 'etc/machine-id'), `${randomBytes(16).toString('hex')}\n`, { mode: 0o444 });
  writeFileSync(path.join(root, 'etc/hostname'), `${hostname}\n`);
  writeFileSync(path.join(root, 'etc/hosts'), `127.0.0.1\tlocalhost\n127.0.1.1\t${hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
  for (const unit of MASKED_UNITS) forceSymlink('/dev/null', path.join(root, 'etc/systemd/system', unit));
  installStandIn(root, 'mount.vfat', '/usr/sbin/mount.vfat');
  if (opts.nmstatectl !== false) installStandIn(root, 'nmstatectl.cjs', '/usr/bin/nmstatectl');
  return { dir, root, hostname };
}

/** Copies a stand-in tool from test/e2e/testbed/stand-ins into the rootfs, executable. */
export function installStandIn(root: string, name: string, nodePath: string): void {
  const target = path.join(root, nodePath);
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(path.join(STAND_INS, name), target);
  chmodSync(target, 0o755);
}

function forceSymlink(target: string, linkPath: string): void {
  mkdirSync(path.dirname(linkPath), { recursive: true });
  try {
    lstatSync(linkPath);
    unlinkSync(linkPath);
  } catch {
    // absent
  }
  symlinkSync(target, linkPath);
}

/** Deletes a disk's directory (the machine must be stopped). */
export async function removeDisk(disk: Disk): Promise<void> {
  // rm(1) is several times faster than fs.rm on a rootfs of ~10k files
  const res = await run(['rm', '-rf', '--one-file-system', disk.dir], { timeoutMs: 120_000 });
  if (res.code !== 0) rmSync(disk.dir, { recursive: true, force: true });
}

/** Libraries the host's node binary loads that the rootfs lacks: they get bind-mounted next to node. */
export async function missingNodeLibraries(root: string, nodeBinary: string): Promise<string[]> {
  const out = await runOk(['ldd', nodeBinary]);
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m && !existsSync(path.join(root, m[1]!))) libs.push(m[1]!);
  }
  return libs;
}
