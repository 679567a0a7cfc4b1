// The contract between the agent's steps and the only code that talks HTTP to the kube-apiserver.
// Types come from @kubernetes/client-node as `import type` (0 bytes in the bundle; runtime-libs.md §1).
import type { V1ObjectMeta, V1Status } from '@kubernetes/client-node';

/** A Kubernetes resource type: where it lives in the REST API. */
export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectList<T> {
  items: T[];
  resourceVersion: string;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export type PatchType = 'merge' | 'json' | 'strategic';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface WatchOptions extends ListOptions {
  /** Aborting ends the watch (the promise of `watch` resolves). */
  signal: AbortSignal;
}

export interface RequestOptions {
  /** Per-request timeout; the default is the client's. */
  timeoutMs?: number;
}

/** A non-2xx answer from the API server, with the Status object it sent when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
    readonly status?: V1Status,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

// One predicate per answer, beside the error they read, as apimachinery's IsNotFound/IsConflict/IsGone
// (kubernetes/apimachinery master, pkg/api/errors/errors.go): code outside src/cluster/ asks these instead
// of comparing status codes (eslint.config.mjs keeps it so).

/** 404 NotFound. */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 404;
}

/** 409: Conflict (a stale resourceVersion) or AlreadyExists. */
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 409;
}

/** 410 Gone: a watch's or list's resourceVersion has left etcd's window. */
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && err.statusCode === 410;
}

/** The API could not be reached at all (refused, reset, TLS failure, timeout). */
export class ConnectionError extends Error {
  constructor(message: string, readonly code?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

export interface ClusterClient {
  /** The API server URL from the kubeconfig. */
  readonly server: string;
  /**
   * GET /readyz: true only on 200 "ok"; `unauthorized` when the API refused the credential (401), and
   * `refusedForGood` when that credential was the last one and its certificate has expired. Never throws.
   */
  readyz(opts?: RequestOptions): Promise<{ ready: boolean; detail: string; unauthorized?: boolean; refusedForGood?: boolean }>;
  /** undefined on 404. */
  get<T extends KubeObject>(type: ResourceType, name: string, namespace?: string, opts?: RequestOptions): Promise<T | undefined>;
  list<T extends KubeObject>(type: ResourceType, opts?: ListOptions & RequestOptions): Promise<ObjectList<T>>;
  create<T extends KubeObject>(type: ResourceType, obj: T, opts?: RequestOptions): Promise<T>;
  /** PUT; the object's metadata.resourceVersion makes it conditional (409 on conflict). */
  update<T extends KubeObject>(type: ResourceType, obj: T, opts?: RequestOptions): Promise<T>;
  patch<T extends KubeObject>(type: ResourceType, name: string, patch: unknown, patchType: PatchType, namespace?: string, opts?: RequestOptions): Promise<T>;
  /** false when it did not exist. */
  delete(type: ResourceType, name: string, namespace?: string, opts?: RequestOptions): Promise<boolean>;
  /**
   * Watches from `resourceVersion` (or from a fresh list when it is missing or expired: 410 Gone
   * re-lists and emits what it finds as ADDED). Reconnects on dropped streams until `signal` aborts.
   */
  watch<T extends KubeObject>(type: ResourceType, opts: WatchOptions & { resourceVersion?: string }, onEvent: (event: WatchEvent<T>) => void | Promise<void>): Promise<void>;
  /** The resource types the API serves for `apiVersion` ("v1", "group/version"), from discovery; undefined when it serves none. */
  resourceTypes(apiVersion: string, opts?: RequestOptions): Promise<ResourceType[] | undefined>;
  /** PUT .../certificatesigningrequests/<name>/approval with an Approved condition; retries 409 by re-reading. */
  approveCsr(name: string, reason: string, message: string): Promise<void>;
}
