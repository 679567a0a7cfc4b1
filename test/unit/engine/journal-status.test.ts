import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { Journal, JournalUnreadableError, readJournal } from '../../../src/engine/journal';
import { readStatus, renderStatus, statusExitCode, STATUS_EXIT_PENDING } from '../../../src/engine/status';
import { STEPS } from '../../../src/steps/index';
import { createDeadline } from '../../../src/engine/clock';
import { formatDuration } from '../../../src/siteconfig/duration';
import { DONE_MARKER, TRUSTED_KEYS_DIR, UNSIGNED_MEDIA_FILE } from '../../../src/paths';
import { fastClock } from '../../support/step-context';

/** Runs `body` on a LocalHost over a fresh temp root, removed afterwards whatever happens. */
async function inTempRoot(prefix: string, body: (root: string, host: LocalHost) => Promise<void>): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  try {
    await body(root, new LocalHost({ root }));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test('the journal survives a reopen, is written atomically and privately, and a new config starts over', async () => {
  await inTempRoot('journal-', async (root, host) => {
    const j = await Journal.open(host, '/var/lib/sno-reconfigure');
    j.startConfig('a'.repeat(64), 'store-1', { kind: 'volume', location: '/dev/sdb1', copiedTo: '/x' }, new Date());
    j.step('network').state = 'done';
    j.data.rejectedDigests = ['b'.repeat(64)];
    await j.save();
    const file = path.join(root, 'var/lib/sno-reconfigure/journal.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp')), [], 'no temp files left');
    const again = await Journal.open(host, '/var/lib/sno-reconfigure');
    assert.equal(again.data.steps.network?.state, 'done');
    again.startConfig('c'.repeat(64), 'store-2', undefined, new Date());
    assert.deepEqual(again.data.steps, {}, 'a different config starts over from validation');
    assert.deepEqual(again.data.rejectedDigests, ['b'.repeat(64)], 'refused configs stay refused');
    writeFileSync(file, '{not json');
    // A folder where the copy goes is no obstacle (the second hostile re-test of issue 36: an internal error).
    mkdirSync(`${file}.corrupt/x`, { recursive: true });
    // A damaged journal is kept aside and a new one started (issue 36): no restart loop on the same file.
    const fresh = await Journal.open(host, '/var/lib/sno-reconfigure');
    assert.match(fresh.recovered ?? '', /is damaged \(it is not complete JSON\).*a copy was kept as journal\.json\.corrupt and a new journal started/);
    assert.deepEqual(fresh.data.steps, {});
    assert.equal(readFileSync(`${file}.corrupt`, 'utf8'), '{not json');
  });
});

