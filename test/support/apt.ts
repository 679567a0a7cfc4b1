// Tests install the Debian packages they need themselves (a clean CI machine has none of them).
// Serialized with flock: several test files may ask at once and apt holds a global lock. Another apt-get on the
// machine (a second test suite, unattended-upgrades) holds dpkg's and apt's own locks: those are waited for, with
// a deadline and a line saying who holds them, instead of failing at once (apt-get fails at once by default).
import { execFileSync } from 'node:child_process';

/**
 * The locks apt-get and dpkg take (apt 2.6: `apt-get update` the lists lock, `apt-get install` dpkg's frontend
 * lock, dpkg's own lock and the archives lock — apt-pkg/deb/debsystem.cc, apt-private/private-download.cc,
 * Debian apt 2.6.1). Both tools hold the file open while they hold the lock, so fuser(1) names the holder.
 */
export const APT_LOCK_FILES = ['/var/lib/dpkg/lock-frontend', '/var/lib/dpkg/lock', '/var/lib/apt/lists/lock', '/var/cache/apt/archives/lock'];

/** Long enough for another suite's install on a loaded machine; it costs time only when a lock is stuck. */
const LOCK_WAIT_S = 15 * 60;

function installed(pkg: string): boolean {
  try {
    const out = execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.includes('install ok installed');
  } catch {
    return false;
  }
}

/**
 * A bash function, `wait_for_apt`, that returns once no process holds one of `lockFiles` open, telling on fd 3
 * (the test's stderr) once what it waits for; after `waitS` seconds it fails (exit 75) naming the holder on stderr.
 */
export function aptLockWaitFunction(lockFiles: readonly string[], waitS: number): string {
  const files = lockFiles.map((f) => `'${f}'`).join(' ');
  return [
    'wait_for_apt() {',
    `  local deadline=$(( $(date +%s) + ${waitS} )) said="" pids who`,
    `  while pids=$(fuser ${files} 2>/dev/null | tr -s ' ' '\\n' | grep -E '^[0-9]+$' | sort -u | paste -sd , -); [ -n "$pids" ]; do`,
    '    who=$(ps -o pid=,args= -p "$pids" 2>/dev/null | sed "s/^ *//" | paste -sd ";" -)',
    `    [ -n "$said" ] || { echo "ensureDebianPackages: waiting up to ${Math.round(waitS / 60)} min for apt's lock, held by: \${who:-process $pids}" >&3; said=1; }`,
    `    [ "$(date +%s)" -lt "$deadline" ] || { echo "apt's lock still held after ${waitS} s by: \${who:-process $pids}" >&2; return 75; }`,
    '    sleep 1',
    '  done',
    '}',
  ].join('\n');
}

/**
 * Installs the missing ones of `packages` (as root, non-interactively). Throws with apt's output on failure.
 * `startServices: false` keeps the packages' daemons from starting (policy-rc.d exit 101, invoke-rc.d(8)): chrony's
 * would adjust this machine's clock.
 */
export function ensureDebianPackages(packages: string[], opts: { startServices?: boolean } = {}): void {
  const missing = packages.filter((p) => !installed(p));
  if (missing.length === 0) return;
  const script = [
    'set -e',
    aptLockWaitFunction(APT_LOCK_FILES, LOCK_WAIT_S),
    'exec 9>/tmp/sno-reconfigure-apt.lock',
    `flock -n 9 || { echo "ensureDebianPackages: waiting up to ${LOCK_WAIT_S / 60} min for another test file's install (flock /tmp/sno-reconfigure-apt.lock)" >&3; flock -w ${LOCK_WAIT_S} 9; }`,
    // re-check under the lock: another test process may have installed them meanwhile
    `missing=""; for p in ${missing.join(' ')}; do dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; done`,
    '[ -z "$missing" ] && exit 0',
    'stamp=/var/lib/apt/periodic/sno-reconfigure-update-stamp',
    // The lists lock has no wait option: wait for it, and try again if another apt-get took it in between.
    'update() { local n; for n in 1 2 3; do wait_for_apt; if apt-get update -qq; then return 0; fi; fuser /var/lib/apt/lists/lock >/dev/null 2>&1 || return 1; done; return 1; }',
    'if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +360)" ]; then update; mkdir -p "$(dirname $stamp)"; touch "$stamp"; fi',
    ...(opts.startServices === false
      ? ['policy=/usr/sbin/policy-rc.d; own=""; if [ ! -e "$policy" ]; then printf "#!/bin/sh\\nexit 101\\n" > "$policy"; chmod 755 "$policy"; own=1; fi', 'trap \'[ -n "$own" ] && rm -f "$policy"\' EXIT']
      : []),
    'wait_for_apt',
    // DPkg::Lock::Timeout (apt >= 1.9.11): apt-get itself waits for dpkg's lock another apt-get takes after our look.
    `DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=${LOCK_WAIT_S} $missing`,
  ].join('\n');
  // fd 3 is this process's stderr: what the install waits for shows while it waits.
  execFileSync('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe', 2], timeout: 4 * LOCK_WAIT_S * 1000 });
}
