import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { nmstateConfigError, networkStep, MAX_NETWORK_ATTEMPTS } from '../../../src/steps/network';
import { ConfigRejectedError, StepError } from '../../../src/engine/step';
import { standInNodeEachTest, type StandInNode } from '../../support/standin-host';
import { fastClock, siteOf, testContext } from '../../support/step-context';
import { DEFAULT_TIMEOUTS } from '../../../src/siteconfig/types';

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
    assert.match(readFileSync(path.join(node.standinDir, 'nmstate', 'current.yaml'), 'utf8'), /192\.168\.42\.10/);
    assert.ok(existsSync(path.join(node.root, 'var/lib/sno-reconfigure/backups/network-before.yaml')));
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
    assert.match(readFileSync(path.join(node.standinDir, 'nmstate', 'current.yaml'), 'utf8'), /br-ex/, 'back on the previous network');
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
    assert.ok(!existsSync(path.join(node.standinDir, 'nmstate', 'checkpoint.yaml')));
  });

  test('an nmstate failure that is not about the state (NetworkManager, a bug) counts as a failed attempt and is retried', async () => {
    node.fail('nmstatectl-apply', 'NmstateError: PluginFailure: failed to communicate with NetworkManager\n');
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && !(e instanceof ConfigRejectedError) && /attempt 1 of 3/.test(e.message));
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

  test('resuming after a crash between apply and commit with the checkpoint gone restores the saved state first', async () => {
    const { ctx, journal } = await testContext(networkStep, { host, site, clock: fastClock() });
    // First attempt died after `apply --no-commit`; the reboot dropped NetworkManager's checkpoint.
    await host.writeFileAtomic('/var/lib/sno-reconfigure/backups/network-before.yaml', 'interfaces:\n- name: br-ex\n  type: ovs-interface\n  state: up\n');
    Object.assign(ctx.data, { phase: 'applying' });
    await journal.save();
    await networkStep.apply(ctx);
    const verbs = node.calls('nmstatectl').map((c) => `${c.args[0]}${c.args.includes('--no-commit') ? ' --no-commit' : ''}`);
    assert.deepEqual(verbs, ['rollback', 'apply', 'apply --no-commit', 'commit']);
    const restore = node.calls('nmstatectl')[1]!;
    assert.ok(restore.args[1]!.endsWith('backups/network-before.yaml'));
  });

  test('without a network section there is nothing to do', async () => {
    const { ctx } = await testContext(networkStep, { host, site: siteOf(), clock: fastClock() });
    assert.equal(await networkStep.check(ctx), true);
    assert.deepEqual(await networkStep.plan(ctx), []);
  });
});