// The second hostile re-test of issue 36: a folder where the done marker belongs read as "done" (status) and made `run`
// exit 0 doing nothing, while systemd's ConditionPathExists=! kept the service from ever starting.
test('a folder or a named pipe where the done marker belongs is said with the way out, never read as done', async () => {
  await inTempRoot('status-', async (root, host) => {
    mkdirSync(path.join(root, DONE_MARKER), { recursive: true });
    const view = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
    assert.equal(view.phase, 'not-started');
    const said = `${DONE_MARKER} is a folder, not the agent's done marker (a file it writes once the node is reconfigured), and while anything is there the service does not start; if this node has not been reconfigured at this site, move it aside (mv ${DONE_MARKER} ${DONE_MARKER}.bad) and start the service (systemctl start sno-reconfigure)`;
    assert.deepEqual(view.warnings, [said]);
    assert.ok(renderStatus(view).includes(said));
    rmSync(path.join(root, DONE_MARKER), { recursive: true });
    execFileSync('mkfifo', [path.join(root, DONE_MARKER)]);
    const j = await Journal.open(host, '/var/lib/sno-reconfigure');
    j.startConfig('a'.repeat(64), 'store-0042', undefined, new Date());
    await j.save();
    const withJournal = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
    assert.equal(withJournal.phase, 'running');
    assert.match(withJournal.warnings[0] ?? '', /\/etc\/sno-reconfigure\/done is a named pipe \(FIFO\), not the agent's done marker/);
    writeFileSync(path.join(root, 'x'), '');
    rmSync(path.join(root, DONE_MARKER));
    writeFileSync(path.join(root, DONE_MARKER), JSON.stringify({ finishedAt: '2026-11-27T00:00:00Z', siteConfig: 'store-0042', digest: 'a'.repeat(64) }));
    const done = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
    assert.equal(done.phase, 'succeeded', 'the marker itself still completes the journal');
    assert.deepEqual(done.warnings, []);
  });
});

// The tenth hostile re-test of issue 36 (M12): `null`, `[]` or a record of the wrong shape where the done marker
// belongs read as "reconfigured", while the service never started.
test('a file where the done marker belongs that is not the agent\'s marker is said with the way out; an empty one (made by hand) is a marker', async () => {
  await inTempRoot('status-', async (root, host) => {
    mkdirSync(path.dirname(path.join(root, DONE_MARKER)), { recursive: true });
    for (const damaged of ['null', '[]', '{"siteConfig": 5}', 'done']) {
      writeFileSync(path.join(root, DONE_MARKER), damaged);
      const view = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
      assert.equal(view.phase, 'not-started', damaged);
      assert.deepEqual(view.warnings, [`${DONE_MARKER} is a file that is not the agent's done marker (it holds no record of a finished run), and while anything is there the service does not start; if this node has not been reconfigured at this site, move it aside (mv ${DONE_MARKER} ${DONE_MARKER}.bad) and start the service (systemctl start sno-reconfigure)`]);
    }
    writeFileSync(path.join(root, DONE_MARKER), '');
    const byHand = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
    assert.equal(byHand.phase, 'done');
    assert.deepEqual(byHand.warnings, []);
  });
});

test('status renders phase, steps, the last error with its remedy, and the report', async () => {
  await inTempRoot('status-', async (_root, host) => {
    assert.equal((await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS)).phase, 'not-started');
    const j = await Journal.open(host, '/var/lib/sno-reconfigure');
    j.startConfig('a'.repeat(64), 'store-0042', { kind: 'volume', location: '/dev/sdb1 (label SITE-CONFIG)', copiedTo: '/x' }, new Date(Date.now() - 200_000));
    Object.assign(j.step('network'), { state: 'done', attempts: 1, durationMs: 12_000 });
    Object.assign(j.step('kubelet'), { state: 'done', attempts: 1, durationMs: 2_000, alreadyDone: true });
    Object.assign(j.step('api'), { state: 'failed', attempts: 2, lastError: { at: 'now', message: 'the Kubernetes API did not become ready within 30m' } });
    j.data.phase = 'failed';
    j.data.lastError = { at: '2026-11-22T10:00:00Z', step: 'api', message: 'the Kubernetes API did not become ready within 30m', remedy: 'Check kubelet.' };
    await j.save();
    const view = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
    const text = renderStatus(view);
    assert.match(text, /Phase: +failed/);
    assert.match(text, /Site-config: store-0042 \(sha256 aaaaaaaaaaaa…\) from \/dev\/sdb1/);
    assert.match(text, /done +Apply the site network +12s/);
    assert.match(text, /done +Start kubelet +2s +already in place/);
    assert.match(text, /failed +Wait for the Kubernetes API .*2 attempts/);
    assert.match(text, /pending +Move the cluster to the new domain/);
    assert.match(text, /What to do: Check kubelet\./);
    assert.doesNotMatch(text, /^Pool:/m);
    // A run cut off while it held the master pool (issue 36): status says the pool is paused, and what releases it.
    j.data.facts.poolHeld = true;
    await j.save();
    assert.match(renderStatus(await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS)), /^Pool: +the master MachineConfigPool is paused by the agent while it changes what the pool rolls out; the agent unpauses it when that is done, or, if the run was cut off, once its next start has written what remains/m);
  });
});

