// The testbed's node network (test/e2e/testbed/node-network.ts, README "The node's network") on one node booted
// once: real Open vSwitch with br-ex built by the configure-ovs stand-in at boot, the nmstatectl stand-in changing
// the real interfaces through the NetworkManager model — and saying no where nmstate says no (the agent reads its
// errors with nmstateConfigError), a checkpoint that rolls itself back with its caller dead, the dispatcher, DHCP
// from the store's dnsmasq, dual stack, and a reboot that rebuilds br-ex from the persistent profile.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import { nmstateConfigError } from '../../src/steps/network';
import { Testbed, ensureRootfsImage, type Machine } from './testbed/index';
import { FACTORY_LAN, NIC_MAC, PROFILE_DIR, RUN_PROFILE_DIR, SITE_LAN, STORE_DHCP, STORE_LAN6, nodeNetworkIgnition, plugCable, reaches } from './testbed/node-network';
import { eventually } from './testbed/sno-node';

const bed = new Testbed();
after(() => bed.cleanup());

interface Iface {
  name: string;
  type: string;
  state: string;
  controller?: string;
  'mac-address'?: string;
  ipv4?: { enabled: boolean; dhcp?: boolean; address?: { ip: string; 'prefix-length': number }[] };
  ipv6?: { enabled: boolean; address?: { ip: string; 'prefix-length': number }[] };
  bridge?: { port: { name: string }[] };
}
interface Shown {
  interfaces: Iface[];
  routes: { running: { destination: string; 'next-hop-interface': string; 'next-hop-address': string }[] };
  'dns-resolver': { running: { server: string[] } };
}

/** A dispatcher script that records its calls; a group-writable one NetworkManager must not run. */
const RECORDER = '#!/bin/sh\necho "$1 $2 $CONNECTION_ID" >> /var/log/dispatcher-calls\n';
const STALE = '#!/bin/sh\necho "$1 $2" >> /var/log/dispatcher-group-writable\n';

/** The site's state as the agent writes it (network-contract): the NIC with the site settings, br-ex released. */
function siteState(ipv4: Record<string, unknown>, extra: { ipv6?: Record<string, unknown>; routes?: unknown[] } = {}): string {
  return JSON.stringify({
    interfaces: [
      { name: 'eno1', type: 'ethernet', state: 'up', ipv4, ...(extra.ipv6 ? { ipv6: extra.ipv6 } : {}) },
      { name: 'br-ex', type: 'ovs-bridge', state: 'absent' },
      { name: 'br-ex', type: 'ovs-interface', state: 'absent' },
    ],
    ...(extra.routes ? { routes: { config: extra.routes } } : {}),
    'dns-resolver': { config: { server: [SITE_LAN.gateway] } },
  });
}
const STATIC_SITE = siteState({ enabled: true, dhcp: false, address: [{ ip: SITE_LAN.nodeIp, 'prefix-length': SITE_LAN.prefix }] }, { routes: [{ destination: '0.0.0.0/0', 'next-hop-address': SITE_LAN.gateway, 'next-hop-interface': 'eno1' }] });

