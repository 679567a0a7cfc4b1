// The CSR approver loop (DESIGN.md section 5, issues #4/#5): watches — never polls — the two kubelet
// signers, evaluates each CSR once per resourceVersion with the policy, approves through the /approval
// subresource, and reports when the node's client and serving certificates have been issued.
//
// Surface (for the csr step):
//   const approver = startCsrApprover({ client, expected, log, signal });
//   await approver.whenIssued();        // true once both certificates were issued, false if stopped first
//   approver.issued();                  // { client, serving }
//   approver.approvedNames();           // CSRs this approver approved, in order
//   approver.pending();                 // CSRs it left pending, each with the reason
//   approver.subscribe(listener);       // called on every approval and issued certificate; returns unsubscribe
//   approver.reevaluate();              // expected() changed: look at the pending CSRs again now
//   await approver.stop();
//
// Two watches with the field selector `spec.signerName=<signer>` (certificates/v1 types.go: "List/watch
// requests for CertificateSigningRequests can filter on this field"), so the agent never even reads
// CSRs of other signers; the policy still refuses them should a server ignore the selector.
// `expected()` is re-read every `recheckIntervalMs`: when what is known about the node changes (its
// Node appeared, new addresses), the CSRs left pending are evaluated again. A CSR whose approval failed
// (API errors beyond the request's own retries) is tried again on that recheck, with backoff.
import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import type { Logger } from '../log';
import { CsrDeniedError } from '../cluster/approval';
import { R } from '../cluster/resources';
import { withRetry, type RetryOptions } from '../cluster/retry';
import { abortableSleep, type Sleep } from '../util/backoff';
import { isNotFound, type ClusterClient, type KubeObject, type WatchEvent } from '../cluster/types';
import { CLIENT_SIGNER, SERVING_SIGNER, decidedState, evaluateCsr, issuedKind, type CsrDecision, type ExpectedNode } from './policy';

export const APPROVAL_REASON = 'SNOReconfigureApprove';
/** Backoff cap for retrying a failed approval, in recheck intervals (2 s each by default: at most ~1 min). */
const MAX_RETRY_TICKS = 30;

export interface CsrApproverOptions {
  client: ClusterClient;
  /** What the node must look like; called for every evaluation (cheap, no I/O expected). */
  expected: () => ExpectedNode;
  log: Logger;
  /** Aborting stops the approver (like stop()). */
  signal: AbortSignal;
  /** Called for every evaluation (approve or not), before any approval is sent. */
  onDecision?: (name: string, decision: CsrDecision) => void;
  /** How often expected() is re-read to re-evaluate pending CSRs (default 2000 ms). */
  recheckIntervalMs?: number;
  /**
   * Flood guard: approvals per approver (default 10). The kubelet needs one CSR of each kind, a few more
   * when it restarts; beyond this the approver stops approving and says so.
   */
  maxApprovals?: number;
  /** Retry of transient approval failures (503, resets); tests pass a fast sleep. */
  retry?: Pick<RetryOptions, 'attempts' | 'initialDelayMs' | 'maxDelayMs' | 'sleep'>;
  /** Delay before re-opening a watch that failed with a non-transient error (default 5000 ms). */
  watchRestartDelayMs?: number;
  sleep?: Sleep;
}

export interface PendingCsr {
  name: string;
  kind: CsrDecision['kind'];
  reason: string;
}

export interface CsrApprover {
  /** Ends the watches and waits for them (and any approval in flight) to finish. */
  stop(): Promise<void>;
  approvedNames(): string[];
  /** Whether an approved CSR carrying status.certificate exists for this node, per kind. */
  issued(): { client: boolean; serving: boolean };
  /** Pending kubelet CSRs that were not approved, with the policy's reason. */
  pending(): PendingCsr[];
  /** Resolves true once both certificates were issued; false when the approver stopped first. */
  whenIssued(): Promise<boolean>;
  /** `listener` runs after every approval and every newly issued certificate; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
  /** What expected() returns has changed: evaluate the known CSRs again now instead of at the next recheck. */
  reevaluate(): void;
}

type Csr = V1CertificateSigningRequest & KubeObject;

