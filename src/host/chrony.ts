// chronyd through the host seam: the node's /etc/chrony.conf for the site's time sources, and what `chronyc`
// says about the clock. RHCOS keeps time with chronyd (the RHEL package, chrony 4.x); OpenShift's documented way
// to change its sources is a MachineConfig that replaces /etc/chrony.conf (OpenShift docs, "Configuring chrony
// time service", installation_config), which the cluster step chrony writes with the same text as here.
import type { Host } from './host';

export const CHRONY_CONF = '/etc/chrony.conf';
export const CHRONY_UNIT = 'chronyd.service';
/** The MCD's copy of the MachineConfig the node runs (machine-config-operator pkg/daemon/constants, CurrentConfigPath). */
const MCD_CURRENT_CONFIG = '/etc/machine-config-daemon/currentconfig';

export interface TimeSources {
  servers: readonly string[];
  pools: readonly string[];
}

/**
 * The site's chrony.conf: its sources, then RHEL 9's default directives (chrony-4.x rhel chrony.conf) minus
 * the public pool and `sourcedir /run/chrony-dhcp` — the site named its sources, so a DHCP server's do not
 * join them. `makestep 1.0 3` lets chronyd step a clock that is more than a second off in its first three
 * updates after a start, which is what sets right a node that was powered off for months.
 */
export function chronyConf(sources: TimeSources): string {
  return [
    '# The site\'s time sources (sno-reconfigure, spec.ntp of the site-config).',
    ...sources.servers.map((s) => `server ${s} iburst`),
    ...sources.pools.map((s) => `pool ${s} iburst`),
    'driftfile /var/lib/chrony/drift',
    'makestep 1.0 3',
    'rtcsync',
    'keyfile /etc/chrony.keys',
    'ntsdumpdir /var/lib/chrony',
    'leapsectz right/UTC',
    'logdir /var/log/chrony',
    '',
  ].join('\n');
}

export interface Tracking {
  synchronised: boolean;
  /** The source chronyd follows (its address with -n), when synchronised. */
  source?: string;
  /** How far the system clock is from NTP time now, in seconds: positive when it is ahead. */
  offsetSeconds?: number;
}

/**
 * `chronyc -n tracking` (chrony 4.x client.c, process_cmd_tracking): "Reference ID : 7F000001 (127.0.0.1)",
 * "System time : 0.000000791 seconds fast of NTP time", "Leap status : Normal" — or "Not synchronised" with
 * reference 00000000 while it has no source.
 */
export function parseTracking(text: string): Tracking | undefined {
  const field = (name: string) => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(text)?.[1]?.trim();
  const leap = field('Leap status');
  const ref = field('Reference ID');
  if (leap === undefined || ref === undefined) return undefined;
  const time = /^([\d.]+) seconds (fast|slow) of NTP time$/.exec(field('System time') ?? '');
  const source = /^([0-9A-F]{8}) \((.*)\)$/.exec(ref);
  const synchronised = leap !== 'Not synchronised' && source !== null && source[1] !== '00000000';
  return {
    synchronised,
    ...(synchronised && source?.[2] ? { source: source[2] } : {}),
    ...(time ? { offsetSeconds: Number(time[1]) * (time[2] === 'fast' ? 1 : -1) } : {}),
  };
}

/** What chronyd says now; a problem sentence when it cannot say (not installed, not running). */
export async function tracking(host: Host): Promise<Tracking | string> {
  const res = await host.run('chronyc', ['-n', 'tracking'], { timeoutMs: 15_000 });
  const parsed = res.code === 0 ? parseTracking(res.stdout) : undefined;
  if (parsed) return parsed;
  return res.code === 127 ? 'chronyc is not installed on this node' : `chronyd does not answer (${(res.stderr || res.stdout).trim().split('\n')[0] || `chronyc exit ${res.code}`})`;
}

/** Steps the clock to NTP time now (`chronyc makestep`); false when chronyd refused (no synchronised source). */
export async function makeStep(host: Host): Promise<boolean> {
  return (await host.run('chronyc', ['makestep'], { timeoutMs: 15_000 })).code === 0;
}

/** Adds the sources to the running chronyd only (`chronyc add server|pool NAME iburst`, chrony >= 4.0). */
export async function addSources(host: Host, sources: TimeSources): Promise<void> {
  for (const [kind, names] of [['server', sources.servers], ['pool', sources.pools]] as const) {
    for (const name of names) await host.runChecked('chronyc', ['add', kind, name, 'iburst'], { timeoutMs: 15_000 });
  }
}

/**
 * true when the MachineConfig the node runs writes `file`. The MCD watches such files and marks the node
 * Degraded when one changes on disk (machine-config-operator release-4.12…4.16 pkg/daemon/drift_monitor.go,
 * on-disk validation in daemon.go), so the agent must not write them outside a MachineConfig.
 */
export async function managedByMachineConfig(host: Host, file: string): Promise<boolean> {
  const text = await host.readTextIfExists(MCD_CURRENT_CONFIG);
  if (!text) return false;
  try {
    const mc = JSON.parse(text) as { spec?: { config?: { storage?: { files?: { path?: string }[] } } } };
    return (mc.spec?.config?.storage?.files ?? []).some((f) => f.path === file);
  } catch {
    return false;
  }
}