test('status says which site-config media the node accepts: signed by its keys, or unsigned as the factory chose', async () => {
  await inTempRoot('status-media-', async (root, host) => {
    const media = async () => {
      const view = await readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS);
      return { json: view.media, text: /^Media: +(.*)$/m.exec(renderStatus(view))?.[1] };
    };
    assert.match((await media()).text ?? '', /^unsigned media are accepted though the factory never chose --allow-unsigned-media \(no trusted keys on this node\)/);
    mkdirSync(path.join(root, 'etc/sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(root, UNSIGNED_MEDIA_FILE), '');
    assert.match((await media()).text ?? '', /^unsigned media are accepted \(the factory chose --allow-unsigned-media\)/);
    mkdirSync(path.join(root, TRUSTED_KEYS_DIR));
    writeFileSync(path.join(root, TRUSTED_KEYS_DIR, 'org.pem'), 'x');
    const signed = await media();
    assert.equal(signed.text, `media must be signed by one of this node's trusted keys (org.pem in ${TRUSTED_KEYS_DIR})`);
    assert.equal(signed.json, signed.text, '--json has the same sentence');
  });
});

test('durations and deadlines', () => {
  assert.equal(formatDuration(192_000), '3m12s');
  assert.equal(formatDuration(30 * 60_000), '30m');
  assert.equal(formatDuration(3_720_000), '1h2m');
  const clock = fastClock();
  const d = createDeadline(clock, 'API', 30 * 60_000);
  clock.advance(192_000);
  assert.equal(d.progress(), '3m12s of 30m');
  assert.equal(d.expired(), false);
  clock.advance(30 * 60_000);
  assert.equal(d.expired(), true);
  assert.equal(d.remainingMs(), 0);
});

test('status changes nothing: an unreadable journal is reported, not copied aside', async () => {
  await inTempRoot('status-ro-', async (root, host) => {
    const dir = path.join(root, 'var/lib/sno-reconfigure');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'journal.json'), '{not json');
    await assert.rejects(readStatus(host, '/var/lib/sno-reconfigure', DONE_MARKER, STEPS), /journal\.json is damaged \(it is not complete JSON\)/);
    assert.deepEqual(readdirSync(dir), ['journal.json'], 'nothing written beside it');
  });
});

test('status exit codes: 0 done, 1 failed or refused, 3 not finished yet', () => {
  const rows: [Parameters<typeof statusExitCode>[0], number][] = [
    ['done', 0],
    ['succeeded', 0],
    ['failed', 1],
    ['invalid-config', 1],
    ['waiting', STATUS_EXIT_PENDING],
    ['running', STATUS_EXIT_PENDING],
    ['not-started', STATUS_EXIT_PENDING],
  ];
  for (const [phase, code] of rows) assert.equal(statusExitCode(phase), code, phase);
  assert.equal(STATUS_EXIT_PENDING, 3);
});

// The third hostile re-test of issue 36: a journal of the right outline with a lastError or a digest list of another
// type passed the check and was a TypeError at every start ("internal error"); now it is a damaged journal.
test('a journal whose last error or digest lists are of another type is damaged: kept aside, a new one started', async () => {
  await inTempRoot('journal-', async (root, host) => {
    const file = path.join(root, 'var/lib/sno-reconfigure/journal.json');
    mkdirSync(path.dirname(file), { recursive: true });
    const outline = { version: 1, phase: 'failed', updatedAt: '2026-11-27T00:00:00Z', starts: 1, steps: {}, facts: {}, changes: [], warnings: [] };
    for (const damage of [{ lastError: 5 }, { lastError: { at: 'x' } }, { retryableDigests: 'abc' }, { rejectedDigests: [1] }, { steps: { network: 'done' } }, { warnings: [{}] }, { status: 7 }]) {
      writeFileSync(file, JSON.stringify({ ...outline, ...damage }));
      const fresh = await Journal.open(host, '/var/lib/sno-reconfigure');
      assert.match(fresh.recovered ?? '', /is damaged \(it is not a journal of this agent version\)/, JSON.stringify(damage));
    }
    writeFileSync(file, JSON.stringify({ ...outline, lastError: { at: 'x', message: 'm', problems: [{ path: 'spec', message: 'bad' }] }, retryableDigests: ['a'] }));
    assert.equal((await Journal.open(host, '/var/lib/sno-reconfigure')).recovered, undefined, 'a well-formed journal is read');
  });
});

