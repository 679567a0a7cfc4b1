// The early phase's decisions as rows (src/network/early-state.ts): the state it applies (the old default route
// removed first, the internal IP after the site address), the gateways it pings, configure-ovs's hint, and what a
// boot does from the journaled phase.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bootAction, configuredGateways, defaultRouteInterface, earlyState, hintAfter, siteInterfaceNames, type EarlyRecord } from '../../../src/network/early-state';
import { parseTopology } from '../../../src/network/topology';
import { profileMeaning, profilesDiffer, sameProfile } from '../../../src/network/profiles';

// The node at early boot (configure-ovs has not run): eno1 holds the factory address and the default route.
const EARLY_BOOT = parseTopology(`
interfaces:
- {name: eno1, type: ethernet, state: up, ipv4: {enabled: true, address: [{ip: 192.168.111.20, prefix-length: 24}]}}
- {name: eno2, type: ethernet, state: up}
routes:
  config:
  - {destination: 0.0.0.0/0, next-hop-address: 192.168.111.1, next-hop-interface: eno1, metric: 100}
`);
const site = (iface: Record<string, unknown>, gateway = '192.168.42.1') => ({
  interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ...iface }],
  routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': gateway, 'next-hop-interface': 'eno1' }] },
});
const STATIC = site({ ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } });
const INTERNAL = ['192.168.111.20/24'];

describe('earlyState', () => {
  const rows: { name: string; site: Record<string, unknown>; internal: string[]; routes: unknown[]; ipv4?: unknown; ipv6?: unknown }[] = [
    {
      name: 'static: the old default route absent first (observation 13), the internal IP after the site address (observation 15)',
      site: STATIC,
      internal: INTERNAL,
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '192.168.111.20', 'prefix-length': 24 }] },
    },
    {
      name: 'a bare internal address (as the baseline may record it) takes the prefix the node holds it with',
      site: STATIC,
      internal: ['192.168.111.20'],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '192.168.111.20', 'prefix-length': 24 }] },
    },
    {
      name: 'the internal IP the site already lists is not added twice',
      site: site({ ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '192.168.111.20', 'prefix-length': 24 }] } }),
      internal: INTERNAL,
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '192.168.111.20', 'prefix-length': 24 }] },
    },
    {
      name: 'DHCP: the internal IP rides beside the lease as a static address',
      site: { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: true } }] },
      internal: INTERNAL,
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }],
      ipv4: { enabled: true, dhcp: true, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] },
    },
    {
      name: 'dual stack: each family gets its own internal address; a family the site disables gets none',
      site: site({ ipv4: { enabled: true, dhcp: true }, ipv6: { enabled: false } }),
      internal: ['192.168.111.20/24', 'fd00:111::20/64'],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: true, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] },
      ipv6: { enabled: false },
    },
    {
      name: 'the uplink moves to eno2: both the old route interface and the new uplink get an absent entry',
      site: { interfaces: [{ name: 'eno2', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }], routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno2' }] } },
      internal: [],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { 'next-hop-interface': 'eno2', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno2' }],
    },
    {
      name: 'an internal address keeps its own prefix, not the one the node holds it with',
      site: STATIC,
      internal: ['192.168.111.20/16'],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '192.168.111.20', 'prefix-length': 16 }] },
    },
    {
      // A prefix of 0 would put the whole address space on the link.
      name: 'an internal address with an empty prefix takes the one the node holds it with, never /0',
      site: STATIC,
      internal: ['192.168.111.20/'],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '192.168.111.20', 'prefix-length': 24 }] },
    },
    {
      name: 'a bare internal address the node does not hold is a host route\'s (/32, /128)',
      site: site({ ipv4: { enabled: true, dhcp: true }, ipv6: { enabled: true, dhcp: true, autoconf: false } }),
      internal: ['10.9.9.9', 'fd00:9::9'],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: true, address: [{ ip: '10.9.9.9', 'prefix-length': 32 }] },
      ipv6: { enabled: true, dhcp: true, autoconf: false, address: [{ ip: 'fd00:9::9', 'prefix-length': 128 }] },
    },
    {
      name: 'dual stack, both enabled: the IPv6 internal address after the site\'s IPv6 address',
      site: site({ ipv4: { enabled: true, dhcp: true }, ipv6: { enabled: true, dhcp: false, address: [{ ip: 'fd00:42::10', 'prefix-length': 64 }] } }),
      internal: ['192.168.111.20/24', 'fd00:111::20/64'],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: true, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] },
      ipv6: { enabled: true, dhcp: false, address: [{ ip: 'fd00:42::10', 'prefix-length': 64 }, { ip: 'fd00:111::20', 'prefix-length': 64 }] },
    },
    {
      name: 'a family with no internal address is left exactly as the site gives it',
      site: site({ ipv4: { enabled: true, dhcp: true }, ipv6: { enabled: true, dhcp: true, autoconf: true } }),
      internal: INTERNAL,
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }, { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }],
      ipv4: { enabled: true, dhcp: true, address: [{ ip: '192.168.111.20', 'prefix-length': 24 }] },
      ipv6: { enabled: true, dhcp: true, autoconf: true },
    },
    {
      name: 'a new VLAN uplink the node does not have yet gets no absent entry of its own',
      site: { interfaces: [{ name: 'eno1.100', type: 'vlan', state: 'up', vlan: { 'base-iface': 'eno1', id: 100 }, ipv4: { enabled: true, dhcp: true } }] },
      internal: [],
      routes: [{ 'next-hop-interface': 'eno1', state: 'absent' }],
      ipv4: { enabled: true, dhcp: true },
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const state = earlyState(row.site, EARLY_BOOT, row.internal) as { interfaces: Record<string, unknown>[]; routes: { config: unknown[] } };
      assert.deepEqual(state.routes.config, row.routes);
      const uplink = state.interfaces.find((i) => i.ipv4 || i.ipv6)!;
      if (row.ipv4) assert.deepEqual(uplink.ipv4, row.ipv4);
      if (row.ipv6) assert.deepEqual(uplink.ipv6, row.ipv6);
    });
  }

  test('a bare internal address takes the prefix of the interface that holds it, not of another', () => {
    const topo = parseTopology(`
interfaces:
- {name: eno1, type: ethernet, state: up, ipv4: {enabled: true, address: [{ip: 192.168.111.20, prefix-length: 24}]}}
- {name: eno2, type: ethernet, state: up, ipv4: {enabled: true, address: [{ip: 10.5.0.7, prefix-length: 16}]}}
routes:
  config:
  - {destination: 0.0.0.0/0, next-hop-address: 192.168.111.1, next-hop-interface: eno1}
`);
    const state = earlyState(STATIC, topo, ['10.5.0.7']) as { interfaces: { ipv4: { address: unknown[] } }[] };
    assert.deepEqual(state.interfaces[0]!.ipv4.address, [{ ip: '192.168.42.10', 'prefix-length': 24 }, { ip: '10.5.0.7', 'prefix-length': 16 }]);
  });

  test('the internal addresses go on the uplink only; a site without an uplink and without routes is kept as given', () => {
    const two = { interfaces: [...STATIC.interfaces, { name: 'eno2', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '172.16.0.5', 'prefix-length': 24 }] } }], routes: STATIC.routes };
    const state = earlyState(two, EARLY_BOOT, INTERNAL) as { interfaces: { ipv4: unknown }[] };
    assert.deepEqual(state.interfaces[1]!.ipv4, { enabled: true, dhcp: false, address: [{ ip: '172.16.0.5', 'prefix-length': 24 }] });
    const noUplink = { interfaces: [{ name: 'eno2', type: 'ethernet', state: 'up' }] };
    assert.deepEqual(earlyState(noUplink, EARLY_BOOT, INTERNAL), { interfaces: [{ name: 'eno2', type: 'ethernet', state: 'up' }], routes: { config: [{ 'next-hop-interface': 'eno1', state: 'absent' }] } });
    assert.deepEqual(earlyState({}, EARLY_BOOT, INTERNAL), { interfaces: [], routes: { config: [{ 'next-hop-interface': 'eno1', state: 'absent' }] } });
  });
});

