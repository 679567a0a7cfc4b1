// The site network on a node shaped like a real OpenShift node with OVN-Kubernetes (issues 26 and 35): the uplink eno1
// is a port of br-ex, which ovs-configuration.service builds at every boot. The agent's run asks for one reboot; at
// that boot the early network phase applies the site state to eno1's own profile before configure-ovs. The stand-in
// (test/support/stand-ins/network-model.cjs) refuses what nmstate refuses and gives back on rollback only the
// profiles that were active, so an agent that writes the address on a port, or counts on a checkpoint taken under
// br-ex, fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { BASELINE_FILE, EARLY_NETWORK_UNIT_PATH } from '../../../src/paths';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { ensureBundle } from '../../support/bundle';
import { parse, stringify } from 'yaml';
import { startScenario, siteConfigFor, type Scenario } from '../../support/scenario';
import { defaultLan, type StandInNode } from '../../support/standin-host';

const INTERNAL = '10.99.0.10/32';

/** br-ex as `nmstatectl show` reports it: its uplink port and the addresses of the br-ex internal interface. */
function brEx(node: StandInNode): { port?: string; addresses: string[] } | undefined {
  const ifaces = node.network().runtime.ifaces as { name: string; type: string; controller?: string; bridge?: { port: { name: string }[] }; ipv4?: { address?: { ip: string; 'prefix-length': number }[] } }[];
  const bridge = ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-bridge');
  if (!bridge) return undefined;
  const internal = ifaces.find((i) => i.name === 'br-ex' && i.type === 'ovs-interface');
  return { port: bridge.bridge!.port.map((p) => p.name).find((p) => p !== 'br-ex'), addresses: (internal?.ipv4?.address ?? []).map((a) => `${a.ip}/${a['prefix-length']}`) };
}

const withSite = async (use: (s: Scenario, site: string) => Promise<void>, opts: Parameters<typeof startScenario>[0] = {}) => {
  const s = await startScenario({ ...opts, node: { extraEnv: { STANDIN_INTERNAL_IPS: INTERNAL }, ...opts.node } });
  // The factory baseline names the internal IP (prepare writes it; docs/factory-and-site.md).
  mkdirSync(path.join(s.node.root, path.dirname(BASELINE_FILE)), { recursive: true });
  writeFileSync(path.join(s.node.root, BASELINE_FILE), JSON.stringify({ internalAddresses: [INTERNAL.replace(/\/\d+$/, '')] }));
  try {
    await use(s, s.sim.options.nodeIPs[0]!);
  } finally {
    await s.cleanup();
  }
};

const reboots = (s: Scenario) => s.node.calls('systemctl').filter((c) => c.args[0] === 'reboot').length;

test('a relocation on a br-ex node reboots once; the early phase commits, and configure-ovs builds br-ex on eno1 with the site address before the internal IP; a reboot keeps it', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'the factory network');
    mkdirSync(path.join(s.node.root, path.dirname(EARLY_NETWORK_UNIT_PATH)), { recursive: true });
    writeFileSync(path.join(s.node.root, EARLY_NETWORK_UNIT_PATH), '[Unit]\n');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal(reboots(s), 1, 'one reboot, for the early phase');
    // Disarmed with the agent: armed after the done marker, the phase would apply the next stick's network at boot with
    // no agent to carry on (the twentieth hostile re-test of issue 36, X3b: prepare cut off after removing the marker).
    assert.ok(s.node.calls('systemctl').some((c) => c.args.join(' ') === 'disable sno-reconfigure.service sno-reconfigure-network.service'));
    assert.ok(res.logs.some((l) => l.msg.startsWith('network pending for the next boot')), res.stdout.slice(-2000));
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit']);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: [`${site}/24`, INTERNAL] });
    assert.ok(res.logs.some((l) => l.msg === 'the site network on eno1 was applied at boot, verified and committed'), res.stdout.slice(-2000));
    // Any later boot: configure-ovs builds br-ex from eno1's persistent profile, which now holds the site settings.
    s.node.powerCycle();
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: [`${site}/24`, INTERNAL] });
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit'], 'nothing applied again');
  });
});

test("the state written like the examples, applied under br-ex (no release), is refused by nmstate's rule", { timeout: 10 * 60_000 }, async () => {
  await withSite(async (s) => {
    const site = parse(siteConfigFor(s.sim)) as { spec: { network: { nmstate: unknown } } };
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nm-')), 'state.yaml');
    writeFileSync(file, stringify(site.spec.network.nmstate));
    const res = spawnSync(path.join(s.node.bin, 'nmstatectl'), ['apply', '--no-commit', '--timeout', '60', file], { env: s.node.env, encoding: 'utf8' });
    assert.equal(res.status, 1);
    assert.equal(res.stderr.trim(), 'NmstateError: InvalidArgument: Interface eno1 cannot have IP enabled as it is attached to a controller where IP is not allowed');
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'nothing changed');
    assert.equal(s.node.network().checkpoint, undefined);
  });
});

