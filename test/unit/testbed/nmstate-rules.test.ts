// nmstate 2.2's rules as the testbed's nmstatectl stand-in on the real NetworkManager applies them
// (test/e2e/testbed/stand-ins/nmstate-rules.cjs), against the profiles and outputs nmstatectl 2.2.23 and
// NetworkManager 1.42.4 really produced (the observations of the real-node-network record, carried into the
// testbed README): which profiles go, which one is edited, what is written into it, what is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const rules = require('../../e2e/testbed/stand-ins/nmstate-rules.cjs');
const cli = require('../../e2e/testbed/stand-ins/nmstatectl-nm.cjs');

type Settings = Record<string, Record<string, { type: string; data: unknown }>>;
interface Conn {
  path: string;
  settings: Settings;
  flags: number;
}

const s = (data: string) => ({ type: 's', data });
const U = {
  eno1: '6b1b8d2e-3c1e-4a54-9d44-0e6e6f6f0001',
  brEx: '90935d5e-9bdb-4234-ae02-8964de821ad0',
  ovsIfBrEx: 'f6a616ed-31dd-4a8e-924d-4bb6ad108884',
  ovsIfPhys0: 'e77e5693-624b-43fa-be38-c1bdcd8e2f61',
  ovsPortBrEx: '494f0582-d9f4-4bcd-9559-336c99579bab',
  ovsPortPhys0: '7260326b-61fc-4af8-8f62-959099f63454',
  lo: 'dce87e6b-af2f-4a51-aeb9-5cf9f36bbfd1',
};
let n = 0;
const conn = (settings: Settings, flags = 0): Conn => ({ path: `/org/freedesktop/NetworkManager/Settings/${++n}`, settings, flags });
const ipv4Factory = { method: s('manual'), 'address-data': { type: 'aa{sv}', data: [{ address: s('192.168.111.20'), prefix: { type: 'u', data: 24 } }] }, gateway: s('192.168.111.1'), dns: { type: 'au', data: [rules.ipv4ToU32('192.168.111.1')] } };

/** The profiles of a node after configure-ovs (release-4.14) built br-ex (the recorded nmstatectl 2.2.23 run (demo1.log, issue 35)), in NetworkManager's list order. */
function brExProfiles(): Conn[] {
  return [
    conn({ connection: { id: s('lo'), uuid: s(U.lo), type: s('loopback'), 'interface-name': s('lo') }, ipv4: { method: s('manual') } }, 0x04 | 0x02 | 0x08),
    conn({ connection: { id: s('eno1'), uuid: s(U.eno1), type: s('802-3-ethernet'), 'interface-name': s('eno1'), autoconnect: { type: 'b', data: true } }, '802-3-ethernet': {}, ipv4: { ...ipv4Factory }, ipv6: { method: s('disabled') } }),
    conn({ connection: { id: s('br-ex'), uuid: s(U.brEx), type: s('ovs-bridge'), 'interface-name': s('br-ex') }, 'ovs-bridge': { 'datapath-type': s('netdev') }, ipv4: { method: s('auto') } }),
    conn({ connection: { id: s('ovs-if-br-ex'), uuid: s(U.ovsIfBrEx), type: s('ovs-interface'), 'interface-name': s('br-ex'), master: s(U.ovsPortBrEx), 'slave-type': s('ovs-port') }, 'ovs-interface': { type: s('internal') }, ipv4: { ...ipv4Factory, 'route-metric': { type: 'x', data: 48 } }, ipv6: { method: s('disabled') } }),
    conn({ connection: { id: s('ovs-if-phys0'), uuid: s(U.ovsIfPhys0), type: s('802-3-ethernet'), 'interface-name': s('eno1'), master: s(U.ovsPortPhys0), 'slave-type': s('ovs-port'), 'autoconnect-priority': { type: 'i', data: 100 } }, 'ovs-interface': { type: s('system') }, '802-3-ethernet': { 'cloned-mac-address': { type: 'ay', data: [0x52, 0x54, 0, 0x6e, 0x6f, 1] } } }),
    conn({ connection: { id: s('ovs-port-br-ex'), uuid: s(U.ovsPortBrEx), type: s('ovs-port'), 'interface-name': s('br-ex'), master: s('br-ex'), 'slave-type': s('ovs-bridge') } }),
    conn({ connection: { id: s('ovs-port-phys0'), uuid: s(U.ovsPortPhys0), type: s('ovs-port'), 'interface-name': s('eno1'), master: s('br-ex'), 'slave-type': s('ovs-bridge') } }),
  ];
}

