// The network step on a node that runs the early network phase at boot (its MachineConfig ships
// sno-reconfigure-network.service): the step applies nothing itself. Not committed yet → "pending for the next
// boot" journaled, said on the banner, one reboot; the boot's outcome read afterwards — committed, a failed attempt
// (attempt n of 3), refused — and a reboot that did not bring the phase is not asked again.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { networkStep } from '../../../src/steps/network';
import { ConfigRejectedError, StepError } from '../../../src/engine/step';
import { BOOT_ID_FILE, KUBELET_BOOTSTRAP_KUBECONFIG } from '../../../src/paths';
import { INSTALLED_NAMES_CONF, LOCAL_DNS_UNIT, clusterRecords, dnsmasqRecords } from '../../../src/render/local-dns';
import { committedFile, desiredDigest, earlyRecordFile } from '../../../src/network/early';
import { standInNodeEachTest, type StandInNode } from '../../support/standin-host';
import { fastClock, siteOf, testContext } from '../../support/step-context';
import { DEFAULT_TIMEOUTS } from '../../../src/siteconfig/types';

const NMSTATE = {
  interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }],
  routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }] },
};
const site = siteOf({ network: { nmstate: NMSTATE, verify: { ping: ['192.168.42.1'], resolve: [] } }, timeouts: { ...DEFAULT_TIMEOUTS, network: 20_000 } });
const STATE = '/var/lib/sno-reconfigure';

