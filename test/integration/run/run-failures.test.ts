import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { startScenario, siteConfigFor, parseLogs, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';
import { signedMedia } from '../../support/signed-media';
import { statusExitCode } from '../../../src/engine/status';
import { R } from '../../../src/cluster/resources';

async function withScenario(fn: (s: Scenario) => Promise<void>, sim: Parameters<typeof startScenario>[0] = {}): Promise<void> {
  const s = await startScenario(sim);
  try {
    await fn(s);
  } finally {
    await s.cleanup();
  }
}

function status(s: Scenario): { phase: string; lastError?: { message: string; remedy?: string; problems?: { path: string }[] }; steps: { name: string; state: string }[] } {
  // `status` exits 1 when the last run failed; its JSON is on stdout either way.
  const res = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--json', '--root', s.node.root], { encoding: 'utf8' });
  const view = JSON.parse(res.stdout);
  assert.equal(res.status, statusExitCode(view.phase, view.lastError), 'status exit code follows the phase');
  return view;
}

function banner(s: Scenario): string {
  return readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');
}

const waitUntil = async (what: string, cond: () => boolean, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

test('an invalid site-config changes nothing, is reported at priority err, and a corrected one proceeds', async () =>
  withScenario(async (s) => {
    const bad = siteConfigFor(s.sim).replace('baseDomain: store42.example.com', 'baseDomain: Store_42..example.com');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': bad });
    // stdout to a file that JOURNAL_STREAM names, as systemd does: the agent then prefixes priorities.
    const logFile = path.join(s.node.dir, 'journal.out');
    const fd = openSync(logFile, 'w');
    const st = fstatSync(fd);
    const child = spawn(process.execPath, [BUNDLE_PATH, 'run', ...s.agentArgs], { env: { ...s.node.env, JOURNAL_STREAM: `${st.dev}:${st.ino}`, NOTIFY_SOCKET: '/run/systemd/notify' }, stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    try {
      await waitUntil('the invalid config to be reported', () => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('invalid site-config'));
      await waitUntil('status to say so', () => status(s).phase === 'invalid-config');
      const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
      const errLines = lines.filter((l) => l.startsWith('<3>'));
      assert.ok(errLines.some((l) => l.includes('spec.baseDomain')), 'the field is named at priority err');
      assert.ok(lines.every((l) => /^<[2-7]>\{/.test(l)), 'every journal line carries a priority');
      // The banner goes out in the background (src/engine/progress.ts): wait for it rather than race it.
      await waitUntil('the banner to say so', () => /ACTION NEEDED/.test(banner(s)));
      assert.match(banner(s), /ACTION NEEDED — the site-config on .* is invalid — nothing was changed/);
      assert.match(banner(s), /spec\.baseDomain/);
      const st1 = status(s);
      assert.ok(st1.lastError?.problems?.some((p) => p.path === 'spec.baseDomain'));
      assert.equal(s.node.calls('nmstatectl').length, 0, 'nothing was changed');
      assert.equal(s.node.calls('systemctl').filter((c) => !c.args[0]!.startsWith('is-')).length, 0);
      const notify = s.node.calls('systemd-notify').map((c) => c.args.join(' '));
      assert.ok(notify.some((a) => a.startsWith('READY=1')), 'READY=1 sent');
      assert.ok(notify.some((a) => a.includes('STATUS=the site-config on') && a.includes('invalid')), 'STATUS= says why it waits');
      // The technician swaps the stick.
      s.node.detachVolume('sdb1');
      s.node.attachVolume('sdc1', 'site-config', { 'site-config.yaml': siteConfigFor(s.sim) });
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      assert.equal(code, 0, readFileSync(logFile, 'utf8').slice(-3000));
      // Stopped for the reboot that applies the site network at boot; the next start finishes.
      assert.equal(s.node.rebootRequested(), true);
      const after = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.equal(after.code, 0, after.stdout.slice(-3000));
      assert.equal(status(s).phase, 'succeeded');
    } finally {
      child.kill('SIGKILL');
    }
  }));

test('a site-config for another machine is ignored', async () =>
  withScenario(async (s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { match: { serialNumber: 'NOT-THIS-ONE' } } }) });
    const res = await s.run(['--once']);
    assert.equal(res.code, 0);
    assert.ok(res.logs.some((l) => l.level === 'warn' && /not for this machine/.test(l.msg)));
    assert.equal(s.node.calls('nmstatectl').length, 0);
    assert.match(banner(s), /WAITING — the site-config on .* is not for this machine/);
  }));

test('an API that never comes up ends in a clear failure at its deadline', async () =>
  withScenario(
    async (s) => {
      s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { apiReady: '3s', settleStability: '2s' } } }) });
      const res = await s.run(['--once'], { env: { NOTIFY_SOCKET: '/run/systemd/notify' } });
      assert.equal(res.code, 1);
      const st = status(s);
      assert.equal(st.phase, 'failed');
      assert.match(st.lastError!.message, /did not become ready within 3s/);
      assert.match(st.lastError!.remedy!, /journalctl -u kubelet/);
      assert.match(banner(s), /ACTION NEEDED — Wait for the Kubernetes API failed/);
      assert.ok(parseLogs(res.stdout).some((l) => l.level === 'error' && l.step === 'api'));
      const notify = s.node.calls('systemd-notify').map((c) => c.args.join(' '));
      assert.ok(!notify.some((a) => a.startsWith('EXTEND_TIMEOUT_USEC=')), 'no timeout extension once running: it would suspend the watchdog');
      assert.ok(notify.some((a) => a.includes('waiting for the API')), 'progress in STATUS=');
    },
    { sim: { faults: { apiNeverUp: true } } },
  ));

