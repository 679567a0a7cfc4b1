// The progress reporter: the journal's status line is written before a call returns; STATUS= and the banner
// go out in the background, the latest replacing what is still unsent, so a step never waits for
// systemd-notify or agetty — and the outcome banner is the one left on the console.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { BANNER_PHASE_GAP_MS, BANNER_PROGRESS_EVERY_MS, ProgressReporter } from '../../../src/engine/progress';
import { LocalHost, type CommandResult, type RunOptions } from '../../../src/host/host';
import type { Notifier } from '../../../src/host/notify';
import { createLogger } from '../../../src/log';
import { BANNER_PATH } from '../../../src/paths';
import { waitFor } from '../cluster/wait';

const quiet = createLogger({ format: 'json', journal: false, level: 'silent', write: () => undefined });

/** agetty --reload blocks until open() is called: a slow console. */
class SlowConsoleHost extends LocalHost {
  readonly runs: string[] = [];
  private release!: () => void;
  private readonly gate = new Promise<void>((r) => (this.release = r));
  open(): void {
    this.release();
  }
  override async run(cmd: string, args: readonly string[], _opts?: RunOptions): Promise<CommandResult> {
    this.runs.push([cmd, ...args].join(' '));
    if (cmd === 'agetty') await this.gate;
    return { code: 0, stdout: '', stderr: '' };
  }
}

function recordingNotifier(): Notifier & { statuses: string[] } {
  const statuses: string[] = [];
  return {
    statuses,
    enabled: true,
    ready: async () => undefined,
    status: async (text) => void statuses.push(text),
    extendTimeout: async () => undefined,
    stopping: async () => undefined,
    alive: () => undefined,
    startWatchdog: () => undefined,
    close: async () => undefined,
  };
}

test('phases return while the console is slow; updates still unsent are replaced by newer ones; the outcome banner is the last one written', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'sno-progress-'));
  try {
    const host = new SlowConsoleHost({ root });
    const notifier = recordingNotifier();
    const reporter = new ProgressReporter(host, undefined, notifier, quiet);
    // Both return although the first banner's agetty --reload has not finished (it never would, unopened).
    await reporter.phase('Apply the site network');
    await reporter.phase('Start kubelet');
    await reporter.detail('kubelet.service started');
    await waitFor(() => host.runs.length > 0, 'the first banner reaching agetty');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(host.runs, ['agetty --reload'], 'the second banner waits behind the first');
    const outcome = reporter.outcome({ tone: 'success', headline: 'site configuration "store-0042" applied' });
    host.open();
    await outcome;
    await reporter.flush();
    reporter.finalStatus('site-config "store-0042" applied');
    await reporter.flush();
    // While the first banner hung, "Start kubelet" was replaced by its detail line, and its banner by the outcome.
    assert.deepEqual(notifier.statuses, ['Apply the site network', 'Start kubelet: kubelet.service started', 'site-config "store-0042" applied']);
    assert.deepEqual(host.runs, ['agetty --reload', 'agetty --reload']);
    const banner = readFileSync(host.resolve(BANNER_PATH), 'utf8');
    assert.match(banner, /DONE — site configuration "store-0042" applied/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a progress detail held back by the banner interval still reaches the console when the interval is over', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'sno-progress-held-'));
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let now = 0;
    const host = new LocalHost({ root, env: { PATH: '/nonexistent' } });
    const reporter = new ProgressReporter(host, undefined, recordingNotifier(), quiet, () => now);
    const banner = () => readFileSync(host.resolve(BANNER_PATH), 'utf8');
    await reporter.phase('Apply the site network');
    await reporter.flush();
    now = 2_000;
    await reporter.detail('verifying the site network: waiting for ping 10.17.0.1 (2s of 2m)');
    now = 4_000;
    await reporter.detail('verifying the site network: waiting for ping 10.17.0.1 (4s of 2m)');
    await reporter.flush();
    assert.doesNotMatch(banner(), /waiting for ping/, 'held back within the interval');
    now = BANNER_PROGRESS_EVERY_MS;
    t.mock.timers.tick(BANNER_PROGRESS_EVERY_MS);
    await reporter.flush();
    assert.match(banner(), /IN PROGRESS — Apply the site network/);
    assert.match(banner(), /waiting for ping 10\.17\.0\.1 \(4s of 2m\)/, 'the latest detail, once the interval is over');
  } finally {
    t.mock.timers.reset();
    rmSync(root, { recursive: true, force: true });
  }
});

