// The approver's decisions, lifted out of its event handler and recheck loop, as named rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispositionOf, failedApprovalAction, retryDelayTicks, type Disposition } from '../../../src/csr/approver';

const dispositions: { name: string; approve: boolean; alreadyDecided: boolean; approvedSoFar: number; expected: Disposition }[] = [
  { name: 'the policy approves, nothing approved yet: approve', approve: true, alreadyDecided: false, approvedSoFar: 0, expected: 'approve' },
  { name: 'the policy approves, one below the guard: approve', approve: true, alreadyDecided: false, approvedSoFar: 9, expected: 'approve' },
  { name: 'the policy approves, the guard reached: left pending by the flood guard', approve: true, alreadyDecided: false, approvedSoFar: 10, expected: 'flood-guard' },
  { name: 'the policy refuses a pending CSR: left pending with its reason', approve: false, alreadyDecided: false, approvedSoFar: 0, expected: 'leave-pending' },
  { name: 'the policy refuses a CSR someone already decided: not reported as pending', approve: false, alreadyDecided: true, approvedSoFar: 0, expected: 'already-decided' },
  { name: 'a refusal is a refusal even past the guard', approve: false, alreadyDecided: false, approvedSoFar: 10, expected: 'leave-pending' },
];

for (const row of dispositions) {
  test(`dispositionOf: ${row.name}`, () => {
    assert.equal(dispositionOf({ approve: row.approve }, row.alreadyDecided, row.approvedSoFar, 10), row.expected);
  });
}

test('retryDelayTicks doubles from one tick and stops at thirty', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelayTicks), [1, 2, 4, 8, 16, 30, 30, 30]);
});

const recheckRows: { name: string; stillWatched: boolean; tick: number; dueTick: number; expected: ReturnType<typeof failedApprovalAction> }[] = [
  { name: 'the CSR was deleted: forget it', stillWatched: false, tick: 9, dueTick: 3, expected: 'forget' },
  { name: 'not due yet: wait', stillWatched: true, tick: 2, dueTick: 3, expected: 'wait' },
  { name: 'due this tick: try again', stillWatched: true, tick: 3, dueTick: 3, expected: 'retry' },
  { name: 'overdue: try again', stillWatched: true, tick: 5, dueTick: 3, expected: 'retry' },
  { name: 'an attempt in flight (due never): wait', stillWatched: true, tick: 1_000, dueTick: Infinity, expected: 'wait' },
];

for (const row of recheckRows) {
  test(`failedApprovalAction: ${row.name}`, () => {
    assert.equal(failedApprovalAction(row.stillWatched, row.tick, row.dueTick), row.expected);
  });
}
