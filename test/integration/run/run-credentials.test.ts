// The agent's own credential after a long shipment (issue 14 item 3): the node-kubeconfig's client
// certificate expired in storage, so the API answers 401. The agent falls back to the kube-apiserver's
// localhost-recovery-client token and finishes; without that token it says "credential expired" instead of
// waiting for an API that is up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { startScenario, siteConfigFor } from '../../support/scenario';
import { TestClient } from '../../sim/cluster/testing';
import { kubeRequest } from '../../sim/cluster/kube-http';
import { RECOVERY_CLIENT_USER } from '../../sim/index';

test('100 days in storage: the expired node-kubeconfig certificate is refused, the recovery token takes over, the run succeeds', async () => {
  const s = await startScenario({ sim: { version: '4.14.12', poweredOffDays: 100 } });
  try {
    // The simulated cluster refuses the expired certificate even on /readyz, as kube-apiserver does.
    const expired = TestClient.fromKubeconfig(s.sim.kubeconfigs.localhostRecovery);
    s.sim.startKubelet();
    await s.sim.waitFor(() => s.sim.apiUp(), 20_000, 'API up');
    assert.equal((await kubeRequest(expired.creds, 'GET', '/readyz', undefined, { timeoutMs: 2000 })).status, 401);
    assert.ok(await TestClient.fromKubeconfig(s.sim.kubeconfigs.admin).readyz(), 'a valid credential gets ok');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, `exit 0\n${res.stdout.slice(-3000)}\n${res.stderr}`);
    const switched = res.logs.filter((l) => /the API refused the client certificate of .*localhost-recovery\.kubeconfig \(HTTP 401: it has expired\); continuing with the localhost-recovery-client token \(\/etc\/kubernetes\/static-pod-resources\/kube-apiserver-pod-10\/secrets\/localhost-recovery-client-token\/token\)/.test(l.msg));
    assert.equal(switched.length, 1, res.logs.map((l) => l.msg).filter((m) => /refused|credential/.test(m)).join('\n'));
    assert.ok(s.sim.api.requests.some((r) => r.user === RECOVERY_CLIENT_USER && r.method !== 'GET'), 'the cluster changes were made with the recovery token');
    const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8')) as { result: string; warnings: string[]; kubeconfigExpires?: string };
    assert.equal(report.result, 'succeeded');
    // The hand-off carries the same expired certificate (no prepare --admin-kubeconfig): said as a warning,
    // with how to log in instead, not handed out as if it worked.
    const handoff = report.warnings.filter((w) => /^the hand-off kubeconfig \S+kubeconfig-new-api does not work: its client certificate expired on \d{4}-\d\d-\d\d/.test(w));
    assert.equal(handoff.length, 1, report.warnings.join('\n'));
    assert.match(handoff[0]!, /Log in through the OAuth route instead: oc login https:\/\/api\.\S+:6443 as kubeadmin or a cluster user/);
    assert.ok(Date.parse(report.kubeconfigExpires!) < s.sim.clock.now());
    const banner = readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');
    assert.ok(banner.includes(`its certificate expired ${report.kubeconfigExpires}: log in with oc login (kubeadmin or a cluster user) instead`), banner);
  } finally {
    await s.cleanup();
  }
});

test('without a recovery token, a refused credential is reported as expired, not as an API that is not ready', async () => {
  const s = await startScenario({ sim: { version: '4.14.12', poweredOffDays: 100 }, recoveryToken: false });
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { apiReady: '30m', settleStability: '2s' } } }) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 1, res.stdout.slice(-3000));
    const errors = res.logs.filter((l) => l.level === 'error').map((l) => l.msg).join('\n');
    // The certificate's own NotAfter makes the refusal final: reported at once, with the date, not after the grace.
    assert.match(errors, /the Kubernetes API at \S+ refuses the agent's credential: credential expired: the API refused the client certificate of \S+localhost-recovery\.kubeconfig, which expired on \d{4}-\d{2}-\d{2} \(HTTP 401/);
    assert.doesNotMatch(errors, /did not become ready/);
    const status = readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json'), 'utf8');
    assert.match(status, /Copy an admin kubeconfig that still works/);
  } finally {
    await s.cleanup();
  }
});
