// A persisted simulator survives a power cut of everything: started again on the same state directory it
// continues like a rebooted node — same CA, ports and kubeconfigs, kubelet certificates reused from disk,
// operators resuming their rollouts. Also the simulator as its own process (test/sim/cli.ts): one JSON
// line when ready, SIGKILL then restart, SIGTERM clean shutdown.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { R } from '../../../src/cluster/resources';
import { PROJECT_ROOT } from '../../support/bundle';
import { startSimulator } from '../../sim/index';
import { TestClient, condition, conditionStatus } from '../../sim/cluster/testing';
import { kubeRequest } from '../../sim/cluster/kube-http';

const SCALE = 0.001;

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sim-persist-'));
}

describe('persisted simulator (in process)', () => {
  test('restart continues: CA, port, kubeconfigs, store, kubelet certificates; API back after the startup delay', async () => {
    const dir = tempDir();
    try {
      const sim1 = await startSimulator({ timeScale: SCALE, dir, stateDir: join(dir, 'state'), kubelet: 'started' });
      const kubeconfig = sim1.kubeconfigs.localhost;
      const admin = TestClient.fromKubeconfig(kubeconfig);
      const apiUrl = sim1.apiUrl;
      let nodeReadyTime = 0;
      try {
        await sim1.waitFor(() => sim1.kubelet.filed.length > 0, 5000, 'client CSR');
        await admin.approveCsr(sim1.kubelet.filed[0]!.name);
        await sim1.waitFor(() => sim1.kubelet.filed.some((f) => f.kind === 'serving'), 5000, 'serving CSR');
        await admin.approveCsr(sim1.kubelet.filed.find((f) => f.kind === 'serving')!.name);
        await sim1.waitFor(() => sim1.kubelet.phase === 'serving', 5000, 'serving');
        await admin.create(R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'survives', namespace: 'default' }, data: { a: 'b' } });
        nodeReadyTime = sim1.clock.now();
      } finally {
        await sim1.stop();
      }

      const sim2 = await startSimulator({ timeScale: SCALE, dir, stateDir: join(dir, 'state') });
      try {
        assert.equal(sim2.apiUrl, apiUrl, 'same API URL');
        assert.ok(sim2.clock.now() > nodeReadyTime, 'the timeline continues');
        assert.equal(sim2.apiUp(), false, 'a rebooted node: the API is not up at once');
        await sim2.waitFor(() => admin.readyz(), 5000, 'API up again, with the kubeconfig from before');
        assert.deepEqual((await admin.get(R.configMaps, 'survives', 'default')).data, { a: 'b' });
        await sim2.waitFor(() => sim2.kubelet.phase === 'serving', 5000, 'kubelet serving again');
        assert.deepEqual(sim2.kubelet.filed, [], 'no new CSR: the certificates on disk are reused');
        assert.equal(conditionStatus(await admin.get(R.nodes, sim2.options.nodeName), 'Ready'), 'True');
        assert.equal((await admin.list(R.csrs)).length, 2);
      } finally {
        await sim2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a persisted cluster keeps its identity; contradicting options are refused', async () => {
    const dir = tempDir();
    try {
      const stateDir = join(dir, 'state');
      const first = await startSimulator({ timeScale: SCALE, stateDir, version: '4.12.30', nodeName: 'edge-node', clusterName: 'shop7' });
      await first.stop();
      const again = await startSimulator({ timeScale: SCALE, stateDir });
      try {
        assert.equal(again.options.version, '4.12.30');
        assert.equal(again.options.nodeName, 'edge-node');
        assert.equal(again.options.clusterName, 'shop7');
        assert.ok(again.store.get(R.nodes, 'edge-node'), 'the same node');
      } finally {
        await again.stop();
      }
      await assert.rejects(startSimulator({ timeScale: SCALE, stateDir, nodeName: 'other-node' }), /nodeName: the cluster persisted in .* has "edge-node", not "other-node"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a rollout interrupted by the power cut resumes and completes', async () => {
    const dir = tempDir();
    try {
      const opts = { timeScale: SCALE, dir, stateDir: join(dir, 'state'), kubelet: 'running' as const, durations: { kubeApiserverRollout: 30 * 60_000, kubeApiserverRestartOutage: 0, apiStartup: 1000 } };
      const sim1 = await startSimulator(opts);
      const admin = TestClient.fromKubeconfig(sim1.kubeconfigs.localhost);
      let generation = '';
      try {
        const api = `api.${sim1.options.clusterName}.site.example.com`;
        const { issueServerCert } = await import('../../sim/pki');
        const pair = issueServerCert(sim1.signers.lbSigner, { dnsNames: [api] });
        await admin.create(R.secrets, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'api-new', namespace: 'openshift-config' },
          type: 'kubernetes.io/tls',
          data: { 'tls.crt': Buffer.from(pair.certPem).toString('base64'), 'tls.key': Buffer.from(pair.keyPem).toString('base64') },
        });
        await admin.mergePatch(R.apiServers, 'cluster', { spec: { servingCerts: { namedCertificates: [{ names: [api], servingCertificate: { name: 'api-new' } }] } } });
        await sim1.waitFor(async () => conditionStatus(await admin.get(R.clusterOperators, 'kube-apiserver'), 'Progressing') === 'True', 3000, 'Progressing');
        generation = JSON.stringify(condition(await admin.get(R.clusterOperators, 'kube-apiserver'), 'Progressing')!.message);
      } finally {
        await sim1.stop();
      }
      const sim2 = await startSimulator(opts);
      try {
        assert.equal(sim2.snapshot().rollouts[0]?.operator, 'kube-apiserver', 'the rollout is still there');
        await sim2.waitFor(() => admin.readyz(), 5000, 'API');
        const progressing = ((await admin.get(R.clusterOperators, 'kube-apiserver')).status as { conditions: { type: string; status: string; message: string }[] }).conditions.find((c) => c.type === 'Progressing')!;
        assert.equal(progressing.status, 'True');
        assert.equal(JSON.stringify(progressing.message), generation, 'the same revision, not a new one');
        await sim2.waitFor(async () => conditionStatus(await admin.get(R.clusterOperators, 'kube-apiserver'), 'Progressing') === 'False', 5000, 'rollout completed after the restart');
        assert.deepEqual(sim2.snapshot().rollouts, []);
      } finally {
        await sim2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface Ready {
  apiUrl: string;
  caFile: string;
  kubeconfigs: { admin: string; localhost: string; bootstrap: string };
  controlUrl: string;
  endpoints: { api: { port: number }; ingress: { port: number } };
  dir: string;
}

function startCli(dir: string, extra: string[] = []): Promise<{ child: ChildProcess; ready: Ready; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'test/sim/cli.ts'), '--dir', dir, '--time-scale', String(SCALE), '--quiet', ...extra], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (line) => {
      try {
        resolve({ child, ready: JSON.parse(line) as Ready, exited });
      } catch (e) {
        reject(e as Error);
      }
    });
    void exited.then((code) => reject(new Error(`simulator exited (${code}) before it was ready: ${stderr}`)));
  });
}

describe('simulator as a process (test/sim/cli.ts)', () => {
  test('ready line, control channel, SIGKILL and restart continue the cluster, SIGTERM stops cleanly', async () => {
    const dir = tempDir();
    const children: ChildProcess[] = [];
    try {
      const first = await startCli(dir, ['--kubelet-started']);
      children.push(first.child);
      const admin = TestClient.fromKubeconfig(first.ready.kubeconfigs.localhost);
      const control = first.ready.controlUrl;
      const state = async () => (await (await fetch(`${control}/sim/state`)).json()) as { apiUp: boolean; kubelet: { phase: string; csrs: { name: string; kind: string }[] } };
      const waitFor = async (pred: () => Promise<boolean>, what: string) => {
        const end = Date.now() + 10_000;
        while (!(await pred().catch(() => false))) {
          if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      await waitFor(async () => (await state()).kubelet.csrs.length > 0, 'client CSR');
      await admin.approveCsr((await state()).kubelet.csrs[0]!.name);
      await waitFor(async () => (await state()).kubelet.phase === 'requesting-serving' || (await state()).kubelet.phase === 'serving', 'client certificate');

      first.child.kill('SIGKILL');
      await first.exited;
      await assert.rejects(kubeRequest(admin.creds, 'GET', '/readyz', undefined, { timeoutMs: 1000 }), /ECONNREFUSED|ECONNRESET|socket hang up/, 'everything is down (a kept-alive socket may see the kill as a hang-up)');

      const second = await startCli(dir);
      children.push(second.child);
      assert.equal(second.ready.apiUrl, first.ready.apiUrl);
      assert.equal(second.ready.controlUrl, control);
      await waitFor(() => admin.readyz(), 'API after the restart');
      const csrs = await admin.list(R.csrs);
      assert.ok(csrs.some((c) => (c.spec as { signerName: string }).signerName === 'kubernetes.io/kube-apiserver-client-kubelet'));
      await waitFor(async () => conditionStatus(await admin.get(R.nodes, 'sno1-node'), 'Ready') === 'True', 'Node Ready with the client certificate from before the kill');
      assert.ok(!(await state()).kubelet.csrs.some((c) => c.kind === 'client'), 'no new client CSR after the restart');

      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0, 'clean exit on SIGTERM');
      await assert.rejects(fetch(`${control}/sim/state`), 'the control channel is closed');
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('usage errors exit 2', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'test/sim/cli.ts'), '--time-scale', 'fast'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 2);
    assert.match(stderr, /--time-scale: expected a positive number/);
  });
});