export function startCsrApprover(opts: CsrApproverOptions): CsrApprover {
  const { client, log } = opts;
  const controller = new AbortController();
  const signal = controller.signal;
  const onOuterAbort = () => controller.abort(opts.signal.reason);
  if (opts.signal.aborted) controller.abort(opts.signal.reason);
  else opts.signal.addEventListener('abort', onOuterAbort, { once: true });
  const sleep = opts.sleep ?? abortableSleep;
  const maxApprovals = opts.maxApprovals ?? 10;

  const recheckMs = opts.recheckIntervalMs ?? 2000;
  const latest = new Map<string, Csr>();
  /** CSRs whose approval failed (not denied, not gone): retried on the recheck tick `dueTick`. */
  const failedApprovals = new Map<string, { failures: number; dueTick: number }>();
  let tick = 0;
  const evaluatedAt = new Map<string, string>();
  const leftPending = new Map<string, PendingCsr>();
  const approved: string[] = [];
  const issuedState = { client: false, serving: false };
  let floodWarned = false;
  let chain: Promise<void> = Promise.resolve();
  let resolveIssued!: (v: boolean) => void;
  const issuedPromise = new Promise<boolean>((r) => { resolveIssued = r; });
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of listeners) l();
  };

  const readExpected = (): { node: ExpectedNode; key: string } | undefined => {
    try {
      const node = opts.expected();
      return { node, key: JSON.stringify({ ...node, notBefore: node.notBefore?.toISOString() }) };
    } catch (err) {
      log.error({ err: (err as Error).message }, 'cannot determine the expected node identity; CSRs wait');
      return undefined;
    }
  };

  const noteIssued = (csr: Csr, node: ExpectedNode) => {
    const kind = issuedKind(csr, node);
    if (!kind || issuedState[kind]) return;
    issuedState[kind] = true;
    log.info({ csr: csr.metadata?.name, kind }, `the node's ${kind} certificate was issued`);
    if (issuedState.client && issuedState.serving) resolveIssued(true);
    notify();
  };

  const evaluate = async (csr: Csr): Promise<void> => {
    const name = csr.metadata?.name;
    if (!name || signal.aborted) return;
    const exp = readExpected();
    if (!exp) return;
    noteIssued(csr, exp.node);
    // Events queued while an approval was in flight still show the CSR pending: it is done.
    if (approved.includes(name)) return;
    const key = `${csr.metadata?.resourceVersion ?? ''}|${exp.key}`;
    if (evaluatedAt.get(name) === key) return;
    evaluatedAt.set(name, key);

    const decision = evaluateCsr(csr, exp.node);
    opts.onDecision?.(name, decision);
    const fields = { csr: name, kind: decision.kind, signer: csr.spec?.signerName, requestor: csr.spec?.username };
    if (!decision.approve) {
      if (decidedState(csr)) {
        leftPending.delete(name);
        log.debug({ ...fields, reason: decision.reason }, 'CSR already decided');
      } else {
        leftPending.set(name, { name, kind: decision.kind, reason: decision.reason });
        log.warn({ ...fields, reason: decision.reason }, 'CSR left pending');
      }
      return;
    }
    if (approved.length >= maxApprovals) {
      const reason = `not approved: this run already approved ${approved.length} CSRs (flood guard), which is more than a kubelet needs`;
      leftPending.set(name, { name, kind: decision.kind, reason });
      if (!floodWarned) log.warn({ ...fields, approved }, 'CSR flood guard reached; further CSRs are left pending');
      floodWarned = true;
      return;
    }
    try {
      await withRetry(() => client.approveCsr(name, APPROVAL_REASON, `Approved by sno-reconfigure: ${decision.reason}`), {
        signal,
        ...opts.retry,
        onRetry: (err, attempt, delayMs) => log.warn({ csr: name, attempt, delayMs, err: (err as Error).message }, 'CSR approval failed; retrying'),
      });
      approved.push(name);
      leftPending.delete(name);
      failedApprovals.delete(name);
      log.info({ ...fields, reason: decision.reason }, 'CSR approved');
      notify();
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof CsrDeniedError) {
        leftPending.delete(name);
        log.warn({ ...fields, err: err.message }, 'CSR was denied by someone else; cannot approve');
      } else if (isNotFound(err)) {
        log.info({ csr: name }, 'CSR disappeared before it could be approved');
      } else {
        // Forget the evaluation and schedule a retry on the periodic recheck, with backoff: without it a CSR
        // whose approval PUT met a 503 stayed pending until its next event, which a kubelet may never send.
        evaluatedAt.delete(name);
        leftPending.set(name, { name, kind: decision.kind, reason: `approval failed: ${(err as Error).message}` });
        const failures = (failedApprovals.get(name)?.failures ?? 0) + 1;
        const waitTicks = Math.min(MAX_RETRY_TICKS, 2 ** (failures - 1));
        failedApprovals.set(name, { failures, dueTick: tick + waitTicks });
        log.warn({ ...fields, err: (err as Error).message, failures, retryInMs: waitTicks * recheckMs }, 'CSR approval failed; trying again later');
      }
    }
  };

  /** Serializes all evaluations: the two watches and the recheck timer never approve concurrently. */
  const enqueue = (task: () => Promise<void>): Promise<void> => {
    const next = chain.then(task, task);
    chain = next.catch(() => undefined);
    return next;
  };

  const onEvent = (event: WatchEvent<Csr>): Promise<void> | void => {
    const name = event.object.metadata?.name;
    if (event.type === 'BOOKMARK' || !name) return;
    if (event.type === 'DELETED') {
      latest.delete(name);
      evaluatedAt.delete(name);
      leftPending.delete(name);
      failedApprovals.delete(name);
      return;
    }
    latest.set(name, event.object);
    return enqueue(() => evaluate(event.object));
  };

  const watchSigner = async (signer: string): Promise<void> => {
    while (!signal.aborted) {
      try {
        await client.watch<Csr>(R.csrs, { fieldSelector: `spec.signerName=${signer}`, signal }, onEvent);
      } catch (err) {
        if (signal.aborted) return;
        const delay = opts.watchRestartDelayMs ?? 5000;
        log.warn({ signer, err: (err as Error).message, retryInMs: delay }, 'CSR watch failed; restarting it');
        try {
          await sleep(delay, signal);
        } catch {
          return;
        }
      }
    }
  };

  let lastKey = readExpected()?.key;
  /** Evaluates every known CSR again when expected() changed; true when it did. */
  const evaluateIfExpectedChanged = (): boolean => {
    const exp = readExpected();
    if (!exp || exp.key === lastKey) return false;
    lastKey = exp.key;
    log.debug('expected node identity changed; re-evaluating known CSRs');
    for (const csr of latest.values()) void enqueue(() => evaluate(csr));
    return true;
  };
  const recheck = setInterval(() => {
    tick++;
    if (evaluateIfExpectedChanged()) return;
    for (const [name, f] of failedApprovals) {
      const csr = latest.get(name);
      if (!csr) failedApprovals.delete(name);
      else if (tick >= f.dueTick) {
        // Not again until this attempt fails (which schedules the next one) or succeeds.
        f.dueTick = Infinity;
        log.info({ csr: name, failures: f.failures }, 'trying again to approve a CSR whose approval failed');
        void enqueue(() => evaluate(csr));
      }
    }
  }, recheckMs);
  recheck.unref();

  const watches = Promise.all([watchSigner(CLIENT_SIGNER), watchSigner(SERVING_SIGNER)]);
  let stopped: Promise<void> | undefined;
  const finish = async () => {
    await watches;
    await chain;
    resolveIssued(issuedState.client && issuedState.serving);
  };
  const stop = (): Promise<void> => {
    if (stopped) return stopped;
    let release!: () => void;
    stopped = new Promise<void>((r) => { release = r; });
    clearInterval(recheck);
    opts.signal.removeEventListener('abort', onOuterAbort);
    if (!signal.aborted) controller.abort(new Error('CSR approver stopped'));
    void finish().then(release, release);
    return stopped;
  };
  signal.addEventListener('abort', () => { void stop(); }, { once: true });

  return {
    stop,
    approvedNames: () => [...approved],
    issued: () => ({ ...issuedState }),
    pending: () => [...leftPending.values()],
    whenIssued: () => issuedPromise,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    reevaluate: () => {
      if (!signal.aborted) evaluateIfExpectedChanged();
    },
  };
}
