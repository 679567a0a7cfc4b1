// settle's per-round decisions (src/steps/settle/schedule.ts), as rows: when the slow checks run, when a
// Degraded component ends the wait, and which expected rollouts are still waited for.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEGRADED_GRACE_MS, DegradedSince, ONLY_SLOW_FIRST_RECHECK_MS, ONLY_SLOW_RECHECK_MS, REACTION_GRACE_MS, RECHECK_MS, SlowCheckSchedule, stillAwaited } from '../../../src/steps/settle/schedule';
import type { Blocker, ExpectedRollout } from '../../../src/steps/rollouts';
import type { ClusterSnapshot } from '../../../src/steps/settle/conditions';
import { BlockerLog, degradedTooLong, SETTLE_HEARTBEAT_MS } from '../../../src/steps/settle';

const b = (key: string, degraded?: boolean): Blocker => ({ key, text: key, ...(degraded ? { degraded: { name: key, message: 'm' } } : {}) });

describe('SlowCheckSchedule', () => {
  // Each row is a sequence of rounds: [now, fast blocker keys, expected due?]; after a due round the checks run.
  const rows: { name: string; rounds: [number, string[], boolean][] }[] = [
    { name: 'the first round always runs them', rounds: [[0, ['co/a'], true]] },
    { name: 'while rolling out: every RECHECK_MS', rounds: [[0, ['co/a'], true], [RECHECK_MS - 1, ['co/a'], false], [RECHECK_MS, ['co/a'], true]] },
    { name: 'a watched blocker going away runs them at once', rounds: [[0, ['co/a', 'co/b'], true], [1, ['co/a'], true], [2, ['co/a'], false]] },
    {
      name: 'once only they block: 250 ms, 500 ms, 1 s, then every 2 s',
      rounds: [
        [0, [], true],
        [ONLY_SLOW_FIRST_RECHECK_MS - 1, [], false],
        [ONLY_SLOW_FIRST_RECHECK_MS, [], true],
        [ONLY_SLOW_FIRST_RECHECK_MS + 500, [], true],
        [ONLY_SLOW_FIRST_RECHECK_MS + 1_500, [], true],
        [ONLY_SLOW_FIRST_RECHECK_MS + 1_500 + ONLY_SLOW_RECHECK_MS - 1, [], false],
        [ONLY_SLOW_FIRST_RECHECK_MS + 1_500 + ONLY_SLOW_RECHECK_MS, [], true],
      ],
    },
    { name: 'a new rollout resets the short interval', rounds: [[0, [], true], [250, [], true], [750, ['co/a'], true], [751, [], true], [751 + 250, [], true]] },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const s = new SlowCheckSchedule();
      row.rounds.forEach(([now, keys, expected], i) => {
        const fast = keys.map((k) => b(k));
        assert.equal(s.due(now, fast), expected, `round ${i} at ${now} ms`);
        if (expected) s.ran(now, fast.length);
      });
    });
  }
});

describe('DegradedSince', () => {
  test('Degraded for the whole grace ends the wait; a break starts the count again', () => {
    const d = new DegradedSince();
    assert.equal(d.stuck([b('co/x', true)], 0), undefined);
    assert.equal(d.stuck([b('co/x', true)], DEGRADED_GRACE_MS - 1), undefined);
    assert.equal(d.stuck([], DEGRADED_GRACE_MS - 1), undefined, 'it cleared');
    assert.equal(d.stuck([b('co/x', true)], DEGRADED_GRACE_MS), undefined, 'counted from its return');
    assert.equal(d.stuck([b('co/x', true)], 2 * DEGRADED_GRACE_MS)?.key, 'co/x');
  });
  test('a blocker that is not Degraded never ends the wait', () => {
    const d = new DegradedSince();
    d.stuck([b('co/y')], 0);
    assert.equal(d.stuck([b('co/y')], 10 * DEGRADED_GRACE_MS), undefined);
  });
});

