import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalHost } from '../../../src/host/host';
import { createNotifier } from '../../../src/host/notify';
import { createLogger } from '../../../src/log';
import { createStandInNode } from '../../support/standin-host';

const quiet = createLogger({ format: 'json', journal: false, level: 'silent', write: () => undefined });

test('sd_notify goes through the host systemd-notify, blocking, never with --pid', async () => {
  const node = createStandInNode();
  try {
    const env = { ...node.env, NOTIFY_SOCKET: '/run/systemd/notify' };
    const n = createNotifier({ host: new LocalHost({ root: node.root, env }), log: quiet, env });
    await n.extendTimeout(90_000);
    await n.ready('starting');
    await n.status('waiting for the API');
    await n.status('waiting for the API');
    await n.extendTimeout(90_000);
    await n.close();
    const calls = node.calls('systemd-notify').map((c) => c.args);
    // After READY=1 no EXTEND_TIMEOUT_USEC: it would also push back the watchdog.
    assert.deepEqual(calls, [['EXTEND_TIMEOUT_USEC=90000000'], ['READY=1', 'STATUS=starting'], ['STATUS=waiting for the API']]);
    for (const c of calls) assert.ok(!c.some((a) => a.startsWith('--pid') || a === '--no-block'));
  } finally {
    node.cleanup();
  }
});

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5 * 60_000; // sized for a loaded machine; it costs time only when the test fails
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`still waiting for ${what} after 5 minutes`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('no NOTIFY_SOCKET: nothing is sent', async () => {
  const node = createStandInNode();
  try {
    const n = createNotifier({ host: new LocalHost({ root: node.root, env: node.env }), log: quiet, env: node.env });
    await n.ready('x');
    n.startWatchdog();
    await n.close();
    assert.equal(node.calls('systemd-notify').length, 0);
  } finally {
    node.cleanup();
  }
});

test('the watchdog pings at half of WATCHDOG_USEC only while the main loop shows progress', async () => {
  const node = createStandInNode();
  try {
    let now = 0;
    const env = { ...node.env, NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '1000000', WATCHDOG_PID: String(process.pid) };
    const lines: string[] = [];
    const log = createLogger({ format: 'json', journal: false, level: 'error', write: (s) => void lines.push(s) });
    const n = createNotifier({ host: new LocalHost({ root: node.root, env }), log, env, staleAfterMs: 5_000, now: () => now });
    const pings = () => node.calls('systemd-notify').filter((c) => c.args[0] === 'WATCHDOG=1').length;
    const hungTicks = () => lines.filter((l) => l.includes('main loop made no progress')).length;
    n.startWatchdog();
    // Events, not a fixed time: a stand-in systemd-notify took seconds to start at load 20–27.
    await until('a ping while alive', () => pings() >= 1);
    now = 10_000; // the main loop has not called alive() for 10 s: hung
    await until('a watchdog tick that sees the hang', () => hungTicks() >= 1);
    await n.status('drained'); // sends are serialized: every ping queued before the hang has gone out
    const before = pings();
    await until('two more ticks', () => hungTicks() >= 3);
    await n.status('drained again');
    assert.equal(pings(), before, 'no pings from a hung loop');
    await n.close();
  } finally {
    node.cleanup();
  }
});

test('WATCHDOG_PID for another process: we do not ping in its place', async () => {
  const node = createStandInNode();
  try {
    const env = { ...node.env, NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '1000000', WATCHDOG_PID: '1' };
    const n = createNotifier({ host: new LocalHost({ root: node.root, env }), log: quiet, env });
    n.startWatchdog();
    await new Promise((r) => setTimeout(r, 1_200));
    await n.close();
    assert.equal(node.calls('systemd-notify').length, 0);
  } finally {
    node.cleanup();
  }
});
