// The agent end to end on real systemd (issue #7), scenario 5: the agent hangs mid-run (SIGSTOP, as a process
// stuck in the kernel or a deadlock would) and systemd's watchdog kills and restarts it with the unit exactly
// as rendered (WatchdogSec=60s, RestartSec=30s: about 1.5 minutes of a real node's time); the restarted
// agent resumes the run from its journal and finishes it. The node: test/e2e/testbed/sno-node.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { UNIT_NAME } from '../../src/paths';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { factoryNode, siteConfigYaml } from './testbed/sno-node';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

test('5. a frozen agent is killed by the watchdog and restarted by systemd, and the restarted agent finishes the run', async (t) => {
  await ensureRootfsImage();
  const node = await factoryNode(bed);
  const m = node.machine;
  const unit = await node.unit(UNIT_NAME, ['WatchdogUSec', 'RestartUSec', 'Restart']);
  assert.deepEqual(unit, { WatchdogUSec: '1min', RestartUSec: '30s', Restart: 'on-failure' }, 'the unit as rendered');
  await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml() });
  await node.boot();

  // freeze it in the middle of the run: while it waits for the cluster to settle
  await node.waitForAgent('settle', (j) => j?.steps.settle?.state === 'running', 180_000, 20);
  const frozen = await node.unit(UNIT_NAME, ['MainPID', 'NRestarts', 'ActiveState']);
  assert.deepEqual({ ...frozen, MainPID: '' }, { MainPID: '', NRestarts: '0', ActiveState: 'active' });
  await m.execOk(['kill', '-STOP', frozen.MainPID!]);
  const stoppedAt = Date.now();

  // systemd notices the silence, kills it, and starts it again after RestartSec
  const restarted = await m.waitForUnit(UNIT_NAME, ['MainPID', 'NRestarts', 'ActiveState', 'Result'], (u) => u.NRestarts === '1' && u.ActiveState === 'active', 180_000);
  t.diagnostic(`restarted ${Math.round((Date.now() - stoppedAt) / 1000)} s after the freeze`);
  assert.notEqual(restarted.MainPID, frozen.MainPID);
  const systemdSays = (await m.journalctl('-u', UNIT_NAME, '-o', 'cat', '_PID=1')).stdout;
  assert.match(systemdSays, /sno-reconfigure\.service: Watchdog timeout \(limit 1min\)!/);
  assert.match(systemdSays, /sno-reconfigure\.service: Failed with result 'watchdog'/);

  // the restarted agent resumes (the steps already done are not run again) and finishes
  await node.waitForSuccess();
  const journal = node.agentJournal()!;
  assert.equal(journal.starts, 2);
  const attempts = Object.fromEntries(Object.entries(journal.steps).map(([k, v]) => [k, v.attempts]));
  assert.deepEqual(attempts, Object.fromEntries(Object.keys(journal.steps).map((k) => [k, k === 'settle' ? 2 : 1])));
  assert.equal((await node.status()).phase, 'succeeded');
  // the agent itself logged no error: the only errors are systemd's about the watchdog
  assert.deepEqual((await node.agentLog('-p', 'err')).filter((e) => e.identifier === 'sno-reconfigure'), []);
});