// The journal's own rules (src/engine/journal.ts), each part of its shape and each way it is read, kept or written.
test('a journal of another shape in any part the agent reads is damaged; one of the right shape is read as it is', async () => {
  await inTempRoot('journal-', async (root, host) => {
    const file = path.join(root, 'var/lib/sno-reconfigure/journal.json');
    mkdirSync(path.dirname(file), { recursive: true });
    const outline = { version: 1, phase: 'failed', updatedAt: '2026-11-27T00:00:00Z', starts: 1, steps: {}, facts: {}, changes: [], warnings: [] };
    const damaged: unknown[] = [
      [], null, 'journal', [outline],
      { ...outline, version: 2 }, { ...outline, facts: undefined }, { ...outline, facts: [] }, { ...outline, facts: null }, { ...outline, changes: {} },
      { ...outline, warnings: 'w' }, { ...outline, steps: [] }, { ...outline, steps: { network: { attempts: 1 } } }, { ...outline, steps: { network: { state: 1 } } },
      { ...outline, steps: { network: { state: 'failed', lastError: 'boom' } } }, { ...outline, lastError: { message: 'm', problems: 'p' } },
      { ...outline, lastError: { message: 'm', problems: ['spec'] } }, { ...outline, lastError: { message: 'm', problems: [{ message: 'bad' }] } },
      { ...outline, lastError: { message: 'm', problems: [{ path: 'spec', message: 1 }] } }, { ...outline, lastError: [] },
      { ...outline, digest: 1 }, { ...outline, configName: {} }, { ...outline, phase: 3 }, { ...outline, rejectedDigests: 'a' },
    ];
    for (const damage of damaged) {
      writeFileSync(file, JSON.stringify(damage));
      const fresh = await Journal.open(host, '/var/lib/sno-reconfigure');
      assert.match(fresh.recovered ?? '', /is damaged \(it is not a journal of this agent version\)/, JSON.stringify(damage));
      assert.equal(fresh.data.phase, 'waiting', JSON.stringify(damage));
    }
    const good = {
      ...outline, digest: 'a'.repeat(64), configName: 'store-0042', status: 'waiting for the API', rejectedDigests: ['b'], retryableDigests: [],
      steps: { network: { state: 'failed', attempts: 2, data: {}, lastError: { at: 'x', message: 'm' } }, api: { state: 'pending', attempts: 0, data: {} } },
      lastError: { at: 'x', message: 'm', problems: [] }, facts: { nodeName: 'sno1' }, changes: [{ step: 'network' }], warnings: ['w'],
    };
    writeFileSync(file, JSON.stringify(good));
    const read = await Journal.open(host, '/var/lib/sno-reconfigure');
    assert.equal(read.recovered, undefined);
    assert.deepEqual(read.data, good);
  });
});

test('a journal that cannot be read at all (a folder) is moved aside whole by the run, left in place by status', async () => {
  await inTempRoot('journal-', async (root, host) => {
    const file = path.join(root, 'var/lib/sno-reconfigure/journal.json');
    mkdirSync(path.join(file, 'inside'), { recursive: true });
    // What else the state folder holds stays as it is whatever happens to the journal.
    const other = path.join(path.dirname(file), 'last-issued.json');
    writeFileSync(other, '{}');
    await assert.rejects(readJournal(host, '/var/lib/sno-reconfigure', { keepCorruptCopy: false }), (e: unknown) =>
      e instanceof JournalUnreadableError && e.name === 'JournalUnreadableError' && (e.cause as NodeJS.ErrnoException).code === 'EISDIR' && /journal\.json is damaged \(it is a folder, not a file\)/.test(e.message));
    assert.ok(statSync(file).isDirectory(), 'status moves nothing');
    assert.deepEqual(readdirSync(path.dirname(file)), ['journal.json', 'last-issued.json']);
    writeFileSync(`${file}.corrupt`, 'an older copy');
    const fresh = await Journal.open(host, '/var/lib/sno-reconfigure');
    assert.match(fresh.recovered ?? '', /is damaged \(it is a folder, not a file\).*a copy was kept as journal\.json\.corrupt/);
    assert.deepEqual(fresh.data.warnings, [fresh.recovered]);
    assert.deepEqual(readdirSync(`${file}.corrupt`), ['inside'], 'the folder itself is the copy');
    assert.equal(readFileSync(other, 'utf8'), '{}', 'only the journal is moved aside');
    await fresh.save();
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).phase, 'waiting', 'the new journal is written where the folder was');
    // A damaged file is copied aside, its text as it was.
    writeFileSync(file, '[]');
    await assert.rejects(readJournal(host, '/var/lib/sno-reconfigure'), /not a journal of this agent version/);
    assert.equal(readFileSync(`${file}.corrupt`, 'utf8'), '[]');
    assert.equal(readFileSync(other, 'utf8'), '{}');
  });
});

