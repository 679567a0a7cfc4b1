// The node's disk: a Debian 12 rootfs built once with debootstrap and cached as a tarball keyed by a hash of
// the recipe (~/.cache/sno-reconfigure/rootfs-<key>.tar), so a re-run costs seconds instead of a
// debootstrap (measured ~70 s). The tarball is unpacked once per recipe into a read-only lower directory
// beside it; each machine's disk is an overlayfs mount of it with its own upper directory, mounted on the
// host for the machine's lifetime so the tests can write a node's files before it boots (the way Ignition
// would) and read them after it stops. Measured per machine: overlay ~0.05 s to create and remove, against
// 3-4.5 s to extract a copy plus 1-2 s to delete it (page-cache pressure makes copies slower as a run goes
// on). Where overlayfs cannot be mounted, the disk is a full copy of the tarball.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync, copyFileSync, lstatSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkMirror, debianMirror, preflight } from './preflight';
import { runOk, run } from './proc';
import { registerDir, registerMount, unregisterMount, TEMP_PREFIX } from './cleanup';
import { ensureNetworkManagerBuild, NM_BUILD_RECIPE } from './network-manager';

export const ROOTFS_RECIPE = {
  /** Bump when the build script below changes in a way the package list does not show. */
  version: 3,
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
    'openssl', // the kubelet stand-in (the cluster simulator's kubelet) makes its CSRs with `openssl req`
    'dnsmasq-base', // /usr/sbin/dnsmasq for the MachineConfig's node-local DNS (sno-reconfigure-dns.service), no service of its own
    'chrony', // the node's chronyd (RHCOS has chrony 4.x); the testbed runs it with -x: the host's clock is never touched
    'tzdata', // chrony.conf's `leapsectz right/UTC`
    // The stand-in DHCP client: busybox's udhcpc runs a script of ours on each lease, so the testbed's
    // "NetworkManager" (stand-ins/nm-model.cjs) sets the address itself with ip(8), as NM's internal client
    // does; isc-dhcp-client's dhclient-script would also rewrite resolv.conf and hostname behind the model.
    'busybox',
    // testbed-lan turns checksum offload off on the LAN side of the NIC's cable: Open vSwitch's userspace datapath
    // reads eno1 through a packet socket and hands frames to br-ex's TAP as they are, so a UDP checksum the sender
    // left to "hardware" (veth's CHECKSUM_PARTIAL) would reach br-ex unfinished and be dropped (DHCP, DNS).
    'ethtool',
    // configure-ovs matches `nmcli` output with awk "/\s${iface}\s*$/": only gawk knows \s (Debian's default awk is
    // mawk, which never matches: "cannot find connection for interface"); jq for its `ip -j` queries (real script).
    'gawk',
    'jq',
  ],
  /**
   * Installed by a second stage, apt-get in a chroot of the finished rootfs: `debootstrap --include` of these
   * fails ("Failure while configuring base packages ... golang-github-containers-common"). The podman runtime's
   * end-to-end test (test/e2e/agent-podman.test.ts) runs the real podman (4.3) on the node. openvswitch-switch (3.1):
   * the node's br-ex on Open vSwitch's userspace datapath (README "The node's network"). network-manager: Debian's
   * package of the version whose daemon and OVS plugin the testbed rebuilds (network-manager.ts, NM_BUILD_RECIPE),
   * overlaid on the disks of real-NetworkManager nodes only; disabled everywhere else (NM_UNITS_OFF).
   */
  secondStage: ['podman', 'crun', 'conmon', 'golang-github-containers-common', 'catatonit', 'openvswitch-switch', `network-manager=${NM_BUILD_RECIPE.version}`, `libnm0=${NM_BUILD_RECIPE.version}`],
};

/**
 * Podman settings for this test machine only, never shipped: without them no container starts here. The VM lacks
 * CAP_SYS_RESOURCE, so crun cannot raise RLIMIT_NPROC/NOFILE above the current limits ("setrlimit RLIMIT_NPROC:
 * Operation not permitted"): the defaults are set within them. The host's cgroup2 tree (a hybrid host) has no
 * pids controller ("the requested cgroup controller pids is not available"): no pids limit. RHCOS needs neither.
 */
