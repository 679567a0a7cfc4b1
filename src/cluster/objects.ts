// Helpers for the objects every cluster step reads and writes: the label that marks the agent's own
// objects, secret data encoding, order-blind comparison, status conditions, and read-modify-write with
// optimistic concurrency. They serve every step, as controller-runtime keeps CreateOrUpdate in
// controllerutil apart from any controller (kubernetes-sigs/controller-runtime main,
// pkg/controller/controllerutil/controllerutil.go).
import { isDeepStrictEqual } from 'node:util';
import type { V1Secret } from '@kubernetes/client-node';
import { retryOnConflict } from './retry';
import { ApiError, type ClusterClient, type KubeObject, type ResourceType } from './types';

/** Label on every object the agent creates, so it can tell its own objects from anyone else's. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'sno-reconfigure';

export function isManagedByUs(obj: KubeObject | undefined): boolean {
  return obj?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
}

export type Secret = V1Secret & KubeObject;

export function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export function unb64(data: string | undefined): string | undefined {
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

/** Deep equality that ignores key order (JSON data from the API comes in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(normalize(a), normalize(b));
}

function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, normalize(x)]));
  }
  return v;
}

export interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export function condition(obj: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

export function isTrue(obj: { status?: { conditions?: Condition[] } } | undefined, type: string): boolean {
  return condition(obj, type)?.status === 'True';
}

export type EnsureResult = 'created' | 'updated' | 'unchanged';

/** updateObject found no object to update (a 404, naming the object for people). */
export class MissingObjectError extends ApiError {
  constructor(type: ResourceType, name: string, namespace: string | undefined) {
    super(404, 'NotFound', `${type.kind} ${namespace ? `${namespace}/` : ''}${name} does not exist`);
    this.name = 'MissingObjectError';
  }
}

/**
 * Read-modify-write of one object: `mutate` gets a fresh copy and returns the object to PUT, or undefined
 * when nothing needs to change. The PUT carries the resourceVersion read, so a concurrent writer makes it
 * fail with 409 and the whole read-modify-write runs again. A missing object is a MissingObjectError unless
 * it is `optional`.
 */
export async function updateObject<T extends KubeObject>(
  client: ClusterClient,
  type: ResourceType,
  name: string,
  namespace: string | undefined,
  mutate: (current: T) => T | undefined,
  opts: { optional?: boolean } = {},
): Promise<{ changed: boolean; before?: T; after?: T }> {
  return retryOnConflict(async () => {
    const current = await client.get<T>(type, name, namespace);
    if (!current && opts.optional) return { changed: false };
    if (!current) throw new MissingObjectError(type, name, namespace);
    const next = mutate(structuredClone(current));
    if (!next || sameJson(next, current)) return { changed: false, before: current, after: current };
    const after = await client.update(type, next);
    return { changed: true, before: current, after };
  });
}

/**
 * Creates `desired` when it does not exist, else read-modify-writes it with `mutate` (like updateObject).
 * Every 409 re-reads and runs again with backoff (retryOnConflict): a create answered 409 AlreadyExists
 * (someone created it meanwhile) then updates what is there; a create answered 409 Conflict is tried again.
 */
export async function createOrUpdate<T extends KubeObject>(
  client: ClusterClient,
  type: ResourceType,
  desired: T,
  mutate: (current: T) => T | undefined,
): Promise<EnsureResult> {
  const name = desired.metadata?.name ?? '';
  const namespace = desired.metadata?.namespace;
  return retryOnConflict(async () => {
    const current = await client.get<T>(type, name, namespace);
    if (!current) {
      await client.create<T>(type, desired);
      return 'created';
    }
    const next = mutate(structuredClone(current));
    if (!next || sameJson(next, current)) return 'unchanged';
    await client.update(type, next);
    return 'updated';
  });
}