/** `nmstatectl show` of that node (the recorded nmstatectl 2.2.23 run (d1-nmstatectl-show.yaml, issue 35)), as the stand-in reads it. */
function brExCurrent() {
  return {
    interfaces: [
      { name: 'br-ex', type: 'ovs-interface', state: 'up', 'profile-name': 'ovs-if-br-ex', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] }, ipv6: { enabled: false }, controller: 'br-ex', controllerType: 'ovs-bridge' },
      { name: 'br-ex', type: 'ovs-bridge', state: 'up', bridge: { port: [{ name: 'br-ex' }, { name: 'eno1' }] } },
      { name: 'eno1', type: 'veth', state: 'up', 'profile-name': 'ovs-if-phys0', ipv4: { enabled: false }, ipv6: { enabled: false }, controller: 'br-ex', controllerType: 'ovs-bridge' },
      { name: 'lo', type: 'loopback', state: 'up', ipv4: { enabled: true, address: [{ ip: '127.0.0.1', 'prefix-length': 8 }] }, ipv6: { enabled: false } },
    ],
    routesConfig: [{ destination: '0.0.0.0/0', 'next-hop-interface': 'br-ex', 'next-hop-address': '192.168.111.1', metric: 48, 'table-id': 254 }],
    dnsIfaces: ['br-ex'],
  };
}

/** the recorded nmstatectl 2.2.23 run (site.yml, issue 35): br-ex released, the site address, route and DNS on eno1. */
const SITE = {
  interfaces: [
    { name: 'br-ex', type: 'ovs-interface', state: 'absent' },
    { name: 'br-ex', type: 'ovs-bridge', state: 'absent' },
    { name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] }, ipv6: { enabled: false } },
  ],
  routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }] },
  'dns-resolver': { config: { server: ['192.168.42.1'] } },
};

const uuidOf = (settings: Settings) => settings.connection!.uuid!.data;
const random = (k: number) => Array.from({ length: k }, (_, i) => i);

/** The apply as nm_apply runs it, with the active connections NetworkManager reports at the look. */
function planSite(activeAtLook: string[]) {
  const conns = brExProfiles();
  const merged = rules.merge(SITE, brExCurrent());
  const absent = rules.absentDeletions(merged, conns);
  const gone = new Set(absent.map((d: { uuid: string }) => d.uuid));
  const left = conns.filter((c) => !gone.has(uuidOf(c.settings)));
  const stored = rules.profilesToStore(merged, left, activeAtLook, random);
  const others = rules.otherProfilesToDelete(stored, left);
  const orphans = rules.orphanOvsPorts(merged, left, stored, new Set([...gone, ...others.map((d: { uuid: string }) => d.uuid)]));
  return { merged, absent, stored, others, orphans };
}

