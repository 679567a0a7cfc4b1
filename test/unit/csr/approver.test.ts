// The approver's decisions, lifted out of its event handler and recheck loop, as named rows.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { APPROVAL_REASON, dispositionOf, failedApprovalAction, retryDelayTicks, startCsrApprover, type CsrApproverOptions, type Disposition } from '../../../src/csr/approver';
import { CsrDeniedError } from '../../../src/cluster/approval';
import { R } from '../../../src/cluster/resources';
import { ApiError, type ClusterClient, type KubeObject, type ResourceType, type WatchEvent, type WatchOptions } from '../../../src/cluster/types';
import type { CsrDecision, ExpectedNode } from '../../../src/csr/policy';
import { createLogger } from '../../../src/log';
import { BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, CLIENT, SERVING, cleanupCsrFiles, csrObject, opensslCsr } from './make-csr';

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

// The approver itself (startCsrApprover) against a fake API: two watches the test feeds events into, and an approval
// subresource that records each call or fails as the test says; the CSRs are real `openssl req` requests.
const NODE: ExpectedNode = { name: 'sno1', addresses: ['192.168.42.10'], nodeExists: true };

type Csr = V1CertificateSigningRequest & KubeObject;

function clientCsr(name: string, cn = 'system:node:sno1'): Csr {
  return csrObject(opensslCsr({ subject: `/O=system:nodes/CN=${cn}` }), { name, signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages: ['digital signature', 'client auth'] }) as Csr;
}

