// Every example's network, run through the early network phase at the boot of a stand-in node shaped like a real
// OpenShift node with OVN-Kubernetes (eno1 the port of br-ex, installed on a factory LAN;
// test/support/stand-ins/network-model.cjs) and cabled into a store LAN made from the example itself (its subnet,
// gateway, the hosts it pings, its VLAN tag or DHCP lease): the phase must commit, and configure-ovs then build br-ex on
// the example's uplink carrying its addresses. The real-OVS testbed runs the same examples against real interfaces
// and the real NetworkManager (test/e2e).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { LocalHost } from '../../src/host/host';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { TRUSTED_KEYS_DIR } from '../../src/paths';
import { parse } from 'yaml';
import { loadSiteConfig } from '../../src/siteconfig/load';
import { earlyNetwork } from '../../src/network/early';
import { createLogger } from '../../src/log';
import { siteUplink, staticAddresses } from '../../src/network/uplink';
import { PROJECT_ROOT } from '../support/bundle';
import { createStandInNode, defaultLan, type StandInLan } from '../support/standin-host';
import { fastClock, type testContext } from '../support/step-context';

const EXAMPLES = path.join(PROJECT_ROOT, 'examples');
const WITH_NETWORK = ['bond', 'dhcp', 'ipv6-dual-stack', 'mirrors-and-ca', 'signed-vlan-store', 'static-ip', 'vlan'];

/** The store LAN an example is written for. */
function lanFor(nmstate: Record<string, unknown>, ping: string[]): StandInLan {
  const uplink = siteUplink(nmstate)!;
  const routes = ((nmstate.routes as { config?: Record<string, unknown>[] } | undefined)?.config ?? []).map((r) => r['next-hop-address']).filter((a): a is string => typeof a === 'string');
  const vlan = uplink.type === 'vlan' ? Number((uplink.raw.vlan as { id: unknown }).id) : undefined;
  const dhcp = uplink.ipv4?.dhcp ? { ipv4: { address: '10.78.0.50/24', gateway: '10.78.0.1' } } : undefined;
  return {
    ...defaultLan('10.78.0.50'),
    store: {
      subnets: dhcp ? ['10.78.0.0/24'] : staticAddresses(uplink),
      hosts: [...new Set([...ping, ...routes, ...(dhcp ? ['10.78.0.1'] : [])])],
      ...(vlan !== undefined ? { vlan } : {}),
      ...(dhcp ? { dhcp } : {}),
    },
  };
}

describe('every example network commits on a br-ex node cabled into its store LAN', { concurrency: 1 }, () => {
  for (const name of WITH_NETWORK) {
    test(name, async () => {
      const probe = createStandInNode();
      // A signed example names its machine (spec.match): this stand-in node is that machine, and trusts the examples'
      // signing key as a factory would (examples/signing-key).
      if (existsSync(path.join(EXAMPLES, name, 'site-config.yaml.sig'))) {
        mkdirSync(path.join(probe.root, TRUSTED_KEYS_DIR), { recursive: true });
        copyFileSync(path.join(EXAMPLES, 'signing-key', 'EXAMPLE-site-signing.pub.pem'), path.join(probe.root, TRUSTED_KEYS_DIR, 'examples.pem'));
      }
      const match = (parse(readFileSync(path.join(EXAMPLES, name, 'site-config.yaml'), 'utf8')) as { spec?: { match?: { serialNumber?: string; systemUUID?: string } } }).spec?.match ?? {};
      const identity = { ...(match.serialNumber ? { serialNumber: match.serialNumber } : {}), ...(match.systemUUID ? { systemUUID: match.systemUUID } : {}), macAddresses: [] };
      const loaded = await loadSiteConfig(path.join(EXAMPLES, name), { host: new LocalHost({ root: probe.root, env: probe.env }), identity });
      probe.cleanup();
      assert.equal(loaded.status, 'valid', JSON.stringify(loaded));
      const site = (loaded as { site: Parameters<typeof testContext>[1]['site'] & object }).site;
      const net = site.resolved.network!;
      const node = createStandInNode({ lan: lanFor(net.nmstate, net.verify.ping) });
      try {
        const host = new LocalHost({ root: node.root, env: node.env });
        node.bootUntilEarlyPhase();
        const clock = fastClock();
        const early = await earlyNetwork({ host, log: createLogger({ level: 'error' }), stateDir: '/var/lib/sno-reconfigure', network: net, internal: [], networkTimeoutMs: site.resolved.timeouts.network, clock: { now: () => clock.now(), sleep: (ms) => clock.sleep(ms) } });
        assert.equal(early.outcome, 'committed', JSON.stringify(early.record));
        node.finishBoot();
        assert.deepEqual(node.nmstateHistory(), ['apply --no-commit', 'commit']);
        const uplink = siteUplink(net.nmstate)!;
        const ifaces = node.network().runtime.ifaces as { name: string; type: string; bridge?: { port: { name: string }[] }; ipv4?: { address?: { ip: string; 'prefix-length': number }[] }; ipv6?: { address?: { ip: string; 'prefix-length': number }[] } }[];
        const bridge = ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-bridge');
        assert.deepEqual(bridge?.bridge?.port.map((p) => p.name), [uplink.name, 'br-ex'], 'br-ex rebuilt on the example uplink');
        const internal = ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-interface')!;
        const held = [...(internal.ipv4?.address ?? []), ...(internal.ipv6?.address ?? [])].map((a) => `${a.ip}/${a['prefix-length']}`);
        for (const a of staticAddresses(uplink)) assert.ok(held.includes(a), `br-ex holds ${a}: ${held.join(', ')}`);
        if (uplink.ipv4?.dhcp) assert.deepEqual(held, ['10.78.0.50/24']);
        node.powerCycle();
        assert.deepEqual(node.network().runtime.ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-bridge'), bridge, 'the same br-ex after a reboot');
      } finally {
        node.cleanup();
      }
    });
  }
});
