// One reboot per relocation (issue 31): with everything a site-config can carry (NTP, proxy, SSH keys, trust
// bundle, labels, kubeadmin, extra manifests with a MachineConfig), every input of the master pool lands in one
// rendered config, so the pool rolls out once and the node reboots once; the kube-apiserver takes one revision.
// The simulator's machine-config operator does what MCO does with a config rendered while the node is updating:
// the node finishes its update first and takes the newer one in a second update, reboot and all
// (test/sim/cluster/operators/machine-config.ts mayStartRollout) — so writes spread over the run cost a reboot each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { startScenario } from '../../support/scenario';
import { countRelocation, fullSiteConfigFiles } from '../../support/site-configs';

test('the full site-config: one pool rollout, one reboot, one kube-apiserver revision, and the pool is not left paused', async () => {
  const s = await startScenario();
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', fullSiteConfigFiles(s.sim, s.node.root));
    const counter = countRelocation(s.sim);
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    counter.stop();
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    const rendered = (s.sim.store.get(R.machineConfigPools, 'master')?.status as { configuration?: { source?: { name: string }[] } }).configuration?.source?.map((x) => x.name) ?? [];
    for (const mc of ['99-master-ssh', '99-master-chrony', '50-master-store-motd']) assert.ok(rendered.includes(mc), `${mc} is in the pool's rendered config (${rendered.join(', ')})`);
    assert.deepEqual(counter.counts, { reboots: 1, poolRollouts: 1, kubeApiserverRevisions: 1 });
    assert.notEqual((s.sim.store.get(R.machineConfigPools, 'master')?.spec as { paused?: boolean }).paused, true, 'the pool is not paused after the run');
  } finally {
    await s.cleanup();
  }
});