const TESTBED_CONTAINERS_CONF = `# Testbed only (test/e2e/testbed/rootfs.ts): limits this test machine can grant; RHCOS needs none of this.
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=8192:8192"]
pids_limit = 0
`;

/** Units the podman packages enable that nothing here uses (the API socket, auto-update, restart at boot). */
const PODMAN_UNITS_OFF = ['default.target.wants/podman.service', 'default.target.wants/podman-restart.service', 'default.target.wants/podman-auto-update.service', 'timers.target.wants/podman-auto-update.timer', 'sockets.target.wants/podman.socket'];

/**
 * Debian's Open vSwitch units go through ovs-ctl, which loads the openvswitch kernel module (this kernel has none):
 * the node runs ovsdb-server and ovs-vswitchd from testbed units instead (sno-node.ts, testbed-ovs*.service).
 */
const OVS_UNITS_OFF = ['multi-user.target.wants/openvswitch-switch.service'];

/**
 * NetworkManager's units as Debian enables them: off in the rootfs, so a node in the host's network namespace can never
 * start a NetworkManager that would take the host's interfaces. A real-NetworkManager node enables them through its
 * Ignition (node-network.ts), and the guard drop-in (NM_GUARD) keeps them off unless testbed-lan found the node's own
 * private network namespace.
 */
const NM_UNITS_OFF = ['multi-user.target.wants/NetworkManager.service', 'network-online.target.wants/NetworkManager-wait-online.service', 'dbus-org.freedesktop.nm-dispatcher.service'];
const NM_GUARD = `# Testbed guard (test/e2e/testbed/rootfs.ts): NetworkManager only in a node's own network namespace, never the host's.
[Unit]
ConditionPathExists=/run/testbed-nm/private-netns
`;

/** Removed after debootstrap: nothing on the node reads them, and a smaller tarball extracts faster. */
const TRIM = ['var/cache/apt/archives/*.deb', 'var/cache/apt/*.bin', 'var/lib/apt/lists/*_*', 'usr/share/doc/*', 'usr/share/man/*', 'usr/share/locale/*', 'usr/share/info/*'];

