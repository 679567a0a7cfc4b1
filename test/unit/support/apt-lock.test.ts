// The test helper that installs Debian packages waits for apt's lock held by another apt-get (a second test
// suite on the machine) instead of failing, says who holds it, and gives up after its deadline naming the holder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { aptLockWaitFunction } from '../../support/apt';

/** A process holding `file` open the way apt-get holds its lock file, until it is killed. */
function holder(file: string): ChildProcess {
  return spawn('bash', ['-c', 'exec 9>>"$1"; exec sleep 3600', 'holder', file], { stdio: 'ignore' });
}

interface Waiter {
  said: Promise<string>;
  done: Promise<{ code: number | null; stderr: string }>;
}

function waitForLock(file: string, waitS: number): Waiter {
  const child = spawn('bash', ['-c', `${aptLockWaitFunction([file], waitS)}\nwait_for_apt`], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const said = new Promise<string>((resolve) => (child.stdio[3] as NodeJS.ReadableStream).once('data', (d: Buffer) => resolve(d.toString())));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  return { said, done };
}

const exited = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

test('waits while another process holds the lock, says which, and goes on once it is released', { timeout: 5 * 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'apt-lock-'));
  const lock = path.join(dir, 'lock-frontend');
  const other = holder(lock);
  try {
    await new Promise((r) => other.once('spawn', r));
    const waiter = waitForLock(lock, 600);
    const said = await waiter.said;
    assert.match(said, new RegExp(`waiting up to 10 min for apt's lock, held by: ${other.pid} sleep 3600`));
    let finished = false;
    void waiter.done.then(() => (finished = true));
    assert.equal(finished, false, 'still waiting while the lock is held');
    other.kill();
    await exited(other);
    const { code } = await waiter.done;
    assert.equal(code, 0, 'it goes on once the holder let go');
  } finally {
    other.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gives up after its deadline, naming the process that holds the lock', { timeout: 5 * 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'apt-lock-'));
  const lock = path.join(dir, 'lock');
  const other = holder(lock);
  try {
    await new Promise((r) => other.once('spawn', r));
    const { code, stderr } = await waitForLock(lock, 1).done;
    assert.equal(code, 75);
    assert.match(stderr, new RegExp(`apt's lock still held after 1 s by: ${other.pid} sleep 3600`));
  } finally {
    other.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('returns at once when nobody holds the lock', { timeout: 5 * 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'apt-lock-'));
  try {
    const waiter = waitForLock(path.join(dir, 'lock'), 600);
    const { code } = await waiter.done;
    assert.equal(code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
