// spec.nodeLabels through a whole run against the simulator (issue 18): the node gets the labels once kubelet
// registered it, a removed one goes, kubelet's and the cluster's own labels stay; a second run changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { runAtNextStore, signedSiteConfigFiles, siteConfigFor, inScenario, startScenario } from '../../support/scenario';
import { bootstrapUserEnabled } from '../../sim/cluster/bootstrap-user';

test('the node carries the site labels after the run, and a re-run leaves them as they are', () =>
  inScenario(async (s) => {
    const node = () => s.sim.store.get(R.nodes, s.sim.options.nodeName) as { metadata: { labels: Record<string, string> } };
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, {
      'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { nodeLabels: { set: { 'store.example.com/region': 'emea', 'store.example.com/store': '0042' }, remove: ['store.example.com/staging'] }, timeouts: { settleStability: '2s' } } }),
    }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    const labels = node().metadata.labels;
    assert.equal(labels['store.example.com/region'], 'emea');
    assert.equal(labels['store.example.com/store'], '0042');
    assert.equal(labels['node-role.kubernetes.io/master'], '', "the cluster's own labels stay");
    assert.equal(labels['kubernetes.io/hostname'], s.sim.options.nodeName);
    const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { changes: { kind: string; target: string; detail?: string }[]; steps: { name: string; state: string }[] };
    assert.deepEqual(report.changes.filter((c) => c.kind === 'Node'), [{ kind: 'Node', target: s.sim.options.nodeName, action: 'update', detail: 'labels: store.example.com/region=emea, store.example.com/store=0042' }]);
    assert.equal(report.steps.find((st) => st.name === 'node-labels')?.state, 'done');

    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    const before = s.sim.api.requests.length;
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 0, again.stdout.slice(-3000));
    assert.deepEqual(s.sim.api.requests.slice(before).filter((r: { method: string; path: string }) => r.method === 'PATCH' && r.path.includes('/nodes/')).map((r: { path: string }) => r.path), [], 'no second patch of the node');
  }));

test('kubeadminPassword: the new hash lands in kube-system/kubeadmin and appears in no output; remove deletes the Secret', async () => {
  const s = await startScenario();
  const hash = `$2y$10$${'Q'.repeat(53)}`;
  try {
    // The simulator seeds the installer's kube-system/kubeadmin, dated with the cluster's install (test/sim/cluster/seed.ts).
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { kubeadminPassword: { hash }, timeouts: { settleStability: '2s' } } }) }));
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    const secret = s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system') as { data: Record<string, string> };
    assert.equal(Buffer.from(secret.data.kubeadmin!, 'base64').toString(), hash);
    const report = readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8');
    for (const text of [res.stdout, res.stderr, report]) assert.ok(!text.includes(hash) && !text.includes(Buffer.from(hash).toString('base64')), 'the hash is in no output');
    assert.match(report, /a new kubeadmin password \(its bcrypt hash from the site-config\)/);
    assert.deepEqual(bootstrapUserEnabled(s.sim.store), { ok: true }, 'the installer\'s Secret, updated in place, is still honoured');

    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    // Each new config is issued later than the last (as media build dates its builds): one issued at the same moment
    // as the last applied, but different, is refused (trust.ts sameIssueProblem).
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { kubeadminPassword: { remove: true }, timeouts: { settleStability: '2s' } } }) }, { issued: '2026-11-02T09:00:00Z' }));
    const removed = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(removed.code, 0, removed.stdout.slice(-3000));
    assert.equal(s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system'), undefined);

    // The cluster is days old: a kubeadmin Secret created now would be ignored by the OAuth server (library-go
    // bootstrapauthenticator, "kubeadmin secret cannot be recreated"), so a hash is refused before anything changes.
    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    rmSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json'), { force: true });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { kubeadminPassword: { hash }, timeouts: { settleStability: '2s' } } }) }, { issued: '2026-11-03T09:00:00Z' }));
    const before = s.sim.api.requests.length;
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 1, again.stdout.slice(-3000));
    const refusal = again.logs.find((l) => l.level === 'error' && /spec\.kubeadminPassword\.hash: cannot take effect: this cluster has no Secret kube-system\/kubeadmin/.test(l.msg));
    assert.ok(refusal, again.stdout.slice(-3000));
    assert.match(refusal.msg, /kubeadmin cannot come back: leave the kubeadmin hash out and log in with the hand-off kubeconfig or an identity provider/);
    assert.equal(s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system'), undefined, 'no Secret that would be ignored');
    // (the simulated kubelet keeps writing its Node's status; the agent writes no status)
    const writes = s.sim.api.requests.slice(before).filter((r: { method: string; path: string }) => !['GET', 'HEAD'].includes(r.method) && !r.path.endsWith('/status'));
    assert.deepEqual(writes.map((r: { method: string; path: string }) => `${r.method} ${r.path}`), [], 'nothing in the cluster changed');
    assert.equal(bootstrapUserEnabled(s.sim.store).ok, false);
  } finally {
    await s.cleanup();
  }
});

// Like core's SSH keys (run-ssh.test.ts): store A's kubeadmin password no longer logs in at store B, whose config sets none.
test("the next store's config without spec.kubeadminPassword puts the factory's password back", async () => {
  const s = await startScenario();
  const hash = `$2y$10$${'Q'.repeat(53)}`;
  try {
    const factory = (s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system') as { data: Record<string, string> }).data.kubeadmin;
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { kubeadminPassword: { hash }, timeouts: { settleStability: '2s' } } }) }, { issued: '2026-11-01T09:00:00Z' }));
    assert.equal((await s.run(['--once'], { timeoutMs: 15 * 60_000 })).code, 0);
    assert.equal(Buffer.from((s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system') as { data: Record<string, string> }).data.kubeadmin!, 'base64').toString(), hash);

    const res = await runAtNextStore(s);
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal((s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system') as { data: Record<string, string> }).data.kubeadmin, factory, "the factory's password is back");
    assert.deepEqual(bootstrapUserEnabled(s.sim.store), { ok: true }, 'the same Secret, updated in place, is still honoured');
    const report = readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8');
    assert.match(report, /kubeadmin's password back to the factory's: an earlier site's no longer logs in/);
    for (const text of [res.stdout, res.stderr, report]) assert.ok(!text.includes(factory!), 'the factory hash is in no output');
  } finally {
    await s.cleanup();
  }
});

// The sixteenth: unsigned media take logins away and add none; they do not give back the factory's password.
test("unsigned media without spec.kubeadminPassword leave an earlier site's password (only signed media or prepare put the factory's back)", async () => {
  const s = await startScenario();
  const hash = `$2y$10$${'Q'.repeat(53)}`;
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { kubeadminPassword: { hash }, timeouts: { settleStability: '2s' } } }) }, { issued: '2026-11-01T09:00:00Z' }));
    assert.equal((await s.run(['--once'], { timeoutMs: 15 * 60_000 })).code, 0);
    const res = await runAtNextStore(s, { unsigned: true });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    assert.equal(Buffer.from((s.sim.store.get(R.secrets, 'kubeadmin', 'kube-system') as { data: Record<string, string> }).data.kubeadmin!, 'base64').toString(), hash);
  } finally {
    await s.cleanup();
  }
});
