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