function buildScript(): string {
  return `set -euo pipefail
[ -f "$TARBALL" ] && exit 0
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! debootstrap --variant="$VARIANT" --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR" > "$work/debootstrap.log" 2>&1; then
  echo "debootstrap failed; last lines of its log:" >&2; tail -n 40 "$work/debootstrap.log" >&2; exit 1
fi
# Second stage, in a mount namespace of its own: /proc and /dev for the package scripts vanish with it, and can
# never be under "$work" when the trap deletes it. policy-rc.d: no service starts during the install.
printf '#!/bin/sh\nexit 101\n' > "$work/rootfs/usr/sbin/policy-rc.d"; chmod 755 "$work/rootfs/usr/sbin/policy-rc.d"
if ! unshare --mount --propagation private bash -c 'set -e; R="$1"; mount -t proc proc "$R/proc"; mount --rbind /dev "$R/dev"
  chroot "$R" apt-get update -q
  DEBIAN_FRONTEND=noninteractive chroot "$R" apt-get install -y -q --no-install-recommends $SECOND_STAGE' _ "$work/rootfs" > "$work/second-stage.log" 2>&1; then
  echo "the second install stage failed; last lines of its log:" >&2; tail -n 40 "$work/second-stage.log" >&2; exit 1
fi
rm -f "$work/rootfs/usr/sbin/policy-rc.d"
for u in ${PODMAN_UNITS_OFF.join(' ')} ${OVS_UNITS_OFF.join(' ')} ${NM_UNITS_OFF.join(' ')}; do rm -f "$work/rootfs/etc/systemd/system/$u"; done
mkdir -p "$work/rootfs/etc/systemd/system/NetworkManager.service.d"
cat > "$work/rootfs/etc/systemd/system/NetworkManager.service.d/00-testbed-guard.conf" <<'EOF'
${NM_GUARD}EOF
# Debian's chrony.service (alias chronyd.service) would set this machine's clock: the node gets a -x unit instead.
rm -f "$work/rootfs/etc/systemd/system/chronyd.service" "$work/rootfs/etc/systemd/system/multi-user.target.wants/chrony.service"
ln -sf /dev/null "$work/rootfs/etc/systemd/system/chrony.service"
cat > "$work/rootfs/etc/containers/containers.conf" <<'EOF'
${TESTBED_CONTAINERS_CONF}EOF
cd "$work/rootfs"
rm -rf ${TRIM.join(' ')}
cd /
tar -C "$work/rootfs" --numeric-owner -cf "$work/rootfs.tar" .
# drop the tarballs of older recipes (each is ~150 MB) unless built in the last 3 hours: branches with another
# recipe may be testing on this machine at the same time, and would otherwise rebuild each other's away
find "$CACHE" -maxdepth 1 -name 'rootfs-*.tar' -mmin +180 -delete
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
    SECOND_STAGE: ROOTFS_RECIPE.secondStage.join(' '),
    SUITE: ROOTFS_RECIPE.suite,
    MIRROR: mirror,
  };
  await runOk(['flock', path.join(dir, 'rootfs.lock'), 'bash', '-c', buildScript()], { env, timeoutMs: 20 * 60_000 });
  return { tarball, key, built: true, ms: Date.now() - started };
}

const STAND_INS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stand-ins');
/** The testbed's NetworkManager model (stand-ins/nm-model.cjs) and the yaml package it reads profiles with. */
export const NM_MODEL_DIR = '/usr/local/lib/testbed-nm';

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
  /** Install the stand-in nmstatectl at /usr/bin/nmstatectl and the NetworkManager model it uses (default true). */
  nmstatectl?: boolean;
  /**
   * Overlay the testbed's build of NetworkManager with its OVS plugin (network-manager.ts) on Debian's package: the
   * real NetworkManager node (node-network.ts `networkManager: 'real'`). Builds it on first use on this machine.
   */
  realNetworkManager?: boolean;
}

export interface Disk {
  /** The machine's directory: the rootfs plus the testbed's own files (boot script, logs). */
  dir: string;
  /** The rootfs: the node's `/` (an overlay mount point, or a plain directory for a copy). */
  root: string;
  hostname: string;
  /** overlay: lower = the cached rootfs, upper = `<dir>/upper` (what this node changed). copy: a full copy. */
  kind: 'overlay' | 'copy';
}

/** The cached rootfs unpacked (once per recipe, under the same lock as the build): overlay lower directory. */
async function ensureLowerDir(image: RootfsImage): Promise<string> {
  const lower = image.tarball.replace(/\.tar$/, '');
  if (existsSync(path.join(lower, 'etc', 'os-release'))) return lower;
  const script = `set -euo pipefail
[ -e "$LOWER/etc/os-release" ] && exit 0
rm -rf "$LOWER.partial"; mkdir "$LOWER.partial"
tar -C "$LOWER.partial" --numeric-owner -xf "$TARBALL"
rm -rf "$LOWER"; mv "$LOWER.partial" "$LOWER"
# unpacked trees of older recipes that no overlay uses any more
for d in "$CACHE"/rootfs-*/; do d=\${d%/}; [ "$d" = "$LOWER" ] && continue; grep -qF "lowerdir=$d" /proc/self/mountinfo || rm -rf "$d"; done
`;
  await runOk(['flock', path.join(cacheDir(), 'rootfs.lock'), 'bash', '-c', script], { env: { ...process.env, LOWER: lower, TARBALL: image.tarball, CACHE: cacheDir() }, timeoutMs: 10 * 60_000 });
  return lower;
}

/** A fresh node disk from the cached rootfs: its own machine-id and hostname, testbed masks and stand-ins. */
export async function newDisk(opts: DiskOptions = {}): Promise<Disk> {
  const image = await ensureRootfsImage();
  const dir = mkdtempSync(path.join(opts.parentDir ?? os.tmpdir(), `${TEMP_PREFIX}${process.pid}-`));
  registerDir(dir);
  const root = path.join(dir, 'rootfs');
  mkdirSync(root);
  let kind: Disk['kind'] = 'overlay';
  const lower = await ensureLowerDir(image);
  mkdirSync(path.join(dir, 'upper'));
  mkdirSync(path.join(dir, 'work'));
  const mounted = await run(['mount', '-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${dir}/upper,workdir=${dir}/work`, root]);
  if (mounted.code === 0) {
    registerMount(root);
  } else {
    kind = 'copy';
    await runOk(['tar', '-C', root, '--numeric-owner', '-xf', image.tarball], { timeoutMs: 5 * 60_000 });
  }
  const hostname = opts.hostname ?? 'sno-node';
  // machine-id: a node has its own; the journal of each boot is kept under it across reboots.
  writeFileSync(path.join(root, 'etc/machine-id'), `${randomBytes(16).toString('hex')}\n`, { mode: 0o444 });
  writeFileSync(path.join(root, 'etc/hostname'), `${hostname}\n`);
  writeFileSync(path.join(root, 'etc/hosts'), `127.0.0.1\tlocalhost\n127.0.1.1\t${hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`);
  for (const unit of MASKED_UNITS) forceSymlink('/dev/null', path.join(root, 'etc/systemd/system', unit));
  installStandIn(root, 'mount.vfat', '/usr/sbin/mount.vfat');
  if (opts.realNetworkManager) {
    const nm = await ensureNetworkManagerBuild();
    await runOk(['tar', '-C', root, '--numeric-owner', '--no-overwrite-dir', '-xf', nm.tarball], { timeoutMs: 60_000 });
  }
  if (opts.nmstatectl !== false) {
    // nmstatectl changes the real interfaces through the testbed's NetworkManager model, which reads YAML profiles
    installStandIn(root, 'nm-model.cjs', `${NM_MODEL_DIR}/nm-model.cjs`);
    installStandIn(root, 'udhcpc-event', `${NM_MODEL_DIR}/udhcpc-event`);
    const yamlPackage = path.dirname(createRequire(import.meta.url).resolve('yaml/package.json'));
    for (const part of ['package.json', 'dist']) cpSync(path.join(yamlPackage, part), path.join(root, NM_MODEL_DIR, 'node_modules', 'yaml', part), { recursive: true });
    installStandIn(root, 'nmstatectl.cjs', '/usr/bin/nmstatectl');
  }
  return { dir, root, hostname, kind };
}

