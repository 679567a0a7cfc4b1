// Tests install the Debian packages they need themselves (a clean CI machine has none of them).
// Serialized with flock: several test files may ask at once and apt holds a global lock.
import { execFileSync } from 'node:child_process';

function installed(pkg: string): boolean {
  try {
    const out = execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.includes('install ok installed');
  } catch {
    return false;
  }
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
    // re-check under the lock: another test process may have installed them meanwhile
    `missing=""; for p in ${missing.join(' ')}; do dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; done`,
    '[ -z "$missing" ] && exit 0',
    'stamp=/var/lib/apt/periodic/sno-reconfigure-update-stamp',
    'if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +360)" ]; then apt-get update -qq; mkdir -p "$(dirname $stamp)"; touch "$stamp"; fi',
    ...(opts.startServices === false
      ? ['policy=/usr/sbin/policy-rc.d; own=""; if [ ! -e "$policy" ]; then printf "#!/bin/sh\\nexit 101\\n" > "$policy"; chmod 755 "$policy"; own=1; fi', 'trap \'[ -n "$own" ] && rm -f "$policy"\' EXIT']
      : []),
    'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing',
  ].join('\n');
  execFileSync('flock', ['/tmp/sno-reconfigure-apt.lock', 'bash', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 });
}
