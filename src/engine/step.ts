// What a step is: check (already done?) / apply / verify, idempotent, journaled by the runner
// (DESIGN.md section 1 and 6). Steps only touch the node through ctx.host and the cluster through
// ctx.cluster(), which is what makes them testable against a temp root, the simulator and real systemd.
import type { Logger } from '../log';
import type { Host } from '../host/host';
import type { BannerContent } from '../host/banner';
import type { ClusterClient } from '../cluster/types';
import type { LoadedSiteConfig } from '../siteconfig/types';

export type StepName =
  | 'network'
  | 'kubelet'
  | 'api'
  | 'csr'
  | 'domain'
  | 'pull-secret'
  | 'mirrors'
  | 'trust'
  | 'settle'
  | 'finish';

/** One thing a step changed (or, in a plan, would change) — listed in the report. */
export interface Change {
  /** e.g. 'file', 'unit', 'Secret', 'APIServer', 'Route', 'network' */
  kind: string;
  /** e.g. 'openshift-config/pull-secret', '/etc/issue.d/50-sno-reconfigure.issue' */
  target: string;
  action: 'create' | 'update' | 'delete' | 'replace' | 'apply' | 'start' | 'unmask' | 'enable' | 'disable' | 'approve' | 'write';
  detail?: string;
}

/** Clock seam: tests and the simulator's time scaling run waits faster without changing the logic. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A bounded wait: every wait in the agent has one (DESIGN.md section 1). */
export interface Deadline {
  readonly label: string;
  readonly totalMs: number;
  elapsedMs(): number;
  remainingMs(): number;
  expired(): boolean;
  /** "3m12s of 30m" */
  progress(): string;
}

export interface Progress {
  /** A short human line for `systemctl status` (STATUS=), the banner and `status`. */
  status(text: string): void;
  /** Ask systemd for more start time before a long wait (EXTEND_TIMEOUT_USEC). */
  extendTimeout(ms: number): void;
  /** The console banner now, after every update queued before it (the run's outcome). */
  banner(content: BannerContent): Promise<void>;
}

export interface StepContext {
  readonly host: Host;
  readonly log: Logger;
  readonly site: LoadedSiteConfig;
  /** Node path of the state directory (journal, report, backups, kubeconfig hand-off). */
  readonly stateDir: string;
  readonly clock: Clock;
  readonly progress: Progress;
  readonly signal: AbortSignal;
  /** The cluster client for the node-local kubeconfig; created on first use. */
  cluster(): Promise<ClusterClient>;
  deadline(label: string, totalMs: number): Deadline;
  /** Data this step keeps across restarts (persisted in the journal with the step's state). */
  readonly data: Record<string, unknown>;
  /** Persist `data` now (e.g. after a backup was written, before the change it protects). */
  save(): Promise<void>;
  /** Record a change for the report. */
  changed(change: Change): void;
  /** Record a warning for the report and the journal. */
  warn(message: string): void;
  /** Shared values between steps of one run (e.g. node name, expected addresses). */
  readonly facts: RunFacts;
  /** Work that keeps running after its step finished (the CSR approver), stopped when the run ends. */
  readonly background: BackgroundTasks;
}

export interface BackgroundTask {
  stop(): Promise<void>;
}

export interface BackgroundTasks {
  get<T extends BackgroundTask>(name: string): T | undefined;
  add<T extends BackgroundTask>(name: string, task: T): T;
}

export interface Endpoint {
  host: string;
  port: number;
}

export interface RunFacts {
  nodeName?: string;
  /** Every IP the node may put in its serving certificate (site network, current addresses, internal IP). */
  nodeAddresses?: string[];
  clusterName?: string;
  /** The cluster's domain before the change (DNS cluster spec.baseDomain minus the cluster name). */
  oldBaseDomain?: string;
  clusterVersion?: string;
  /** Where the node's own API and ingress listen, for verifying the certificates they serve. */
  endpoints?: { api: Endpoint; ingress: Endpoint };
  /** The node-local admin kubeconfig (node path). */
  kubeconfig?: string;
  /** The hand-off kubeconfig for the new API name (node path) and its client certificate's NotAfter (ISO). */
  newApiKubeconfig?: string;
  newApiKubeconfigExpires?: string;
  [key: string]: unknown;
}

/** A failure a technician can act on: what went wrong and what to do. */
export class StepError extends Error {
  constructor(
    message: string,
    readonly remedy: string,
    /** retryable: the service may retry it after a restart (systemd Restart=on-failure). */
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

/**
 * The site-config itself is wrong for this site (e.g. its network never verified, its cluster name is not
 * this cluster's): the agent stops using it and waits for corrected media instead of retrying forever.
 */
export class ConfigRejectedError extends StepError {
  constructor(message: string, remedy: string) {
    super(message, remedy, false);
    this.name = 'ConfigRejectedError';
  }
}

export interface Step {
  readonly name: StepName;
  /** Human title, e.g. "Apply the site network". */
  readonly title: string;
  /** What apply would change, without changing anything (`plan`, `run --dry-run`). */
  plan(ctx: StepContext): Promise<Change[]>;
  /** true when the desired state is already in place (then apply is skipped). */
  check(ctx: StepContext): Promise<boolean>;
  apply(ctx: StepContext): Promise<void>;
  /** Throws StepError when the result is not as intended. */
  verify(ctx: StepContext): Promise<void>;
  /** Called instead of the step when the journal says it is done and the run continues past it (restart background work). */
  resume?(ctx: StepContext): Promise<void>;
  /**
   * Called when the run begins, for every step not done yet: starts slow work the step will need that
   * changes nothing (generating keys), so it is ready by the step's turn. Not awaited; must not throw.
   */
  prepare?(ctx: StepContext): void;
}