test('under br-ex a checkpoint does not give back the NIC\'s own profile (it runs on configure-ovs\'s): a state applied then and rolled back comes back at the next boot', { timeout: 10 * 60_000 }, async () => {
  await withSite(async (s) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nm-')), 'state.yaml');
    writeFileSync(file, stringify({ interfaces: [{ name: 'br-ex', type: 'ovs-interface', state: 'absent' }, { name: 'br-ex', type: 'ovs-bridge', state: 'absent' }, { name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '10.1.2.3', 'prefix-length': 24 }] } }] }));
    const tool = (...args: string[]) => spawnSync(path.join(s.node.bin, 'nmstatectl'), args, { env: s.node.env, encoding: 'utf8' });
    assert.equal(tool('apply', '--no-commit', '--timeout', '60', file).status, 0);
    assert.equal(tool('rollback').status, 0);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'live, br-ex is back');
    s.node.bootUntilEarlyPhase();
    s.node.finishBoot();
    assert.deepEqual(brEx(s.node)?.addresses, ['10.1.2.3/24', INTERNAL], 'the failed settings were left in eno1\'s own profile (real-node-network observation 4)');
  });
});

test('a wrong gateway fails verification at boot and is rolled back to the factory network: attempt 1 of 3, and the factory network after the next boot too', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    const wrong = site.replace(/\.\d+$/, '.254');
    const doc = parse(siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } })) as { spec: { network: { nmstate: { routes: { config: Record<string, unknown>[] } }; verify: { ping: string[] } } } };
    doc.spec.network.nmstate.routes.config[0]!['next-hop-address'] = wrong;
    doc.spec.network.verify.ping = [wrong];
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': stringify(doc) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 1);
    assert.ok(res.logs.some((l) => l.msg.includes(`the site network did not verify at boot and was rolled back (attempt 1 of 3): ping ${wrong}`)), res.stdout.slice(-2000));
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'rollback']);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'br-ex is back with the factory address');
    // The next boot tries again (attempt 2), fails the same way, and the node still comes up on the factory network.
    s.node.powerCycle();
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'rollback', 'apply --no-commit', 'rollback']);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'the factory profile is what persists');
  });
});

test('the early phase killed between apply and commit, then a power cut: the next boot writes the known good back, applies again and commits; the run carries on', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    s.node.bootUntilEarlyPhase();
    const release = s.node.hold('nmstatectl-commit');
    // Its own process group, killed whole as systemd kills the unit's control group (nmstatectl with it).
    const early = spawn(process.execPath, [ensureBundle(), 'early-network', '--root', s.node.root], { env: s.node.env, stdio: 'ignore', detached: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (s.node.calls('nmstatectl').some((c) => c.args[0] === 'commit')) {
          clearInterval(timer);
          process.kill(-early.pid!, 'SIGKILL');
        }
      }, 20);
      early.on('exit', (_code, signal) => (clearInterval(timer), signal === 'SIGKILL' ? resolve() : reject(new Error('the early phase ended before the kill point'))));
    });
    // The held commit dies with its caller (the tool server sees the connection close) before the hold is lifted.
    await new Promise((r) => setTimeout(r, 1000));
    release();
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit'], 'killed on the site network, uncommitted');
    const bootLog = s.node.powerCycle();
    assert.match(bootLog, /the last attempt at the site network was cut off \(phase committing\) before it was committed/);
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'apply --no-commit', 'commit']);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: [`${site}/24`, INTERNAL] });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal(reboots(s), 0, 'committed at the boot before the run: no reboot asked');
  });
});

test('a node without br-ex (OpenShiftSDN): the early phase applies the state to eno1 and no br-ex is built', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    s.node.setLan({ ...defaultLan(site), ovn: false });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal(brEx(s.node), undefined);
    assert.deepEqual(s.node.configureOvsRuns(), []);
    const eno1 = s.node.network().runtime.ifaces.find((i) => i.name === 'eno1') as { ipv4: { address: { ip: string }[] } };
    assert.deepEqual(eno1.ipv4.address.map((a) => a.ip), [site, INTERNAL.replace(/\/\d+$/, '')]);
  });
});
