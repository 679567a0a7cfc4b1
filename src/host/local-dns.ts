// The node-local DNS's files and records (why, and the sources: src/render/local-dns.ts, which renders the
// service; the records are written at the factory by `prepare` and at the site by the network step).
import type { Host } from './host';

export const LOCAL_DNS_UNIT = 'sno-reconfigure-dns.service';
/**
 * assisted-service's 50-master-dnsmasq-configuration, which runs its own dnsmasq.service. Its generations
 * (openshift/assisted-service internal/network/manifests_generator.go): from e7b15d761 (2021) the MachineConfig
 * ships /etc/dnsmasq.d/single-node.conf itself; from dcad8400b (2023-10) a template that ExecStartPre fills; from
 * 71f3cc229 (2023-11) the ExecStartPre /usr/local/bin/dnsmasq_config.sh. The forcedns dispatcher is in all of them.
 */
export const ASSISTED_DNSMASQ_MARKERS = { configScript: '/usr/local/bin/dnsmasq_config.sh', dispatcher: '/etc/NetworkManager/dispatcher.d/forcedns' } as const;
/** Any one of these on the node means assisted-service's dnsmasq answers there (every generation above). */
export const ASSISTED_DNSMASQ_PATHS: readonly string[] = [ASSISTED_DNSMASQ_MARKERS.dispatcher, ASSISTED_DNSMASQ_MARKERS.configScript];

/** The first file of assisted-service's node-local DNS found on the node, or undefined when it has none. */
export async function assistedDnsmasqMarker(host: Pick<Host, 'exists'>): Promise<string | undefined> {
  for (const p of ASSISTED_DNSMASQ_PATHS) if (await host.exists(p)) return p;
  return undefined;
}
export const DNSMASQ_DIR = '/etc/dnsmasq.d';
/** The installed domain's api, api-int and apps → the internal IP (written by `prepare`). */
export const INSTALLED_NAMES_CONF = `${DNSMASQ_DIR}/sno-reconfigure-installed.conf`;
/** The new domain's api and apps → the site address (written by the agent at the site). */
export const SITE_NAMES_CONF = `${DNSMASQ_DIR}/sno-reconfigure-site.conf`;
/** LOCAL_DNS_IP=<address>: where the node's dnsmasq is reached (written by `prepare`, read by the dispatcher). */
export const LOCAL_DNS_ENV = '/etc/sno-reconfigure/local-dns.env';
export const LOCAL_DNS_DISPATCHER = '/etc/NetworkManager/dispatcher.d/40-sno-reconfigure-dns';
export const LOCAL_DNS_NM_CONF = '/etc/NetworkManager/conf.d/sno-reconfigure-dns.conf';

/** dnsmasq `address=` records: a domain record also answers every name below it (the *.apps wildcard). */
export function dnsmasqRecords(comment: string, records: { name: string; address: string }[]): string {
  return [`# ${comment} (sno-reconfigure)`, ...records.map((r) => `address=/${r.name}/${r.address}`), ''].join('\n');
}

/** The names of a cluster domain the node must answer for: api, api-int and (with everything below it) apps. */
export function clusterRecords(clusterDomain: string, address: string, withApiInt: boolean): { name: string; address: string }[] {
  return [
    { name: `api.${clusterDomain}`, address },
    ...(withApiInt ? [{ name: `api-int.${clusterDomain}`, address }] : []),
    { name: `apps.${clusterDomain}`, address },
  ];
}
