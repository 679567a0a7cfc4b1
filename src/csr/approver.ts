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
  return new KubeletCsrApprover(opts);
}

/** What to do with a CSR the policy has just evaluated. */
export type Disposition = 'approve' | 'leave-pending' | 'already-decided' | 'flood-guard';

/** The policy's answer, whether someone else already decided the CSR, and the flood guard, in one place. */
export function dispositionOf(decision: Pick<CsrDecision, 'approve'>, alreadyDecided: boolean, approvedSoFar: number, maxApprovals: number): Disposition {
  if (!decision.approve) return alreadyDecided ? 'already-decided' : 'leave-pending';
  return approvedSoFar >= maxApprovals ? 'flood-guard' : 'approve';
}

/** Recheck ticks to wait before the next attempt after `failures` failed approvals: 1, 2, 4, … up to MAX_RETRY_TICKS. */
export function retryDelayTicks(failures: number): number {
  return Math.min(MAX_RETRY_TICKS, 2 ** (failures - 1));
}

/** What a recheck tick does with a CSR whose approval failed. */
export function failedApprovalAction(stillWatched: boolean, tick: number, dueTick: number): 'forget' | 'retry' | 'wait' {
  if (!stillWatched) return 'forget';
  return tick >= dueTick ? 'retry' : 'wait';
}

/** An approval that failed: someone denied the CSR, it is gone, or the API failed (then it is tried again later). */
function failureKind(err: unknown): 'denied' | 'gone' | 'api' {
  if (err instanceof CsrDeniedError) return 'denied';
  return isNotFound(err) ? 'gone' : 'api';
}

class KubeletCsrApprover implements CsrApprover {
  private readonly opts: CsrApproverOptions;
  private readonly log: Logger;
  /** Aborted by stop() or by the caller's signal; ends the watches and any approval retry. */
  private readonly controller = new AbortController();
  private readonly recheckMs: number;
  private readonly maxApprovals: number;
  /** The newest version of every CSR the watches reported. */
  private readonly latest = new Map<string, Csr>();
  /** resourceVersion and expected() key each CSR was last evaluated at: evaluated once per change. */
  private readonly evaluatedAt = new Map<string, string>();
  /** CSRs whose approval failed (not denied, not gone): retried on the recheck tick `dueTick`. */
  private readonly failedApprovals = new Map<string, { failures: number; dueTick: number }>();
  private readonly leftPending = new Map<string, PendingCsr>();
  private readonly approved: string[] = [];
  private readonly issuedState = { client: false, serving: false };
  private readonly listeners = new Set<() => void>();
  private readonly issuedPromise: Promise<boolean>;
  private resolveIssued!: (issued: boolean) => void;
  private tick = 0;
  private floodWarned = false;
  /** Serializes all evaluations: the two watches and the recheck timer never approve concurrently. */
  private chain: Promise<void> = Promise.resolve();
  private lastExpectedKey: string | undefined;
  private readonly recheck: NodeJS.Timeout;
  private readonly watches: Promise<void[]>;
  private stopped: Promise<void> | undefined;
  private readonly onOuterAbort = () => this.controller.abort(this.opts.signal.reason);

