// spec.ntp and the clock check through whole runs against the simulator and the stand-in chronyc (issue 18):
// the site's chrony.conf is on the node and chronyd restarted before kubelet starts; a clock hours off is set
// right before anything is issued, and the report and `status` say by how much; the same text goes into the
// MachineConfig 99-master-chrony, whose rollout reboots the node once (MCD 4.12–4.16) and settle waits through;
// unreachable servers are a warning; a clock before the factory's preparation stops the run.
import { test } from 'node:test';
import { spawn, spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { chronyConf } from '../../../src/host/chrony';
import { siteConfigFor, inScenario, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';

const NTP = { servers: ['10.20.0.5', 'ntp1.store42.example.com'], pools: ['pool.store42.example.com'] };
const CONF = chronyConf(NTP);

const machineConfigFile = (s: Scenario): string | undefined => {
  const mc = s.sim.store.get(R.machineConfigs, '99-master-chrony') as { spec: { config: { ignition: { version: string }; storage: { files: { path: string; mode: number; contents: { source: string } }[] } } } } | undefined;
  const f = mc?.spec.config.storage.files.find((x) => x.path === '/etc/chrony.conf');
  if (!f) return undefined;
  assert.equal(mc!.spec.config.ignition.version, '3.2.0');
  assert.equal(f.mode, 0o644);
  return Buffer.from(f.contents.source.replace(/^data:[^,]*;base64,/, ''), 'base64').toString('utf8');
};
/** `plan` of a site-config (asynchronously: the simulator answers from this very process). */
function plan(s: Scenario, yaml: string): Promise<string> {
  const dir = path.join(s.node.dir, 'plan-media');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'site-config.yaml'), yaml);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUNDLE_PATH, 'plan', dir, ...s.agentArgs], { env: s.node.env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', () => resolve(out));
  });
}
const report = (s: Scenario) => JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { node: { clock?: Record<string, unknown> }; warnings: string[] };

test('spec.ntp: chrony.conf before kubelet, a clock 3 hours behind set right, the same file in 99-master-chrony, one reboot', () =>
  inScenario(async (s) => {
    let reboots = 0;
    s.sim.events.on('reboot', (e: { phase: string }) => { if (e.phase === 'down') reboots++; });
    s.node.setChrony({ synchronised: true, source: '10.20.0.5', offset: -3 * 3600 });
    const yaml = siteConfigFor(s.sim, { extraSpec: { ntp: NTP, timeouts: { settleStability: '2s' } } });
    assert.match(await plan(s, yaml), /3\. Check the node's clock \[clock\]\n {3}- write file \/etc\/chrony\.conf — the site's time sources 10\.20\.0\.5, ntp1\.store42\.example\.com, pool\.store42\.example\.com; chronyd restarted, so it sets the clock right without a reboot\n/);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': yaml });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));

    assert.equal(readFileSync(path.join(s.node.root, 'etc/chrony.conf'), 'utf8'), CONF);
    assert.match(CONF, /^server 10\.20\.0\.5 iburst\nserver ntp1\.store42\.example\.com iburst\npool pool\.store42\.example\.com iburst\n/m);
    const calls = s.node.calls().map((c) => `${c.tool} ${c.args.join(' ')}`);
    const restart = calls.indexOf('systemctl restart chronyd.service');
    const step = calls.indexOf('chronyc makestep');
    const kubelet = calls.findIndex((c) => /^systemctl start .*kubelet\.service/.test(c));
    assert.ok(restart >= 0 && step > restart && kubelet > step, `chronyd restarted, the clock stepped, then kubelet started:\n${calls.join('\n')}`);
    assert.ok(Math.abs(s.node.chrony().offset) < 1, 'the stand-in clock is right after makestep');

    const clock = report(s).node.clock!;
    assert.equal(clock.synchronised, true);
    assert.equal(clock.source, '10.20.0.5');
    assert.ok(Math.abs((clock.correctedSeconds as number) - 10800) < 5, `corrected by about +3 h: ${JSON.stringify(clock)}`);
    const messages = res.logs.map((l) => l.msg);
    assert.ok(messages.some((m) => /The node's clock is synchronised with 10\.20\.0\.5, 0\.000 s from NTP time; it was 3h\S* behind and was set right\./.test(m)), messages.filter((m) => /clock/.test(m)).join('\n'));

    assert.equal(machineConfigFile(s), CONF, 'the MachineConfig holds the same chrony.conf as the node');
    assert.equal(reboots, 1, 'a changed file reboots the node once on 4.12–4.16');

    const status = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8' });
    assert.match(status.stdout, /Clock \(\d{4}-\d\d-\d\dT[^)]*\): The node's clock is synchronised with 10\.20\.0\.5, 0\.000 s from NTP time; it was 3h\S* behind and was set right\./);
  }));

test('NTP servers that do not answer: a warning naming them and UDP 123; the run goes on and the MachineConfig is still written', () =>
  inScenario(async (s) => {
    s.node.setChrony({ synchronised: false });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ntp: { servers: ['10.20.0.5'] }, timeouts: { settleStability: '2s', clock: '3s' } } }) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    const r = report(s);
    assert.equal(r.node.clock?.synchronised, false);
    assert.ok(r.warnings.some((w) => w === "The node's clock is not synchronised with the site's NTP servers (10.20.0.5); it keeps its own time after 3s: check that the node can reach them on UDP port 123."), r.warnings.join('\n'));
    assert.ok(!s.node.calls('chronyc').some((c) => c.args[0] === 'makestep'), 'no step without a synchronised source');
    assert.equal(machineConfigFile(s), chronyConf({ servers: ['10.20.0.5'], pools: [] }));
  }));

