// Connectivity checks the site-config asks for before a network change is committed
// (`spec.network.verify`): ICMP reachability with the host's `ping`, name resolution with `getent`
// (the host's NSS and resolv.conf, exactly what kubelet and CRI-O will use).
import type { Host } from './host';

export interface CheckOutcome {
  target: string;
  kind: 'ping' | 'resolve';
  ok: boolean;
  detail: string;
}

export async function pingOnce(host: Host, address: string): Promise<CheckOutcome> {
  const res = await host.run('ping', ['-c', '1', '-W', '2', address], { timeoutMs: 10_000 });
  const detail = res.code === 0 ? (res.stdout.match(/time[=<][\d.]+ ?ms/)?.[0] ?? 'reachable') : (res.stderr.trim() || res.stdout.trim().split('\n').pop() || `exit ${res.code}`);
  return { target: address, kind: 'ping', ok: res.code === 0, detail };
}

export async function resolveOnce(host: Host, name: string): Promise<CheckOutcome> {
  const res = await host.run('getent', ['ahosts', name], { timeoutMs: 15_000 });
  const addresses = [...new Set(res.stdout.split('\n').map((l) => l.trim().split(/\s+/)[0]).filter(Boolean))];
  return { target: name, kind: 'resolve', ok: res.code === 0 && addresses.length > 0, detail: res.code === 0 ? addresses.join(', ') : `does not resolve (exit ${res.code})` };
}

export type Checks = Map<string, () => Promise<CheckOutcome>>;

/** `ping ADDRESS` and `resolve NAME` checks by key, each address once. */
export function connectivityChecks(host: Host, ping: readonly string[], resolve: readonly string[]): Checks {
  return new Map<string, () => Promise<CheckOutcome>>([
    ...[...new Set(ping)].map((ip) => [`ping ${ip}`, () => pingOnce(host, ip)] as const),
    ...resolve.map((name) => [`resolve ${name}`, () => resolveOnce(host, name)] as const),
  ]);
}

/** Between two rounds of the checks still failing. */
const RECHECK_EVERY_MS = 2_000;

/**
 * Runs the checks in rounds until every one has passed once or the window is over; `onWait` hears the keys still
 * failing after each round that is not the last. The outcomes are each check's last.
 */
export async function checkUntilAllPass(
  checks: Checks,
  window: { expired(): boolean; remainingMs(): number },
  sleep: (ms: number) => Promise<void>,
  onWait?: (waitingFor: string[]) => void,
): Promise<{ ok: boolean; outcomes: CheckOutcome[] }> {
  const pending = new Map(checks);
  const results = new Map<string, CheckOutcome>();
  for (;;) {
    for (const [key, check] of pending) {
      const outcome = await check();
      results.set(key, outcome);
      if (outcome.ok) pending.delete(key);
    }
    if (pending.size === 0) return { ok: true, outcomes: [...results.values()] };
    if (window.expired()) return { ok: false, outcomes: [...results.values()] };
    onWait?.([...pending.keys()]);
    await sleep(Math.min(RECHECK_EVERY_MS, window.remainingMs()));
  }
}

/** The node's current global addresses (`ip -j addr`), without loopback and link-local. */
export async function currentAddresses(host: Host): Promise<string[]> {
  const res = await host.run('ip', ['-j', 'addr', 'show'], { timeoutMs: 10_000 });
  if (res.code !== 0) return [];
  try {
    const links = JSON.parse(res.stdout) as { ifname?: string; addr_info?: { local?: string; scope?: string }[] }[];
    return [...new Set(links.flatMap((l) => (l.addr_info ?? []).filter((a) => a.local && a.scope === 'global').map((a) => a.local!)))];
  } catch {
    return [];
  }
}