/**
 * A copy of a stopped node's disk, as a factory images a second server from the first: every file the node wrote
 * (for an overlay, its upper directory: whiteouts and xattrs kept) and the testbed's own files beside it (logs,
 * container storage), in a directory of its own. The copy shares nothing writable with the original.
 */
export async function cloneDisk(disk: Disk): Promise<Disk> {
  const dir = mkdtempSync(path.join(path.dirname(disk.dir), `${TEMP_PREFIX}${process.pid}-`));
  registerDir(dir);
  const root = path.join(dir, 'rootfs');
  mkdirSync(root);
  for (const entry of readdirSync(disk.dir)) {
    if (entry === 'rootfs' || entry === 'work') continue;
    await runOk(['cp', '-a', '--reflink=auto', path.join(disk.dir, entry), path.join(dir, entry)], { timeoutMs: 5 * 60_000 });
  }
  if (disk.kind === 'overlay') {
    mkdirSync(path.join(dir, 'work'));
    const lower = await ensureLowerDir(await ensureRootfsImage());
    await runOk(['mount', '-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${dir}/upper,workdir=${dir}/work`, root]);
    registerMount(root);
  } else {
    await runOk(['cp', '-a', '--reflink=auto', `${disk.root}/.`, root], { timeoutMs: 5 * 60_000 });
  }
  return { ...disk, dir, root };
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

/** Unmounts (overlay) and deletes a disk's directory; the machine must be stopped. */
export async function removeDisk(disk: Pick<Disk, 'dir' | 'root' | 'kind'>): Promise<void> {
  if (disk.kind === 'overlay') {
    const un = await run(['umount', disk.root]);
    if (un.code !== 0 && isMountPoint(disk.root)) {
      // still busy (a process of the host holding a file in it): detach it now, the kernel frees it later
      await runOk(['umount', '-l', disk.root]);
    }
    unregisterMount(disk.root);
  }
  // rm(1) is several times faster than fs.rm on a rootfs of ~10k files; --one-file-system guards the host
  const res = await run(['rm', '-rf', '--one-file-system', disk.dir], { timeoutMs: 120_000 });
  if (res.code !== 0) throw new Error(`removing ${disk.dir} failed: ${res.stderr.trim()}`);
}

export function isMountPoint(dir: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === dir);
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