test("chrony.conf owned by the node's MachineConfig: sources added to the running chronyd, the file untouched (no MCD drift)", () =>
  inScenario(async (s) => {
    const factory = 'server factory-ntp.example.com iburst\n';
    writeFileSync(path.join(s.node.root, 'etc/chrony.conf'), factory);
    mkdirSync(path.join(s.node.root, 'etc/machine-config-daemon'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'etc/machine-config-daemon/currentconfig'), JSON.stringify({ metadata: { name: 'rendered-master-0f1e' }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/chrony.conf', contents: { source: 'data:,x' } }] } } } }));
    const yaml = siteConfigFor(s.sim, { extraSpec: { ntp: NTP, timeouts: { settleStability: '2s' } } });
    s.sim.startKubelet();
    await s.sim.waitFor(() => s.sim.apiUp(), 60_000, 'API up');
    const planned = await plan(s, yaml);
    assert.match(planned, /- apply time sources chronyd — 10\.20\.0\.5, ntp1\.store42\.example\.com, pool\.store42\.example\.com, added to the running chronyd: \/etc\/chrony\.conf belongs to a MachineConfig until step chrony replaces it\n/);
    assert.match(planned, /Make the NTP servers permanent \[chrony\]\n {3}- create MachineConfig 99-master-chrony — \/etc\/chrony\.conf with the site's time sources .*; the node reboots once to apply it/);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': yaml });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal(readFileSync(path.join(s.node.root, 'etc/chrony.conf'), 'utf8'), factory, 'the MCD-owned file is not written outside a MachineConfig');
    assert.deepEqual(s.node.chrony().added, ['server 10.20.0.5 iburst', 'server ntp1.store42.example.com iburst', 'pool pool.store42.example.com iburst']);
    assert.ok(!s.node.calls('systemctl').some((c) => c.args.includes('chronyd.service')), 'chronyd is not restarted (it would forget the added sources)');
    assert.equal(machineConfigFile(s), CONF);
  }));

test('a clock before the factory prepared the node stops the run before kubelet, with what to do', () =>
  inScenario(async (s) => {
    mkdirSync(path.join(s.node.root, 'etc/sno-reconfigure'), { recursive: true });
    const prepared = new Date(Date.now() + 400 * 86_400_000).toISOString();
    writeFileSync(path.join(s.node.root, 'etc/sno-reconfigure/baseline.json'), JSON.stringify({ preparedAt: prepared }));
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, {}) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    const text = res.logs.map((l) => l.msg).join('\n');
    assert.match(text, new RegExp(`the node's clock says \\S+, which is before the factory prepared this node \\(${prepared.replace(/[.]/g, '\\.')}\\)`));
    assert.match(res.stdout, /Set the date and time in the server.s firmware/);
    assert.ok(!s.node.calls('systemctl').some((c) => c.args[0] === 'start' && c.args.includes('kubelet.service')), 'kubelet never started');
  }));

test('a MachineConfig that would override 99-master-chrony is named, and the run stops before writing one', () =>
  inScenario(async (s) => {
    s.sim.store.create(R.machineConfigs, {
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'MachineConfig',
      metadata: { name: '99-master-chrony-factory', labels: { 'machineconfiguration.openshift.io/role': 'master' } },
      spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/chrony.conf', mode: 420, overwrite: true, contents: { source: 'data:,server%20factory-ntp%20iburst%0A' } }] } } },
    });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { ntp: NTP } }) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.notEqual(res.code, 0);
    assert.match(res.stdout, /the MachineConfig 99-master-chrony-factory also writes \/etc\/chrony\.conf and comes after 99-master-chrony in name order, so the cluster would keep its time sources instead of the site's/);
    assert.match(res.stdout, /oc delete machineconfig 99-master-chrony-factory/);
    assert.equal(machineConfigFile(s), undefined, 'no 99-master-chrony was written');
  }));
