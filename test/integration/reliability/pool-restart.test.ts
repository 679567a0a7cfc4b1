// A run restarted after it released the machine-config pool (issue 41): a power cut once "Let the node apply the
// machine configuration" is done, then restarts until done. The restarted run must not pause the pool again: the
// step that unpauses it is done and does not run again, so a pool paused now would stay paused — and a paused
// master pool holds back the kubelet CA rotation for good (src/steps/pool-hold.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { convergenceProblems, newScenario, runUntilDone } from './support';

const RELEASED = /Let the node apply the machine configuration — (done in|already in place)/;
const PAUSED = /machine-config pool master paused/;

test('a power cut after the pool was released: the restarted run does not pause it again, and it ends unpaused', { timeout: 15 * 60_000 }, async () => {
  const s = await newScenario({ poweredOn: true });
  try {
    const child = s.spawnRun();
    let out = '';
    const cut = new Promise<boolean>((resolve) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (RELEASED.test(out) && child.exitCode === null) child.kill('SIGKILL');
      });
      child.on('exit', (_code, signal) => resolve(signal === 'SIGKILL'));
    });
    assert.equal(await cut, true, `the run ended before the pool was released:\n${out.slice(-3000)}`);
    assert.match(out, PAUSED, 'the first run paused the pool (the site-config writes its inputs)');
    const pool = () => s.sim.store.get(R.machineConfigPools, 'master') as { spec?: { paused?: boolean } };
    assert.notEqual(pool().spec?.paused, true, 'released before the power cut');

    const { runs } = await runUntilDone(s);
    for (const run of runs) assert.doesNotMatch(run.stdout, PAUSED, 'a restarted run paused the pool again');
    assert.deepEqual(convergenceProblems(s), []);
  } finally {
    await s.cleanup();
  }
});
