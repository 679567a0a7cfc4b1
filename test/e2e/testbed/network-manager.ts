// The real NetworkManager with its Open vSwitch device plugin, for the testbed node (README "The node's network").
// Debian builds network-manager with --disable-ovs, and the daemon must be rebuilt with the plugin: NetworkManager
// exports only the symbols its own plugins use (tools/create-exports-NetworkManager.sh), and Debian's daemon lacks
// those the OVS plugin imports. So the testbed builds Debian's own source package, the same version as the binary
// package the rootfs installs (ROOTFS_RECIPE), with --enable-ovs and one testbed-only fix, and keeps two files of the
// result: /usr/sbin/NetworkManager and libnm-device-plugin-ovs.so, overlaid on the node's disk (newDisk).
//
// The result is cached like the rootfs: ~/.cache/sno-reconfigure/network-manager-<version>-<recipe hash>.tar
// (a few MB), built once per machine under flock, printing a line per stage (CI has no terminal, and the first build
// takes ~15-25 min on 2 cores). Where it cannot be built it fails, never skips, with the stage and the log's tail.
//
// The host's apt sources are not changed: apt reads a private copy of them with deb-src added, and keeps its lists
// and downloads beside the cache (Dir::Etc::SourceParts, Dir::State::Lists, Dir::Cache). The build dependencies are
// installed on the host (apt-get build-dep, ~130 MB), as a developer building the package would.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { debianMirror } from './preflight';

/** rootfs.ts's cache directory (not imported from there: rootfs.ts reads NM_BUILD_RECIPE at load time). */
function cacheDir(): string {
  return path.join(process.env.HOME || os.homedir(), '.cache', 'sno-reconfigure');
}

export const NM_BUILD_RECIPE = {
  /** Bump when the build script changes in a way the rest of the recipe does not show. */
  recipe: 1,
  sourcePackage: 'network-manager',
  /** Debian 12's binary package of the same version is what the rootfs installs (ROOTFS_RECIPE.secondStage). */
  version: '1.42.4-1+deb12u1',
  upstreamVersion: '1.42.4',
  suite: 'bookworm',
  /** debian/rules: the OVS plugin on; documentation, introspection and Vala bindings off (build time only). */
  rules: [
    ['--disable-ovs', '--enable-ovs'],
    ['--enable-introspection', '--disable-introspection'],
    ['--enable-gtk-doc', '--disable-gtk-doc'],
    ['--enable-vala', '--disable-vala'],
  ],
  targets: ['src/core/NetworkManager', 'src/core/devices/ovs/libnm-device-plugin-ovs.la'],
};

/** Where the overlaid files go on the node (Debian's paths for 1.42.4 on amd64). */
export const NM_DAEMON = '/usr/sbin/NetworkManager';
export const NM_OVS_PLUGIN = `/usr/lib/x86_64-linux-gnu/NetworkManager/${NM_BUILD_RECIPE.upstreamVersion}/libnm-device-plugin-ovs.so`;

/**
 * The testbed-only fix (never on RHCOS, whose kernel datapath gives br-ex's internal interface an ifindex of its own):
 * on Open vSwitch's userspace (netdev) datapath an ovs-interface has no kernel link (ifindex <= 0) and its MAC lives on
 * the TAP device NM tracks as its ip-ifindex. nm_device_update_hw_address() returns early there, so a profile's
 * cloned-mac-address never reads back as set: NM logs "set-hw-addr: new MAC address … not successfully set-cloned",
 * flaps the TAP and flushes br-ex's routes. With the fix the MAC is read from the ip-ifindex for that type only.
 * Applied as a substitution that must match exactly once (a changed source fails the build, naming this).
 */
const HWADDR_FIX = String.raw`
my $n = s{(nm_device_update_hw_address\(NMDevice \*self\)\n\{.*?priv = NM_DEVICE_GET_PRIVATE\(self\);\n)    if \(priv->ifindex <= 0\)\n        return FALSE;\n\n    hwaddr = nm_platform_link_get_address\(nm_device_get_platform\(self\), priv->ifindex, &hwaddrlen\);\n}{$1    {
        /* sno-reconfigure testbed: on the netdev datapath an ovs-interface's MAC is on its TAP (the ip-ifindex) */
        int ifindex = priv->ifindex;
        if (ifindex <= 0 && priv->type == NM_DEVICE_TYPE_OVS_INTERFACE)
            ifindex = nm_device_get_ip_ifindex(self);
        if (ifindex <= 0)
            return FALSE;
        hwaddr = nm_platform_link_get_address(nm_device_get_platform(self), ifindex, &hwaddrlen);
    }
}s;
die "the netdev MAC fix matched $n times in nm_device_update_hw_address (expected 1): the source changed\n" unless $n == 1;
`;

