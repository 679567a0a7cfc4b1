import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, retryOn, type Backoff, type Timer } from '../../../src/util/backoff';
import { API_OUTAGE_BACKOFF, CONFLICT_BACKOFF, TRANSIENT_BACKOFF } from '../../../src/cluster/retry';
import { DEFAULT_WATCH_BACKOFF } from '../../../src/cluster/watch';

const EQUAL: Backoff = { initialMs: 1_000, factor: 2, jitter: 0.5, maxMs: 15_000 };
const FULL: Backoff = { ...EQUAL, jitter: 1 };
const NONE: Backoff = { ...EQUAL, jitter: 0 };

describe('backoffDelay', () => {
  const rows: { name: string; backoff: Backoff; attempt: number; random: number; ms: number }[] = [
    { name: 'equal jitter, first failure, lowest draw: half the first ceiling', backoff: EQUAL, attempt: 0, random: 0, ms: 500 },
    { name: 'equal jitter, first failure, highest draw: the whole ceiling', backoff: EQUAL, attempt: 0, random: 1, ms: 1_000 },
    { name: 'equal jitter, third failure, middle draw', backoff: EQUAL, attempt: 2, random: 0.5, ms: 3_000 },
    { name: 'the ceiling stops at maxMs', backoff: EQUAL, attempt: 4, random: 1, ms: 15_000 },
    { name: 'a long outage stays at maxMs (no overflow)', backoff: EQUAL, attempt: 5_000, random: 1, ms: 15_000 },
    { name: 'full jitter, lowest draw: no wait', backoff: FULL, attempt: 3, random: 0, ms: 0 },
    { name: 'full jitter, middle draw: half the ceiling', backoff: FULL, attempt: 3, random: 0.5, ms: 4_000 },
    { name: 'no jitter: the ceiling whatever the draw', backoff: NONE, attempt: 1, random: 0.9, ms: 2_000 },
    { name: 'factor 3', backoff: { ...NONE, factor: 3 }, attempt: 2, random: 0, ms: 9_000 },
    { name: 'a negative attempt counts as the first', backoff: NONE, attempt: -1, random: 0, ms: 1_000 },
  ];
  for (const row of rows) {
    test(row.name, () => assert.equal(backoffDelay(row.backoff, row.attempt, () => row.random), row.ms));
  }

  test('every wait of an equal-jitter backoff is between half its ceiling and maxMs', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const lo = backoffDelay(EQUAL, attempt, () => 0);
      const hi = backoffDelay(EQUAL, attempt, () => 1);
      assert.ok(lo >= 500 && hi <= 15_000 && lo <= hi, `attempt ${attempt}: ${lo}..${hi}`);
    }
  });

  // The bench's latency figures depend on these (issue #8): changing one is a decision, not a refactoring.
  const policies: { name: string; backoff: Backoff; initialMs: number; maxMs: number }[] = [
    { name: 'transient API failures', backoff: TRANSIENT_BACKOFF, initialMs: 500, maxMs: 30_000 },
    { name: '409 conflicts', backoff: CONFLICT_BACKOFF, initialMs: 200, maxMs: 3_000 },
    { name: 'a step riding out an API outage', backoff: API_OUTAGE_BACKOFF, initialMs: 1_000, maxMs: 15_000 },
    { name: 'watch reconnects', backoff: DEFAULT_WATCH_BACKOFF, initialMs: 100, maxMs: 500 },
  ];
  for (const p of policies) {
    test(`${p.name}: first ceiling ${p.initialMs} ms, cap ${p.maxMs} ms`, () => {
      assert.equal(backoffDelay({ ...p.backoff, jitter: 0 }, 0), p.initialMs);
      assert.equal(backoffDelay({ ...p.backoff, jitter: 0 }, 99), p.maxMs);
    });
  }
});

/** Time that passes only when slept; records each wait. */
function fakeTimer(): Timer & { waits: number[]; advance(ms: number): void } {
  let now = 0;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms) => { waits.push(ms); now += ms; },
    advance: (ms) => { now += ms; },
  };
}

