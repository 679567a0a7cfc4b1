// The site network on a node shaped like a real OpenShift node with OVN-Kubernetes (issue 26): the uplink eno1 is a
// port of br-ex, which ovs-configuration.service rebuilds at every boot. The stand-in (test/support/stand-ins/
// network-model.cjs) refuses what nmstate refuses, so an agent that writes the address on a port fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { BASELINE_FILE } from '../../../src/paths';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { spawnSync, type ChildProcess } from 'node:child_process';
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

test('a relocation on a br-ex node commits with br-ex on eno1 carrying the site address beside the internal IP, and a reboot keeps it', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'the factory network');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit']);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: [`${site}/24`, INTERNAL] });
    assert.ok(res.logs.some((l) => l.msg.startsWith(`site network applied (br-ex on eno1 holding ${site}/24) and committed`)), res.stdout.slice(-2000));
    // Any later boot: configure-ovs rebuilds br-ex from eno1's persistent profile, which now holds the site settings.
    s.node.powerCycle();
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: [`${site}/24`, INTERNAL] });
  });
});

test("the state written like the examples, applied as the old agent did (no br-ex release), is refused by nmstate's rule", { timeout: 10 * 60_000 }, async () => {
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

test('a wrong gateway fails verification and is rolled back to the factory network, br-ex included', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    const wrong = site.replace(/\.\d+$/, '.254');
    const doc = parse(siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } })) as { spec: { network: { nmstate: { routes: { config: Record<string, unknown>[] } }; verify: { ping: string[] } } } };
    doc.spec.network.nmstate.routes.config[0]!['next-hop-address'] = wrong;
    doc.spec.network.verify.ping = [wrong];
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': stringify(doc) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 1);
    assert.ok(res.logs.some((l) => l.msg.includes(`did not verify and was rolled back (attempt 1 of 3): ping ${wrong}`)), res.stdout.slice(-2000));
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'rollback']);
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'br-ex is back with the factory address');
    s.node.powerCycle();
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'and stays so after a reboot: the factory profile is what persists');
  });
});

test('killed between apply and commit: the checkpoint rolls back by itself, the next start brings br-ex back and commits', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const child: ChildProcess = s.spawnRun();
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (s.node.nmstateHistory().includes('apply --no-commit')) {
          clearInterval(timer);
          child.kill('SIGKILL');
        }
      }, 20);
      child.on('exit', (_code, signal) => (clearInterval(timer), signal === 'SIGKILL' ? resolve() : reject(new Error('the agent ended before the kill point'))));
    });
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit'], 'killed on the site network, uncommitted');
    assert.notEqual(s.node.network().checkpoint, undefined);
    // Nobody commits: NetworkManager's timer rolls the checkpoint back (its deadline moved to now).
    const stateFile = path.join(s.node.standinDir, 'net', 'state.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    state.checkpoint.deadline = Date.now() - 1;
    writeFileSync(stateFile, JSON.stringify(state));
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: ['172.31.250.10/24', INTERNAL] }, 'rolled back by the checkpoint, br-ex included');
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.ok(res.logs.some((l) => l.msg.includes('the previous attempt at the site network was interrupted before it was committed')));
    assert.deepEqual(brEx(s.node), { port: 'eno1', addresses: [`${site}/24`, INTERNAL] });
    assert.deepEqual(s.node.nmstateHistory().slice(-2), ['apply --no-commit', 'commit']);
  });
});

test('a node without br-ex (OpenShiftSDN): the state applies to eno1 directly and ovs-configuration is never run', { timeout: 20 * 60_000 }, async () => {
  await withSite(async (s, site) => {
    s.node.setLan({ ...defaultLan(site), ovn: false });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal(brEx(s.node), undefined);
    assert.deepEqual(s.node.configureOvsRuns(), []);
    const eno1 = s.node.network().runtime.ifaces.find((i) => i.name === 'eno1') as { ipv4: { address: { ip: string }[] } };
    assert.deepEqual(eno1.ipv4.address.map((a) => a.ip), [site]);
  });
});
