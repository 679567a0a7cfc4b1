import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { nmstateConfigError, networkStep, MAX_NETWORK_ATTEMPTS } from '../../../src/steps/network';
import { ConfigRejectedError, StepError } from '../../../src/engine/step';
import { defaultLan, standInNodeEachTest, type StandInLan, type StandInNode } from '../../support/standin-host';

/** br-ex as `nmstatectl show` has it now: its uplink port and the addresses on the br-ex internal interface. */
function brEx(node: StandInNode): { port?: string; addresses: string[] } | undefined {
  const ifaces = node.network().runtime.ifaces as { name: string; type: string; bridge?: { port: { name: string }[] }; ipv4?: { address?: { ip: string; 'prefix-length': number }[] } }[];
  const bridge = ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-bridge');
  if (!bridge) return undefined;
  const internal = ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-interface');
  return { port: bridge.bridge!.port.map((p) => p.name).find((p) => p !== 'br-ex'), addresses: (internal?.ipv4?.address ?? []).map((a) => `${a.ip}/${a['prefix-length']}`) };
}
import { fastClock, siteOf, testContext } from '../../support/step-context';
import { DEFAULT_TIMEOUTS } from '../../../src/siteconfig/types';
import { INSTALLED_NAMES_CONF, clusterRecords, dnsmasqRecords } from '../../../src/render/local-dns';

const NMSTATE = { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }] };
// A short network timeout keeps the failing-verification retries (each a stand-in process) few.
const site = siteOf({ network: { nmstate: NMSTATE, verify: { ping: ['192.168.42.1'], resolve: ['api.sno1.store42.example.com'] } }, timeouts: { ...DEFAULT_TIMEOUTS, network: 20_000 } });