class Flaky extends Error {}
class Broken extends Error {}
const isFlaky = (e: unknown) => e instanceof Flaky;

describe('retryOn', () => {
  test('retries a matching failure and returns the eventual result, waiting per the backoff', async () => {
    const timer = fakeTimer();
    const attempts: number[] = [];
    const result = await retryOn(NONE, isFlaky, async (attempt) => {
      attempts.push(attempt);
      if (attempt < 4) throw new Flaky();
      return 'done';
    }, { timer });
    assert.equal(result, 'done');
    assert.deepEqual(attempts, [1, 2, 3, 4]);
    assert.deepEqual(timer.waits, [1_000, 2_000, 4_000]);
  });

  test('a failure the predicate does not match is thrown at once', async () => {
    const timer = fakeTimer();
    let calls = 0;
    await assert.rejects(retryOn(NONE, isFlaky, async () => { calls++; throw new Broken('bug'); }, { timer }), /bug/);
    assert.equal(calls, 1);
    assert.deepEqual(timer.waits, []);
  });

  test('gives up after `steps` attempts with the last failure', async () => {
    const timer = fakeTimer();
    let calls = 0;
    await assert.rejects(retryOn({ ...NONE, steps: 3 }, isFlaky, async () => { throw new Flaky(`try ${++calls}`); }, { timer }), /try 3/);
    assert.equal(calls, 3);
    assert.deepEqual(timer.waits, [1_000, 2_000]);
  });

  test('the budget counts from the first failure, cuts the last wait and then gives up', async () => {
    const timer = fakeTimer();
    timer.advance(60_000); // work that ran a minute before failing does not use up the budget
    let calls = 0;
    await assert.rejects(retryOn({ ...NONE, budgetMs: 5_000 }, isFlaky, async () => { calls++; throw new Flaky(); }, { timer }));
    assert.deepEqual(timer.waits, [1_000, 2_000, 2_000]);
    assert.equal(calls, 4);
  });

  test("the caller's deadline cuts the last wait and then ends the retries", async () => {
    const timer = fakeTimer();
    const endsAt = 2_500;
    let calls = 0;
    await assert.rejects(retryOn(NONE, isFlaky, async () => { calls++; throw new Flaky(); }, { timer, deadline: { remainingMs: () => Math.max(0, endsAt - timer.now()) } }));
    assert.deepEqual(timer.waits, [1_000, 1_500]);
    assert.equal(calls, 3);
  });

  test('a wait the failure asks for is honoured, within maxMs', async () => {
    const timer = fakeTimer();
    let calls = 0;
    await retryOn(NONE, isFlaky, async () => { if (calls++ < 2) throw new Flaky(); }, { timer, waitAtLeast: () => (calls === 1 ? 7_000 : 60_000) });
    assert.deepEqual(timer.waits, [7_000, 15_000]);
  });

  test('an aborted signal stops the retries', async () => {
    const ac = new AbortController();
    let calls = 0;
    await assert.rejects(retryOn(NONE, isFlaky, async () => { calls++; ac.abort(); throw new Flaky('down'); }, { timer: fakeTimer(), signal: ac.signal }), /down/);
    assert.equal(calls, 1);
  });

  test('an abort during the real wait rejects with its reason', async () => {
    const ac = new AbortController();
    const p = retryOn({ ...NONE, initialMs: 60_000 }, isFlaky, async () => { throw new Flaky(); }, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop now')), 10);
    await assert.rejects(p, /stop now/);
  });

  test('onRetry hears each failure with its attempt and wait', async () => {
    const heard: [number, number][] = [];
    await retryOn(NONE, isFlaky, async (attempt) => { if (attempt < 3) throw new Flaky(); }, { timer: fakeTimer(), onRetry: (_e, attempt, ms) => heard.push([attempt, ms]) });
    assert.deepEqual(heard, [[1, 1_000], [2, 2_000]]);
  });
});
