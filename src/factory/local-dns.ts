// `prepare`: the node-local DNS's records for the installed names (src/render/local-dns.ts). The installed
// domain's api, api-int and *.apps answer with the stable internal IP (or the Node's InternalIP), whatever the
// site's DNS knows. A node with assisted-service's 50-master-dnsmasq-configuration already answers for them;
// one rendered with --no-local-dns relies on the site's DNS (the agent's pre-kubelet check then decides).
import type { Host } from '../host/host';
import { assistedDnsmasqMarker, clusterRecords, dnsmasqRecords, INSTALLED_NAMES_CONF, LOCAL_DNS_ENV, LOCAL_DNS_UNIT } from '../host/local-dns';
import type { Check, ClusterFacts } from './preflight';
import { systemctl } from '../host/systemctl';

export interface LocalDnsPlan {
  check: Check;
  /** What to write, when ours is the node-local DNS. */
  records?: { file: string; text: string; env: string };
}

export async function planLocalDns(host: Host, facts: ClusterFacts, internalAddresses: string[]): Promise<LocalDnsPlan> {
  const id = 'local-dns';
  const domain = `${facts.clusterName}.${facts.baseDomain}`;
  if (await assistedDnsmasqMarker(host)) {
    return { check: { id, ok: true, detail: `the node answers for api, api-int and *.apps of ${domain} itself (assisted-service's 50-master-dnsmasq-configuration); the agent adds the new names beside it at the site` } };
  }
  if (!(await host.exists(`/etc/systemd/system/${LOCAL_DNS_UNIT}`))) {
    return { check: { id, ok: true, detail: `no node-local DNS (rendered with --no-local-dns): at the site, the site's DNS must resolve api-int.${domain} to this node, or the agent rolls the site network back` } };
  }
  const address = internalAddresses[0] ?? facts.nodeInternalIPs[0];
  if (!address || !facts.clusterName) {
    return { check: { id, ok: false, detail: 'the node-local DNS has no address to answer with (no internal IP, no Node InternalIP)', remedy: 'Render the MachineConfig with --internal-ip.' } };
  }
  return {
    check: { id, ok: true, detail: `the node answers for api, api-int and *.apps of ${domain} itself, with ${address} (${INSTALLED_NAMES_CONF})` },
    records: {
      file: INSTALLED_NAMES_CONF,
      text: dnsmasqRecords(`The installed names of ${facts.clusterName}, to the node's stable address.`, clusterRecords(domain, address, true)),
      env: `LOCAL_DNS_IP=${address}\n`,
    },
  };
}

export async function writeLocalDnsRecords(host: Host, records: NonNullable<LocalDnsPlan['records']>): Promise<void> {
  await host.writeFileAtomic(records.file, records.text, 0o644);
  await host.writeFileAtomic(LOCAL_DNS_ENV, records.env, 0o644);
  await systemctl(host, ['try-restart', LOCAL_DNS_UNIT], 60_000);
}