describe('network step', () => {
  let node: StandInNode;
  let host: LocalHost;
  standInNodeEachTest((n, h) => ((node = n), (host = h)));

  test('applies with a checkpoint, verifies, commits, and keeps a backup of the previous state', async () => {
    const { ctx, journal } = await testContext(networkStep, { host, site, clock: fastClock() });
    assert.equal(await networkStep.check(ctx), false);
    await networkStep.apply(ctx);
    await networkStep.verify(ctx);
    assert.deepEqual(node.nmstateHistory(), ['apply --no-commit', 'commit']);
    const apply = node.calls('nmstatectl').find((c) => c.args[0] === 'apply')!;
    assert.deepEqual(apply.args.slice(0, 3), ['apply', '--no-commit', '--timeout']);
    assert.ok(Number(apply.args[3]) >= 70, 'checkpoint outlives the verification window');
    // The final topology: br-ex rebuilt by configure-ovs on eno1, holding the site address; eno1 its port.
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['192.168.42.10/24'] });
    assert.deepEqual(node.configureOvsRuns(), ['rebuilt br-ex']);
    assert.ok(existsSync(path.join(node.root, 'var/lib/sno-reconfigure/backups/network-before.yaml')));
    assert.match(readFileSync(path.join(node.root, 'var/lib/sno-reconfigure/backups/network-factory.yaml'), 'utf8'), /172\.31\.250\.10/);
    assert.deepEqual(node.calls('ping').map((c) => c.args.at(-1)), ['192.168.42.1']);
    assert.deepEqual(node.calls('getent').map((c) => c.args), [['ahosts', 'api.sno1.store42.example.com']]);
    assert.equal((journal.data.steps.network?.data as { phase: string }).phase, 'committed');
    assert.equal(await networkStep.check(ctx), true, 'a committed network is never re-applied');
  });

  test('a failing verification rolls back and fails with what did not answer', async () => {
    node.fail('ping-192.168.42.1');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => {
      assert.ok(e instanceof StepError && !(e instanceof ConfigRejectedError));
      assert.match(e.message, /did not verify and was rolled back \(attempt 1 of 3\): ping 192\.168\.42\.1/);
      return true;
    });
    assert.deepEqual(node.nmstateHistory(), ['apply --no-commit', 'rollback']);
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['172.31.250.10/24'] }, 'back on the factory network, br-ex included');
  });

  test(`after ${MAX_NETWORK_ATTEMPTS} failed verifications the config is rejected`, async () => {
    node.fail('getent');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    // Each attempt the agent will make again by itself says which one it was (the banner shows RETRYING).
    for (let i = 1; i < MAX_NETWORK_ATTEMPTS; i++) await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && !(e instanceof ConfigRejectedError) && e.attempt?.n === i && e.attempt.of === MAX_NETWORK_ATTEMPTS);
    await assert.rejects(networkStep.apply(ctx), ConfigRejectedError);
  });

  test('nmstate refusing the state (a config error) rejects the config at once, says so, and leaves no checkpoint behind', async () => {
    node.fail('nmstatectl-apply', 'NmstateError: InvalidArgument: Interface eno9 not found\n');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => {
      assert.ok(e instanceof ConfigRejectedError, String(e));
      assert.match(e.message, /^nmstate refused the site network in spec\.network \(InvalidArgument: Interface eno9 not found\); nothing was changed/);
      assert.doesNotMatch(`${e.message} ${e.remedy}`, /cabling|attempt/);
      // The store cannot edit the file: the remedy at the node is the second stick; the office corrects spec.network.nmstate.
      assert.match(e.remedy, /second stick/);
      assert.match(e.office ?? '', /they must send new media: spec\.network\.nmstate must use this node's interface names/);
      return true;
    });
    assert.equal(node.network().checkpoint, undefined);
  });

  test('an nmstate failure that is not about the state (NetworkManager, a bug) counts as a failed attempt and is retried', async () => {
    node.fail('nmstatectl-apply', 'NmstateError: PluginFailure: failed to communicate with NetworkManager\n');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && !(e instanceof ConfigRejectedError) && /attempt 1 of 3/.test(e.message));
  });

  // The sixteenth hostile re-test of issue 36: with NetworkManager not answering, `status` said "internal error".
  test('nmstatectl show failing (NetworkManager not answering) is a sentence with what to do, not an internal error', async () => {
    node.fail('nmstatectl-show', 'NmstateError: PluginFailure: failed to communicate with NetworkManager\n');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && /^the node's network could not be read \(exit 1: NmstateError: PluginFailure: failed to communicate with NetworkManager\)$/.test(e.message) && /NetworkManager is not answering/.test(e.remedy));
  });

  test('nmstateConfigError picks the kinds nmstate itself does not retry', () => {
    const rows: [string, string | undefined][] = [
      ['NmstateError: InvalidArgument: Interface eno9 not found', 'InvalidArgument: Interface eno9 not found'],
      ['[2026-01-01T00:00:00Z ERROR nmstatectl] NmstateError: NotSupportedError: Ethtool feature x is not supported', 'NotSupportedError: Ethtool feature x is not supported'],
      ['NmstateError: DependencyError: VLAN base interface bond9 not found', 'DependencyError: VLAN base interface bond9 not found'],
      ['NmstateError: VerificationError: Verification failure: eno1.interface.ipv4.address desire [...] current [...]', undefined],
      ['NmstateError: PluginFailure: failed to communicate with NetworkManager', undefined],
      ['NmstateError: Bug: unexpected', undefined],
    ];
    for (const [stderr, expected] of rows) assert.equal(nmstateConfigError(stderr), expected, stderr);
  });

  test('resuming after a power cut between apply and commit restores the factory br-ex first, then applies again', async () => {
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    node.fail('nmstatectl-commit', 'killed');
    await assert.rejects(networkStep.apply(ctx));
    assert.equal((ctx.data as { phase: string }).phase, 'applying');
    // The power cut: NetworkManager's checkpoint is gone; at boot configure-ovs built br-ex from the uncommitted eno1 profile.
    node.powerCycle();
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['192.168.42.10/24'] });
    node.heal('nmstatectl-commit');
    const before = node.calls('nmstatectl').length;
    await networkStep.apply(ctx);
    const verbs = node.calls('nmstatectl').slice(before).filter((c) => c.args[0] !== 'show').map((c) => `${c.args[0]}${c.args.includes('--no-commit') ? ' --no-commit' : ''}`);
    assert.deepEqual(verbs, ['rollback', 'apply', 'apply --no-commit', 'commit'], 'no checkpoint left: the saved factory uplink is applied before the new attempt');
    assert.ok(node.calls('nmstatectl').slice(before).find((c) => c.args[0] === 'apply')!.args[1]!.endsWith('backups/network-factory.yaml'));
    assert.deepEqual(node.configureOvsRuns(), ['rebuilt br-ex', 'rebuilt br-ex', 'rebuilt br-ex']);
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['192.168.42.10/24'] });
  });

  test('killed between apply and commit: NetworkManager rolls the checkpoint back by itself; the next start rebuilds br-ex as at the factory', async () => {
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    node.fail('nmstatectl-commit', 'killed');
    await assert.rejects(networkStep.apply(ctx));
    // The checkpoint's deadline passes with nobody there (modelled: the stand-in rolls back at its next call).
    const state = JSON.parse(readFileSync(path.join(node.standinDir, 'net', 'state.json'), 'utf8'));
    state.checkpoint.deadline = Date.now() - 1;
    writeFileSync(path.join(node.standinDir, 'net', 'state.json'), JSON.stringify(state));
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['172.31.250.10/24'] }, 'the checkpoint brought the factory network back');
    node.heal('nmstatectl-commit');
    node.fail('ping');
    await assert.rejects(networkStep.apply(ctx), /did not verify and was rolled back \(attempt 1 of 3\)/);
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['172.31.250.10/24'] });
  });

  test('a name the node does not have is refused before any change, naming the interfaces it has', async () => {
    const bad = siteOf({ network: { nmstate: { interfaces: [{ name: 'eno9', type: 'ethernet', state: 'up', ipv4: { enabled: true, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }] }, verify: { ping: [], resolve: [] } } });
    const { ctx } = await testContext(networkStep, { host, site: bad, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => {
      assert.ok(e instanceof ConfigRejectedError);
      assert.match(e.message, /names the network interface eno9, which this node does not have \(this node has eno1, eno2\); nothing was changed/);
      assert.match(e.remedy, /eno1, eno2/);
      return true;
    });
    await assert.rejects(networkStep.plan(ctx), /eno9/);
    assert.deepEqual(node.nmstateHistory(), []);
  });

  test('plan says which address the node-local DNS answers the installed names with, and whether the node keeps it at the site', async () => {
    const records = (address: string) => dnsmasqRecords('installed names', clusterRecords('sno1.factory.example.com', address, true));
    mkdirSync(path.dirname(path.join(node.root, INSTALLED_NAMES_CONF)), { recursive: true });
    writeFileSync(path.join(node.root, INSTALLED_NAMES_CONF), records('172.31.250.10'));
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    const line = async () => (await networkStep.plan(ctx)).find((c) => c.target === 'the node-local DNS')?.detail;
    ctx.facts.internalAddresses = ['172.31.250.10'];
    assert.equal(await line(), 'the installed api, api-int and *.apps answer with 172.31.250.10, the internal IP, kept at every site');
    // Prepared without an internal IP (before prepare refused that): the factory address, not held at the site.
    ctx.facts.internalAddresses = [];
    assert.match((await line()) ?? '', /^the installed api, api-int and \*\.apps answer with 172\.31\.250\.10, which the node will not have here \(no internal IP\): the site network would be rolled back; call the office \(render --internal-ip 172\.31\.250\.10\/PREFIX, prepare again\)$/);
    writeFileSync(path.join(node.root, INSTALLED_NAMES_CONF), records('192.168.42.10'));
    assert.equal(await line(), 'the installed api, api-int and *.apps answer with 192.168.42.10, the site address');
    assert.deepEqual(node.nmstateHistory(), [], 'plan changes nothing');
  });

  test('a 4.16 node whose br-ex nmstate set up at install is refused before any change (configure-ovs would not rebuild it)', async () => {
    mkdirSync(path.join(node.root, 'etc/nmstate/openshift'), { recursive: true });
    writeFileSync(path.join(node.root, 'etc/nmstate/openshift/applied'), '');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof ConfigRejectedError && /br-ex was set up by nmstate at install/.test(e.message) && /Call the office/.test(e.remedy));
    assert.deepEqual(node.nmstateHistory(), []);
  });

  test('on a node without br-ex (OpenShiftSDN) the state applies to the NIC and configure-ovs is not run', async () => {
    node.setLan({ ...defaultLan('192.168.42.10'), ovn: false });
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await networkStep.apply(ctx);
    assert.deepEqual(node.nmstateHistory(), ['apply --no-commit', 'commit']);
    assert.deepEqual(node.configureOvsRuns(), []);
    assert.ok(!node.calls('systemctl').some((c) => c.args.includes('ovs-configuration.service')));
    const eno1 = node.network().runtime.ifaces.find((i) => i.name === 'eno1') as { ipv4: { address: { ip: string }[] } };
    assert.deepEqual(eno1.ipv4.address.map((a) => a.ip), ['192.168.42.10']);
  });

  /** The state a site writes for each shape (examples/), run through the step on the modelled node. */
  const shapes: { name: string; lan: StandInLan; nmstate: Record<string, unknown>; ping: string[]; port: string; addresses: string[] }[] = [
    {
      name: 'a VLAN on the uplink NIC (the store switch port is tagged 42)',
      lan: { ...defaultLan('192.168.42.10'), store: { ...defaultLan('192.168.42.10').store, vlan: 42 } },
      nmstate: {
        interfaces: [{ name: 'eno1.42', type: 'vlan', state: 'up', vlan: { 'base-iface': 'eno1', id: 42 }, ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }],
        routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1.42' }] },
      },
      ping: ['192.168.42.1'],
      port: 'eno1.42',
      addresses: ['192.168.42.10/24'],
    },
    {
      name: 'a bond of both NICs',
      lan: defaultLan('192.168.42.10'),
      nmstate: {
        interfaces: [
          { name: 'bond0', type: 'bond', state: 'up', 'link-aggregation': { mode: 'active-backup', port: ['eno1', 'eno2'] }, ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } },
        ],
        routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'bond0' }] },
      },
      ping: ['192.168.42.1'],
      port: 'bond0',
      addresses: ['192.168.42.10/24'],
    },
    {
      name: 'dual stack on the uplink NIC',
      lan: { ...defaultLan('192.168.42.10'), store: { subnets: ['192.168.42.0/24', 'fd00:42::/64'], hosts: ['192.168.42.1', 'fd00:42::1'] } },
      nmstate: {
        interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] }, ipv6: { enabled: true, dhcp: false, autoconf: false, address: [{ ip: 'fd00:42::10', 'prefix-length': 64 }] } }],
        routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }, { destination: '::/0', 'next-hop-address': 'fd00:42::1', 'next-hop-interface': 'eno1' }] },
      },
      ping: ['192.168.42.1', 'fd00:42::1'],
      port: 'eno1',
      addresses: ['192.168.42.10/24'],
    },
  ];
  for (const shape of shapes) {
    test(`${shape.name}: br-ex is rebuilt on ${shape.port} with the site address and committed`, async () => {
      node.setLan(shape.lan);
      const { ctx } = await testContext(networkStep, { host, site: siteOf({ network: { nmstate: shape.nmstate, verify: { ping: shape.ping, resolve: [] } } }), clock: fastClock() });
      await networkStep.apply(ctx);
      assert.deepEqual(node.nmstateHistory(), ['apply --no-commit', 'commit']);
      assert.deepEqual(brEx(node), { port: shape.port, addresses: shape.addresses });
    });
  }

  test('a wrong VLAN id fails verification and the factory br-ex comes back', async () => {
    node.setLan({ ...defaultLan('192.168.42.10'), store: { ...defaultLan('192.168.42.10').store, vlan: 42 } });
    const nmstate = { ...shapes[0]!.nmstate, interfaces: [{ ...(shapes[0]!.nmstate.interfaces as Record<string, unknown>[])[0], name: 'eno1.43', vlan: { 'base-iface': 'eno1', id: 43 } }], routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1.43' }] } };
    const { ctx } = await testContext(networkStep, { host, site: siteOf({ network: { nmstate, verify: { ping: ['192.168.42.1'], resolve: [] } }, timeouts: { ...DEFAULT_TIMEOUTS, network: 20_000 } }), clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), /did not verify and was rolled back \(attempt 1 of 3\): ping 192\.168\.42\.1/);
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['172.31.250.10/24'] });
  });

  test('with DHCP the site names are published to the address br-ex was leased, not to one from the file', async () => {
    const lan = defaultLan('192.168.42.10');
    node.setLan({ ...lan, store: { ...lan.store, dhcp: { ipv4: { address: '192.168.42.77/24', gateway: '192.168.42.1' } } } });
    mkdirSync(path.join(node.root, 'etc/systemd/system'), { recursive: true });
    writeFileSync(path.join(node.root, 'etc/systemd/system/sno-reconfigure-dns.service'), '[Service]\n');
    const dhcp = siteOf({ clusterName: 'sno1', network: { nmstate: { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: true } }] }, verify: { ping: ['192.168.42.1'], resolve: [] } } });
    const { ctx } = await testContext(networkStep, { host, site: dhcp, clock: fastClock() });
    await networkStep.apply(ctx);
    assert.deepEqual(brEx(node), { port: 'eno1', addresses: ['192.168.42.77/24'] });
    const conf = readFileSync(path.join(node.root, 'etc/dnsmasq.d/sno-reconfigure-site.conf'), 'utf8');
    assert.match(conf, /address=\/api\.sno1\.store42\.example\.com\/192\.168\.42\.77$/m);
  });

  test('without a network section there is nothing to do', async () => {
    const { ctx } = await testContext(networkStep, { host, site: siteOf(), clock: fastClock() });
    assert.equal(await networkStep.check(ctx), true);
    assert.deepEqual(await networkStep.plan(ctx), []);
  });
});