test('configuredGateways: the static default routes of the state, not the absent entries', () => {
  const config = [
    { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.9', state: 'absent' },
    { destination: '0.0.0.0/0', 'next-hop-interface': 'eno1' },
    { destination: '10.0.0.0/8', 'next-hop-address': '10.0.0.1' },
    { destination: '::/0', 'next-hop-address': 'fd00:42::1' },
    { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1' },
    { destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', metric: 200 },
  ];
  assert.deepEqual(configuredGateways({ interfaces: [], routes: { config } }), ['fd00:42::1', '192.168.42.1']);
  assert.deepEqual(configuredGateways({ interfaces: [] }), []);
  assert.deepEqual(configuredGateways(earlyState(site({ ipv4: { enabled: true, dhcp: false, address: [] } }, '192.168.42.254'), EARLY_BOOT, [])), ['192.168.42.254']);
  assert.deepEqual(configuredGateways({ interfaces: [], routes: { config: [{ destination: '10.0.0.0/8', 'next-hop-address': '10.0.0.1' }] } }), []);
});

test('hintAfter: written only when the uplink is not the hinted one', () => {
  assert.equal(hintAfter('eno1\n', STATIC), undefined);
  assert.equal(hintAfter(undefined, STATIC), 'eno1');
  assert.equal(hintAfter('eno2', STATIC), 'eno1');
  assert.equal(hintAfter('eno2', { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up' }] }), undefined, 'a site without an uplink leaves the hint alone');
});

test('defaultRouteInterface: the live default route, IPv4 or IPv6, through a named interface', () => {
  const topo = (routes: string) => parseTopology(`
interfaces:
- {name: eno1, type: ethernet, state: up}
- {name: eno2, type: ethernet, state: up}
routes:
  config:
${routes}`);
  const decoys = [
    '  - {destination: 0.0.0.0/0, next-hop-address: 10.0.0.1, next-hop-interface: eno2, state: absent}',
    '  - {destination: 10.0.0.0/8, next-hop-address: 10.0.0.1, next-hop-interface: eno2}',
    '  - {destination: 0.0.0.0/0, next-hop-address: 10.0.0.1}',
  ].join('\n');
  assert.equal(defaultRouteInterface(topo(`${decoys}\n  - {destination: 0.0.0.0/0, next-hop-address: 192.168.111.1, next-hop-interface: eno1}\n`)), 'eno1');
  assert.equal(defaultRouteInterface(topo(`${decoys}\n  - {destination: '::/0', next-hop-address: 'fd00::1', next-hop-interface: eno1}\n`)), 'eno1');
  assert.equal(defaultRouteInterface(topo(`${decoys}\n`)), undefined);
  // After configure-ovs the default route leaves through br-ex: its uplink is the NIC; no bridge, no uplink.
  const viaBrEx = '  - {destination: 0.0.0.0/0, next-hop-address: 192.168.111.1, next-hop-interface: br-ex}\n';
  const ovs = parseTopology(`
interfaces:
- {name: eno1, type: ethernet, state: up}
- {name: br-ex, type: ovs-bridge, state: up, bridge: {port: [{name: eno1}, {name: br-ex}]}}
- {name: br-ex, type: ovs-interface, state: up}
routes:
  config:
${viaBrEx}`);
  assert.equal(defaultRouteInterface(ovs), 'eno1');
  assert.equal(defaultRouteInterface(topo(viaBrEx)), undefined);
});

test('siteInterfaceNames: every interface the site state gives', () => {
  assert.deepEqual(siteInterfaceNames({ interfaces: [{ name: 'eno1', type: 'ethernet' }, { name: 'eno1.100', type: 'vlan' }] }), ['eno1', 'eno1.100']);
});

describe('bootAction', () => {
  const rec = (phase: EarlyRecord['phase'], extra: Partial<EarlyRecord> = {}): EarlyRecord => ({ digest: 'a', phase, failures: 0, ...extra });
  const rows: [string, EarlyRecord | undefined, string | undefined, string][] = [
    ['first boot with a config', undefined, 'a', 'apply'],
    ['no config, nothing journaled', undefined, undefined, 'nothing'],
    ...(['applying', 'verifying', 'committing', 'restoring'] as const).map((p): [string, EarlyRecord, string, string] => [`power cut in ${p}`, rec(p), 'a', 'restore-then-apply']),
    ['power cut in applying, no config any more', rec('applying'), undefined, 'restore-only'],
    ['power cut in applying of another config', rec('applying', { digest: 'b' }), 'a', 'restore-then-apply'],
    ['committed', rec('committed'), 'a', 'nothing'],
    ['rolled back once', rec('rolled-back', { failures: 1 }), 'a', 'apply'],
    ['out of attempts', rec('rolled-back', { failures: 3 }), 'a', 'give-up'],
    ['refused by nmstate', rec('rolled-back', { refused: true }), 'a', 'give-up'],
    ['out of attempts, cut while restoring', rec('restoring', { failures: 3 }), 'a', 'restore-only'],
    ['known good saved, nothing changed yet', rec('saved'), 'a', 'apply'],
  ];
  for (const [name, r, digest, want] of rows) test(name, () => assert.equal(bootAction(r, digest), want));
});

describe('known-good profiles compare by content', () => {
  const FACTORY = '[connection]\nid=eno1\nuuid=6b1b\ntype=ethernet\nautoconnect=true\ninterface-name=eno1\n\n[ipv4]\nmethod=manual\naddress1=192.168.111.20/24,192.168.111.1\ndns=192.168.111.1;\n';
  // What NetworkManager wrote back after a rollback (early-apply.md): autoconnect=true dropped, keys reordered.
  const ROLLED_BACK = '[connection]\nid=eno1\nuuid=6b1b\ntype=ethernet\ninterface-name=eno1\n[ethernet]\n\n[ipv4]\naddress1=192.168.111.20/24,192.168.111.1\ndns=192.168.111.1;\nmethod=manual\n';
  test('a rewrite by NetworkManager is the same profile', () => {
    assert.equal(sameProfile(FACTORY, ROLLED_BACK.replace('[ethernet]\n', '')), true);
  });
  test('the site settings are not', () => {
    assert.equal(sameProfile(FACTORY, FACTORY.replace('192.168.111.20/24,192.168.111.1', '192.168.42.10/24')), false);
    assert.deepEqual(profileMeaning('[ipv4]\nmethod=auto\n'), ['ipv4.method=auto']);
  });
  test('profilesDiffer names changed, new and missing files', () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const saved = [{ name: 'eno1.nmconnection', mode: 0o600, content: b64(FACTORY) }, { name: 'eno2.nmconnection', mode: 0o600, content: b64('[connection]\nid=eno2\n') }];
    const now = [{ name: 'eno1.nmconnection', mode: 0o600, content: b64(FACTORY.replace('111.20', '42.10')) }, { name: 'eno1.100.nmconnection', mode: 0o600, content: b64('x') }];
    assert.deepEqual(profilesDiffer(saved, now), ['eno1.100.nmconnection', 'eno1.nmconnection', 'eno2.nmconnection']);
  });
});
