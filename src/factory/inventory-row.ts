// The node's row of the fleet inventory (issue 30): what `media build` needs to know of each node — its identity
// for spec.match, the names it was installed with (a site-config must keep them: renaming is unsupported), and
// its key for sealed files — collected by `prepare` instead of copied off the console by hand. Written as a YAML
// list of one row, so the rows of many nodes concatenate (`cat node-*.yaml`) into one inventory.
import { normalizeMac } from '../siteconfig/net';
import { readMachineIdentity } from '../siteconfig/identity';
import type { Host } from '../host/host';

/** The columns, named as the site-config names the same facts (spec.match, spec.clusterName, spec.hostname). */
export interface NodeInventoryRow {
  serialNumber?: string;
  systemUUID?: string;
  /** The uplink's MAC: the interface of the default route (br-ex carries the NIC's MAC, see uplinkMac). */
  macAddress?: string;
  clusterName?: string;
  hostname?: string;
  /** The domain the node was installed with (the site-config's baseDomain is the new one). */
  installedDomain?: string;
  openshiftVersion?: string;
  /** The node key's public half (PEM): `media build` seals the row's secrets to it. */
  nodePublicKey?: string;
  nodeKeyFingerprint?: string;
  /** Power the node on at its site before this (the first of its certificates to expire). */
  shipBy?: string;
}

/**
 * The interface of the default route (/proc/net/route, then /proc/net/ipv6_route) and its MAC. configure-ovs
 * takes the uplink the same way and gives br-ex the NIC's MAC (802-3-ethernet.cloned-mac-address;
 * openshift/machine-config-operator acf19a7, templates/common/_base/files/configure-ovs-network.yaml), so on an
 * OVN-Kubernetes node br-ex's address is the NIC's.
 */
export async function uplinkMac(host: Host): Promise<string | undefined> {
  const v4 = (await host.readTextIfExists('/proc/net/route').catch(() => undefined)) ?? '';
  const v6 = (await host.readTextIfExists('/proc/net/ipv6_route').catch(() => undefined)) ?? '';
  const iface =
    v4.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[1] === '00000000' && f[7] === '00000000')?.[0] ??
    v6.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === '0'.repeat(32) && f[1] === '00' && f[9] !== 'lo')?.[9];
  if (!iface || iface.includes('/')) return undefined;
  const mac = (await host.readTextIfExists(`/sys/class/net/${iface}/address`).catch(() => undefined))?.trim();
  return mac ? normalizeMac(mac) : undefined;
}

export async function nodeInventoryRow(host: Host, facts: Omit<NodeInventoryRow, 'serialNumber' | 'systemUUID' | 'macAddress'>): Promise<NodeInventoryRow> {
  const id = await readMachineIdentity(host);
  const mac = await uplinkMac(host);
  const row: NodeInventoryRow = { serialNumber: id.serialNumber, systemUUID: id.systemUUID, macAddress: mac, ...facts };
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v)) as NodeInventoryRow;
}
