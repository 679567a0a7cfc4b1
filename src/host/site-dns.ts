// Does the site's own DNS know a name? Asked of the site's DNS servers directly, not through
// /etc/resolv.conf: on the node that file names the node's own dnsmasq first, which answers for the cluster's
// names whatever the site publishes. Clients outside the node have only the site's DNS.
//
// Through the host's `dig` (bind-utils), like every other network check of the agent (ping, getent): the
// query leaves from the node's network, in the podman runtime too, and a test's stand-in answers it.
import type { Host } from './host';

/** ok undefined: the question could not be asked (no `dig` on this node). */
export interface SiteDnsAnswer {
  ok: boolean | undefined;
  detail: string;
}

const ADDRESS = /^[0-9a-fA-F:.]+$/;

export async function resolvesThrough(host: Host, servers: string[], name: string): Promise<SiteDnsAnswer> {
  const tried: string[] = [];
  for (const server of servers) {
    for (const type of ['A', 'AAAA']) {
      const res = await host.run('dig', ['+short', '+time=2', '+tries=1', `@${server}`, name, type], { timeoutMs: 8_000 });
      if (res.code === 127) return { ok: undefined, detail: 'dig (bind-utils) is not on this node' };
      const addresses = res.stdout.split('\n').map((l) => l.trim()).filter((l) => ADDRESS.test(l));
      if (res.code === 0 && addresses.length > 0) return { ok: true, detail: addresses.join(', ') };
      tried.push(res.code === 0 ? `${server}: no ${type} record` : `${server}: no answer (dig exit ${res.code})`);
    }
  }
  return { ok: false, detail: `not resolved (${tried.join('; ')})` };
}