describe('testbed node network: real br-ex, configure-ovs, nmstatectl with nmstate rules', { concurrency: 1 }, () => {
  let m: Machine;
  const nmstatectl = (args: string[], input?: string) => m.exec(['nmstatectl', ...args], { input, timeoutMs: 120_000 });
  const show = async (): Promise<Shown> => JSON.parse(await m.execOk(['nmstatectl', 'show', '--json'])) as Shown;
  const iface = (s: Shown, name: string, type: string) => s.interfaces.find((i) => i.name === name && i.type === type);
  const addresses = (i: Iface | undefined, fam: 4 | 6 = 4) => (i?.[`ipv${fam}`]?.address ?? []).map((a) => `${a.ip}/${a['prefix-length']}`);
  const ports = async () => (await m.exec(['ovs-vsctl', 'list-ports', 'br-ex'])).stdout.split('\n').filter(Boolean);
  const applyFile = async (text: string, args: string[] = []) => {
    m.writeFile('/tmp/state.yaml', text);
    return nmstatectl(['apply', ...args, '/tmp/state.yaml']);
  };
  const restartOvsConfiguration = async () => {
    const res = await m.exec(['systemctl', 'restart', 'ovs-configuration.service'], { timeoutMs: 120_000 });
    if (res.code !== 0) throw new Error(`ovs-configuration.service failed:\n${(await m.journalctl('-u', 'ovs-configuration.service', '-n', '40', '-o', 'cat')).stdout}`);
  };
  const profiles = (dir: string) => m.execOk(['ls', dir]).then((o) => o.split('\n').filter(Boolean));

  before(async () => {
    await ensureRootfsImage();
    m = await bed.machine({ hostname: 'net-node' });
    await bed.installIgnition(m, nodeNetworkIgnition());
    m.writeFile('/etc/NetworkManager/dispatcher.d/50-record', RECORDER, 0o755);
    m.writeFile('/etc/NetworkManager/dispatcher.d/pre-up.d/50-record', RECORDER, 0o755);
    m.writeFile('/etc/NetworkManager/dispatcher.d/60-group-writable', STALE);
    chmodSync(m.path('/etc/NetworkManager/dispatcher.d/60-group-writable'), 0o775);
    await m.boot({ network: 'private', timeoutMs: 90_000 });
  });

  test('at boot: configure-ovs builds br-ex on the factory NIC; show reports it in nmstate shape; the dispatcher ran for br-ex', async () => {
    const s = await show();
    assert.deepEqual(iface(s, 'br-ex', 'ovs-bridge')?.bridge?.port.map((p) => p.name), ['br-ex', 'eno1']);
    const brEx = iface(s, 'br-ex', 'ovs-interface');
    assert.equal(brEx?.controller, 'br-ex');
    assert.deepEqual(addresses(brEx), [`${FACTORY_LAN.nodeIp}/${FACTORY_LAN.prefix}`]);
    assert.equal(brEx?.['mac-address'], NIC_MAC, 'br-ex carries the NIC MAC (configure-ovs clones it)');
    assert.deepEqual(iface(s, 'eno1', 'ethernet'), { name: 'eno1', type: 'ethernet', state: 'up', 'mac-address': NIC_MAC, mtu: 1500, controller: 'br-ex', ipv4: { enabled: false }, ipv6: { enabled: false } });
    assert.ok(s.routes.running.some((r) => r.destination === '0.0.0.0/0' && r['next-hop-interface'] === 'br-ex' && r['next-hop-address'] === FACTORY_LAN.gateway));
    assert.deepEqual(await ports(), ['eno1']);
    assert.deepEqual(await profiles(RUN_PROFILE_DIR), ['br-ex.ovs-bridge.nmstate.yaml', 'br-ex.ovs-interface.nmstate.yaml', 'eno1.ethernet.nmstate.yaml']);
    assert.equal(await reaches(m, FACTORY_LAN.gateway), true, 'the factory gateway answers through br-ex');
    assert.equal(await reaches(m, SITE_LAN.gateway, { once: true }), false, 'the store LAN is elsewhere');
    assert.match(m.readFile('/var/log/dispatcher-calls'), /^br-ex pre-up br-ex\nbr-ex up br-ex$/m);
    assert.equal((await m.exec(['test', '-e', '/var/log/dispatcher-group-writable'])).code, 1, 'a group-writable dispatcher script is not run');
    assert.match((await m.journalctl('-u', 'ovs-configuration.service', '-o', 'cat')).stdout, /Running on boot, restoring previous configuration/);
  });

  test('nmstate says no: IP on a port of br-ex, an unknown NIC, a type the testbed cannot make — nothing changes', async () => {
    const before = await show();
    const etc = await profiles(PROFILE_DIR);
    const ipOnPort = await applyFile(JSON.stringify({ interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, address: [{ ip: SITE_LAN.nodeIp, 'prefix-length': 24 }] } }] }), ['--no-commit', '--timeout', '60']);
    assert.equal(ipOnPort.code, 1);
    assert.match(ipOnPort.stderr, /^NmstateError: InvalidArgument: Interface eno1 cannot have IP enabled as it is attached to a controller where IP is not allowed$/m);
    assert.equal(nmstateConfigError(ipOnPort.stderr), 'InvalidArgument: Interface eno1 cannot have IP enabled as it is attached to a controller where IP is not allowed', 'the agent reads it as a refused state');
    const unknown = await applyFile(JSON.stringify({ interfaces: [{ name: 'eno2', type: 'ethernet', state: 'up', ipv4: { enabled: true, address: [{ ip: SITE_LAN.nodeIp, 'prefix-length': 24 }] } }] }));
    assert.equal(unknown.code, 1);
    assert.equal(nmstateConfigError(unknown.stderr), 'InvalidArgument: Ethernet interface eno2 does not exists');
    const vlan = await applyFile(JSON.stringify({ interfaces: [{ name: 'eno1.42', type: 'vlan', state: 'up', vlan: { 'base-iface': 'eno1', id: 42 } }] }));
    assert.equal(vlan.code, 1);
    assert.match(nmstateConfigError(vlan.stderr) ?? '', /^NotSupportedError: Interface eno1\.42 of type vlan is not supported by the testbed's nmstatectl stand-in: the testbed kernel has no 8021q module/);
    const noType = await applyFile(JSON.stringify({ interfaces: [{ name: 'br-ex', state: 'up' }] }));
    assert.match(noType.stderr, /^NmstateError: InvalidArgument: Found 2\+ interface matching desired unknown type interface br-ex/m);
    assert.deepEqual(await show(), before);
    assert.deepEqual(await profiles(PROFILE_DIR), etc);
    assert.equal((await nmstatectl(['rollback'])).code, 1, 'no checkpoint was left behind');
  });

  test('the checkpoint rolls itself back with its caller killed: br-ex is back with the factory address', async (t) => {
    await plugCable(m, 'store');
    assert.equal(await reaches(m, SITE_LAN.gateway, { once: true }), false, 'the store gateway does not answer the factory address');
    // The caller: applies with a checkpoint, rebuilds br-ex on top (the agent's approach), and dies before commit.
    // The moment before it dies it notes br-ex's addresses, whether the store gateway answered (echoes until the
    // first reply, as reaches() sends them) and whether the checkpoint's timer has fired yet (0: not yet).
    const caller = (timeoutSec: number) =>
      `{ nmstatectl apply --no-commit --timeout ${timeoutSec} /tmp/state.yaml > /dev/null && systemctl restart ovs-configuration.service && ip -o -4 addr show dev br-ex scope global && { ping -c 1 -w 5 -i 0.5 ${SITE_LAN.gateway} > /dev/null && echo answered; }; timer=$(grep -o 'nmstate-checkpoint-[0-9]*' /run/nmstate-standin/checkpoint.json | head -1); echo "timer $timer fired $(systemctl show -P LastTriggerUSecMonotonic "$timer.timer")"; } > /tmp/caller-saw 2>&1; kill -9 $$`;
    // The timeout must outlast the caller's work (~3 s on an idle machine): 10 s. Only if the timer fired before the
    // caller had taken its notes (a loaded machine; its rollback then ran beside configure-ovs) does the node start
    // clean (a power cut: /run and the checkpoint are lost, the persistent profiles stay) and the case run once more
    // with 40 s.
    const autoRollback = (sec: number) => new RegExp(`"event":"auto-rollback","checkpoint":"/org/freedesktop/NetworkManager/Checkpoint/\\d+","afterSec":${sec}}`);
    const rolledBack = (sec: number) => assert.match(m.readFile('/var/log/nmstate-standin/calls.jsonl'), autoRollback(sec), 'the timer rolled it back');
    let saw = '';
    for (const timeoutSec of [10, 40]) {
      m.writeFile('/tmp/state.yaml', STATIC_SITE);
      const res = await m.exec(['bash', '-c', caller(timeoutSec)], { timeoutMs: 120_000 });
      assert.notEqual(res.code, 0, 'the caller died before it could commit');
      saw = m.readFile('/tmp/caller-saw');
      if (/^timer nmstate-checkpoint-\d+ fired 0$/m.test(saw)) {
        // NetworkManager's timer (a transient timer of the node) rolls it back: deadline sized for a loaded machine
        await eventually(
          async () => {
            assert.deepEqual(addresses(iface(await show(), 'br-ex', 'ovs-interface')), [`${FACTORY_LAN.nodeIp}/${FACTORY_LAN.prefix}`]);
            rolledBack(timeoutSec);
          },
          120_000,
          500,
        );
        break;
      }
      t.diagnostic(`the ${timeoutSec} s checkpoint expired before the caller had taken its notes (${saw.trim().split('\n').pop()})`);
      await eventually(async () => rolledBack(timeoutSec), 120_000, 500);
      await m.reboot();
      await m.waitForUnit('ovs-configuration.service', ['Result', 'ActiveState'], (u) => u.Result === 'success' && u.ActiveState === 'inactive', 60_000);
    }
    assert.match(saw, /^timer nmstate-checkpoint-\d+ fired 0$/m, 'the caller took its notes before the checkpoint expired');
    assert.match(saw, new RegExp(`inet ${SITE_LAN.nodeIp.replace(/\./g, '\\.')}/${SITE_LAN.prefix} `), 'configure-ovs rebuilt br-ex from the new NIC profile');
    assert.match(saw, /^answered$/m, 'the store gateway answered the site address');
    assert.deepEqual(await ports(), ['eno1'], 'br-ex keeps its uplink');
    assert.match(m.readFile(`${PROFILE_DIR}/eno1.ethernet.nmstate.yaml`), new RegExp(FACTORY_LAN.nodeIp.replace(/\./g, '\\.')), 'the persistent NIC profile is the factory one again');
    const commit = await nmstatectl(['commit']);
    assert.match(commit.stderr, /NmstateError: NotFoundError: No checkpoint found to commit/);
    await plugCable(m, 'factory');
    assert.equal(await reaches(m, FACTORY_LAN.gateway), true, 'back on the factory LAN, the factory gateway answers');
  });

  test('rollback by hand restores br-ex; a committed apply survives a power cut: configure-ovs rebuilds br-ex from the persistent profile', async () => {
    await plugCable(m, 'store');
    assert.equal((await applyFile(STATIC_SITE, ['--no-commit', '--timeout', '300'])).code, 0);
    assert.deepEqual(await ports(), [], 'br-ex absent: its port is freed');
    assert.equal(await reaches(m, SITE_LAN.gateway), true, 'the NIC itself holds the site address');
    await restartOvsConfiguration();
    assert.deepEqual(await ports(), ['eno1']);
    const rb = await nmstatectl(['rollback']);
    assert.equal(rb.code, 0, rb.stderr);
    assert.deepEqual(addresses(iface(await show(), 'br-ex', 'ovs-interface')), [`${FACTORY_LAN.nodeIp}/${FACTORY_LAN.prefix}`]);
    assert.doesNotMatch(await m.execOk(['systemctl', 'list-timers', '--all', '--no-legend']), /nmstate-checkpoint/, 'the checkpoint timer is gone');
    await restartOvsConfiguration();
    assert.match((await m.journalctl('-u', 'ovs-configuration.service', '-n', '5', '-o', 'cat')).stdout, /Networking already configured and up for br-ex/);

    assert.equal((await applyFile(STATIC_SITE, ['--no-commit', '--timeout', '300'])).code, 0);
    await restartOvsConfiguration();
    assert.equal((await nmstatectl(['commit'])).code, 0);
    assert.doesNotMatch(await m.execOk(['systemctl', 'list-timers', '--all', '--no-legend']), /nmstate-checkpoint/);
    await m.reboot();
    await m.waitForUnit('ovs-configuration.service', ['Result', 'ActiveState'], (u) => u.Result === 'success' && u.ActiveState === 'inactive', 60_000);
    const s = await show();
    assert.deepEqual(addresses(iface(s, 'br-ex', 'ovs-interface')), [`${SITE_LAN.nodeIp}/${SITE_LAN.prefix}`], 'the site address is on br-ex after the power cut');
    assert.equal(iface(s, 'eno1', 'ethernet')?.controller, 'br-ex');
    assert.equal(await reaches(m, SITE_LAN.gateway), true);
    assert.match(m.readFile('/var/log/dispatcher-calls'), /br-ex up br-ex\n$/);
    assert.deepEqual(s['dns-resolver'].running.server, [SITE_LAN.gateway]);
  });

  test('DHCPv4 from the store dnsmasq and static IPv6 (dual stack): the NIC first, then br-ex with the cloned MAC and the same lease; a power cut loses the pending checkpoint, not the profile', async () => {
    const state = siteState({ enabled: true, dhcp: true }, { ipv6: { enabled: true, dhcp: false, autoconf: false, address: [{ ip: STORE_LAN6.nodeIp, 'prefix-length': STORE_LAN6.prefix }] }, routes: [{ destination: '::/0', 'next-hop-address': STORE_LAN6.gateway, 'next-hop-interface': 'eno1' }] });
    await plugCable(m, 'store');
    const res = await applyFile(state, ['--no-commit', '--timeout', '300']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(addresses(iface(await show(), 'eno1', 'ethernet')), [`${STORE_DHCP.address}/${STORE_DHCP.prefix}`]);
    await restartOvsConfiguration();
    const s = await show();
    const brEx = iface(s, 'br-ex', 'ovs-interface');
    assert.deepEqual(addresses(brEx), [`${STORE_DHCP.address}/${STORE_DHCP.prefix}`]);
    assert.equal(brEx?.ipv4?.dhcp, true);
    assert.deepEqual(addresses(brEx, 6), [`${STORE_LAN6.nodeIp}/${STORE_LAN6.prefix}`]);
    assert.equal(await reaches(m, SITE_LAN.gateway), true);
    assert.equal(await reaches(m, STORE_LAN6.gateway), true, 'the IPv6 gateway answers');
    assert.ok(s.routes.running.some((r) => r.destination === '0.0.0.0/0' && r['next-hop-interface'] === 'br-ex' && r['next-hop-address'] === SITE_LAN.gateway), 'the DHCP router is the default route');
    const ipv6Dhcp = await applyFile(JSON.stringify({ interfaces: [{ name: 'br-ex', type: 'ovs-interface', ipv6: { enabled: true, dhcp: true, autoconf: true } }] }));
    assert.match(nmstateConfigError(ipv6Dhcp.stderr) ?? '', /^NotSupportedError: Interface br-ex: DHCPv6 and IPv6 autoconf are not modelled/);
    // a power cut with the checkpoint pending: NetworkManager's checkpoint is gone, the persistent profile stays,
    // and configure-ovs rebuilds br-ex from it at boot
    await m.reboot();
    await m.waitForUnit('ovs-configuration.service', ['Result', 'ActiveState'], (u) => u.Result === 'success' && u.ActiveState === 'inactive', 60_000);
    assert.match((await nmstatectl(['rollback'])).stderr, /NmstateError: NotFoundError: No checkpoint found to rollback/);
    assert.deepEqual(addresses(iface(await show(), 'br-ex', 'ovs-interface')), [`${STORE_DHCP.address}/${STORE_DHCP.prefix}`], 'the uncommitted DHCP profile is what the node booted with');
  });
});
