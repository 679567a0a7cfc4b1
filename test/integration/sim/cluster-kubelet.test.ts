// The simulated node's boot: the API appears only after kubelet starts, the kubelet files byte-real CSRs
// with the identities a real kubelet uses, and approval → signed certificate → Node Ready → serving CSR
// → serving certificate, all through HTTPS like the agent sees it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { startSimulator, type Simulator } from '../../sim/index';
import { kubeRequest } from '../../sim/cluster/kube-http';
import { TestClient, conditionStatus, servedCertificate } from '../../sim/cluster/testing';

const SCALE = 0.001;
const BOOTSTRAP = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';

async function withSim(opts: Parameters<typeof startSimulator>[0], fn: (sim: Simulator, admin: TestClient) => Promise<void>): Promise<void> {
  const sim = await startSimulator({ timeScale: SCALE, ...opts });
  try {
    await fn(sim, TestClient.fromKubeconfig(sim.kubeconfigs.localhost));
  } finally {
    await sim.stop();
  }
}

function csrPem(csr: KubeObject): string {
  return Buffer.from((csr.spec as { request: string }).request, 'base64').toString('utf8');
}

function opensslText(pem: string): string {
  return execFileSync('openssl', ['req', '-noout', '-text', '-verify'], { input: pem, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

describe('API availability follows the kubelet', () => {
  test('the API refuses connections until kubelet starts, then answers after the startup delay', async () => {
    await withSim({}, async (sim, admin) => {
      assert.equal(sim.apiUp(), false);
      await assert.rejects(kubeRequest(admin.creds, 'GET', '/readyz', undefined, { timeoutMs: 1000 }), /ECONNREFUSED/);
      const started = sim.clock.now();
      sim.startKubelet();
      assert.equal(sim.kubeletStarted, true);
      await sim.waitFor(() => admin.readyz(), 5000, 'API ready');
      assert.ok(sim.clock.now() - started >= sim.options.durations.apiStartup, 'the API came up only after the static pods started');
      const snap = sim.snapshot();
      assert.equal(snap.apiUp, true);
      assert.deepEqual(snap.apiDownReasons, []);
    });
  });

  test('an API that never comes up stays down however long one waits', async () => {
    await withSim({ faults: { apiNeverUp: true } }, async (sim, admin) => {
      sim.startKubelet();
      const until = sim.clock.now() + 5 * sim.options.durations.apiStartup;
      await sim.waitFor(() => sim.clock.now() > until, 5000, 'five startup delays');
      assert.equal(await admin.readyz(), false);
      assert.equal(sim.kubelet.phase, 'waiting-for-api');
      await sim.applyFaults({ apiNeverUp: false });
      await sim.waitFor(() => admin.readyz(), 5000, 'API up once the fault is cleared');
    });
  });
});

describe('kubelet TLS bootstrap', () => {
  test('a node installed before 4.14 bootstraps with the shorter group set of its never re-rendered bootstrap certificate', async () => {
    await withSim({ kubelet: 'started', version: '4.14.12', installedVersion: '4.13.9' }, async (sim, admin) => {
      await sim.waitFor(() => sim.kubelet.filed.length > 0, 5000, 'client CSR');
      const spec = (await admin.get(R.csrs, sim.kubelet.filed[0]!.name)).spec as { username: string; groups: string[] };
      assert.equal(spec.username, BOOTSTRAP);
      assert.deepEqual([...spec.groups].sort(), ['system:authenticated', 'system:serviceaccounts:openshift-machine-config-operator']);
    });
  });

  test('client CSR, approval, signed certificate, Node Ready, serving CSR and serving certificate', async () => {
    await withSim({ kubelet: 'started' }, async (sim, admin) => {
      const node = sim.options.nodeName;
      await sim.waitFor(() => sim.kubelet.filed.length > 0, 5000, 'client CSR');
      const clientName = sim.kubelet.filed[0]!.name;
      assert.equal(sim.kubelet.filed[0]!.kind, 'client');
      const client = await admin.get(R.csrs, clientName);
      const spec = client.spec as { signerName: string; usages: string[]; username: string; groups: string[] };
      assert.equal(spec.signerName, 'kubernetes.io/kube-apiserver-client-kubelet');
      assert.deepEqual(spec.usages, ['digital signature', 'client auth']);
      assert.equal(spec.username, BOOTSTRAP);
      assert.deepEqual([...spec.groups].sort(), ['system:authenticated', 'system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator']);
      const text = opensslText(csrPem(client));
      assert.match(text, new RegExp(`Subject: O = system:nodes, CN = system:node:${node}`));
      assert.match(text, /id-ecPublicKey/);
      assert.match(text, /NIST CURVE: P-256/);
      assert.doesNotMatch(text, /Subject Alternative Name/);

      // Nothing approves it by itself: SNO has no cluster-machine-approver path for it (seed 002).
      await sim.clock.sleep(5 * sim.options.durations.csrSigning);
      assert.equal(((await admin.get(R.csrs, clientName)).status as { certificate?: string } | undefined)?.certificate, undefined);
      assert.equal(conditionStatus(await admin.get(R.nodes, node), 'Ready'), 'Unknown');

      await admin.approveCsr(clientName);
      await sim.waitFor(async () => !!((await admin.get(R.csrs, clientName)).status as { certificate?: string } | undefined)?.certificate, 5000, 'client certificate issued');
      const issued = new X509Certificate(Buffer.from(((await admin.get(R.csrs, clientName)).status as { certificate: string }).certificate, 'base64'));
      assert.equal(issued.subject, `O=system:nodes\nCN=system:node:${node}`);
      assert.ok(issued.verify(new X509Certificate(sim.signers.apiCa.certPem).publicKey), 'signed by the API client CA');

      await sim.waitFor(async () => conditionStatus(await admin.get(R.nodes, node), 'Ready') === 'True', 5000, 'Node Ready');
      const readyNode = await admin.get(R.nodes, node);
      assert.deepEqual((readyNode.spec as { taints?: unknown[] }).taints ?? [], [], 'unreachable taints removed');
      const addresses = (readyNode.status as { addresses: { type: string; address: string }[] }).addresses;
      assert.deepEqual(addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address), sim.options.kubeletIPs);

      await sim.waitFor(() => sim.kubelet.filed.some((f) => f.kind === 'serving'), 5000, 'serving CSR');
      const servingName = sim.kubelet.filed.find((f) => f.kind === 'serving')!.name;
      const serving = await admin.get(R.csrs, servingName);
      const sspec = serving.spec as { signerName: string; usages: string[]; username: string; groups: string[] };
      assert.equal(sspec.signerName, 'kubernetes.io/kubelet-serving');
      assert.deepEqual(sspec.usages, ['digital signature', 'server auth']);
      assert.equal(sspec.username, `system:node:${node}`, 'filed with the node identity it just got');
      assert.ok(sspec.groups.includes('system:nodes') && sspec.groups.includes('system:authenticated'));
      const stext = opensslText(csrPem(serving));
      assert.match(stext, new RegExp(`Subject: O = system:nodes, CN = system:node:${node}`));
      assert.match(stext, new RegExp(`DNS:${node}, IP Address:${sim.options.kubeletIPs[0]!.replace(/\./g, '\\.')}`));

      await admin.approveCsr(servingName);
      await sim.waitFor(() => sim.kubelet.phase === 'serving' && !!sim.kubelet.endpoint, 5000, 'kubelet serving');
      const ep = sim.kubelet.endpoint!;
      const served = await servedCertificate(ep.host, ep.port, node, sim.signers.csrSigner.certPem);
      assert.equal(served.authorized, true, `the kubelet serves the certificate issued by the kubelet-serving signer (${served.error})`);
      assert.equal(served.cert.checkIP(sim.options.kubeletIPs[0]!), sim.options.kubeletIPs[0]);
    });
  });

  test('an unapproved CSR is abandoned after csrRefile and a new one is filed; a denied one too', async () => {
    await withSim({ kubelet: 'started', durations: { csrRefile: 60_000 } }, async (sim, admin) => {
      await sim.waitFor(() => sim.kubelet.filed.length >= 2, 5000, 'a second client CSR');
      const [first, second] = sim.kubelet.filed;
      assert.equal(first!.kind, 'client');
      assert.equal(second!.kind, 'client');
      assert.ok(second!.filedAt - first!.filedAt >= 60_000, 'filed again only after the wait timed out');
      assert.equal(((await admin.get(R.csrs, first!.name)).status as { certificate?: string } | undefined)?.certificate, undefined);

      const current = sim.kubelet.filed[sim.kubelet.filed.length - 1]!.name;
      const csr = await admin.get(R.csrs, current);
      csr.status = { conditions: [{ type: 'Denied', status: 'True', reason: 'TestDeny', message: 'no', lastUpdateTime: new Date().toISOString() }] };
      const before = sim.kubelet.filed.length;
      await kubeRequest(admin.creds, 'PUT', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${current}/approval`, csr);
      await sim.waitFor(() => sim.kubelet.filed.length > before, 5000, 'a new CSR after the denial');
    });
  });

  test('a kubelet that stops filing CSRs files none until the fault clears (control endpoint)', async () => {
    await withSim({ kubelet: 'started', faults: { kubeletFilesNoCsrs: true } }, async (sim, admin) => {
      await sim.waitFor(() => sim.kubelet.phase === 'idle-no-csr', 5000, 'kubelet idle');
      const until = sim.clock.now() + 10 * 60_000;
      await sim.waitFor(() => sim.clock.now() > until, 5000, 'ten simulated minutes');
      assert.deepEqual(await admin.list(R.csrs), []);
      const res = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: JSON.stringify({ kubeletFilesNoCsrs: false }) });
      assert.equal(res.status, 200);
      await sim.waitFor(async () => (await admin.list(R.csrs)).length === 1, 5000, 'the CSR once the fault is cleared');
    });
  });

  test('kubelet started through the control endpoint, and its state reported there', async () => {
    await withSim({}, async (sim) => {
      const state = (await (await fetch(`${sim.controlUrl}/sim/state`)).json()) as { apiUp: boolean; kubelet: { enabled: boolean } };
      assert.equal(state.apiUp, false);
      assert.equal(state.kubelet.enabled, false);
      const res = await fetch(`${sim.controlUrl}/sim/kubelet/start`, { method: 'POST' });
      assert.equal(res.status, 200);
      await sim.waitFor(() => sim.apiUp(), 5000, 'API up');
      const after = (await (await fetch(`${sim.controlUrl}/sim/state`)).json()) as { apiUp: boolean; kubelet: { enabled: boolean; running: boolean } };
      assert.equal(after.apiUp, true);
      assert.equal(after.kubelet.running, true);
      assert.equal((await fetch(`${sim.controlUrl}/sim/nope`)).status, 404);
    });
  });

  test('a stopped kubelet: the node goes Unknown after the grace period and is tainted unreachable', async () => {
    await withSim({ kubelet: 'running' }, async (sim, admin) => {
      const node = sim.options.nodeName;
      assert.equal(sim.apiUp(), true, 'a running cluster answers at once');
      assert.equal(conditionStatus(await admin.get(R.nodes, node), 'Ready'), 'True');
      await sim.waitFor(() => sim.kubelet.phase === 'serving', 5000, 'kubelet serving with its existing certificates');
      assert.equal(sim.kubelet.filed.length, 0, 'no CSR: the certificates on disk are valid');
      sim.stopKubelet();
      await sim.waitFor(async () => conditionStatus(await admin.get(R.nodes, node), 'Ready') === 'Unknown', 5000, 'Node Unknown');
      const taints = ((await admin.get(R.nodes, node)).spec as { taints?: { key: string }[] }).taints ?? [];
      assert.ok(taints.some((t) => t.key === 'node.kubernetes.io/unreachable'));
      sim.startKubelet();
      await sim.waitFor(async () => conditionStatus(await admin.get(R.nodes, node), 'Ready') === 'True', 5000, 'Node Ready again');
    });
  });
});