test('a new journal: the state folder private, nothing recorded, each step pending until it starts, every save stamped', async () => {
  await inTempRoot('journal-', async (root, host) => {
    const before = Date.now();
    const j = await Journal.open(host, '/var/lib/sno-reconfigure', new Date('2026-11-27T08:00:00Z'));
    assert.equal(statSync(path.join(root, 'var/lib/sno-reconfigure')).mode & 0o777, 0o700);
    assert.equal(j.recovered, undefined);
    assert.deepEqual(j.data, { version: 1, phase: 'waiting', updatedAt: '2026-11-27T08:00:00.000Z', starts: 0, steps: {}, facts: {}, changes: [], warnings: [] });
    const rec = j.step('network');
    assert.deepEqual(rec, { state: 'pending', attempts: 0, data: {} });
    rec.attempts = 1;
    assert.equal(j.step('network'), rec, 'the same record, not a new one');
    assert.equal(j.data.steps.network, rec);
    await j.save();
    const saved = JSON.parse(readFileSync(path.join(root, 'var/lib/sno-reconfigure/journal.json'), 'utf8')) as { updatedAt: string; steps: unknown };
    assert.ok(Date.parse(saved.updatedAt) >= before, 'saved with the time of the save');
    assert.deepEqual(saved.steps, { network: { state: 'pending', attempts: 1, data: {} } });
    // A new config keeps only what refuses configs: the refused digests, and which of them the network may retry.
    j.data.retryableDigests = ['c'];
    j.startConfig('d'.repeat(64), 'store-0042', { kind: 'path', location: '/x', copiedTo: '/y' }, new Date('2026-11-27T09:00:00Z'));
    assert.deepEqual(j.data, {
      version: 1, phase: 'running', updatedAt: '2026-11-27T09:00:00.000Z', startedAt: '2026-11-27T09:00:00.000Z', starts: 0, steps: {}, facts: {}, changes: [], warnings: [],
      digest: 'd'.repeat(64), configName: 'store-0042', source: { kind: 'path', location: '/x', copiedTo: '/y' }, retryableDigests: ['c'],
    });
  });
});

test('an error opening the journal that is not a damaged journal (the copy cannot be kept) is not hidden by a new journal', async () => {
  const failing = {
    mkdirp: async () => {},
    readTextIfExists: async () => { throw Object.assign(new Error('EACCES'), { code: 'EACCES' }); },
    remove: async () => {},
    rename: async () => { throw Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' }); },
  } as unknown as LocalHost;
  await assert.rejects(Journal.open(failing, '/var/lib/sno-reconfigure'), /EROFS/);
});

// The test-only failpoint of crash.test.ts: the agent kills itself right after the N-th save, and only then.
test('SNO_RECONFIGURE_CRASH_AT_SAVE=N kills the process right after its N-th journal save; another value never does', async () => {
  const roots = ['2', '12', '02'].map(() => mkdtempSync(path.join(tmpdir(), 'journal-crash-')));
  try {
    const script = (root: string) => `const { Journal } = await import(${JSON.stringify(path.resolve('src/engine/journal.ts'))});
const { LocalHost } = await import(${JSON.stringify(path.resolve('src/host/host.ts'))});
const j = await Journal.open(new LocalHost({ root: ${JSON.stringify(root)} }), '/state');
for (let i = 1; i <= 13; i++) { j.data.starts = i; await j.save(); process.stdout.write(i + ' '); }`;
    // The three processes at once: each costs a second of tsx.
    const run = (value: string, root: string) => new Promise<{ signal: NodeJS.Signals | null; code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(root)], { env: { ...process.env, SNO_RECONFIGURE_CRASH_AT_SAVE: value } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
      child.on('close', (code, signal) => resolve({ signal, code, stdout, stderr }));
    });
    const starts = (root: string) => (JSON.parse(readFileSync(path.join(root, 'state/journal.json'), 'utf8')) as { starts: number }).starts;
    const [second, twelfth, never] = await Promise.all(['2', '12', '02'].map((value, i) => run(value, roots[i]!)));
    assert.equal(second!.signal, 'SIGKILL', second!.stderr);
    assert.equal(second!.stdout, '1 ');
    assert.equal(starts(roots[0]!), 2, 'the second save is on disk');
    assert.equal(twelfth!.signal, 'SIGKILL', twelfth!.stderr);
    assert.equal(starts(roots[1]!), 12);
    assert.equal(never!.code, 0, never!.stderr);
    assert.equal(never!.stdout, '1 2 3 4 5 6 7 8 9 10 11 12 13 ', 'a value with a leading zero is no N');
  } finally {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  }
});