describe('stillAwaited', () => {
  const rollout = (name: string, baseline: string, optional = false): ExpectedRollout => ({ kind: 'clusteroperator', name, id: name, reason: 'r', step: 'domain', baseline, recordedAt: '', ...(optional ? { optional } : {}) });
  const co = (name: string, progressing: string): ClusterSnapshot['operators'][number] => ({ metadata: { name }, status: { conditions: [{ type: 'Progressing', status: 'False', lastTransitionTime: progressing }] } }) as ClusterSnapshot['operators'][number];
  const snap = (ops: ClusterSnapshot['operators']): ClusterSnapshot => ({ operators: ops, pools: [], nodes: [], csrs: [] });
  const rows: { name: string; now: number; awaited: string[]; givenUp: string[] }[] = [
    { name: 'within the grace, every rollout is waited for', now: REACTION_GRACE_MS - 1, awaited: ['started', 'idle'], givenUp: [] },
    { name: 'after it, one that never started is given up; a started one stays', now: REACTION_GRACE_MS, awaited: ['started'], givenUp: ['idle'] },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const rollouts = [rollout('started', 'False@t0'), rollout('idle', 'False@t0')];
      const r = stillAwaited(rollouts, snap([co('started', 't1'), co('idle', 't0')]), row.now, 0);
      assert.deepEqual(r.awaited.map((x) => x.name), row.awaited);
      assert.deepEqual(r.givenUp.map((x) => x.name), row.givenUp);
    });
  }
});

describe('degradedTooLong', () => {
  const rollout = (kind: ExpectedRollout['kind'], name: string, reason: string): ExpectedRollout => ({ kind, name, id: name, reason, step: 'domain', baseline: null, recordedAt: '' });
  const stuck = (name: string) => ({ key: 'k', text: 't', degraded: { name, message: 'm' } });
  const changed = [rollout('clusteroperator', 'authentication', 'Ingress componentRoutes'), rollout('machineconfigpool', 'master', 'image mirrors')];
  const rows: { name: string; degraded: string; says: RegExp }[] = [
    { name: 'an operator this run changed', degraded: 'cluster operator authentication', says: /^cluster operator authentication, changed by this run \(Ingress componentRoutes\), has been Degraded/ },
    { name: 'a pool this run changed', degraded: 'machine-config pool master', says: /^machine-config pool master, changed by this run \(image mirrors\)/ },
    { name: 'an operator the run never touched', degraded: 'cluster operator monitoring', says: /^cluster operator monitoring, not changed by this run \(pre-existing or unrelated\)/ },
  ];
  for (const row of rows) test(row.name, () => assert.match(degradedTooLong(stuck(row.degraded), changed).message, row.says));
});

describe('BlockerLog: the journal hears what changed, and a heartbeat', () => {
  test('each blocker once when it appears, when its condition changes and when it clears; a short heartbeat after a quiet minute', () => {
    const lines: string[] = [];
    let now = 0;
    const log = { info: (msg: string) => void lines.push(msg) } as unknown as ConstructorParameters<typeof BlockerLog>[0];
    const journal = new BlockerLog(log, () => now);
    const blocker = (key: string, text: string): Blocker => ({ key, text });
    journal.update([blocker('co/a', 'kube-apiserver (Progressing: 1 of 3)'), blocker('tls/x', 'x to serve its new certificate')], '1m of 45m');
    now = 5_000;
    journal.update([blocker('co/a', 'kube-apiserver (Progressing: 1 of 3)'), blocker('tls/x', 'x to serve its new certificate')], '1m of 45m');
    now = 10_000;
    journal.update([blocker('co/a', 'kube-apiserver (Progressing: 2 of 3)'), blocker('tls/x', 'x to serve its new certificate')], '1m of 45m');
    now = 10_000 + SETTLE_HEARTBEAT_MS;
    journal.update([blocker('co/a', 'kube-apiserver (Progressing: 2 of 3)'), blocker('tls/x', 'x to serve its new certificate')], '2m of 45m');
    now += 1_000;
    journal.update([blocker('tls/x', 'x to serve its new certificate')], '2m of 45m');
    journal.update([], '2m of 45m');
    assert.deepEqual(lines, [
      'waiting for kube-apiserver (Progressing: 1 of 3)',
      'waiting for x to serve its new certificate',
      'waiting for kube-apiserver (Progressing: 2 of 3)',
      'still waiting for 2 thing(s) to settle (2m of 45m)',
      'no longer waiting for kube-apiserver',
      'no longer waiting for x to serve its new certificate',
    ]);
  });
});