// Observation 2: by the time nmstate looked, NetworkManager had torn br-ex down and auto-connected the NIC's own
// profile (autoconnect=true) on eno1 — the log then says "Reapplying connection 6b1b…" for it, which nmstate does
// only for an active profile; get_exist_profile prefers that activated one.
test('observation 2: releasing br-ex deletes the bridge, its internal interface and port; the NIC\'s /etc profile is edited (UUID kept) and configure-ovs\'s ovs-if-phys0 and ovs-port-phys0 deleted', () => {
  const plan = planSite([U.lo, U.eno1]);
  assert.ok(plan.merged.logs.includes('nmstate::iface] Interface br-ex cannot live without controller, marking as absent as it has been detached from its original controller br-ex'));
  // the order and texts of the recorded nmstatectl 2.2.23 run (demo2a.log, issue 35)
  assert.deepEqual(plan.absent.map((d: { log: string }) => d.log), [
    `nmstate::nm::query_apply::apply] Deleting NM connection for absent interface br-ex/ovs-bridge: ${U.brEx}`,
    `nmstate::nm::query_apply::apply] Deleting NM connection for absent interface br-ex/ovs-interface: ${U.ovsIfBrEx}`,
    `nmstate::nm::query_apply::apply] Deleting NM OVS port connection ${U.ovsPortBrEx} for absent OVS interface br-ex`,
  ]);
  assert.equal(plan.stored.length, 1);
  const eno1 = plan.stored[0].settings as Settings;
  assert.equal(uuidOf(eno1), U.eno1, 'the NIC\'s own profile is modified, same UUID');
  assert.equal(eno1.ipv4!.method!.data, 'manual');
  assert.deepEqual(eno1.ipv4!['address-data']!.data, [{ address: s('192.168.42.10'), prefix: { type: 'u', data: 24 } }]);
  assert.equal(eno1.ipv4!.gateway, undefined, 'the factory gateway goes (nmstate writes routes)');
  // route1=0.0.0.0/0,192.168.42.1,0 — the default route with metric 0
  assert.deepEqual(eno1.ipv4!['route-data']!.data, [{ dest: s('0.0.0.0'), prefix: { type: 'u', data: 0 }, metric: { type: 'u', data: 0 }, 'next-hop': s('192.168.42.1') }]);
  assert.deepEqual(eno1.ipv4!.dns!.data, [rules.ipv4ToU32('192.168.42.1')]);
  assert.equal(eno1.ipv4!['dns-priority']!.data, 40);
  assert.equal(eno1.ipv4!['dhcp-timeout']!.data, 2147483647);
  assert.equal(eno1.ipv6!['addr-gen-mode']!.data, 0, 'addr-gen-mode=eui64');
  assert.equal(eno1.ipv6!.method!.data, 'disabled');
  assert.deepEqual(plan.others.map((d: { log: string }) => d.log), [`nmstate::nm::query_apply::profile] Deleting existing connection UUID ${U.ovsIfPhys0}, id Some("ovs-if-phys0") type Some("802-3-ethernet") name Some("eno1")`]);
  assert.deepEqual(plan.orphans.map((d: { log: string }) => d.log), [`nmstate::nm::query_apply::ovs] Deleting orphan OVS port connection ${U.ovsPortPhys0} as interface eno1(ethernet) detached from OVS bridge`]);
});

test('issue 35 point 2: with ovs-if-phys0 still active when nmstate looks, it edits ovs-if-phys0 (site settings under that name, detached) and deletes the NIC\'s factory profile', () => {
  const plan = planSite([U.lo, U.ovsIfPhys0]);
  assert.equal(plan.stored.length, 1);
  const edited = plan.stored[0].settings as Settings;
  assert.equal(uuidOf(edited), U.ovsIfPhys0);
  assert.equal(edited.connection!.id!.data, 'ovs-if-phys0');
  assert.equal(edited.connection!.master, undefined, 'detached from its OVS port');
  assert.equal(edited['ovs-interface'], undefined);
  assert.deepEqual(edited.ipv4!['address-data']!.data, [{ address: s('192.168.42.10'), prefix: { type: 'u', data: 24 } }]);
  assert.deepEqual(plan.others.map((d: { uuid: string }) => d.uuid), [U.eno1], 'the factory eno1 profile is deleted');
});

test('observation 8: an address on a port of br-ex is refused before any checkpoint', () => {
  const portIp = { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }] };
  assert.throws(() => rules.merge(portIp, brExCurrent()), (e: { kind: string; message: string }) => e.kind === 'InvalidArgument' && e.message === 'Interface eno1 cannot have IP enabled as it is attached to a controller where IP is not allowed');
});

test('observation 9: a missing NIC is refused with nmstate\'s text', () => {
  assert.throws(() => rules.merge({ interfaces: [{ name: 'eno9', type: 'ethernet', state: 'up' }] }, brExCurrent()), (e: { kind: string; message: string }) => e.kind === 'InvalidArgument' && e.message === 'Ethernet interface eno9 does not exists');
});