/** agetty --reload counted: each is a redraw of the console. */
class CountingHost extends LocalHost {
  reloads = 0;
  override async run(cmd: string, _args: readonly string[], _opts?: RunOptions): Promise<CommandResult> {
    if (cmd === 'agetty') this.reloads++;
    return { code: 0, stdout: '', stderr: '' };
  }
}

test('phases in quick succession redraw the console once per gap, the latest when the gap is over; a problem is shown at once', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'sno-progress-gap-'));
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let now = 1_000_000;
    const host = new CountingHost({ root });
    const reporter = new ProgressReporter(host, undefined, recordingNotifier(), quiet, () => now);
    const banner = () => readFileSync(host.resolve(BANNER_PATH), 'utf8');
    for (const title of ['Apply the site network', 'Set the clock', 'Start kubelet', 'Wait for the API', 'Approve certificate requests']) {
      await reporter.phase(title);
      now += 10;
    }
    await reporter.flush();
    assert.equal(host.reloads, 1, 'one redraw for five phases within the gap');
    assert.match(banner(), /IN PROGRESS — Apply the site network/);
    now += BANNER_PHASE_GAP_MS;
    t.mock.timers.tick(BANNER_PHASE_GAP_MS);
    await reporter.flush();
    assert.equal(host.reloads, 2);
    assert.match(banner(), /IN PROGRESS — Approve certificate requests/, 'the latest phase, once the gap is over');
    await reporter.problem('Move the cluster to the new domain failed', ['the API did not answer']);
    await reporter.flush();
    assert.equal(host.reloads, 3, 'a problem does not wait for the gap');
    assert.match(banner(), /ACTION NEEDED — Move the cluster to the new domain failed/);
  } finally {
    t.mock.timers.reset();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a banner held back is never shown after the outcome: the console keeps the outcome', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'sno-progress-outcome-'));
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let now = 1_000_000;
    const host = new LocalHost({ root, env: { PATH: '/nonexistent' } });
    const reporter = new ProgressReporter(host, undefined, recordingNotifier(), quiet, () => now);
    const banner = () => readFileSync(host.resolve(BANNER_PATH), 'utf8');
    await reporter.phase('Wait for the cluster to settle');
    now += 2_000;
    await reporter.detail('waiting for the machine-config operator (2s of 30m)');
    await reporter.outcome({ tone: 'error', headline: 'the cluster did not settle', lines: ['call the office'] });
    now += BANNER_PROGRESS_EVERY_MS;
    t.mock.timers.tick(BANNER_PROGRESS_EVERY_MS);
    await reporter.flush();
    assert.match(banner(), /ACTION NEEDED — the cluster did not settle/);
  } finally {
    t.mock.timers.reset();
    rmSync(root, { recursive: true, force: true });
  }
});

// The second hostile re-test of issue 36: a named pipe at the banner's path left the console without a banner and the
// journal with "could not update the console banner" at every update (no path, no way out).
test('a named pipe where the banner belongs is replaced by the banner; a folder there is said once, with the path and the way out', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'sno-progress-'));
  try {
    const host = new SlowConsoleHost({ root });
    host.open();
    const logs: string[] = [];
    const log = createLogger({ format: 'json', journal: false, write: (s) => logs.push(s) });
    const banner = path.join(root, BANNER_PATH);
    mkdirSync(path.dirname(banner), { recursive: true });
    execFileSync('mkfifo', [banner]);
    const reporter = new ProgressReporter(host, undefined, recordingNotifier(), log);
    await reporter.outcome({ tone: 'error', headline: 'first' });
    await reporter.flush();
    assert.ok(statSync(banner).isFile(), 'the banner took the named pipe\'s place');
    assert.match(readFileSync(banner, 'utf8'), /ACTION NEEDED — first/);
    rmSync(banner);
    mkdirSync(banner);
    await reporter.outcome({ tone: 'error', headline: 'second' });
    await reporter.flush();
    await reporter.outcome({ tone: 'error', headline: 'third' });
    await reporter.flush();
    const warned = logs.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === 'warn').map((l) => l.msg);
    assert.deepEqual(warned, [
      `the console banner ${BANNER_PATH} cannot be written (it is a folder, not a file), so the console does not show the agent's progress; the journal and sno-reconfigure status still do. Move what is there aside (mv ${BANNER_PATH} ${BANNER_PATH}.bad): the banner comes back at the agent's next update`,
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