function buildScript(): string {
  const rules = NM_BUILD_RECIPE.rules.map(([from, to]) => `sub_rule '${from}' '${to}'`).join('\n');
  return `set -euo pipefail
[ -f "$TARBALL" ] && exit 0
started=$(date +%s)
stage() { echo "[testbed] NetworkManager $VERSION with its OVS plugin, $1 ($(( $(date +%s) - started )) s so far)"; }
fail() { echo "[testbed] NetworkManager build failed at: $1; last lines of $LOG:" >&2; tail -n 40 "$LOG" >&2; exit 1; }
work=$(mktemp -d "$CACHE/nm-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
: > "$LOG"
APT_OPTS=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d" -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o "DPkg::Lock::Timeout=900" -o "APT::Sandbox::User=root")
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"

stage "1/6: apt lists with source packages (private to the testbed: $APT_DIR)"
apt-get "\${APT_OPTS[@]}" update >> "$LOG" 2>&1 || fail "apt-get update (sources: $APT_DIR/sources.list.d)"
candidate=$(apt-cache "\${APT_OPTS[@]}" showsrc "$PACKAGE" 2>> "$LOG" | sed -n 's/^Version: //p' | sort -u | tr '\\n' ' ')
case " $candidate " in *" $VERSION "*) ;; *) echo "[testbed] the mirror has no source package $PACKAGE $VERSION (it has: \${candidate:-none}); update NM_BUILD_RECIPE and the rootfs pin together" >&2; exit 1 ;; esac

stage "2/6: build dependencies (apt-get build-dep, ~130 MB on the host)"
exec 9> /tmp/sno-reconfigure-apt.lock
flock -w 900 9 || fail "waiting for another test's apt-get (flock /tmp/sno-reconfigure-apt.lock)"
DEBIAN_FRONTEND=noninteractive apt-get "\${APT_OPTS[@]}" build-dep -y -q "$PACKAGE=$VERSION" >> "$LOG" 2>&1 || fail "apt-get build-dep $PACKAGE=$VERSION"
flock -u 9

stage "3/6: source package"
(cd "$work" && apt-get "\${APT_OPTS[@]}" source -q "$PACKAGE=$VERSION") >> "$LOG" 2>&1 || fail "apt-get source $PACKAGE=$VERSION"
src="$work/$PACKAGE-$UPSTREAM"
[ -d "$src" ] || fail "the source package did not unpack to $src"

stage "4/6: testbed fix for the netdev datapath's MAC, debian/rules with --enable-ovs, autoreconf"
perl -0777 -i -pe "$HWADDR_FIX" "$src/src/core/devices/nm-device.c" >> "$LOG" 2>&1 || fail "the netdev MAC fix (nm_device_update_hw_address)"
sub_rule() { grep -qE -- "[[:space:]]$1\\b" "$src/debian/rules" || fail "debian/rules has no $1 to turn into $2"; sed -i -E "s/([[:space:]])$1\\b/\\1$2/" "$src/debian/rules"; }
${rules}
(cd "$src" && NOCONFIGURE=true dh_autoreconf ./autogen.sh) >> "$LOG" 2>&1 || fail "autoreconf"

stage "5/6: configure (Debian's options)"
(cd "$src" && make -f debian/rules override_dh_auto_configure) >> "$LOG" 2>&1 || fail "configure"
grep -q '^#define WITH_OPENVSWITCH 1' "$src/config.h" || fail "configure did not enable the OVS plugin (config.h has no WITH_OPENVSWITCH 1)"

jobs=$(( $(nproc) + 1 ))
stage "6/6: make -j$jobs of the daemon and the OVS plugin (~15-20 min on 2 cores; a line every minute)"
(cd "$src" && make -j"$jobs" $TARGETS) >> "$LOG" 2>&1 &
make_pid=$!
while kill -0 "$make_pid" 2> /dev/null; do
  for _ in $(seq 60); do kill -0 "$make_pid" 2> /dev/null || break; sleep 1; done
  kill -0 "$make_pid" 2> /dev/null && stage "6/6: compiling, $(find "$src/src" -name '*.o' | wc -l) objects built"
done
wait "$make_pid" || fail "make $TARGETS"

out="$work/out"
mkdir -p "$out$(dirname "$NM_DAEMON")" "$out$(dirname "$NM_OVS_PLUGIN")"
daemon="$src/src/core/NetworkManager"
[ -f "$src/src/core/.libs/NetworkManager" ] && daemon="$src/src/core/.libs/NetworkManager"
file -b "$daemon" 2> /dev/null | grep -q ELF || head -c 4 "$daemon" | grep -q ELF || fail "no NetworkManager binary at $daemon"
strip --strip-unneeded -o "$out$NM_DAEMON" "$daemon"
strip --strip-unneeded -o "$out$NM_OVS_PLUGIN" "$src/src/core/devices/ovs/.libs/libnm-device-plugin-ovs.so"
tar -C "$out" --numeric-owner --owner=0 --group=0 -cf "$work/nm.tar" .
find "$CACHE" -maxdepth 1 -name 'network-manager-*.tar' -mmin +180 -delete
mv "$work/nm.tar" "$TARBALL"
stage "done: $TARBALL"
`;
}

export function nmBuildKey(): string {
  return createHash('sha256').update(JSON.stringify({ ...NM_BUILD_RECIPE, arch: process.arch, fix: HWADDR_FIX, script: buildScript() })).digest('hex').slice(0, 16);
}