/** The node before configure-ovs (the early-apply record of issue 35, experiment 1): the NIC's own profile active, factory gateway. */
function earlyCurrent() {
  return {
    interfaces: [{ name: 'eno1', type: 'veth', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] }, ipv6: { enabled: false } }],
    routesConfig: [{ destination: '0.0.0.0/0', 'next-hop-interface': 'eno1', 'next-hop-address': '192.168.111.1', metric: 100, 'table-id': 254 }],
    dnsIfaces: ['eno1'],
  };
}
const EARLY = { interfaces: [SITE.interfaces[2]], routes: SITE.routes, 'dns-resolver': SITE['dns-resolver'] };
const routesWritten = (state: object) => {
  const conns = brExProfiles().filter((c) => uuidOf(c.settings) === U.eno1);
  const stored = rules.profilesToStore(rules.merge(state, earlyCurrent()), conns, [U.eno1], random);
  return (stored[0].settings as Settings).ipv4!['route-data']!.data as Record<string, { data: unknown }>[];
};

test('observation 13: nmstate keeps the factory default route (route1 via the old gateway, metric 100, table 254) unless an absent entry removes it', () => {
  const kept = routesWritten(EARLY).map((r) => `${String(r.dest!.data)}/${String(r.prefix!.data)} ${String(r['next-hop']!.data)} ${String(r.metric!.data)} ${String(r.table?.data ?? '')}`);
  assert.deepEqual(kept, ['0.0.0.0/0 192.168.111.1 100 254', '0.0.0.0/0 192.168.42.1 0 ']);
  const clean = { ...EARLY, routes: { config: [{ 'next-hop-interface': 'eno1', state: 'absent' }, ...SITE.routes.config] } };
  assert.deepEqual(routesWritten(clean).map((r) => r['next-hop']!.data), ['192.168.42.1']);
});

test('observation 15: the addresses are written in the order the state lists them', () => {
  const two = (first: string, second: string) => ({ ...EARLY, interfaces: [{ ...SITE.interfaces[2], ipv4: { enabled: true, dhcp: false, address: [first, second].map((ip) => ({ ip, 'prefix-length': 24 })) } }] });
  for (const [a, b] of [['192.168.42.10', '192.168.127.10'], ['192.168.127.10', '192.168.42.10']]) {
    const stored = rules.profilesToStore(rules.merge(two(a!, b!), earlyCurrent()), brExProfiles(), [U.eno1], random);
    assert.deepEqual(((stored[0].settings as Settings).ipv4!['address-data']!.data as { address: { data: string } }[]).map((x) => x.address.data), [a, b]);
  }
});

test('get_exist_profile: the activated profile first, else the last one NetworkManager lists', () => {
  const conns = brExProfiles();
  assert.equal(uuidOf(rules.getExistProfile(conns, 'eno1', 'ethernet', [U.ovsIfPhys0]).settings), U.ovsIfPhys0);
  assert.equal(uuidOf(rules.getExistProfile(conns, 'eno1', 'ethernet', [U.eno1]).settings), U.eno1);
  assert.equal(uuidOf(rules.getExistProfile(conns, 'eno1', 'ethernet', []).settings), U.ovsIfPhys0, 'none active: the last listed');
  assert.equal(uuidOf(rules.getExistProfile([...conns].reverse(), 'eno1', 'veth', []).settings), U.eno1, 'a veth is an ethernet to nmstate');
});

test('the checkpoint and save flags are nmstate\'s', () => {
  assert.equal(rules.CHECKPOINT_FLAGS, 0x02 | 0x04);
  assert.equal(rules.SAVE_FLAGS, 0x01 | 0x20);
  assert.equal(rules.DEFAULT_TIMEOUT, 60);
});

test('busctl arguments for a settings dictionary: counts first, variants with their type', () => {
  const args = cli.busArgs('a{sa{sv}}', { connection: { id: s('eno1'), autoconnect: { type: 'b', data: true } }, ipv4: { 'address-data': { type: 'aa{sv}', data: [{ address: s('192.168.42.10'), prefix: { type: 'u', data: 24 } }] }, 'route-metric': { type: 'x', data: -1 } } });
  assert.deepEqual(args, ['2', 'connection', '2', 'id', 's', 'eno1', 'autoconnect', 'b', 'true', 'ipv4', '2', 'address-data', 'aa{sv}', '1', '2', 'address', 's', '192.168.42.10', 'prefix', 'u', '24', 'route-metric', 'x', '-1']);
  assert.deepEqual(cli.splitTypes('a{sa{sv}}ua{sv}'), ['a{sa{sv}}', 'u', 'a{sv}']);
});
