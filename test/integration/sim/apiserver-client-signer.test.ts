// The simulated kube-apiserver judges a client certificate by its whole chain on the simulated clock, as Go's
// x509 Verify does: node-system-admin-client outlives node-system-admin-signer on 4.16–4.18 (2 years against 1) and
// whenever it was issued late in the signer's life (cluster-kube-apiserver-operator release-4.12..4.18
// certrotationcontroller.go; library-go does not clamp it), and it stops working when the signer expires. From 4.19
// the signer lives 3 years (release-4.19..4.23, same file), so the same shipment keeps a working node-kubeconfig.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { R } from '../../../src/cluster/resources';
import { startSimulator } from '../../sim/index';
import { TestClient } from '../../sim/cluster/testing';
import { kubeRequest } from '../../sim/cluster/kube-http';

const clientCert = (kubeconfig: string) => {
  const kc = parse(readFileSync(kubeconfig, 'utf8')) as { users: { user: Record<string, string> }[] };
  return new X509Certificate(Buffer.from(kc.users[0]!.user['client-certificate-data']!, 'base64'));
};

test('a node-kubeconfig whose signer has expired is refused although its own certificate is valid', async () => {
  // Issued when the signer was 300 days old (one of 365), stored for 50 days: the signer expired 10 days ago.
  const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', version: '4.14.12', nodeAdminSignerAgeDays: 300, poweredOffDays: 50 });
  try {
    await sim.waitFor(() => sim.apiUp(), 20_000, 'API up');
    const leaf = clientCert(sim.kubeconfigs.localhostRecovery);
    assert.ok(Date.parse(leaf.validTo) > sim.clock.now(), 'the client certificate itself has not expired');
    const bundle = String((sim.store.get(R.configMaps, 'client-ca', 'openshift-kube-apiserver')?.data as Record<string, string>)['ca-bundle.crt']);
    const signer = bundle.split(/(?=-----BEGIN CERTIFICATE-----)/).map((p) => new X509Certificate(p)).find((ca) => leaf.checkIssued(ca));
    assert.ok(signer, 'its signer is in the client-ca bundle');
    assert.ok(Date.parse(signer.validTo) < sim.clock.now(), 'the signer has expired');
    const expired = TestClient.fromKubeconfig(sim.kubeconfigs.localhostRecovery);
    assert.equal((await kubeRequest(expired.creds, 'GET', '/readyz', undefined, { timeoutMs: 2000 })).status, 401);
  } finally {
    await sim.stop();
  }
  const fresh = await startSimulator({ timeScale: 0.001, kubelet: 'running', version: '4.14.12', nodeAdminSignerAgeDays: 300, poweredOffDays: 10 });
  try {
    await fresh.waitFor(() => fresh.apiUp(), 20_000, 'API up');
    assert.ok(await TestClient.fromKubeconfig(fresh.kubeconfigs.localhostRecovery).readyz(), 'the same client while its signer lives');
  } finally {
    await fresh.stop();
  }
});

test('from 4.19 the signer lives 3 years: the node-kubeconfig that 4.14 refuses after the same storage still works', async () => {
  // The same history as above (issued when the signer was 300 days old, 50 days in storage) on the releases that
  // extended node-system-admin-signer to 3 years; 4.18 still has the 1-year signer.
  for (const [version, works] of [['4.18.30', false], ['4.19.21', true], ['4.22.1', true]] as const) {
    const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running', version, nodeAdminSignerAgeDays: 300, poweredOffDays: 50 });
    try {
      await sim.waitFor(() => sim.apiUp(), 20_000, 'API up');
      const status = (await kubeRequest(TestClient.fromKubeconfig(sim.kubeconfigs.localhostRecovery).creds, 'GET', '/readyz', undefined, { timeoutMs: 2000 })).status;
      assert.equal(status, works ? 200 : 401, `OpenShift ${version}: /readyz with the node-kubeconfig`);
    } finally {
      await sim.stop();
    }
  }
});
