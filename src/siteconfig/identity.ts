// Which machine this is, read under the host root: the SMBIOS system UUID and serial number the kernel
// exports (/sys/class/dmi/id/product_uuid, product_serial; both root-only), and every network interface's MAC
// address — including the permanent address of bond ports (bonding_slave/perm_hwaddr), because a bond gives its
// ports the bond's MAC while the label on the machine shows the burnt-in one — but not a USB adapter's.
import type { Host } from '../host/host';
import { normalizeMac } from './net';
import type { MachineMatch } from './types';

export interface MachineIdentity {
  systemUUID?: string;
  serialNumber?: string;
  macAddresses: string[];
}

const DMI_DIR = '/sys/class/dmi/id';
const NET_DIR = '/sys/class/net';
const OVN_DERIVED = '0a:58:';
const NO_MAC = /^(00:)*00$/;

async function readTrimmed(host: Host, nodePath: string): Promise<string | undefined> {
  try {
    const text = (await host.readTextIfExists(nodePath))?.trim();
    return text === undefined || text === '' ? undefined : text;
  } catch {
    // EACCES (not root), EISDIR, ...: this identity source is simply not available.
    return undefined;
  }
}

export async function readMachineIdentity(host: Host): Promise<MachineIdentity> {
  const [systemUUID, serialNumber] = await Promise.all([readTrimmed(host, `${DMI_DIR}/product_uuid`), readTrimmed(host, `${DMI_DIR}/product_serial`)]);
  let interfaces: string[] = [];
  try {
    interfaces = await host.listDir(NET_DIR);
  } catch {
    interfaces = [];
  }
  const macs = new Set<string>();
  await Promise.all(
    interfaces.map(async (name) => {
      // A network adapter plugged in at the node is not the machine: anyone there can plug one in, with any burnt-in
      // address (the third hostile re-test of issue 36 met another store's signed spec.match.macAddress on a USB
      // adapter, the sixth on a Thunderbolt one). Its device's subsystem link names the bus
      // (Documentation/ABI/testing/sysfs-class-net: device); a PCI device tunnelled through a Thunderbolt or USB4 port
      // is on the PCI bus, and the kernel marks it "removable" (linux drivers/pci/probe.c pci_set_removable: everything
      // below an external-facing port; Documentation/ABI/testing/sysfs-devices-removable).
      if (/\/(usb|thunderbolt)$/.test(await host.readLink(`${NET_DIR}/${name}/device/subsystem`).catch(() => ''))) return;
      if ((await readTrimmed(host, `${NET_DIR}/${name}/device/removable`)) === 'removable') return;
      for (const file of ['address', 'bonding_slave/perm_hwaddr']) {
        const mac = await readTrimmed(host, `${NET_DIR}/${name}/${file}`);
        // OVN-Kubernetes derives an interface's address from its IP (0a:58 and the IPv4 address: ovn-kubernetes
        // go-controller pkg/util/net.go IPAddrToHWAddr), so ovn-k8s-mp0 has 0a:58:0a:80:00:02 on every node with the
        // default cluster network: never this machine's (the tenth hostile re-test of issue 36).
        if (mac !== undefined && !NO_MAC.test(normalizeMac(mac)) && !normalizeMac(mac).startsWith(OVN_DERIVED)) macs.add(normalizeMac(mac));
      }
    }),
  );
  return {
    ...(systemUUID !== undefined ? { systemUUID } : {}),
    ...(serialNumber !== undefined ? { serialNumber } : {}),
    macAddresses: [...macs].sort(),
  };
}

/** Why `match` does not fit `identity` (one reason per failing field), or [] when it fits. */
export function matchProblems(match: MachineMatch | undefined, identity: MachineIdentity): string[] {
  if (!match) return [];
  const reasons: string[] = [];
  if (match.systemUUID !== undefined) {
    const want = match.systemUUID.trim().toLowerCase();
    if (identity.systemUUID === undefined) reasons.push(`systemUUID ${want} is required, but this machine's system UUID cannot be read (${DMI_DIR}/product_uuid)`);
    else if (identity.systemUUID.toLowerCase() !== want) reasons.push(`systemUUID ${want} does not match this machine's ${identity.systemUUID.toLowerCase()}`);
  }
  if (match.serialNumber !== undefined) {
    const want = match.serialNumber.trim();
    if (identity.serialNumber === undefined) reasons.push(`serialNumber ${want} is required, but this machine's serial number cannot be read (${DMI_DIR}/product_serial)`);
    else if (identity.serialNumber.toLowerCase() !== want.toLowerCase()) reasons.push(`serialNumber ${want} does not match this machine's ${identity.serialNumber}`);
  }
  if (match.macAddress !== undefined) {
    const want = normalizeMac(match.macAddress);
    if (!identity.macAddresses.includes(want)) {
      reasons.push(`macAddress ${want} is not one of this machine's interfaces (${identity.macAddresses.length > 0 ? identity.macAddresses.join(', ') : 'none found'})`);
    }
  }
  return reasons;
}
