// The agent's watchdog at a test's pace. The rendered unit says WatchdogSec=60s and RestartSec=30s: a frozen
// agent is killed within a minute and started again half a minute later, 1.5 minutes of real time per e2e case
// that proves it. A drop-in on the node's disk (as an administrator would add one) shortens both; the agent
// takes its ping interval from the WATCHDOG_USEC systemd passes it (src/host/notify.ts: every WatchdogSec/2),
// so what is proved stays the same: a silent agent is killed by systemd's watchdog ("Failed with result
// 'watchdog'") and restarted by Restart=on-failure. The drop-in only narrows the margin a ping has (15 s
// instead of 30 s): 10 s was judged too thin beside a suite at load 30+ on 2 cores, where one event-loop turn of
// the agent can be delayed for seconds.
import assert from 'node:assert/strict';
import { UNIT_NAME } from '../../../src/paths';
import type { Machine } from '../testbed/machine';

/** What the drop-in sets, and how systemd then shows it (`systemctl show`) and names it in its timeout message. */
export const SHORT_WATCHDOG = { watchdogSec: 30, restartSec: 2, watchdogUSec: '30s', restartUSec: '2s', limit: '30s' } as const;

const UNIT_FILE = `/etc/systemd/system/${UNIT_NAME}`;
const DROPIN = `${UNIT_FILE}.d/90-testbed-short-watchdog.conf`;

/** Puts the drop-in on the disk of a node that is off: the next boot's agent runs with it. */
export function shortenWatchdog(m: Machine): void {
  assert.equal(m.running, false, 'the drop-in goes in while the node is off, so the agent starts with its WATCHDOG_USEC');
  m.writeFile(DROPIN, `# Testbed only (test/e2e/helpers/short-watchdog.ts): the watchdog cases at a test's pace.\n[Service]\nWatchdogSec=${SHORT_WATCHDOG.watchdogSec}s\nRestartSec=${SHORT_WATCHDOG.restartSec}s\n`);
}

/**
 * The unit file as rendered still carries the production values (60 s watchdog, 30 s restart delay, restart on
 * failure), and systemd runs it with the drop-in's, nothing else changed.
 */
export async function assertRenderedAndShortened(m: Machine): Promise<void> {
  const rendered = m.readFile(UNIT_FILE);
  for (const line of ['WatchdogSec=60s', 'RestartSec=30s', 'Restart=on-failure']) assert.match(rendered, new RegExp(`^${line}$`, 'm'), `the unit as rendered: ${line}`);
  assert.deepEqual(await m.unitProperties(UNIT_NAME, ['WatchdogUSec', 'RestartUSec', 'Restart', 'DropInPaths']), {
    WatchdogUSec: SHORT_WATCHDOG.watchdogUSec,
    RestartUSec: SHORT_WATCHDOG.restartUSec,
    Restart: 'on-failure',
    DropInPaths: DROPIN,
  }, 'the unit as systemd runs it: only the drop-in\'s watchdog and restart delay differ');
}
