// Desired states that nmstate itself accepts must not be refused offline: each case is the project's own state
// written after a rule of nmstate's deserializers or unit tests (cited per test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateNmstate } from '../../../src/siteconfig/nmstate';

const PATH = 'spec.network.nmstate';

function bond(mode: unknown): unknown {
  return { interfaces: [{ name: 'bond0', type: 'bond', state: 'up', 'link-aggregation': { mode, port: ['eno1', 'eno2'] } }] };
}

test('a bond mode given as its kernel number, integer or string, or as lacp, is accepted (nmstate ifaces/bond.rs BondMode, unit_tests/bond.rs test_integer_bond_mode)', () => {
  for (const mode of [0, 1, 2, 3, 4, 5, 6, '1', '4', 'lacp', 'active-backup']) {
    assert.deepEqual(validateNmstate(bond(mode), PATH).errors, [], `mode ${JSON.stringify(mode)}`);
  }
});

test('a bond mode nmstate does not know is refused at its path with the modes it does', () => {
  for (const mode of [7, -1, 1.5, 'fast', true]) {
    const errors = validateNmstate(bond(mode), PATH).errors;
    assert.equal(errors.length, 1, `mode ${JSON.stringify(mode)}`);
    assert.equal(errors[0]!.path, `${PATH}.interfaces[0].link-aggregation.mode`);
    assert.match(errors[0]!.message, /active-backup.*number 0 to 6/);
  }
});

test("a VLAN without base-iface is a warning, not an error: nmstate keeps an existing VLAN's base (ifaces/vlan.rs, unit_tests/vlan.rs test_vlan_base_iface_optional)", () => {
  const found = validateNmstate({ interfaces: [{ name: 'uplink.300', type: 'vlan', vlan: { id: 300 }, ipv4: { enabled: true, dhcp: true } }] }, PATH);
  assert.deepEqual(found.errors, []);
  assert.equal(found.warnings.length, 1);
  assert.equal(found.warnings[0]!.path, `${PATH}.interfaces[0].vlan.base-iface`);
  assert.match(found.warnings[0]!.message, /new VLAN/);
});

test('a VLAN whose base-iface is not an interface name is still refused', () => {
  const errors = validateNmstate({ interfaces: [{ name: 'uplink.300', type: 'vlan', vlan: { id: 300, 'base-iface': 7 } }] }, PATH).errors;
  assert.deepEqual(errors.map((e) => e.path), [`${PATH}.interfaces[0].vlan.base-iface`]);
});

test('a route to remove (state: absent) is a match filter: its next hop may be of another family (nmstate route.rs RouteEntry::is_match, unit_tests/route.rs test_route_ipv4_ecmp_is_match)', () => {
  const route = { destination: '198.51.100.0/24', 'next-hop-address': 'fd00:42::1', 'next-hop-interface': 'eno1' };
  assert.deepEqual(validateNmstate({ routes: { config: [{ ...route, state: 'absent' }] } }, PATH).errors, []);
  const added = validateNmstate({ routes: { config: [route] } }, PATH).errors;
  assert.deepEqual(added.map((e) => e.path), [`${PATH}.routes.config[0].next-hop-address`], 'a route to add still may not mix families');
});

test('a route to remove with an empty destination is refused, as nmstate refuses it (unit_tests/route.rs test_route_not_allowing_empty_dst)', () => {
  const errors = validateNmstate({ routes: { config: [{ destination: '', state: 'absent' }] } }, PATH).errors;
  assert.deepEqual(errors.map((e) => e.path), [`${PATH}.routes.config[0].destination`]);
  assert.deepEqual(validateNmstate({ routes: { config: [{ 'next-hop-address': '', state: 'absent' }] } }, PATH).errors, [], 'an empty next hop matches routes without one (test_route_matching_empty_via_with_none)');
});