test('a site network that does not verify is rolled back and the failure names the check', async () =>
  withScenario(async (s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } }) });
    s.node.fail('getent');
    const res = await s.run(['--once']);
    assert.equal(res.code, 1);
    assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'rollback']);
    const st = status(s);
    assert.match(st.lastError!.message, /resolve registry\.store42\.example\.com: does not resolve/);
    assert.equal(s.node.units()['kubelet.service']?.active, 'inactive', 'kubelet untouched');
    assert.ok(existsSync(path.join(s.node.root, 'etc/sno-reconfigure/kubelet-hold')), 'the factory hold stays');
  }));

test('run --dry-run with no media present exits 1 and says what to do; nothing is written', async () =>
  withScenario(async (s) => {
    const run = await s.run(['--dry-run']);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.ok(run.logs.some((l) => l.level === 'error' && /^no site-config found: insert the media labelled SITE-CONFIG/.test(l.msg)), run.stdout);
    assert.equal(existsSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json')), false, 'a dry run keeps no journal');
  }));

test('a stop mid-run (systemctl stop, a shutdown) is normal: exit 0, one info line saying where it resumes, no internal error', async () =>
  withScenario(
    async (s) => {
      s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
      // Powered on with the stick in: the early network phase commits at boot, and the run goes on to the API.
      s.node.powerCycle();
      const child = s.spawnRun();
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      await waitUntil('the api step to start', () => out.includes('"msg":"Wait for the Kubernetes API"'));
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((r) => child.on('exit', r));
      assert.equal(code, 0, err);
      assert.doesNotMatch(err, /internal error|stack|at /);
      const stopped = parseLogs(out).filter((l) => /^stopped/.test(l.msg));
      assert.deepEqual(stopped.map((l) => [l.level, l.msg]), [['info', 'stopped during "Wait for the Kubernetes API"; the run resumes there at the next start']]);
    },
    { sim: { durations: { apiStartup: 60 * 60_000 } } },
  ));

test('a cluster rename on a node without a factory baseline is refused before any change (the name comes from the bootstrap kubeconfig)', async () =>
  withScenario(async (s) => {
    mkdirSync(path.join(s.node.root, 'etc/kubernetes'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'etc/kubernetes/kubeconfig'), `apiVersion: v1\nclusters:\n- cluster:\n    server: https://api-int.${s.sim.options.clusterName}.factory.example.com:6443\n  name: local\n`);
    const renamed = siteConfigFor(s.sim).replace(`clusterName: ${s.sim.options.clusterName}`, 'clusterName: other-name');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': renamed });
    const run = await s.run(['--once']);
    assert.equal(run.code, 1, run.stdout.slice(-2000));
    assert.ok(run.logs.some((l) => l.level === 'error' && /spec\.clusterName: is 'other-name', but this cluster is named/.test(l.msg)), run.stdout.slice(-2000));
    assert.equal(s.node.calls('nmstatectl').length, 0, 'the network was not touched');
    assert.equal(s.node.calls('systemctl').filter((c) => !c.args[0]!.startsWith('is-')).length, 0, 'kubelet was not started');
  }));

test('a kubeadmin hash for a node whose kubeadmin was removed at the factory is refused before any change (prepare recorded it)', async () =>
  withScenario(async (s) => {
    // What prepare records (src/factory/preflight.ts): kube-system's creation, and no kube-system/kubeadmin.
    const kubeSystemCreated = String(s.sim.store.get(R.namespaces, 'kube-system')?.metadata?.creationTimestamp);
    s.sim.store.delete(R.secrets, 'kubeadmin', 'kube-system');
    mkdirSync(path.join(s.node.root, 'etc/sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(s.node.root, 'etc/sno-reconfigure/baseline.json'), JSON.stringify({ clusterName: s.sim.options.clusterName, nodeName: s.sim.options.nodeName, kubeadmin: { kubeSystemCreated } }));
    // The kubeadmin hash needs signed media (src/siteconfig/trust.ts).
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedMedia(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { kubeadminPassword: { hash: `$2y$10$${'Q'.repeat(53)}` } } }) }, []));
    const plan = await s.run(['--dry-run']);
    assert.notEqual(plan.code, 0, plan.stdout.slice(-2000));
    assert.match(plan.stdout + plan.stderr, /spec\.kubeadminPassword\.hash: cannot take effect: this cluster has no Secret kube-system\/kubeadmin/, 'the plan says so too');
    const run = await s.run(['--once']);
    assert.notEqual(run.code, 0, run.stdout.slice(-2000));
    assert.ok(run.logs.some((l) => l.level === 'error' && /spec\.kubeadminPassword\.hash: cannot take effect: this cluster has no Secret kube-system\/kubeadmin/.test(l.msg)), run.stdout.slice(-2000));
    assert.equal(s.node.calls('nmstatectl').length, 0, 'the network was not touched');
    assert.equal(s.node.calls('systemctl').filter((c) => !c.args[0]!.startsWith('is-')).length, 0, 'kubelet was not started');
    assert.equal(s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system'), undefined);
  }));
