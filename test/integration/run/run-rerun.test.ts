// A re-run of an applied config changes nothing and so writes nothing but its own report (issue 37 item 4): with
// the demo's site-config, whose pull secret and mirrors are inputs of the master pool, the second run finds every
// input in place and leaves the pool alone — no pause and unpause (src/steps/pool-hold.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { demoSiteConfigFiles, signedSiteConfigFiles, startScenario } from '../../support/scenario';

const WRITES = ['POST', 'PUT', 'PATCH', 'DELETE'];

test('a re-run of the applied demo config writes only its report: the master pool is neither paused nor unpaused', async () => {
  const s = await startScenario();
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, demoSiteConfigFiles(s.sim, { settleStability: '2s' })));
    const first = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(first.code, 0, first.stdout.slice(-3000));
    const poolPatches = (from: number) => s.sim.api.requests.slice(from).filter((r) => r.method === 'PATCH' && r.path.includes(`/${R.machineConfigPools.plural}/master`));
    assert.equal(poolPatches(0).length, 2, 'the first run paused the pool around its writes and unpaused it');

    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'));
    const before = s.sim.api.requests.length;
    const again = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(again.code, 0, again.stdout.slice(-3000));
    assert.ok(existsSync(path.join(s.node.root, 'etc/sno-reconfigure/done')));
    // Every write the agent sent (the kubelet's own heartbeats are the node's, not the agent's).
    const writes = s.sim.api.requests.slice(before).filter((r) => WRITES.includes(r.method) && !r.user?.startsWith('system:node:') && !r.path.includes('/approval'));
    assert.deepEqual(writes.map((r) => `${r.method} ${r.path}`), ['PUT /api/v1/namespaces/sno-reconfigure/configmaps/report']);
    const journal = JSON.parse(readFileSync(path.join(s.node.root, 'var/lib/sno-reconfigure/journal.json'), 'utf8')) as { steps: Record<string, { alreadyDone?: boolean }> };
    for (const step of ['pool-hold', 'pull-secret', 'mirrors', 'trust', 'pool-release']) assert.equal(journal.steps[step]?.alreadyDone, true, `${step} found nothing to do`);
  } finally {
    await s.cleanup();
  }
});
