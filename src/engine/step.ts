// What a step is: check (already done?) / apply / verify, idempotent, journaled by the runner
// (DESIGN.md section 1 and 6). Steps only touch the node through ctx.host and the cluster through
// ctx.cluster(), which is what makes them testable against a temp root, the simulator and real systemd.
import type { Logger } from '../log';
import type { Host } from '../host/host';
import type { BannerContent } from '../host/banner';
import type { ClusterClient } from '../cluster/types';
import type { LoadedSiteConfig, ResolvedSiteConfig } from '../siteconfig/types';
import type { Report } from './report';

export type StepName =
  | 'ssh-early'
  | 'network'
  | 'clock'
  | 'kubelet'
  | 'api'
  | 'csr'
  | 'domain'
  | 'pool-hold'
  | 'pull-secret'
  | 'mirrors'
  | 'trust'
  | 'proxy'
  | 'ssh-key'
  | 'chrony'
  | 'node-labels'
  | 'kubeadmin'
  | 'manifests'
  | 'pool-release'
  | 'settle'
  | 'finish';

/** One thing a step changed (or, in a plan, would change) — listed in the report. */
export interface Change {
  /** e.g. 'file', 'unit', 'Secret', 'APIServer', 'Route', 'network' */
  kind: string;
  /** e.g. 'openshift-config/pull-secret', '/etc/issue.d/50-sno-reconfigure.issue' */
  target: string;
  /** `leave`: in a plan, something the run deliberately does not change (with why in `detail`). */
  action: 'create' | 'update' | 'delete' | 'replace' | 'apply' | 'start' | 'unmask' | 'enable' | 'disable' | 'approve' | 'write' | 'leave';
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
  /** Node path of the node-local admin kubeconfig the agent talks to the API with. */
  readonly kubeconfig: string;
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
  /** The report of this run as the journal has it now. */
  report(): Report;
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

/**
 * What one step learns and a later one needs, persisted in the journal so a resumed run still has it. Each
 * fact has one writer (named beside it); the others only read it.
 */
export interface RunFacts {
  /** The node's name (runner, from the factory baseline or the host name). */
  nodeName?: string;
  /** The stable internal IPs added at the factory (runner, from the baseline). */
  internalAddresses?: string[];
  /** Where the node's own API and ingress listen, for verifying the certificates they serve (runner). */
  endpoints?: { api: Endpoint; ingress: Endpoint };
  /** When this run started kubelet, ISO 8601 (kubelet step): CSRs filed before it are not this run's. */
  kubeletStartedAt?: string;
  /** Every IP the node may put in its serving certificate: site network, current addresses, internal IP (csr step). */
  nodeAddresses?: string[];
  /** The master pool was unpaused after the cluster steps wrote its inputs (pool-release step). */
  poolReleased?: boolean;
  /** The agent paused the master pool and has not unpaused it yet: the journal's word, whatever the pool's annotations say. */
  poolHeld?: boolean;
  /** The cluster's name (api step, from the DNS config). */
  clusterName?: string;
  /** The cluster's domain before the change: DNS cluster spec.baseDomain minus the cluster name (api step). */
  oldBaseDomain?: string;
  /** The OpenShift version, e.g. 4.14.12 (api step, from ClusterVersion). */
  clusterVersion?: string;
  /** The hand-off kubeconfig for the new API name, node path, and its client certificate's NotAfter (domain step). */
  newApiKubeconfig?: string;
  newApiKubeconfigExpires?: string;
  /** The certificates serving the new names, with their expiry (domain step; renew-certificates updates them). */
  certificates?: { role: string; secret: string; names: string[]; notAfter: string; source: 'issued' | 'provided' }[];
  /**
   * The node's clock when the clock step checked it: chronyd's source and remaining offset (seconds, positive
   * when ahead), and how far it was set right (seconds, positive when it was behind) (clock step).
   */
  clock?: { checkedAt: string; synchronised: boolean; source?: string; offsetSeconds?: number; correctedSeconds?: number };
  /** The rollouts the cluster steps started, for settle (`rollouts.ts`). */
  expectedRollouts?: string[];
}

/**
 * A failure a technician can act on: what went wrong and what to do. A StepError that wraps another error
 * keeps it as `cause` (ES2022 ErrorOptions), so the log still sees the ApiError or errno beneath the sentence.
 */
export interface StepErrorOptions extends ErrorOptions {
  /** What the office must do when what `remedy` says at the node does not help (src/util/remedy.ts). */
  office?: string;
  /** The agent tries again by itself (the service restarts): which attempt this was, of how many. */
  attempt?: { n: number; of: number };
}

export class StepError extends Error {
  readonly office?: string;
  readonly attempt?: { n: number; of: number };

  constructor(
    message: string,
    /** What the person at the node can do. */
    readonly remedy: string,
    /** retryable: the service may retry it after a restart (systemd Restart=on-failure). */
    readonly retryable = true,
    options?: StepErrorOptions,
  ) {
    super(message, options);
    this.name = 'StepError';
    if (options?.office) this.office = options.office;
    if (options?.attempt) this.attempt = options.attempt;
  }
}

/**
 * The site-config itself is wrong for this site (e.g. its network never verified, its cluster name is not
 * this cluster's): the agent stops using it and waits for corrected media instead of retrying forever.
 */
export class ConfigRejectedError extends StepError {
  constructor(
    message: string,
    remedy: string,
    options?: StepErrorOptions & {
      /** Refused for a cause outside the file (a cable): the same config may be tried again on request. */
      retryOnRequest?: boolean;
    },
  ) {
    super(message, remedy, false, options);
    this.name = 'ConfigRejectedError';
    this.retryOnRequest = options?.retryOnRequest ?? false;
  }

  readonly retryOnRequest: boolean;
}

export interface Step {
  readonly name: StepName;
  /** Human title, e.g. "Apply the site network". */
  readonly title: string;
  /** true for steps that only touch the node: `plan` details them even when the API is not up yet. */
  readonly nodeOnly?: true;
  /** false when the site-config does not ask for this step's change (no spec.network, no mirrors …): "not requested". */
  requested?(site: ResolvedSiteConfig): boolean;
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
   * Called once the site network is in place (when the run begins, without a network step), for every later step
   * not done yet: starts slow work the step will need that changes nothing (generating keys), so it is ready by the
   * step's turn. Not awaited; must not throw.
   */
  prepare?(ctx: StepContext): void;
  /** Called, for every step done, when the run stops on a failure: undoes what must not outlive the run. Must not throw. */
  onRunFailed?(ctx: StepContext): Promise<void>;
}
