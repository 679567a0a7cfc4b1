// Does the site's own DNS know a name? Asked of the site's DNS servers directly (node:dns Resolver), not
// through /etc/resolv.conf: on the node that file names the node's own dnsmasq first, which answers for the
// cluster's names whatever the site publishes. Clients outside the node have only the site's DNS.
import { Resolver } from 'node:dns/promises';

export async function resolvesThrough(servers: string[], name: string, timeoutMs = 2_000): Promise<{ ok: boolean; detail: string }> {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  try {
    resolver.setServers(servers);
  } catch (e) {
    return { ok: false, detail: `the DNS servers ${servers.join(', ')} cannot be used (${(e as Error).message})` };
  }
  const answers = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
  if (addresses.length > 0) return { ok: true, detail: addresses.join(', ') };
  const why = answers.map((a) => (a.status === 'rejected' ? String((a.reason as NodeJS.ErrnoException).code ?? a.reason) : 'no address')).join('/');
  return { ok: false, detail: `not resolved by ${servers.join(', ')} (${why})` };
}
