// The site state's refusals as rows: what `nmstatectl show` of a node says, the site's state → refused or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { parseTopology } from '../../../src/network/topology';
import { refusalsAgainst, type NmState } from '../../../src/network/uplink';

const eth = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'ethernet', state: 'up', ipv4: { enabled: false }, ipv6: { enabled: false }, ...extra });
const addr = (ip: string, prefix: number) => ({ enabled: true, dhcp: false, address: [{ ip, 'prefix-length': prefix }] });

/** An OVN node as nmstatectl shows it: `uplink` a port of br-ex, br-ex holding 172.31.250.10/24 and the internal IP. */
function ovnNode(uplink = 'eno1', more: Record<string, unknown>[] = []) {
  return parseTopology(stringify({
    interfaces: [
      { name: 'br-ex', type: 'ovs-bridge', state: 'up', bridge: { port: [{ name: uplink }, { name: 'br-ex' }, { name: 'patch-br-ex_sno1-to-br-int' }] } },
      { name: 'br-ex', type: 'ovs-interface', state: 'up', controller: 'br-ex', ipv4: { enabled: true, dhcp: false, address: [{ ip: '172.31.250.10', 'prefix-length': 24 }, { ip: '169.254.169.2', 'prefix-length': 29 }, { ip: '10.99.0.10', 'prefix-length': 32 }] }, ipv6: { enabled: false } },
      { name: 'patch-br-ex_sno1-to-br-int', type: 'ovs-interface', state: 'up', controller: 'br-ex', patch: { peer: 'patch-br-int-to-br-ex_sno1' } },
      ...more,
      ...(more.some((m) => m.name === uplink) ? [] : [eth(uplink, { controller: 'br-ex' })]),
      ...(uplink === 'eno2' ? [] : [eth('eno2')]),
    ],
    routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '172.31.250.1', 'next-hop-interface': 'br-ex' }] },
    'dns-resolver': { config: { server: ['172.31.250.1'] } },
  }));
}

const SITE: NmState = {
  interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: addr('10.42.0.10', 24) }],
  routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '10.42.0.1', 'next-hop-interface': 'eno1' }] },
};

test('the uplink is the br-ex port that is neither br-ex nor a patch port', () => {
  assert.equal(ovnNode().brEx?.uplink, 'eno1');
  assert.equal(parseTopology(stringify({ interfaces: [eth('eno1', { ipv4: addr('10.0.0.5', 24) })] })).brEx, undefined, 'an SDN node has no br-ex');
});

test('refusals against the node, as rows', () => {
  const bondNode = ovnNode('bond0', [
    { name: 'bond0', type: 'bond', state: 'up', controller: 'br-ex', 'link-aggregation': { mode: 'active-backup', port: ['eno1', 'eno2'] } },
    eth('eno1', { controller: 'bond0' }),
    eth('eno2', { controller: 'bond0' }),
  ]);
  const rows: { name: string; topo: ReturnType<typeof parseTopology>; state: NmState; refused: RegExp[] }[] = [
    { name: 'the site address on the uplink NIC', topo: ovnNode(), state: SITE, refused: [] },
    { name: 'a NIC the node does not have', topo: ovnNode(), state: { interfaces: [{ name: 'eno9', type: 'ethernet', ipv4: addr('10.42.0.10', 24) }] }, refused: [/names the network interface eno9, which this node does not have \(this node has eno1, eno2\)/] },
    { name: 'a bond over a NIC the node does not have', topo: ovnNode(), state: { interfaces: [{ name: 'bond0', type: 'bond', ipv4: addr('10.42.0.10', 24), 'link-aggregation': { mode: 'active-backup', port: ['eno1', 'eno3'] } }] }, refused: [/eno3, which this node does not have/] },
    { name: 'a VLAN on the uplink NIC', topo: ovnNode(), state: { interfaces: [{ name: 'eno1.42', type: 'vlan', vlan: { 'base-iface': 'eno1', id: 42 }, ipv4: addr('10.42.0.10', 24) }] }, refused: [] },
    { name: 'the uplink taken down, nothing else addressed: br-ex would lose its port', topo: ovnNode(), state: { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'down' }] }, refused: [/gives no interface an address or DHCP: br-ex would be left without a port \(its uplink eno1 is today a port of br-ex/] },
    { name: 'an address on a bond port that stays one', topo: bondNode, state: { interfaces: [{ name: 'eno2', type: 'ethernet', ipv4: addr('10.42.0.10', 24) }] }, refused: [/gives eno2 an address, but eno2 is today a port of bond0 and stays one/] },
    { name: 'an address on a bond port the state frees from the bond', topo: bondNode, state: { interfaces: [{ name: 'bond0', type: 'bond', 'link-aggregation': { port: ['eno1'] } }, { name: 'eno2', type: 'ethernet', ipv4: addr('10.42.0.10', 24) }] }, refused: [] },
    { name: 'DHCP on the uplink NIC', topo: ovnNode(), state: { interfaces: [{ name: 'eno1', type: 'ethernet', ipv4: { enabled: true, dhcp: true } }] }, refused: [] },
  ];
  for (const row of rows) {
    const refusals = refusalsAgainst(row.state, row.topo);
    assert.equal(refusals.length, row.refused.length, `${row.name}: ${JSON.stringify(refusals)}`);
    row.refused.forEach((re, i) => assert.match(refusals[i]!.message, re, row.name));
    for (const r of refusals) assert.match(r.remedy, /spec\.network\.nmstate/, row.name);
  }
});
