// The project's nmstate desired states (test/fixtures/nmstate-states: written here, each citing the nmstate source
// at 614c66d it follows) must all validate as spec.network.nmstate: the validator must never refuse real nmstate.
// Together they cover every interface type nmstate configures, every bond mode, routes and route rules (added and
// removed), DNS, static and dynamic host names, 802.1X, SR-IOV, OVS patch and DPDK ports, and absent states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../support/bundle';
import { validateNmstate } from '../../../src/siteconfig/nmstate';
import { parseConfigBytes } from '../../../src/siteconfig/parse-text';

const STATES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'nmstate-states');
const files = readdirSync(STATES).filter((f) => f.endsWith('.yml') || f.endsWith('.yaml')).sort();

type State = Record<string, unknown>;
type Iface = Record<string, unknown> & { name: string; type?: string; state?: string };

const states = new Map<string, State>();
for (const file of files) {
  const parsed = parseConfigBytes(readFileSync(path.join(STATES, file)));
  if (parsed.ok) states.set(file, parsed.value as State);
}
const interfaces = (s: State): Iface[] => (Array.isArray(s.interfaces) ? (s.interfaces as Iface[]) : []);
const allInterfaces = [...states.values()].flatMap(interfaces);

for (const file of files) {
  test(`nmstate state ${file} validates`, () => {
    const text = readFileSync(path.join(STATES, file), 'utf8');
    assert.match(text, /^# .*\n(# .*\n)*/, `${file} opens with what it states`);
    assert.match(text, /nmstate rust\/src\/lib\/[\w/]+\.rs/, `${file} cites the nmstate source of the rule it exercises`);
    const parsed = parseConfigBytes(Buffer.from(text));
    assert.ok(parsed.ok, `${file} parses: ${parsed.ok ? '' : parsed.messages.join('; ')}`);
    const found = validateNmstate(parsed.value, 'spec.network.nmstate');
    assert.deepEqual(found.errors, [], file);
    assert.deepEqual(found.warnings.filter((w) => /not an interface type/.test(w.message)), [], `${file} uses only types nmstate knows`);
  });
}

// nmstate rust/src/lib/iface.rs InterfaceType: the types a desired state configures (tun, xfrm and unknown are
// only reported by nmstate, never created from a state).
const CONFIGURED_TYPES = ['ethernet', 'bond', 'linux-bridge', 'ovs-bridge', 'ovs-interface', 'vlan', 'vxlan', 'veth', 'dummy', 'loopback', 'mac-vlan', 'mac-vtap', 'vrf', 'infiniband', 'macsec', 'ipsec', 'hsr', 'ipvlan'];
// Types whose removal the states show (state: absent).
const REMOVED_TYPES = ['bond', 'linux-bridge', 'ovs-bridge', 'ovs-interface', 'vlan', 'veth', 'mac-vlan', 'mac-vtap', 'vrf', 'infiniband', 'macsec', 'hsr', 'ipvlan'];
// nmstate rust/src/lib/ifaces/bond.rs BondMode.
const BOND_MODES = ['balance-rr', 'active-backup', 'balance-xor', 'broadcast', '802.3ad', 'balance-tlb', 'balance-alb'];

test('the states cover every interface type, bond mode and feature the validator handles', () => {
  const up = new Set(allInterfaces.filter((i) => i.state !== 'absent').map((i) => i.type));
  const absent = new Set(allInterfaces.filter((i) => i.state === 'absent').map((i) => i.type));
  assert.deepEqual(CONFIGURED_TYPES.filter((t) => !up.has(t)), [], 'interface types no state configures');
  assert.deepEqual(REMOVED_TYPES.filter((t) => !absent.has(t)), [], 'interface types no state removes');
  const modes = new Set(allInterfaces.map((i) => (i['link-aggregation'] as { mode?: string } | undefined)?.mode));
  assert.deepEqual(BOND_MODES.filter((m) => !modes.has(m)), [], 'bond modes no state uses');
  assert.ok(modes.has('1'), 'a bond mode given by its number');
  const all = [...states.values()];
  const routes = all.flatMap((s) => ((s.routes as { config?: State[] } | undefined)?.config ?? []));
  const rules = all.flatMap((s) => ((s['route-rules'] as { config?: State[] } | undefined)?.config ?? []));
  const features: [string, boolean][] = [
    ['a route added', routes.some((r) => r.state === undefined && r['next-hop-interface'] !== undefined)],
    ['a route removed', routes.some((r) => r.state === 'absent')],
    ['a blackhole route', routes.some((r) => r['route-type'] === 'blackhole')],
    ['a route rule added', rules.some((r) => r.state === undefined)],
    ['a route rule removed', rules.some((r) => r.state === 'absent')],
    ['DNS servers set', all.some((s) => ((s['dns-resolver'] as { config?: { server?: unknown[] } } | undefined)?.config?.server ?? []).length > 0)],
    ['DNS cleared', all.some((s) => (s['dns-resolver'] as { config?: { server?: unknown[] } } | undefined)?.config?.server?.length === 0)],
    ['a static host name', all.some((s) => typeof (s.hostname as State | undefined)?.config === 'string' && (s.hostname as State).config !== '')],
    ['a dynamic host name', all.some((s) => (s.hostname as State | undefined)?.config === '')],
    ['802.1X', allInterfaces.some((i) => i['802.1x'] !== undefined)],
    ['SR-IOV', allInterfaces.some((i) => (i.ethernet as State | undefined)?.['sr-iov'] !== undefined)],
    ['an OVS patch port', allInterfaces.some((i) => i.patch !== undefined)],
    ['an OVS DPDK port', allInterfaces.some((i) => i.dpdk !== undefined)],
    ['an OVS bond', allInterfaces.some((i) => ((i.bridge as { port?: State[] } | undefined)?.port ?? []).some((p) => p['link-aggregation'] !== undefined))],
    ['bridge port VLANs', allInterfaces.some((i) => ((i.bridge as { port?: State[] } | undefined)?.port ?? []).some((p) => p.vlan !== undefined))],
    ['IPsec with a pre-shared key', allInterfaces.some((i) => (i.libreswan as State | undefined)?.psk !== undefined)],
    ['IPsec with certificates', allInterfaces.some((i) => (i.libreswan as State | undefined)?.leftcert !== undefined)],
    ['an interface down', allInterfaces.some((i) => i.state === 'down')],
    ['an interface ignored', allInterfaces.some((i) => i.state === 'ignore')],
    ['IPv6 addresses', allInterfaces.some((i) => ((i.ipv6 as { address?: unknown[] } | undefined)?.address ?? []).length > 0)],
  ];
  assert.deepEqual(features.filter(([, covered]) => !covered).map(([name]) => name), [], 'features no state shows');
});
