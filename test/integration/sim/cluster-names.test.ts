// The simulated node's name resolution (issue 14 item 2): kubelet reaches the API by api-int of the installed
// domain, and from 4.14 the ingress canary probes a host under the installed apps domain. Where the node cannot
// resolve them (a plain-installer SNO at a site without local DNS), the Node never becomes Ready and ingress
// turns Degraded after 5 failed canary checks in a row and a 60 s grace. Each name resolves or not on its own.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { startSimulator, type Simulator } from '../../sim/index';
import { TestClient, conditionStatus } from '../../sim/cluster/testing';

async function withSim(opts: Parameters<typeof startSimulator>[0], fn: (sim: Simulator, admin: TestClient) => Promise<void>): Promise<void> {
  const sim = await startSimulator({ timeScale: 0.001, ...opts });
  try {
    await fn(sim, TestClient.fromKubeconfig(sim.kubeconfigs.admin));
  } finally {
    await sim.stop();
  }
}

const coCondition = async (admin: TestClient, name: string, type: string) => conditionStatus(await admin.get(R.clusterOperators, name), type);

describe('node name resolution', () => {
  test('kubelet cannot resolve api-int: it files nothing and the Node never becomes Ready, until the names resolve', async () => {
    await withSim({ kubelet: 'started', nodeResolvesInstalledNames: false }, async (sim, admin) => {
      await sim.waitFor(() => sim.apiUp(), 5000, 'API up');
      const until = sim.clock.now() + 5 * 60_000;
      await sim.waitFor(() => sim.clock.now() > until, 5000, 'five simulated minutes');
      assert.equal(sim.kubelet.phase, 'waiting-for-api');
      assert.deepEqual(sim.kubelet.filed, []);
      assert.notEqual(conditionStatus(await admin.get(R.nodes, sim.options.nodeName), 'Ready'), 'True');
      sim.setNodeResolvesInstalledNames(true);
      await sim.waitFor(() => sim.kubelet.filed.length > 0, 5000, 'the client CSR once api-int resolves');
    });
  });

  test('4.14: the canary host under the installed apps domain does not resolve → ingress Degraded after 5 failed checks and 60 s, and it recovers', async () => {
    await withSim({ kubelet: 'running', version: '4.14.12' }, async (sim, admin) => {
      await sim.waitFor(() => sim.apiUp(), 5000, 'API up');
      await sim.waitFor(async () => (await coCondition(admin, 'ingress', 'Degraded')) === 'False', 10_000, 'ingress healthy');
      const start = sim.clock.now();
      sim.setNodeResolvesInstalledNames(false);
      await sim.waitFor(async () => (await coCondition(admin, 'ingress', 'Degraded')) === 'True', 10_000, 'ingress Degraded');
      // canary/controller.go: a check a minute, CanaryChecksSucceeding=False at the fifth failure in a row;
      // ingress/status.go: 60 s of grace before Degraded.
      assert.ok(sim.clock.now() - start >= 5 * 60_000, `not before 5 failed checks and 60 s of grace (${sim.clock.now() - start} ms)`);
      const co = await admin.get(R.clusterOperators, 'ingress');
      const degraded = ((co.status as { conditions: { type: string; message?: string }[] }).conditions).find((c) => c.type === 'Degraded');
      assert.match(degraded?.message ?? '', /CanaryChecksSucceeding=False \(CanaryChecksRepetitiveFailures: Canary route checks for the default ingress controller are failing\)/);
      sim.setNodeResolvesInstalledNames(true);
      await sim.waitFor(async () => (await coCondition(admin, 'ingress', 'Degraded')) === 'False', 10_000, 'ingress recovers');
    });
  });

  test('per name: a site DNS that publishes only api-int lets kubelet in, but the 4.14 canary under *.apps still fails', async () => {
    await withSim({ kubelet: 'started', version: '4.14.12', nodeResolvesInstalledNames: ['api-int'] }, async (sim, admin) => {
      await sim.waitFor(() => sim.apiUp(), 5000, 'API up');
      await sim.waitFor(() => sim.kubelet.filed.length > 0, 10_000, 'the client CSR: api-int resolves');
      await sim.waitFor(async () => (await coCondition(admin, 'ingress', 'Degraded')) === 'True', 20_000, 'ingress Degraded: the canary host does not resolve');
      sim.setNodeResolvesInstalledNames(['api-int', 'apps']);
      await sim.waitFor(async () => (await coCondition(admin, 'ingress', 'Degraded')) === 'False', 10_000, 'ingress recovers once *.apps resolves');
    });
  });

  test('4.13: the canary has a generated host, so the installed domain does not matter to it', async () => {
    await withSim({ kubelet: 'running', version: '4.13.30', nodeResolvesInstalledNames: false }, async (sim, admin) => {
      await sim.waitFor(() => sim.apiUp(), 5000, 'API up');
      const until = sim.clock.now() + 5 * 60_000;
      await sim.waitFor(() => sim.clock.now() > until, 5000, 'five simulated minutes');
      assert.equal(await coCondition(admin, 'ingress', 'Degraded'), 'False');
    });
  });
});