describe('network step with the early phase', () => {
  let node: StandInNode;
  let host: LocalHost;
  standInNodeEachTest((n, h) => ((node = n), (host = h)));
  const write = (nodePath: string, text: string) => {
    mkdirSync(path.dirname(path.join(node.root, nodePath)), { recursive: true });
    writeFileSync(path.join(node.root, nodePath), text);
  };
  const earlyPhaseRan = (rec: Record<string, unknown>) => write(earlyRecordFile(STATE), JSON.stringify({ digest: desiredDigest(NMSTATE), ...rec }));
  const reboots = () => node.calls('systemctl').filter((c) => c.args[0] === 'reboot').length;

  test('not committed: journals the pending change, says so on the console, reboots once; then reads the committed outcome', async () => {
    const { ctx, journal, logs } = await testContext(networkStep, { host, site, clock: fastClock() });
    assert.equal(await networkStep.check(ctx), false);
    // The stand-in's reboot returns and the node stays up: the step says the node did not restart.
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && /did not restart/.test(e.message));
    assert.equal(reboots(), 1);
    assert.equal((journal.data.steps.network?.data as { phase: string }).phase, 'pending-reboot');
    assert.ok(logs.some((l) => /^network pending for the next boot: the site network of "test-site" is applied at the next boot: the node restarts now/.test(String(l.msg))), JSON.stringify(logs.map((l) => l.msg)));
    assert.deepEqual(node.nmstateHistory(), [], 'the step itself changes no network');
    // The boot's early phase committed it.
    write(committedFile(STATE), `${desiredDigest(NMSTATE)}\n`);
    earlyPhaseRan({ phase: 'committed', failures: 0 });
    await networkStep.apply(ctx);
    await networkStep.verify(ctx);
    assert.equal((journal.data.steps.network?.data as { phase: string }).phase, 'committed');
    assert.equal(reboots(), 1, 'no second reboot');
  });

  test('a failed attempt at boot is reported as attempt n of 3; the next start reboots for the next attempt; the third is a refusal', async () => {
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    for (let n = 1; n <= 3; n++) {
      earlyPhaseRan({ phase: 'rolled-back', failures: n, lastFailure: 'ping 192.168.42.1: 100% packet loss' });
      if (n < 3) {
        await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && !(e instanceof ConfigRejectedError) && e.attempt?.n === n && /at boot and was rolled back \(attempt \d of 3\): ping 192\.168\.42\.1/.test(e.message));
        await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && /did not restart/.test(e.message));
        assert.equal(reboots(), n);
      } else {
        await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof ConfigRejectedError && e.retryOnRequest === true);
      }
    }
  });

  test('a reboot that did not bring the early phase is not asked again: the office is called', async () => {
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), /did not restart/);
    write(BOOT_ID_FILE, 'a3a0f0d2-0d6e-4a38-9c55-2f8f1e0b7a11\n');
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && /not applied at boot/.test(e.message) && /office/i.test(e.remedy));
    assert.equal(reboots(), 1);
  });

  test('a boot ID that cannot be read is no proof of the same boot: the office is called, not a reboot at every start', async () => {
    rmSync(path.join(node.root, BOOT_ID_FILE));
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), /did not restart/);
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && /not applied at boot/.test(e.message));
    assert.equal(reboots(), 1);
  });

  test('cut off after the site names were written, before the node-local DNS restarted: the next start restarts it', async () => {
    write(KUBELET_BOOTSTRAP_KUBECONFIG, 'apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: https://api-int.sno1.factory.example.com:6443\n');
    write(`/etc/systemd/system/${LOCAL_DNS_UNIT}`, '[Unit]\n');
    write(INSTALLED_NAMES_CONF, dnsmasqRecords('installed names', clusterRecords('sno1.factory.example.com', '192.168.42.10', true)));
    write(committedFile(STATE), `${desiredDigest(NMSTATE)}\n`);
    earlyPhaseRan({ phase: 'committed', failures: 0 });
    const restarts = () => node.calls('systemctl').filter((c) => c.args[0] === 'try-restart').length;
    await networkStep.apply((await testContext(networkStep, { host, site, clock: fastClock() })).ctx);
    assert.equal(restarts(), 1);
    // The kill: the names are on disk, the restart and the saves after it never happened.
    earlyPhaseRan({ phase: 'committed', failures: 0 });
    rmSync(path.join(node.root, STATE, 'journal.json'));
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    assert.equal(await networkStep.check(ctx), false);
    await networkStep.apply(ctx);
    assert.equal(restarts(), 2, 'the node-local DNS is restarted to read the names');
  });

  test('the agent started again in the same boot (killed, or the reboot never came): the reboot is asked again, not the office', async () => {
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), /did not restart/);
    await assert.rejects(networkStep.apply(ctx), /did not restart/);
    assert.equal(reboots(), 2);
  });

  test('refused by nmstate at boot: a refusal of the file, not a link problem', async () => {
    earlyPhaseRan({ phase: 'rolled-back', failures: 0, refused: true, lastFailure: 'nmstate refused the site network in spec.network (InvalidArgument: Ethernet interface eno9 does not exists)' });
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    // A first run after a refusal with the step's record gone is a retry request: the count starts over.
    (ctx.data as { reportedFailures?: number }).reportedFailures = 0;
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof ConfigRejectedError && /eno9/.test(e.message));
    assert.equal(reboots(), 0);
  });

  test('refused at boot because br-ex is nmstate\'s (4.16): a matter for the office, not for new media', async () => {
    write('/etc/nmstate/openshift/applied', '');
    earlyPhaseRan({ phase: 'rolled-back', failures: 0, refused: true, lastFailure: "this node's br-ex was set up by nmstate at install (OpenShift 4.16 and later), which the agent cannot move onto the site network. Call the office: this node needs its site network set another way; nothing was changed." });
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    (ctx.data as { reportedFailures?: number }).reportedFailures = 0;
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof StepError && !(e instanceof ConfigRejectedError) && !e.retryable && /nothing was changed; nothing was kept/.test(e.message) && /^Call the office/.test(e.remedy));
  });

  // The fourteenth hostile re-test of issue 36 (N7): the boot's refusal was taken for a fresh offer of a refused config
  // (its count started over), and the run said the early phase had not run at all.
  test('refused at the boot the step asked for: said as the refusal, not as an early phase that did not run', async () => {
    const { ctx } = await testContext(networkStep, { host, site, clock: fastClock() });
    await assert.rejects(networkStep.apply(ctx), /did not restart/);
    earlyPhaseRan({ phase: 'rolled-back', failures: 0, refused: true, lastFailure: 'nmstate refused the site network in spec.network (InvalidArgument: Ethernet interface eno9 does not exists)' });
    await assert.rejects(networkStep.apply(ctx), (e: unknown) => e instanceof ConfigRejectedError && /eno9/.test(e.message) && !/not applied at boot/.test(e.message));
    assert.equal(reboots(), 1);
  });
});
