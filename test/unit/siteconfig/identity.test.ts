import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { matchProblems, readMachineIdentity } from '../../../src/siteconfig/identity';

const tmpDirs: string[] = [];
after(async () => {
  for (const d of tmpDirs) await fs.rm(d, { recursive: true, force: true });
});

async function rootWith(files: Record<string, string>): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-id-'));
  tmpDirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), text);
  }
  return root;
}

test('readMachineIdentity reads DMI and every interface address under the root', async () => {
  const root = await rootWith({
    'sys/class/dmi/id/product_uuid': '4C4C4544-0042-3510-8052-B4C04F333231\n',
    'sys/class/dmi/id/product_serial': ' ABC1234 \n',
    'sys/class/net/lo/address': '00:00:00:00:00:00\n',
    'sys/class/net/eno1/address': '52:54:00:AA:BB:01\n',
    'sys/class/net/eno2/address': '52:54:00:aa:bb:01\n',
    'sys/class/net/eno2/bonding_slave/perm_hwaddr': '52:54:00:aa:bb:02\n',
    'sys/class/net/bond0/address': '52:54:00:aa:bb:01\n',
  });
  const id = await readMachineIdentity(new LocalHost({ root }));
  assert.deepEqual(id, { systemUUID: '4C4C4544-0042-3510-8052-B4C04F333231', serialNumber: 'ABC1234', macAddresses: ['52:54:00:aa:bb:01', '52:54:00:aa:bb:02'] });
});

// The tenth hostile re-test of issue 36 (M7): OVN-Kubernetes' management port has the same address on every node
// (derived from its IP), so a config bound to it fitted them all.
test('an address OVN-Kubernetes derives from an IP (0a:58:…) is never the machine\'s', async () => {
  const root = await rootWith({
    'sys/class/net/eno1/address': '52:54:00:aa:bb:01\n',
    'sys/class/net/ovn-k8s-mp0/address': '0a:58:0a:80:00:02\n',
  });
  const id = await readMachineIdentity(new LocalHost({ root }));
  assert.deepEqual(id.macAddresses, ['52:54:00:aa:bb:01']);
  assert.equal(matchProblems({ macAddress: '0a:58:0a:80:00:02' }, id).length, 1);
});

// The third hostile re-test of issue 36: a USB Ethernet adapter carrying another store's node MAC made that store's
// signed config (spec.match.macAddress) fit this machine.
test('a USB network adapter is not part of the machine: its address never matches', async () => {
  const root = await rootWith({
    'sys/class/net/eno1/address': '52:54:00:aa:bb:01\n',
    'sys/devices/pci0000:00/0000:00:03.0/placeholder': '',
    'sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/placeholder': '',
    'sys/class/net/enx0c3796aabb07/address': '0c:37:96:aa:bb:07\n',
    'sys/bus/pci/placeholder': '',
    'sys/bus/usb/placeholder': '',
  });
  await fs.symlink('../../../devices/pci0000:00/0000:00:03.0', path.join(root, 'sys/class/net/eno1/device'));
  await fs.symlink('../../../bus/pci', path.join(root, 'sys/devices/pci0000:00/0000:00:03.0/subsystem'));
  await fs.symlink('../../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0', path.join(root, 'sys/class/net/enx0c3796aabb07/device'));
  await fs.symlink('../../../../../../bus/usb', path.join(root, 'sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/subsystem'));
  const id = await readMachineIdentity(new LocalHost({ root }));
  assert.deepEqual(id.macAddresses, ['52:54:00:aa:bb:01']);
  assert.match(matchProblems({ macAddress: '0c:37:96:aa:bb:07' }, id)[0]!, /0c:37:96:aa:bb:07 is not one of this machine's interfaces \(52:54:00:aa:bb:01\)/);
});

// The sixth hostile re-test of issue 36: a Thunderbolt or USB4 Ethernet adapter is a PCI device (tunnelled), so the USB
// rule let its address count; the kernel marks a PCI device below an external-facing port removable.
test('a Thunderbolt-tunnelled PCI adapter (removable) and a Thunderbolt host-to-host link are not the machine; a PCI NIC marked fixed is', async () => {
  const tunnelled = 'sys/devices/pci0000:00/0000:00:07.0/0000:05:00.0/0000:06:01.0/0000:07:00.0';
  const xdomain = 'sys/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/0-1.0';
  const root = await rootWith({
    'sys/class/net/eno1/address': '52:54:00:aa:bb:01\n',
    'sys/devices/pci0000:00/0000:00:03.0/removable': 'fixed\n',
    [`${tunnelled}/removable`]: 'removable\n',
    'sys/class/net/enp7s0/address': 'aa:bb:cc:00:42:42\n',
    [`${xdomain}/placeholder`]: '',
    'sys/class/net/thunderbolt0/address': '02:11:22:33:44:55\n',
    'sys/bus/pci/placeholder': '',
    'sys/bus/thunderbolt/placeholder': '',
  });
  await fs.symlink('../../../devices/pci0000:00/0000:00:03.0', path.join(root, 'sys/class/net/eno1/device'));
  await fs.symlink('../../../bus/pci', path.join(root, 'sys/devices/pci0000:00/0000:00:03.0/subsystem'));
  await fs.symlink(`../../../${tunnelled.slice(4)}`, path.join(root, 'sys/class/net/enp7s0/device'));
  await fs.symlink('../../../../../../bus/pci', path.join(root, tunnelled, 'subsystem'));
  await fs.symlink(`../../../${xdomain.slice(4)}`, path.join(root, 'sys/class/net/thunderbolt0/device'));
  await fs.symlink('../../../../../../../bus/thunderbolt', path.join(root, xdomain, 'subsystem'));
  const id = await readMachineIdentity(new LocalHost({ root }));
  assert.deepEqual(id.macAddresses, ['52:54:00:aa:bb:01']);
  assert.notDeepEqual(matchProblems({ macAddress: 'aa:bb:cc:00:42:42' }, id), []);
});

test('a machine without DMI or interfaces has an empty identity', async () => {
  const root = await rootWith({ 'sys/class/dmi/id/product_serial': '\n' });
  assert.deepEqual(await readMachineIdentity(new LocalHost({ root })), { macAddresses: [] });
});

test('matchProblems: every given field must fit, case-insensitively', () => {
  const id = { systemUUID: '4C4C4544-0042-3510-8052-B4C04F333231', serialNumber: 'ABC1234', macAddresses: ['52:54:00:aa:bb:01'] };
  assert.deepEqual(matchProblems(undefined, id), []);
  assert.deepEqual(matchProblems({ systemUUID: '4c4c4544-0042-3510-8052-b4c04f333231', serialNumber: 'abc1234', macAddress: '52-54-00-AA-BB-01' }, id), []);
  const reasons = matchProblems({ systemUUID: '00000000-0000-0000-0000-000000000000', serialNumber: 'X', macAddress: '52:54:00:aa:bb:99' }, id);
  assert.equal(reasons.length, 3);
  assert.match(reasons[0]!, /systemUUID 00000000-.* does not match this machine's 4c4c4544/);
  assert.match(reasons[1]!, /serialNumber X does not match this machine's ABC1234/);
  assert.match(reasons[2]!, /52:54:00:aa:bb:99 is not one of this machine's interfaces \(52:54:00:aa:bb:01\)/);
  assert.match(matchProblems({ serialNumber: 'X' }, { macAddresses: [] })[0]!, /cannot be read/);
});