/** The host's apt sources (deb822 or one-line) with `deb-src` added: what apt reads for the build, and nothing else. */
export function sourcesWithDebSrc(texts: { name: string; text: string }[]): string {
  const out: string[] = [];
  for (const { name, text } of texts) {
    if (name.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        if (/^Enabled:\s*no/im.test(stanza)) continue;
        const types = /^Types:\s*(.*)$/im.exec(stanza)?.[1]?.split(/\s+/) ?? [];
        if (!types.includes('deb')) continue;
        out.push(`${stanza.trim().replace(/^Types:.*$/im, 'Types: deb deb-src')}\n`);
      }
    } else {
      const lines = text.split('\n').filter((l) => /^\s*deb\s/.test(l));
      if (lines.length) out.push(`Types: deb deb-src\n${lines.map((l) => `# from ${name}: ${l.trim()}`).join('\n')}\n`);
      for (const l of lines) {
        const m = /^\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$/.exec(l);
        if (m) out.push(`Types: deb deb-src\nURIs: ${m[2]}\nSuites: ${m[3]}\nComponents: ${m[4]!.trim()}\n`);
      }
    }
  }
  return out.filter((s) => /^URIs:/m.test(s)).join('\n');
}

function hostSources(): { name: string; text: string }[] {
  const files: { name: string; text: string }[] = [];
  const read = (f: string) => {
    try {
      files.push({ name: f, text: readFileSync(f, 'utf8') });
    } catch {
      // absent
    }
  };
  read('/etc/apt/sources.list');
  try {
    for (const f of readdirSync('/etc/apt/sources.list.d').sort()) if (f.endsWith('.list') || f.endsWith('.sources')) read(path.join('/etc/apt/sources.list.d', f));
  } catch {
    // none
  }
  return files;
}

export interface NetworkManagerBuild {
  tarball: string;
  key: string;
  built: boolean;
  ms: number;
}

let ensured: Promise<NetworkManagerBuild> | undefined;

/** The cached build (built on first use on this machine, serialized with flock across test processes). */
export function ensureNetworkManagerBuild(): Promise<NetworkManagerBuild> {
  ensured ??= doEnsure();
  return ensured;
}

async function doEnsure(): Promise<NetworkManagerBuild> {
  const started = Date.now();
  const key = nmBuildKey();
  const dir = cacheDir();
  mkdirSync(dir, { recursive: true });
  const tarball = path.join(dir, `network-manager-${NM_BUILD_RECIPE.upstreamVersion}-${key}.tar`);
  if (existsSync(tarball)) return { tarball, key, built: false, ms: Date.now() - started };
  if (process.getuid?.() !== 0) throw new Error('building the testbed NetworkManager needs root (apt-get build-dep)');
  // the mirror apt uses here must be one with Debian's suite (the same check as the rootfs's)
  debianMirror(NM_BUILD_RECIPE.suite);
  const aptDir = path.join(dir, 'nm-build-apt');
  mkdirSync(path.join(aptDir, 'sources.list.d'), { recursive: true });
  const sources = sourcesWithDebSrc(hostSources());
  if (!sources) throw new Error('building the testbed NetworkManager: no `deb` entry in /etc/apt/sources.list or /etc/apt/sources.list.d to add deb-src to');
  writeFileSync(path.join(aptDir, 'sources.list.d', 'testbed-deb-src.sources'), sources);
  const env = {
    ...process.env,
    TARBALL: tarball,
    CACHE: dir,
    LOG: path.join(dir, 'network-manager-build.log'),
    APT_DIR: aptDir,
    PACKAGE: NM_BUILD_RECIPE.sourcePackage,
    VERSION: NM_BUILD_RECIPE.version,
    UPSTREAM: NM_BUILD_RECIPE.upstreamVersion,
    TARGETS: NM_BUILD_RECIPE.targets.join(' '),
    NM_DAEMON,
    NM_OVS_PLUGIN,
    HWADDR_FIX,
  };
  const lock = path.join(dir, 'network-manager.lock');
  const script = `exec 8> "$LOCK"; flock -n 8 || { echo "[testbed] waiting for another test process's NetworkManager build (flock $LOCK)"; flock 8; }; ${buildScript()}`;
  await runShowingProgress(['bash', '-c', script], { ...env, LOCK: lock }, 80 * 60_000);
  if (!existsSync(tarball)) throw new Error(`the NetworkManager build ended without ${tarball}`);
  return { tarball, key, built: true, ms: Date.now() - started };
}

/** Runs the build with its stage lines on this process's stderr as they come; a failure throws its last lines. */
function runShowingProgress(argv: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const tail: string[] = [];
    const onData = (b: Buffer) => {
      const text = b.toString('utf8');
      process.stderr.write(text);
      tail.push(...text.split('\n').filter(Boolean));
      tail.splice(0, Math.max(0, tail.length - 60));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`building the testbed NetworkManager failed (${signal ? `killed by ${signal}${signal === 'SIGKILL' ? ` after ${timeoutMs / 60_000} min` : ''}` : `exit ${code}`}):\n${tail.join('\n')}`));
    });
  });
}
