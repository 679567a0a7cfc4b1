// The agent end to end on real systemd (issue #7), scenario 5: the agent hangs (SIGSTOP, as a process stuck in
// the kernel or deadlocked would) and systemd's watchdog kills and restarts it. The unit is installed as
// rendered (WatchdogSec=60s, RestartSec=30s: about 1.5 minutes of a real node's time, checked in the unit file);
// a testbed drop-in runs it with a 20 s watchdog and a 2 s restart delay (helpers/short-watchdog.ts says why
// that proves the same). The restarted agent then does the whole job when the stick comes. The node:
// test/e2e/testbed/sno-node.ts.
// It freezes the agent while it waits for the stick: no EXTEND_TIMEOUT_USEC is in flight then, which
// systemd would also apply to the watchdog deadline (src/core/service.c, service_extend_timeout()).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { UNIT_NAME } from '../../src/paths';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { factoryNode, siteConfigYaml } from './testbed/sno-node';
import { assertRenderedAndShortened, SHORT_WATCHDOG, shortenWatchdog } from './helpers/short-watchdog';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

test('5. a frozen agent is killed by the watchdog and restarted by systemd; the restarted agent does the job', async (t) => {
  await ensureRootfsImage();
  const node = await factoryNode(bed);
  const m = node.machine;
  shortenWatchdog(m);
  await node.boot();
  await assertRenderedAndShortened(m);
  await node.waitForAgent('waiting', (j) => j?.phase === 'waiting', 60_000);
  // it pings while it waits: systemd has seen WATCHDOG=1. systemd sets the watchdog timestamp when it arms the
  // watchdog at READY=1 too (systemd/systemd main, src/core/service.c, service_reset_watchdog()), so a ping is the
  // timestamp moving on.
  const armed = await m.waitForUnit(UNIT_NAME, ['MainPID', 'WatchdogTimestampMonotonic'], (u) => Number(u.WatchdogTimestampMonotonic) > 0, 60_000);
  const pinged = await m.waitForUnit(UNIT_NAME, ['MainPID', 'NRestarts', 'WatchdogTimestampMonotonic'], (u) => Number(u.WatchdogTimestampMonotonic) > Number(armed.WatchdogTimestampMonotonic), 60_000);
  assert.deepEqual([pinged.MainPID, pinged.NRestarts], [armed.MainPID, '0'], 'the same agent pinged, never restarted');

  await m.execOk(['kill', '-STOP', pinged.MainPID!]);
  const frozenAt = Date.now();
  assert.equal((await m.execOk(['ps', '-o', 'stat=', '-p', pinged.MainPID!])).trim()[0], 'T', 'the agent is stopped');

  // systemd notices the silence, kills it, and starts it again after RestartSec
  const restarted = await m.waitForUnit(UNIT_NAME, ['MainPID', 'NRestarts', 'ActiveState'], (u) => u.NRestarts === '1' && u.ActiveState === 'active', 150_000);
  t.diagnostic(`restarted ${Math.round((Date.now() - frozenAt) / 1000)} s after the freeze`);
  assert.notEqual(restarted.MainPID, pinged.MainPID);
  const systemdSays = (await m.journalctl('-u', UNIT_NAME, '-o', 'cat', '_PID=1')).stdout;
  assert.ok(systemdSays.includes(`sno-reconfigure.service: Watchdog timeout (limit ${SHORT_WATCHDOG.limit})!`), systemdSays);
  assert.match(systemdSays, /sno-reconfigure\.service: Failed with result 'watchdog'/);
  await node.waitForAgent('waiting again', (j) => j?.phase === 'waiting', 60_000);
  assert.equal((await node.status()).phase, 'waiting');

  // the restarted agent does the job when the stick comes
  await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml() });
  await node.waitForSuccess();
  assert.equal((await node.status()).phase, 'succeeded');
  // NRestarts counts this boot's restarts: the watchdog's was before the agent's reboot for the early network phase.
  assert.deepEqual(await node.unit(UNIT_NAME, ['NRestarts', 'Result', 'UnitFileState']), { NRestarts: '0', Result: 'success', UnitFileState: 'disabled' });
  assert.equal(m.requestedReboots, 1);
  // the agent itself logged no error: the only errors are systemd's about the watchdog
  assert.deepEqual((await node.agentLog('-p', 'err')).filter((e) => e.identifier === 'sno-reconfigure'), []);
});
