import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { nmstateConfigError, networkStep } from '../../../src/steps/network';
import { ConfigRejectedError, StepError } from '../../../src/engine/step';
import { standInNodeEachTest, type StandInNode } from '../../support/standin-host';

import { fastClock, siteOf, testContext } from '../../support/step-context';
import { DEFAULT_TIMEOUTS } from '../../../src/siteconfig/types';
import { INSTALLED_NAMES_CONF, clusterRecords, dnsmasqRecords } from '../../../src/render/local-dns';

const NMSTATE = { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }] };
// A short network timeout keeps the failing-verification retries (each a stand-in process) few.
const site = siteOf({ network: { nmstate: NMSTATE, verify: { ping: ['192.168.42.1'], resolve: ['api.sno1.store42.example.com'] } }, timeouts: { ...DEFAULT_TIMEOUTS, network: 20_000 } });

// The step's own refusals and plan; what it does with the early phase's outcome: network-early-step.test.ts.
describe('network step', () => {
  let node: StandInNode;
  let host: LocalHost;
  standInNodeEachTest((n, h) => ((node = n), (host = h)));

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

  test('without a network section there is nothing to do', async () => {
    const { ctx } = await testContext(networkStep, { host, site: siteOf(), clock: fastClock() });
    assert.equal(await networkStep.check(ctx), true);
    assert.deepEqual(await networkStep.plan(ctx), []);
  });
});
