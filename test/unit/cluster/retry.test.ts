import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isTransient, retryOnConflict, withRetry } from '../../../src/cluster/retry';
import { ApiError, ConnectionError } from '../../../src/cluster/types';

const conflict = () => new ApiError(409, 'Conflict', 'modified');
const unavailable = () => new ApiError(503, 'ServiceUnavailable', 'down');
const tooMany = (seconds: number) => new ApiError(429, 'TooManyRequests', 'slow down', { kind: 'Status', code: 429, details: { retryAfterSeconds: seconds } });

/** A sleep that records the delays and returns at once. */
function fakeSleep() {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => { delays.push(ms); } };
}

describe('withRetry', () => {
  test('retries transient failures (503, 429, connection errors) and returns the eventual result', async () => {
    const { delays, sleep } = fakeSleep();
    const errors = [unavailable(), new ConnectionError('refused', 'ECONNREFUSED'), tooMany(0)];
    let calls = 0;
    const result = await withRetry(async () => {
      calls++;
      const e = errors.shift();
      if (e) throw e;
      return 'done';
    }, { sleep, random: () => 0.999 });
    assert.equal(result, 'done');
    assert.equal(calls, 4);
    assert.equal(delays.length, 3);
  });

  test('backoff doubles with full jitter and is capped', async () => {
    const { delays, sleep } = fakeSleep();
    await assert.rejects(withRetry(async () => { throw unavailable(); }, { sleep, attempts: 7, initialDelayMs: 100, maxDelayMs: 1000, random: () => 0.5 }));
    assert.deepEqual(delays, [50, 100, 200, 400, 500, 500]);
  });

  test('Retry-After raises the delay (still capped)', async () => {
    const { delays, sleep } = fakeSleep();
    let calls = 0;
    await withRetry(async () => { if (calls++ === 0) throw tooMany(3); }, { sleep, random: () => 0 });
    assert.deepEqual(delays, [3000]);
    const capped = fakeSleep();
    calls = 0;
    await withRetry(async () => { if (calls++ === 0) throw tooMany(120); }, { sleep: capped.sleep, random: () => 0, maxDelayMs: 10_000 });
    assert.deepEqual(capped.delays, [10_000]);
  });

  test('non-transient errors are thrown at once', async () => {
    const { delays, sleep } = fakeSleep();
    let calls = 0;
    await assert.rejects(withRetry(async () => { calls++; throw new ApiError(404, 'NotFound', 'gone'); }, { sleep }), /gone/);
    await assert.rejects(withRetry(async () => { calls++; throw conflict(); }, { sleep }), /modified/);
    await assert.rejects(withRetry(async () => { calls++; throw new TypeError('bug'); }, { sleep }), /bug/);
    assert.equal(calls, 3);
    assert.equal(delays.length, 0);
  });

  test('gives up after the attempts with the last error', async () => {
    const { sleep } = fakeSleep();
    let calls = 0;
    await assert.rejects(withRetry(async () => { calls++; throw new ApiError(503, 'ServiceUnavailable', `try ${calls}`); }, { sleep, attempts: 3 }), /try 3/);
    assert.equal(calls, 3);
  });

  test('an aborted signal stops retrying', async () => {
    const ac = new AbortController();
    let calls = 0;
    await assert.rejects(withRetry(async () => { calls++; ac.abort(); throw unavailable(); }, { signal: ac.signal }), /down/);
    assert.equal(calls, 1);
  });

  test('the real sleep rejects when the signal aborts', async () => {
    const ac = new AbortController();
    const p = withRetry(async () => { throw unavailable(); }, { signal: ac.signal, initialDelayMs: 60_000, random: () => 0.99 });
    setTimeout(() => ac.abort(new Error('stop now')), 10);
    await assert.rejects(p, /stop now/);
  });

  test('isTransient', () => {
    assert.equal(isTransient(new ApiError(500, 'InternalError', 'etcdserver: request timed out')), true);
    assert.equal(isTransient(new ApiError(500, 'InternalError', 'admission webhook panicked')), false);
    assert.equal(isTransient(new ApiError(504, 'Timeout', 'x')), true);
    assert.equal(isTransient(new ApiError(422, 'Invalid', 'x')), false);
    assert.equal(isTransient(new Error('x')), false);
  });
});

describe('retryOnConflict', () => {
  const noSleep = async () => undefined;
  test('re-runs the read-modify-write on 409 only, up to the bound', async () => {
    let calls = 0;
    assert.equal(await retryOnConflict(async () => { if (++calls < 3) throw conflict(); return calls; }, { sleep: noSleep }), 3);
    calls = 0;
    await assert.rejects(retryOnConflict(async () => { calls++; throw conflict(); }, { attempts: 4, sleep: noSleep }), /modified/);
    assert.equal(calls, 4);
    calls = 0;
    await assert.rejects(retryOnConflict(async () => { calls++; throw unavailable(); }, { sleep: noSleep }), /down/);
    assert.equal(calls, 1);
  });

  test('backs off exponentially with jitter (at least half of each capped ceiling), within the time budget', async () => {
    const delays: number[] = [];
    const sleep = async (ms: number) => { delays.push(ms); };
    let calls = 0;
    await assert.rejects(retryOnConflict(async () => { calls++; throw conflict(); }, { sleep, random: () => 0 }), /modified/);
    // Defaults: 10 attempts, ceilings 200, 400, 800, 1600, then 3000; equal jitter with random 0 = half.
    assert.equal(calls, 10);
    assert.deepEqual(delays, [100, 200, 400, 800, 1500, 1500, 1500, 1500, 1500]);
    delays.length = 0;
    calls = 0;
    await assert.rejects(retryOnConflict(async () => { calls++; throw conflict(); }, { sleep, random: () => 0.999999, maxTotalMs: 5_000 }), /modified/);
    assert.equal(delays.reduce((a, b) => a + b, 0), 5_000, 'stops once the budget is spent');
    assert.ok(calls < 10);
  });

  test('rides out a storm of 409s that lasts longer than five immediate retries', async () => {
    let now = 0;
    const sleep = async (ms: number) => { now += ms; };
    let calls = 0;
    // Every write answered 409 for the first 2.5 s (simulated): the old 5 immediate retries all failed.
    const result = await retryOnConflict(async () => { calls++; if (now < 2_500) throw conflict(); return 'written'; }, { sleep, random: () => 0 });
    assert.equal(result, 'written');
    assert.ok(calls > 5, `attempts: ${calls}`);
  });
});
