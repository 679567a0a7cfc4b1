// `prepare`: the node-local DNS's records for the installed names (src/render/local-dns.ts). The installed
// domain's api, api-int and *.apps answer with the stable internal IP, whatever the site's DNS knows. A node with
// assisted-service's 50-master-dnsmasq-configuration already answers for them; one rendered with --no-local-dns
// relies on the site's DNS (the agent's pre-kubelet check then decides).
//
// A node-local DNS without an internal IP is refused. OpenShift points these names at the node IP
// (openshift/assisted-service 71f3cc229 internal/network/manifests_generator.go: dnsmasq_config.sh and forcedns
// use HOST_IP, the installed host IP, as the records and the first nameserver, in the manifest it adds to its
// bootstrap-in-place SNO installs, AddDnsmasqForSingleNode's dnsmasq-bootstrap-in-place.yaml;
// openshift-kni/lifecycle-agent lca-cli/postpivot/postpivot.go setDnsMasqConfiguration moves them only with the
// node IP that recert changes).
// Without an internal IP that address is the factory one, gone from the node at the site: the names would answer
// with a dead address and the first nameserver would be dead. Following the site address instead would make the
// node's resolver answer on the store LAN, which ours never does (src/render/local-dns.ts), and the node IP
// itself would still change, which OpenShift supports only through recert. So: --internal-ip, or --no-local-dns.
import type { Host } from '../host/host';
import { assistedDnsmasqMarker, clusterRecords, namesTheNodeNeeds, dnsmasqRecords, INSTALLED_NAMES_CONF, LOCAL_DNS_ENV, LOCAL_DNS_UNIT } from '../host/local-dns';
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
  const assisted = await assistedDnsmasqMarker(host);
  const factoryAddress = facts.nodeInternalIPs[0] ?? 'the installed address';
  const without = (whose: string) => `${whose} would answer for api, api-int and *.apps of ${domain} with ${factoryAddress}, the factory address, gone from the node at the site without an internal IP`;
  const render = `Render the MachineConfig again with --internal-ip ${factoryAddress}/PREFIX (the node keeps it at every site)`;
  const then = ', apply it and run prepare again.';
  if (assisted) {
    if (internalAddresses.length === 0) return { check: { id, ok: false, detail: without("assisted-service's node-local DNS (50-master-dnsmasq-configuration)"), remedy: `${render}${then}` } };
    return { check: { id, ok: true, detail: `the node answers for api, api-int and *.apps of ${domain} itself (assisted-service's 50-master-dnsmasq-configuration); the agent adds the new names beside it at the site` } };
  }
  if (!(await host.exists(`/etc/systemd/system/${LOCAL_DNS_UNIT}`))) {
    const minor = /^4\.(\d+)\./.exec(facts.openshiftVersion ?? '')?.[1];
    const names = namesTheNodeNeeds(domain, minor === undefined ? undefined : Number(minor));
    return { check: { id, ok: true, detail: `no node-local DNS (rendered with --no-local-dns): at the site, the site's DNS must resolve ${names.join(' and ')} to this node${names.length > 1 ? ` (from OpenShift 4.14 the ingress canary probes a name under the installed *.apps: a wildcard record for apps.${domain})` : ''}, or the agent rolls the site network back` } };
  }
  const address = internalAddresses[0];
  if (!address) return { check: { id, ok: false, detail: without('the node-local DNS (sno-reconfigure-dns)'), remedy: `${render}, or --no-local-dns if every site's DNS serves these names${then}` } };
  return {
    check: { id, ok: true, detail: `the node answers for api, api-int and *.apps of ${domain} itself, with ${address}, the internal IP it keeps at every site (${INSTALLED_NAMES_CONF})` },
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
