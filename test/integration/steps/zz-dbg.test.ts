import { test } from 'node:test';
import { startSimulator } from '/work/main/test/sim/index';
import { createHarness } from '/work/main/test/integration/steps/harness';
import { domainStep } from '/work/main/src/steps/domain/index';
import { checkServedCertificate } from '/work/main/src/steps/domain/tls-check';
import { R } from '/work/main/src/cluster/resources';
test('dbg', async () => {
  const sim = await startSimulator({ timeScale: 0.001, kubelet: 'running' });
  sim.events.on('log', (l: string) => process.stderr.write('SIM ' + l + '\n'));
  sim.events.on('rollout', (e: any) => process.stderr.write('ROLL ' + JSON.stringify(e) + '\n'));
  const h = await createHarness(sim);
  try {
    await h.run(domainStep);
    await sim.waitFor(() => sim.snapshot().rollouts.length === 0 && sim.apiUp(), 20000, 'x');
    process.stderr.write(JSON.stringify((sim.store.get(R.apiServers, 'cluster') as any).spec) + '\n');
    process.stderr.write(JSON.stringify((sim.store.get(R.clusterOperators, 'kube-apiserver') as any).status.conditions) + '\n');
    const r = await checkServedCertificate(sim.endpoints.api, 'api.sno1.store42.example.com', [sim.signers.lbSigner.certPem]);
    process.stderr.write(r.ok + ' ' + r.detail.slice(0, 200) + '\n');
  } finally { await h.cleanup(); await sim.stop(); }
});
