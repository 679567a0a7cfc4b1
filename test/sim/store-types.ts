// The contract between the simulator's API server (test/sim/apiserver/) and its cluster behaviour
// (test/sim/cluster/): controllers read and write the object store directly, the way in-cluster
// controllers would through the API, and react to its change events.
import type { KubeObject, ResourceType } from '../../src/cluster/types';

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: StoreEventType;
  resource: ResourceType;
  object: KubeObject;
  /** The object before a MODIFIED or DELETED. */
  previous?: KubeObject;
}

/** Who made a request: from the client certificate (CN = user, O = groups) or bearer token. */
export interface Identity {
  user: string;
  groups: string[];
}

export interface SimStore {
  /** Current (latest) resourceVersion of the store, as a string. */
  resourceVersion(): string;
  /** Deep copies; undefined when absent. */
  get(resource: ResourceType, name: string, namespace?: string): KubeObject | undefined;
  list(resource: ResourceType, namespace?: string): KubeObject[];
  /** Assigns uid, resourceVersion, creationTimestamp (and generation); validates against the CRD schema for OpenShift types. Throws SimApiError. */
  create(resource: ResourceType, obj: KubeObject, actor?: Identity): KubeObject;
  /** Conditional on metadata.resourceVersion when given (409 Conflict). Validates. Bumps generation when spec changes. */
  update(resource: ResourceType, obj: KubeObject, actor?: Identity): KubeObject;
  /** Writes only `.status` (the status subresource), as controllers do. */
  updateStatus(resource: ResourceType, obj: KubeObject): KubeObject;
  delete(resource: ResourceType, name: string, namespace?: string): boolean;
  subscribe(listener: (event: StoreEvent) => void): () => void;
  /**
   * Mutating admission, run synchronously inside create/update before validation and storage (e.g. the
   * route host generated from the apps domain, as openshift-apiserver does). Returns an unregister function.
   */
  addAdmission(hook: AdmissionHook): () => void;
  /** Persist to / restore from a JSON file so the "cluster" survives a simulated power cut (etcd would). */
  saveTo(path: string): void;
}

export type AdmissionHook = (op: 'CREATE' | 'UPDATE', resource: ResourceType, obj: KubeObject, previous: KubeObject | undefined) => void;

/** An error the simulator answers with a real `Status` object. */
export class SimApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: { name?: string; group?: string; kind?: string; causes?: { field: string; message: string; reason?: string }[] },
  ) {
    super(message);
    this.name = 'SimApiError';
  }
}

/** Injectable API faults (DESIGN.md section 7). All durations are in simulated-clock milliseconds. */
export interface ApiFaults {
  /** Answer 503 to every request until this time (Date.now()-based, already scaled). */
  unavailableUntil?: number;
  /** Destroy connections (TCP reset) without answering until this time. */
  resetUntil?: number;
  /** Delay every answer by this much. */
  slowMs?: number;
  /** The next N writes (PUT/PATCH/POST) get 409 Conflict. */
  conflictsOnNextWrites?: number;
  /** The API never comes up (readyz never ok, connections refused). */
  neverUp?: boolean;
}
