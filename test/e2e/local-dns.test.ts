// The node-local DNS on real systemd with a real dnsmasq (Debian dnsmasq-base), as the MachineConfig ships it
// and `prepare` fills it (issue 14 item 2): at the site, kubelet's api-int name and the canary host of the
// installed apps domain resolve to the node without any site DNS, and after the run so do the new names.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { LOCAL_DNS_UNIT } from '../../src/render/local-dns';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { CLUSTER, FACTORY_LAN, SITE_DOMAIN, SITE_LAN, eventually, factoryNode, siteConfigYaml } from './testbed/sno-node';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

test('a real dnsmasq answers for the installed names at the site, and for the new names after the run', async () => {
  await ensureRootfsImage();
  // The node answers on its stable internal IP, which the product's dispatcher keeps on br-ex at the site too (the
  // factory address without --internal-ip is gone from the node after the relocation, and with it that nameserver).
  const node = await factoryNode(bed, { internalIp: true });
  const m = node.machine;
  await node.boot();
  await m.waitForUnit(LOCAL_DNS_UNIT, ['ActiveState'], (u) => u.ActiveState === 'active', 60_000);
  // At the factory boot, before prepare wrote anything into /etc/dnsmasq.d: the disk has no such directory (Debian's
  // dnsmasq-base does not own it, as RHCOS's dnsmasq package does), and the unit made it instead of failing.
  const factoryBoot = (await m.journalctl('-b', '-1', '-u', LOCAL_DNS_UNIT, '-o', 'cat', '--no-pager')).stdout;
  assert.match(factoryBoot, /Started/, factoryBoot);
  assert.doesNotMatch(factoryBoot, /cannot access directory|Failed with result|Main process exited/, factoryBoot);
  // The product's NetworkManager dispatcher (run by the testbed's NetworkManager model) puts the node's dnsmasq first.
  await eventually(() => assert.match(m.readFile('/etc/resolv.conf'), new RegExp(`^nameserver ${FACTORY_LAN.nodeIp.replace(/\./g, '\\.')}$`, 'm')), 30_000);
  const resolve = async (name: string) => (await m.exec(['getent', 'hosts', name], { timeoutMs: 15_000 })).stdout.trim().split(/\s+/)[0];
  const installed = `${CLUSTER.clusterName}.${CLUSTER.factoryDomain}`;
  const diag = async () => {
    for (const argv of [['sh', '-c', 'ls -la /etc/dnsmasq.d; cat /etc/dnsmasq.d/*; cat /etc/sno-reconfigure/local-dns.env; grep hosts /etc/nsswitch.conf; ip addr; ss -lunp | head'], ['journalctl', '-u', LOCAL_DNS_UNIT, '--no-pager', '-n', '30'], ['getent', 'hosts', `api-int.${installed}`]]) {
      const r = await m.exec(argv, { timeoutMs: 15_000 });
      console.log(`$ ${argv.join(' ')}\n${r.stdout}${r.stderr}`);
    }
  };
  await eventually(async () => assert.equal(await resolve(`api-int.${installed}`), FACTORY_LAN.nodeIp), 30_000).catch(async (e: unknown) => {
    await diag();
    throw e;
  });
  assert.equal(await resolve(`canary-openshift-ingress-canary.apps.${installed}`), FACTORY_LAN.nodeIp);
  assert.equal(await resolve(`api.${installed}`), FACTORY_LAN.nodeIp);

  await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml() });
  await node.waitForSuccess();
  const site = `${CLUSTER.clusterName}.${SITE_DOMAIN}`;
  await eventually(async () => assert.equal(await resolve(`api.${site}`), SITE_LAN.nodeIp), 30_000);
  assert.equal(await resolve(`console-openshift-console.apps.${site}`), SITE_LAN.nodeIp);
  assert.equal(await resolve(`api-int.${installed}`), FACTORY_LAN.nodeIp, 'the installed names still answer');
  assert.equal((await m.systemctl('--failed', '--no-legend', '--plain')).stdout.trim(), '');
});