function servingCsr(name: string, sans = ['DNS:sno1', 'IP:192.168.42.10']): Csr {
  return csrObject(opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1', sans }), { name, signerName: SERVING, username: 'system:node:sno1', groups: ['system:nodes', 'system:authenticated'], usages: ['digital signature', 'server auth'] }) as Csr;
}

/** The same CSR at another resourceVersion, with conditions and a certificate when given. */
function version(csr: Csr, resourceVersion: string, status: { conditions?: { type: string; status: string }[]; certificate?: string } = {}): Csr {
  return { ...csr, metadata: { ...csr.metadata, resourceVersion }, status: { ...csr.status, ...status } as Csr['status'] };
}
const issuedVersion = (csr: Csr, rv: string) => version(csr, rv, { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'LS0tLS1CRUdJTg==' });

class FakeApi {
  readonly watches: { type: ResourceType; fieldSelector?: string; onEvent: (e: WatchEvent<Csr>) => void | Promise<void>; ended: boolean }[] = [];
  readonly approvals: [string, string, string][] = [];
  /** What the next approveCsr calls throw, in order; then they succeed. */
  readonly approvalFailures: unknown[] = [];
  /** What the next watch calls throw, in order; then they run until the approver stops. */
  readonly watchFailures: unknown[] = [];
  watchCalls = 0;

  readonly client = {
    server: 'https://api.sno1.example.com:6443',
    watch: async (type: ResourceType, opts: WatchOptions, onEvent: (e: WatchEvent<Csr>) => void | Promise<void>) => {
      this.watchCalls++;
      const failure = this.watchFailures.shift();
      if (failure) throw failure;
      const w = { type, fieldSelector: opts.fieldSelector, onEvent, ended: false };
      this.watches.push(w);
      await new Promise<void>((resolve) => {
        if (opts.signal.aborted) resolve();
        opts.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      w.ended = true;
    },
    approveCsr: async (name: string, reason: string, message: string) => {
      this.approvals.push([name, reason, message]);
      const failure = this.approvalFailures.shift();
      if (failure) throw failure;
    },
  } as unknown as ClusterClient;

  /** Delivers an event to the watch of the CSR's signer and waits until the approver has dealt with it. */
  async emit(type: WatchEvent<Csr>['type'], object: Csr): Promise<void> {
    const w = this.watches.find((x) => x.fieldSelector === `spec.signerName=${object.spec?.signerName ?? CLIENT}`);
    assert.ok(w, `a watch of ${object.spec?.signerName}`);
    await w.onEvent({ type, object });
  }
}

function harness(overrides: Partial<CsrApproverOptions> = {}, watchFailures: unknown[] = []) {
  const api = new FakeApi();
  api.watchFailures.push(...watchFailures);
  const logs: { level: string; msg: string; [k: string]: unknown }[] = [];
  const decisions: { name: string; d: CsrDecision }[] = [];
  const ac = new AbortController();
  const approver = startCsrApprover({
    client: api.client,
    expected: () => NODE,
    log: createLogger({ format: 'json', level: 'debug', journal: false, write: (l) => { logs.push(JSON.parse(l)); } }),
    signal: ac.signal,
    onDecision: (name, d) => decisions.push({ name, d }),
    retry: { attempts: 1 },
    recheckIntervalMs: 60_000,
    watchRestartDelayMs: 5,
    ...overrides,
  });
  return { api, logs, decisions, ac, approver };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
}

after(() => cleanupCsrFiles());

describe('startCsrApprover', () => {
  test('watches the two kubelet signers only, approves the node\'s CSRs through the approval subresource, and says when both certificates are issued', async () => {
    const { api, approver, decisions } = harness();
    try {
      assert.deepEqual(api.watches.map((w) => [w.type, w.fieldSelector]), [[R.csrs, `spec.signerName=${CLIENT}`], [R.csrs, `spec.signerName=${SERVING}`]]);
      let notified = 0;
      approver.subscribe(() => notified++);
      const c = clientCsr('csr-client');
      await api.emit('ADDED', c);
      assert.equal(api.approvals.length, 1);
      assert.equal(api.approvals[0]?.[0], 'csr-client');
      assert.equal(api.approvals[0]?.[1], APPROVAL_REASON);
      assert.equal(APPROVAL_REASON, 'SNOReconfigureApprove', 'the Approved condition\'s reason, what `oc describe csr` shows');
      assert.match(api.approvals[0]?.[2] ?? '', /^Approved by sno-reconfigure: client CSR for node sno1 /);
      assert.deepEqual(approver.approvedNames(), ['csr-client']);
      assert.deepEqual(approver.pending(), []);
      assert.equal(notified, 1);
      // The approval's own event (still pending while the certificate is signed): not approved twice.
      await api.emit('MODIFIED', version(c, '2', { conditions: [{ type: 'Approved', status: 'True' }] }));
      assert.equal(api.approvals.length, 1);
      assert.equal(decisions.length, 1, 'a CSR this approver approved is not evaluated again');
      await api.emit('MODIFIED', issuedVersion(c, '3'));
      assert.deepEqual(approver.issued(), { client: true, serving: false });
      assert.equal(notified, 2);
      await api.emit('MODIFIED', issuedVersion(c, '4'));
      assert.equal(notified, 2, 'an issued certificate is said once');
      const s = servingCsr('csr-serving');
      await api.emit('ADDED', s);
      assert.deepEqual(approver.approvedNames(), ['csr-client', 'csr-serving']);
      await api.emit('MODIFIED', issuedVersion(s, '2'));
      assert.deepEqual(approver.issued(), { client: true, serving: true });
      assert.equal(await approver.whenIssued(), true);
      assert.equal(notified, 4);
    } finally {
      await approver.stop();
    }
  });

  test('a CSR is evaluated once per version; one the policy refuses is left pending with its reason until it is decided or deleted', async () => {
    const { api, approver, decisions } = harness();
    try {
      const other = clientCsr('csr-other', 'system:node:other');
      await api.emit('ADDED', other);
      await api.emit('ADDED', other);
      assert.equal(decisions.length, 1, 'the same version is evaluated once');
      const reason = decisions[0]?.d.reason ?? '';
      assert.equal(decisions[0]?.d.approve, false);
      assert.deepEqual(approver.pending(), [{ name: 'csr-other', kind: 'client', reason }]);
      assert.deepEqual(api.approvals, []);
      await api.emit('MODIFIED', version(other, '2'));
      assert.equal(decisions.length, 2, 'a new version is evaluated again');
      await api.emit('MODIFIED', version(other, '3', { conditions: [{ type: 'Denied', status: 'True' }] }));
      assert.deepEqual(approver.pending(), [], 'someone denied it: no longer pending');
      const gone = clientCsr('csr-gone', 'system:node:other');
      await api.emit('ADDED', gone);
      assert.deepEqual(approver.pending().map((p) => p.name), ['csr-gone']);
      await api.emit('DELETED', gone);
      assert.deepEqual(approver.pending(), [], 'a deleted CSR is not pending');
      const before = decisions.length;
      await api.emit('ADDED', gone);
      assert.equal(decisions.length, before + 1, 'a CSR created again under the same name is evaluated again');
      await api.emit('BOOKMARK', clientCsr('csr-bookmark'));
      const unnamed = clientCsr('x');
      await api.emit('ADDED', { ...unnamed, metadata: { ...unnamed.metadata, name: undefined } });
      await api.emit('ADDED', { ...unnamed, metadata: undefined });
      assert.equal(decisions.length, before + 1, 'bookmarks and nameless objects are not evaluated');
      // What a server that ignores the field selector could send: no spec at all. Refused, left pending.
      await api.emit('ADDED', { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr-nospec', resourceVersion: '1' } } as Csr);
      assert.deepEqual(approver.pending().filter((p) => p.name === 'csr-nospec').map((p) => p.kind), ['other']);
      assert.deepEqual(api.approvals, []);
    } finally {
      await approver.stop();
    }
  });

  test('the flood guard leaves every CSR past maxApprovals pending, and says so once', async () => {
    const { api, approver, logs } = harness({ maxApprovals: 2 });
    try {
      for (const name of ['csr-1', 'csr-2', 'csr-3', 'csr-4', 'csr-5']) await api.emit('ADDED', clientCsr(name));
      assert.deepEqual(api.approvals.map((a) => a[0]), ['csr-1', 'csr-2']);
      assert.deepEqual(approver.pending().map((p) => [p.name, p.kind]), [['csr-3', 'client'], ['csr-4', 'client'], ['csr-5', 'client']]);
      assert.match(approver.pending()[0]?.reason ?? '', /already approved 2 CSRs \(flood guard\)/);
      assert.deepEqual(logs.filter((l) => /flood guard/.test(l.msg)).map((l) => l.msg), ['this run already approved 2 CSRs, more than a kubelet needs (flood guard): CSR csr-3 and any further ones are left pending']);
    } finally {
      await approver.stop();
    }
  });

  test('an approval someone denied or a CSR that is gone is not tried again; an API failure is, on the recheck, with backoff', async () => {
    const { api, approver, logs } = harness({ recheckIntervalMs: 5 });
    try {
      api.approvalFailures.push(new CsrDeniedError('csr-denied', 'by admin'), new ApiError(404, 'NotFound', 'not found'));
      await api.emit('ADDED', clientCsr('csr-denied'));
      await api.emit('ADDED', clientCsr('csr-gone'));
      assert.deepEqual(approver.pending(), []);
      assert.ok(logs.some((l) => l.msg === 'CSR csr-denied was denied by someone else; it cannot be approved'));
      assert.ok(logs.some((l) => l.msg === 'CSR csr-gone disappeared before it could be approved'));
      api.approvalFailures.push(new ApiError(500, 'InternalError', 'boom'), new ApiError(500, 'InternalError', 'boom again'));
      await api.emit('ADDED', clientCsr('csr-retried'));
      assert.deepEqual(approver.pending(), [{ name: 'csr-retried', kind: 'client', reason: 'approval failed: boom' }]);
      await until(() => approver.approvedNames().includes('csr-retried'), 'approved on a later recheck');
      assert.deepEqual(approver.pending(), []);
      assert.deepEqual(logs.filter((l) => l.msg === 'approving CSR csr-retried failed').map((l) => [l.failures, l.retryInMs]), [[1, 5], [2, 10]]);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(api.approvals.map((a) => a[0]), ['csr-denied', 'csr-gone', 'csr-retried', 'csr-retried', 'csr-retried'], 'no approval tried twice once it is settled');
    } finally {
      await approver.stop();
    }
  });

  test('when expected() changes, the CSRs it refused are evaluated again: at once on reevaluate(), else at the next recheck', async () => {
    let node: ExpectedNode = { ...NODE, addresses: [] };
    const { api, approver } = harness({ expected: () => node });
    try {
      await api.emit('ADDED', servingCsr('csr-serving'));
      assert.deepEqual(approver.pending().map((p) => p.name), ['csr-serving']);
      node = NODE;
      approver.reevaluate();
      await until(() => approver.approvedNames().includes('csr-serving'), 'approved once the address is known');
    } finally {
      await approver.stop();
    }
    node = { ...NODE, addresses: [] };
    const again = harness({ expected: () => node, recheckIntervalMs: 5 });
    try {
      await again.api.emit('ADDED', servingCsr('csr-serving'));
      assert.deepEqual(again.approver.pending().map((p) => p.name), ['csr-serving']);
      node = NODE;
      await until(() => again.approver.approvedNames().includes('csr-serving'), 'approved at a recheck');
    } finally {
      await again.approver.stop();
    }
  });

  test('while the expected identity cannot be determined, CSRs wait; they are evaluated once it can', async () => {
    let fail = true;
    const { api, approver, decisions, logs } = harness({ expected: () => { if (fail) throw new Error('no hostname yet'); return NODE; }, recheckIntervalMs: 5 });
    try {
      await api.emit('ADDED', clientCsr('csr-client'));
      assert.deepEqual(decisions, []);
      // A few rechecks while it still cannot: each says so, none fails.
      await until(() => logs.filter((l) => l.level === 'error' && l.err === 'no hostname yet').length >= 4, 'rechecks while the identity is unknown');
      fail = false;
      await until(() => approver.approvedNames().includes('csr-client'), 'approved at a recheck');
    } finally {
      await approver.stop();
    }
  });

  test('stopping or aborting ends the watches, resolves whenIssued() false and evaluates nothing more', async () => {
    const { api, approver, decisions } = harness();
    const stopped = approver.stop();
    assert.equal(approver.stop(), stopped, 'stop() twice is one stop');
    await stopped;
    assert.equal(await approver.whenIssued(), false);
    assert.deepEqual(api.watches.map((w) => w.ended), [true, true]);
    await api.emit('ADDED', clientCsr('csr-late'));
    approver.reevaluate();
    assert.deepEqual(decisions, []);
    assert.deepEqual(api.approvals, []);

    const aborted = harness();
    aborted.ac.abort();
    assert.equal(await aborted.approver.whenIssued(), false);
    assert.deepEqual(aborted.api.watches.map((w) => w.ended), [true, true]);

    const ac = new AbortController();
    ac.abort();
    const never = harness({ signal: ac.signal });
    // Not stopped by hand: an approver started with an aborted signal stops by itself.
    assert.equal(await never.approver.whenIssued(), false);
    assert.equal(never.api.watchCalls, 0, 'an approver started already aborted opens no watch');
  });

  test('a watch that fails is opened again after watchRestartDelayMs; a sleep cut short ends it', async () => {
    const slept: number[] = [];
    const { api, approver, logs } = harness({ sleep: async (ms) => { slept.push(ms); }, watchRestartDelayMs: 7 }, [new Error('stream reset')]);
    try {
      // The first watch (client) failed before it was pushed: both watches stand again.
      await until(() => api.watches.length === 2, 'both watches open');
      assert.equal(api.watchCalls, 3);
      assert.deepEqual(slept, [7]);
      assert.ok(logs.some((l) => l.level === 'warn' && l.err === 'stream reset' && l.retryInMs === 7));
    } finally {
      await approver.stop();
    }
    const dflt = harness({ sleep: async (ms) => { slept.push(ms); throw new Error('aborted'); }, watchRestartDelayMs: undefined }, [new Error('reset'), new Error('reset')]);
    try {
      await until(() => slept.length === 3, 'both failed watches slept');
      assert.deepEqual(slept.slice(1), [5000, 5000], 'the default delay is 5 s');
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(dflt.api.watchCalls, 2, 'a watch whose sleep was cut short is not opened again');
    } finally {
      await dflt.approver.stop();
    }
  });

  test('an unsubscribed listener is not called; no onDecision is needed', async () => {
    const { api, approver } = harness({ onDecision: undefined });
    try {
      let calls = 0;
      const unsubscribe = approver.subscribe(() => calls++);
      unsubscribe();
      await api.emit('ADDED', clientCsr('csr-client'));
      assert.deepEqual(approver.approvedNames(), ['csr-client']);
      assert.equal(calls, 0);
    } finally {
      await approver.stop();
    }
  });

  test('a client certificate alone is not both: whenIssued() waits, and resolves false when the approver stops', async () => {
    const { api, approver } = harness();
    const c = clientCsr('csr-client');
    await api.emit('ADDED', c);
    await api.emit('MODIFIED', issuedVersion(c, '2'));
    assert.deepEqual(approver.issued(), { client: true, serving: false });
    const early = await Promise.race([approver.whenIssued(), new Promise((r) => setTimeout(() => r('waiting'), 20))]);
    assert.equal(early, 'waiting');
    await approver.stop();
    assert.equal(await approver.whenIssued(), false);
  });

  test('a transient API failure is tried again at the recheck, not by the request\'s own retries beyond options.retry', async () => {
    const { api, approver } = harness();
    try {
      api.approvalFailures.push(new ApiError(503, 'ServiceUnavailable', 'the API is restarting'));
      await api.emit('ADDED', clientCsr('csr-client'));
      assert.equal(api.approvals.length, 1, 'one attempt, as retry.attempts says');
      assert.deepEqual(approver.pending(), [{ name: 'csr-client', kind: 'client', reason: 'approval failed: the API is restarting' }]);
    } finally {
      await approver.stop();
    }
  });

  test('an approval that keeps failing is tried again after 1, 2, 4 … rechecks', async () => {
    let reads = 0;
    const { api, approver } = harness({ expected: () => { reads++; return NODE; }, recheckIntervalMs: 2 });
    const readsAtAttempt: number[] = [];
    const approve = api.client.approveCsr.bind(api.client);
    api.client.approveCsr = async (name, reason, message) => {
      readsAtAttempt.push(reads);
      await approve(name, reason, message);
    };
    try {
      for (let i = 0; i < 10; i++) api.approvalFailures.push(new ApiError(500, 'InternalError', 'boom'));
      await api.emit('ADDED', clientCsr('csr-client'));
      await until(() => readsAtAttempt.length >= 4, 'four attempts');
      // expected() is read once per recheck and once per evaluation: between two attempts, the rechecks waited + 1.
      assert.deepEqual(readsAtAttempt.slice(1, 4).map((r, i) => r - readsAtAttempt[i]!), [2, 3, 5]);
    } finally {
      await approver.stop();
    }
  });

  test('an approval that fails because the approver stopped is neither pending nor tried again', async () => {
    const { api, approver, logs } = harness();
    let fail!: (e: Error) => void;
    api.client.approveCsr = () => new Promise((_resolve, reject) => { fail = reject; });
    const evaluated = api.emit('ADDED', clientCsr('csr-client'));
    await until(() => fail !== undefined, 'the approval in flight');
    const stopped = approver.stop();
    fail(new Error('socket hang up'));
    await evaluated;
    await stopped;
    assert.deepEqual(approver.pending(), []);
    assert.deepEqual(logs.filter((l) => /failed/.test(l.msg)), []);
  });

  test('a watch that ends with an error because the approver stopped is not opened again', async () => {
    const api = new FakeApi();
    const watch = api.client.watch.bind(api.client);
    let calls = 0;
    api.client.watch = async (type, opts, onEvent) => {
      calls++;
      await watch(type, opts, onEvent as never);
      throw new Error('The operation was aborted');
    };
    const logs: { msg: string }[] = [];
    const approver = startCsrApprover({ client: api.client, expected: () => NODE, log: createLogger({ format: 'json', journal: false, write: (l) => { logs.push(JSON.parse(l)); } }), signal: new AbortController().signal });
    await approver.stop();
    assert.equal(calls, 2);
    assert.deepEqual(logs.filter((l) => /restarting/.test(l.msg)), []);
  });
});
