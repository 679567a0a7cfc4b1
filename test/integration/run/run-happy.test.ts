import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { startScenario, siteConfigFor, type Scenario } from '../../support/scenario';

let s: Scenario;
before(async () => {
  s = await startScenario();
});
after(async () => {
  await s?.cleanup();
});

test('run: from a masked kubelet to a Ready node with approved CSRs, then the service disables itself', async () => {
  s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
  const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
  assert.equal(res.code, 0, `exit 0\n${res.stdout.slice(-3000)}\n${res.stderr}`);
  assert.equal(res.logs.filter((l) => l.level === 'error').length, 0, 'no errors logged');

  // node side
  assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit']);
  assert.equal(s.node.units()['kubelet.service']?.enabled, 'enabled');
  assert.equal(s.node.units()['kubelet.service']?.active, 'active');
  assert.ok(s.node.calls('systemctl').some((c) => c.args.join(' ') === 'disable sno-reconfigure.service'));
  assert.ok(existsSync(path.join(s.node.root, 'etc/sno-reconfigure/done')));
  assert.match(readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8'), /DONE — site configuration "store-0042" applied/);
  assert.deepEqual(s.node.mounts(), {}, 'the media was unmounted');

  // cluster side: the node's own CSRs approved through /approval with our reason, node Ready
  const csrs = s.sim.store.list(R.csrs) as { metadata: { name: string }; status?: { conditions?: { type: string; reason?: string }[]; certificate?: string } }[];
  const approved = csrs.filter((c) => c.status?.conditions?.some((x) => x.type === 'Approved' && x.reason === 'SNOReconfigureApprove'));
  assert.ok(approved.length >= 2, `client and serving approved (${approved.length})`);
  const node = s.sim.store.get(R.nodes, s.sim.options.nodeName) as { status?: { conditions?: { type: string; status: string }[] } };
  assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');

  // report
  const report = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/report.json'), 'utf8'));
  assert.equal(report.result, 'succeeded');
  assert.equal(report.siteConfig.name, 'store-0042');
  assert.ok(report.steps.every((st: { state: string }) => st.state === 'done'), JSON.stringify(report.steps));
  assert.ok(report.changes.some((c: { kind: string; action: string }) => c.kind === 'CertificateSigningRequest' && c.action === 'approve'));
  // the hand-off kubeconfig's expiry: in the report and on the banner (issue 14 item 4)
  assert.match(report.kubeconfigExpires, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8').includes(`its certificate expires ${report.kubeconfigExpires as string}; log in with oc login before then`));

  // a second start does nothing: the done marker
  const again = await s.run(['--once']);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /already reconfigured/);
});

test('removing the done marker runs the same config again: every step finds its change in place', async () => {
  const { rmSync } = await import('node:fs');
  rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
  const before = s.sim.api.requests.length;
  const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
  assert.equal(res.code, 0, res.stdout.slice(-3000));
  assert.ok(existsSync(path.join(s.node.root, 'etc/sno-reconfigure/done')), 'the marker is back');
  const journal = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json'), 'utf8'));
  for (const step of ['network', 'kubelet', 'domain', 'pull-secret', 'mirrors', 'trust']) assert.equal(journal.steps[step].alreadyDone, true, `${step} already in place`);
  assert.deepEqual(s.node.nmstateHistory(), ['apply --no-commit', 'commit'], 'the network was not applied again');
  const writes = s.sim.api.requests.slice(before).filter((r: { method: string; user?: string; path: string }) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method) && r.user === 'system:admin' && !r.path.includes('/approval'));
  // Only the outcome is written again: the report ConfigMap fleet tools read (issue 19), updated in place.
  assert.deepEqual(writes.map((r: { method: string; path: string }) => `${r.method} ${r.path}`), ['PUT /api/v1/namespaces/sno-reconfigure/configmaps/report'], 'a second run against a reconfigured cluster changes nothing else');
});