  constructor(opts: CsrApproverOptions) {
    this.opts = opts;
    this.log = opts.log;
    this.recheckMs = opts.recheckIntervalMs ?? 2000;
    this.maxApprovals = opts.maxApprovals ?? 10;
    this.issuedPromise = new Promise<boolean>((resolve) => { this.resolveIssued = resolve; });
    if (opts.signal.aborted) this.controller.abort(opts.signal.reason);
    else opts.signal.addEventListener('abort', this.onOuterAbort, { once: true });
    this.lastExpectedKey = this.readExpected()?.key;
    this.recheck = setInterval(() => this.onRecheckTick(), this.recheckMs);
    this.recheck.unref();
    this.watches = Promise.all([this.watchSigner(CLIENT_SIGNER), this.watchSigner(SERVING_SIGNER)]);
    // A signal aborted before the start never fires 'abort' again: stop now, or whenIssued() would wait for ever.
    if (this.signal.aborted) void this.stop();
    else this.signal.addEventListener('abort', () => { void this.stop(); }, { once: true });
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  stop(): Promise<void> {
    if (this.stopped) return this.stopped;
    clearInterval(this.recheck);
    this.opts.signal.removeEventListener('abort', this.onOuterAbort);
    if (!this.signal.aborted) this.controller.abort(new Error('CSR approver stopped'));
    const finish = async () => {
      await this.watches;
      await this.chain;
      this.resolveIssued(this.issuedState.client && this.issuedState.serving);
    };
    this.stopped = finish().then(() => undefined, () => undefined);
    return this.stopped;
  }

  approvedNames(): string[] {
    return [...this.approved];
  }

  issued(): { client: boolean; serving: boolean } {
    return { ...this.issuedState };
  }

  pending(): PendingCsr[] {
    return [...this.leftPending.values()];
  }

  whenIssued(): Promise<boolean> {
    return this.issuedPromise;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  reevaluate(): void {
    if (!this.signal.aborted) this.evaluateIfExpectedChanged();
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private readExpected(): { node: ExpectedNode; key: string } | undefined {
    try {
      const node = this.opts.expected();
      return { node, key: JSON.stringify({ ...node, notBefore: node.notBefore?.toISOString() }) };
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'cannot determine the expected node identity; CSRs wait');
      return undefined;
    }
  }

  private noteIssued(csr: Csr, node: ExpectedNode): void {
    const kind = issuedKind(csr, node);
    if (!kind || this.issuedState[kind]) return;
    this.issuedState[kind] = true;
    this.log.info({ csr: csr.metadata?.name, kind }, `the node's ${kind} certificate was issued`);
    if (this.issuedState.client && this.issuedState.serving) this.resolveIssued(true);
    this.notify();
  }

  private async evaluate(csr: Csr): Promise<void> {
    const name = csr.metadata?.name;
    if (!name || this.signal.aborted) return;
    const exp = this.readExpected();
    if (!exp) return;
    this.noteIssued(csr, exp.node);
    // Events queued while an approval was in flight still show the CSR pending: it is done.
    if (this.approved.includes(name)) return;
    const key = `${csr.metadata?.resourceVersion ?? ''}|${exp.key}`;
    if (this.evaluatedAt.get(name) === key) return;
    this.evaluatedAt.set(name, key);

    const decision = evaluateCsr(csr, exp.node);
    this.opts.onDecision?.(name, decision);
    const fields = { csr: name, kind: decision.kind, signer: csr.spec?.signerName, requestor: csr.spec?.username };
    switch (dispositionOf(decision, decidedState(csr) !== undefined, this.approved.length, this.maxApprovals)) {
      case 'already-decided':
        this.leftPending.delete(name);
        this.log.debug({ ...fields, reason: decision.reason }, 'CSR already decided');
        return;
      case 'leave-pending':
        this.leftPending.set(name, { name, kind: decision.kind, reason: decision.reason });
        this.log.warn({ ...fields, reason: decision.reason }, `left CSR ${name} pending (signer ${String(fields.signer)}, requested by ${String(fields.requestor)}): ${decision.reason}`);
        return;
      case 'flood-guard': {
        const reason = `not approved: this run already approved ${this.approved.length} CSRs (flood guard), which is more than a kubelet needs`;
        this.leftPending.set(name, { name, kind: decision.kind, reason });
        if (!this.floodWarned) this.log.warn({ ...fields, approved: this.approved }, `this run already approved ${this.approved.length} CSRs, more than a kubelet needs (flood guard): CSR ${name} and any further ones are left pending`);
        this.floodWarned = true;
        return;
      }
      case 'approve':
        await this.approve(name, decision, fields);
    }
  }

  private async approve(name: string, decision: CsrDecision, fields: Record<string, unknown>): Promise<void> {
    try {
      await withRetry(() => this.opts.client.approveCsr(name, APPROVAL_REASON, `Approved by sno-reconfigure: ${decision.reason}`), {
        signal: this.signal,
        ...this.opts.retry,
        onRetry: (err, attempt, delayMs) => this.log.warn({ csr: name, attempt, delayMs, err: (err as Error).message }, `approving CSR ${name} failed`),
      });
      this.approved.push(name);
      this.leftPending.delete(name);
      this.failedApprovals.delete(name);
      this.log.info({ ...fields, reason: decision.reason }, `approved CSR ${name} (${decision.kind}): ${decision.reason}`);
      this.notify();
    } catch (err) {
      if (this.signal.aborted) return;
      switch (failureKind(err)) {
        case 'denied':
          this.leftPending.delete(name);
          this.log.warn({ ...fields, err: (err as Error).message }, `CSR ${name} was denied by someone else; it cannot be approved`);
          return;
        case 'gone':
          this.log.info({ csr: name }, `CSR ${name} disappeared before it could be approved`);
          return;
        case 'api':
          this.scheduleRetry(name, decision, fields, err as Error);
      }
    }
  }

  /**
   * Forgets the evaluation and schedules a retry on the periodic recheck, with backoff: without it a CSR whose
   * approval PUT met a 503 stayed pending until its next event, which a kubelet may never send.
   */
  private scheduleRetry(name: string, decision: CsrDecision, fields: Record<string, unknown>, err: Error): void {
    this.evaluatedAt.delete(name);
    this.leftPending.set(name, { name, kind: decision.kind, reason: `approval failed: ${err.message}` });
    const failures = (this.failedApprovals.get(name)?.failures ?? 0) + 1;
    const waitTicks = retryDelayTicks(failures);
    this.failedApprovals.set(name, { failures, dueTick: this.tick + waitTicks });
    this.log.warn({ ...fields, err: err.message, failures, retryInMs: waitTicks * this.recheckMs }, `approving CSR ${name} failed`);
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.chain.then(task, task);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private onEvent(event: WatchEvent<Csr>): Promise<void> | void {
    const name = event.object.metadata?.name;
    if (event.type === 'BOOKMARK' || !name) return;
    if (event.type === 'DELETED') {
      this.latest.delete(name);
      this.evaluatedAt.delete(name);
      this.leftPending.delete(name);
      this.failedApprovals.delete(name);
      return;
    }
    this.latest.set(name, event.object);
    return this.enqueue(() => this.evaluate(event.object));
  }

  private async watchSigner(signer: string): Promise<void> {
    while (!this.signal.aborted) {
      try {
        await this.opts.client.watch<Csr>(R.csrs, { fieldSelector: `spec.signerName=${signer}`, signal: this.signal }, (event) => this.onEvent(event));
      } catch (err) {
        if (this.signal.aborted) return;
        const delay = this.opts.watchRestartDelayMs ?? 5000;
        this.log.warn({ signer, err: (err as Error).message, retryInMs: delay }, `the watch of ${signer} CSRs ended; restarting it`);
        try {
          await (this.opts.sleep ?? abortableSleep)(delay, this.signal);
        } catch {
          return;
        }
      }
    }
  }

  /** Evaluates every known CSR again when expected() changed; true when it did. */
  private evaluateIfExpectedChanged(): boolean {
    const exp = this.readExpected();
    if (!exp || exp.key === this.lastExpectedKey) return false;
    this.lastExpectedKey = exp.key;
    this.log.debug('expected node identity changed; re-evaluating known CSRs');
    for (const csr of this.latest.values()) void this.enqueue(() => this.evaluate(csr));
    return true;
  }

  private onRecheckTick(): void {
    this.tick++;
    if (this.evaluateIfExpectedChanged()) return;
    for (const [name, failed] of this.failedApprovals) {
      const csr = this.latest.get(name);
      switch (failedApprovalAction(csr !== undefined, this.tick, failed.dueTick)) {
        case 'forget':
          this.failedApprovals.delete(name);
          break;
        case 'retry':
          // Not again until this attempt fails (which schedules the next one) or succeeds.
          failed.dueTick = Infinity;
          this.log.info({ csr: name, failures: failed.failures }, `trying again to approve CSR ${name}`);
          void this.enqueue(() => this.evaluate(csr!));
          break;
        case 'wait':
          break;
      }
    }
  }
}
