// The node answers for its own names, independent of the site's DNS (DESIGN.md section 2; issue 14 item 2).
// kubelet and every MCO-rendered kubeconfig reach the API as api-int.<cluster>.<installed domain>
// (Infrastructure status.apiServerInternalURL: machine-config-operator release-4.14 pkg/operator/sync.go), and
// from 4.14 the ingress canary probes canary-openshift-ingress-canary.apps.<installed domain> through DNS every
// minute (cluster-ingress-operator release-4.14 pkg/operator/controller/canary/). Nobody publishes the factory
// domain at an edge site.
//
// The same arrangement assisted-service gives single-node clusters in 50-master-dnsmasq-configuration
// (openshift/assisted-service master internal/network/manifests_generator.go: snoDnsmasqConf,
// forceDnsDispatcherScript, dnsMachineConfigManifest): a dnsmasq on the node that answers `address=` records
// for api, api-int and apps, a NetworkManager dispatcher that puts the node's IP first in /etc/resolv.conf (so
// pods, through CoreDNS's upstreams, resolve the same way), and rc-manager=unmanaged so NetworkManager leaves
// that file alone. lifecycle-agent rewrites that MachineConfig's overrides after a pivot
// (openshift-kni/lifecycle-agent internal/common/consts.go DnsmasqOverrides, DnsmasqMachineConfigName;
// lca-cli/postpivot/postpivot.go setDnsMasqConfiguration).
//
// Where the node has that MachineConfig (any generation: ASSISTED_DNSMASQ_PATHS) its dnsmasq already runs (and
// reads /etc/dnsmasq.d): ours stays off (one ConditionPathExists=! per marker; systemd starts a unit only when all
// its conditions hold) and our dispatcher does nothing, so the two never compete for port 53 or resolv.conf;
// our records go into /etc/dnsmasq.d, which either dnsmasq reads. The records: `prepare` writes the installed
// names (to the stable internal IP), the agent writes the new names (to the site address) at the site.
//
// Ours answers only what the node and its pods ask: loopback and LOCAL_DNS_IP (the stable internal IP on br-ex,
// which the dispatcher puts first in resolv.conf, so kubelet, CRI-O and CoreDNS's upstream use it), never the
// store LAN (an open resolver that would also tell anyone the cluster's internal names). dnsmasq(8), 2.90:
// with --listen-address and no --interface it listens on exactly those addresses, loopback only when 127.0.0.1
// is given; --bind-dynamic binds each of them (a query to the node's LAN address finds no socket) and picks an
// address up when it appears later (the internal IP arrives with br-ex); --local-service would not help, it is
// ignored once --listen-address is given. Before `prepare` writes LOCAL_DNS_IP, loopback only.
//
// /etc/dnsmasq.d is the dnsmasq package's directory (RHCOS has it; a node without that package does not), and
// dnsmasq refuses to start on a --conf-dir that is missing: the unit makes it first (mkdir -p leaves an existing
// one as it is). Not ConfigurationDirectory=, which would re-mode the package's directory and let
// `systemctl clean` delete it with assisted-service's files (systemd.exec(5)); not an Ignition `directories`
// entry, which the MCO refuses to roll out to a running node (openshift/machine-config-operator 3b7ffc348
// pkg/daemon/update.go reconcilable: "ignition directories section contains changes"); not a --conf-dir of our
// own, since assisted-service's dnsmasq reads only /etc/dnsmasq.d and our site records go beside it there.
//
// The dispatcher never names a nameserver the node does not hold: the first nameserver is tried first for every
// lookup, and a dead one costs each of them a timeout. `prepare` now refuses a node-local DNS without an internal
// IP (src/factory/local-dns.ts), but a node prepared before that has the factory address as LOCAL_DNS_IP, gone at
// the site: there the dispatcher names loopback, where dnsmasq always listens.

import { ASSISTED_DNSMASQ_MARKERS, ASSISTED_DNSMASQ_PATHS, clusterRecords, DNSMASQ_DIR, dnsmasqRecords, INSTALLED_NAMES_CONF, LOCAL_DNS_DISPATCHER, LOCAL_DNS_ENV, LOCAL_DNS_NM_CONF, LOCAL_DNS_UNIT, SITE_NAMES_CONF } from '../host/local-dns';

export { ASSISTED_DNSMASQ_MARKERS, ASSISTED_DNSMASQ_PATHS, clusterRecords, DNSMASQ_DIR, dnsmasqRecords, INSTALLED_NAMES_CONF, LOCAL_DNS_DISPATCHER, LOCAL_DNS_ENV, LOCAL_DNS_NM_CONF, LOCAL_DNS_UNIT, SITE_NAMES_CONF };

export function renderLocalDnsUnit(): string {
  return `[Unit]
Description=sno-reconfigure: local DNS for the cluster's own names
${ASSISTED_DNSMASQ_PATHS.map((p) => `ConditionPathExists=!${p}`).join('\n')}
Before=kubelet.service crio.service
After=network.target

[Service]
Environment=LOCAL_DNS_IP=127.0.0.1
EnvironmentFile=-${LOCAL_DNS_ENV}
ExecStartPre=/usr/bin/mkdir -p ${DNSMASQ_DIR}
ExecStart=/usr/sbin/dnsmasq --keep-in-foreground --conf-file=/dev/null --conf-dir=${DNSMASQ_DIR},.rpmnew,.rpmsave,.rpmorig --bind-dynamic --listen-address=127.0.0.1,\${LOCAL_DNS_IP}
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`;
}

export function renderLocalDnsNmConf(): string {
  return '[main]\nrc-manager=unmanaged\n';
}

/** NetworkManager dispatcher: NetworkManager's resolv.conf with the node's own dnsmasq as the first nameserver. */
export function renderLocalDnsDispatcher(): string {
  return `#!/bin/bash
# sno-reconfigure: the node's dnsmasq first in /etc/resolv.conf (as assisted-service's forcedns, which wins).
[ -e ${ASSISTED_DNSMASQ_MARKERS.dispatcher} ] && exit 0
case "\${2:-}" in
  up|dhcp4-change|dhcp6-change|connectivity-change|reapply) ;;
  *) exit 0 ;;
esac
[ -r ${LOCAL_DNS_ENV} ] || exit 0
# shellcheck source=/dev/null
. ${LOCAL_DNS_ENV}
[ -n "\${LOCAL_DNS_IP:-}" ] || exit 0
[ -n "$(ip -o addr show to "$LOCAL_DNS_IP")" ] || LOCAL_DNS_IP=127.0.0.1
base=/run/NetworkManager/resolv.conf
[ -r "$base" ] || exit 0
tmp=$(mktemp /etc/.sno-reconfigure-resolv.XXXXXX) || exit 0
{
  echo "nameserver $LOCAL_DNS_IP"
  grep -v -e '^#' -e "^nameserver $LOCAL_DNS_IP\\$" "$base"
} > "$tmp"
chmod 0644 "$tmp"
mv -f "$tmp" /etc/resolv.conf
exit 0
`;
}
