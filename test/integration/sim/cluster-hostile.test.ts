// Hostile CSRs on demand: each is a real request with the requestor identity the API server records, and
// the simulated kube-controller-manager signs what an approver lets through — which is why approving the
// wrong one matters (the generic client signer hands out system:masters).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { HOSTILE_CSR_KINDS, type HostileCsrKind, type InjectedCsr, type Simulator } from '../../sim/index';
import { TestClient, condition, runningSimulatorPerSuite } from '../../sim/cluster/testing';
import { kubeRequest } from '../../sim/cluster/kube-http';

let sim: Simulator;
let admin: TestClient;
runningSimulatorPerSuite((s, a) => ((sim = s), (admin = a)));

function requestText(csr: KubeObject): string {
  const pem = Buffer.from((csr.spec as { request: string }).request, 'base64').toString('utf8');
  return execFileSync('openssl', ['req', '-noout', '-text', '-verify'], { input: pem, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

async function inject(kind: HostileCsrKind): Promise<{ injected: InjectedCsr; csr: KubeObject }> {
  const injected = await sim.injectHostileCsr(kind);
  assert.ok(injected.name, `${kind} was stored: ${injected.rejected}`);
  return { injected, csr: await admin.get(R.csrs, injected.name) };
}

async function issued(name: string): Promise<X509Certificate | 'failed'> {
  let result: X509Certificate | 'failed' | undefined;
  await sim.waitFor(async () => {
    const csr = await admin.get(R.csrs, name);
    const status = csr.status as { certificate?: string } | undefined;
    if (status?.certificate) result = new X509Certificate(Buffer.from(status.certificate, 'base64'));
    else if (condition(csr, 'Failed')?.status === 'True') result = 'failed';
    return result !== undefined;
  }, 3000, `${name} signed or failed`);
  return result!;
}

describe('hostile CSRs', () => {
  test('every kind is a real request with the recorded requestor, and nothing approves it by itself', async () => {
    const node = sim.options.nodeName;
    const expectations: Partial<Record<HostileCsrKind, { subject: RegExp; signer: string; user: RegExp; sans?: RegExp }>> = {
      'other-node': { subject: /O = system:nodes, CN = system:node:intruder-node/, signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: /node-bootstrapper$/ },
      'system-masters': { subject: new RegExp(`O = system:nodes, O = system:masters, CN = system:node:${node}`), signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: /node-bootstrapper$/ },
      'client-with-san': { subject: /CN = system:node:/, signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: /node-bootstrapper$/, sans: new RegExp(`DNS:${node}`) },
      'extra-dns-san': { subject: /CN = system:node:/, signer: 'kubernetes.io/kubelet-serving', user: new RegExp(`^system:node:${node}$`), sans: /DNS:api\./ },
      'extra-ip-san': { subject: /CN = system:node:/, signer: 'kubernetes.io/kubelet-serving', user: new RegExp(`^system:node:${node}$`), sans: /IP Address:10\.66\.66\.66/ },
      'serving-other-node': { subject: /CN = system:node:intruder-node/, signer: 'kubernetes.io/kubelet-serving', user: /^system:node:intruder-node$/ },
      'generic-client-signer': { subject: /O = system:masters, CN = system:admin/, signer: 'kubernetes.io/kube-apiserver-client', user: /node-bootstrapper$/ },
      'wrong-usages': { subject: /CN = system:node:/, signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: /node-bootstrapper$/ },
      'unexpected-requestor': { subject: /CN = system:node:/, signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: /^system:serviceaccount:shop:deployer$/ },
      'bootstrap-extra-group': { subject: /CN = system:node:/, signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: /node-bootstrapper$/ },
      'node-renewal': { subject: new RegExp(`O = system:nodes, CN = system:node:${node}`), signer: 'kubernetes.io/kube-apiserver-client-kubelet', user: new RegExp(`^system:node:${node}$`) },
    };
    const names: string[] = [];
    for (const kind of HOSTILE_CSR_KINDS) {
      if (kind === 'malformed-pem') continue;
      const exp = expectations[kind]!;
      const { injected, csr } = await inject(kind);
      names.push(injected.name!);
      const spec = csr.spec as { signerName: string; username: string; groups: string[]; usages: string[] };
      assert.equal(spec.signerName, exp.signer, kind);
      assert.match(spec.username, exp.user, kind);
      assert.deepEqual(spec.groups, injected.requestor.groups, `${kind}: groups as authenticated`);
      const text = requestText(csr);
      assert.match(text, exp.subject, kind);
      if (exp.sans) assert.match(text, exp.sans, kind);
      assert.equal(injected.legitimate, kind === 'node-renewal');
    }
    const bootstrapExtra = (await admin.get(R.csrs, names[HOSTILE_CSR_KINDS.indexOf('bootstrap-extra-group')]!)).spec as { groups: string[] };
    assert.ok(bootstrapExtra.groups.includes('system:cluster-admins'));
    const wrongUsages = (await admin.get(R.csrs, names[HOSTILE_CSR_KINDS.indexOf('wrong-usages')]!)).spec as { usages: string[] };
    assert.ok(wrongUsages.usages.includes('server auth'));

    await sim.clock.sleep(10 * 60_000);
    for (const name of names) {
      const csr = await admin.get(R.csrs, name);
      assert.deepEqual((csr.status as { conditions?: unknown[] } | undefined)?.conditions ?? [], [], `${name} left pending`);
    }
  });

  test('a malformed request is refused by the API server itself (422), as a real one does', async () => {
    const r = await sim.injectHostileCsr('malformed-pem');
    assert.equal(r.name, undefined);
    assert.match(r.rejected ?? '', /request|PEM|asn1|base64/i);
  });

  test('what the signer does with approved hostile requests', async () => {
    // The ZTPFW escalation: a generic client request for system:masters, approved, is a cluster-admin certificate.
    const generic = await inject('generic-client-signer');
    await admin.approveCsr(generic.injected.name!);
    const cert = await issued(generic.injected.name!);
    assert.notEqual(cert, 'failed');
    const escalated = { server: sim.apiUrl, caPem: sim.caPem, certPem: (cert as X509Certificate).toString(), keyPem: generic.injected.keyPem };
    const secrets = await kubeRequest(escalated, 'GET', '/api/v1/namespaces/openshift-config/secrets/pull-secret');
    assert.equal(secrets.status, 200, 'the approved hostile request reads the pull secret');

    // The kubelet client signer refuses what does not fit a kubelet client certificate.
    for (const kind of ['system-masters', 'wrong-usages', 'client-with-san'] as const) {
      const { injected } = await inject(kind);
      await admin.approveCsr(injected.name!);
      assert.equal(await issued(injected.name!), 'failed', kind);
      assert.equal(condition(await admin.get(R.csrs, injected.name!), 'Failed')?.reason, 'SignerValidationFailure');
    }

    // A serving request with an extra SAN is signed as asked: approving it hands out a certificate for the API name.
    const extra = await inject('extra-dns-san');
    await admin.approveCsr(extra.injected.name!);
    const servingCert = await issued(extra.injected.name!);
    assert.notEqual(servingCert, 'failed');
    assert.ok((servingCert as X509Certificate).checkHost(`api.${sim.options.clusterName}.${sim.options.baseDomain}`));

    // The legitimate renewal by the node itself.
    const renewal = await inject('node-renewal');
    await admin.approveCsr(renewal.injected.name!);
    const renewed = await issued(renewal.injected.name!);
    assert.notEqual(renewed, 'failed');
    assert.equal((renewed as X509Certificate).subject, `O=system:nodes\nCN=system:node:${sim.options.nodeName}`);
  });

  test('hostile CSRs through the control endpoint', async () => {
    const res = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: JSON.stringify({ hostileCsr: 'other-node' }) });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { injected: InjectedCsr };
    assert.equal(body.injected.kind, 'other-node');
    assert.ok(await admin.get(R.csrs, body.injected.name!));
    const bad = await fetch(`${sim.controlUrl}/sim/faults`, { method: 'POST', body: JSON.stringify({ hostileCsr: 'nope' }) });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /expected one of/);
  });
});
