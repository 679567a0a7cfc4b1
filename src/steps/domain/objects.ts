// Small helpers for the objects the cluster steps read and write: typed shapes of the fields we touch,
// secret data encoding, stable comparison, and read-modify-write with optimistic concurrency.
import { isDeepStrictEqual } from 'node:util';
import type { V1Secret } from '@kubernetes/client-node';
import { isTransient, retryOnConflict } from '../../cluster/retry';
import { backoffDelay } from '../../engine/clock';
import type { Step, StepContext } from '../../engine/step';
import type { ClusterClient, KubeObject, ResourceType } from '../../cluster/types';
import { R } from '../../cluster/resources';
import { StepError } from '../../engine/step';
import { MANAGED_BY, MANAGED_BY_LABEL } from './names';

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

export function tlsSecret(namespace: string, name: string, certPem: string, keyPem: string): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(certPem), 'tls.key': b64(keyPem) },
  };
}

export function isManagedByUs(obj: KubeObject | undefined): boolean {
  return obj?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
}

export type EnsureResult = 'created' | 'updated' | 'unchanged';

/**
 * Creates `desired` or updates the existing secret's type/data/our label (re-read on every 409). A secret of
 * another type cannot be changed in place (type is immutable): it is deleted and re-created.
 */
export async function ensureSecret(client: ClusterClient, desired: Secret): Promise<EnsureResult> {
  const ns = desired.metadata?.namespace ?? '';
  const name = desired.metadata?.name ?? '';
  return retryOnConflict(async () => {
    const current = await client.get<Secret>(R.secrets, name, ns);
    if (!current) {
      await client.create(R.secrets, desired);
      return 'created';
    }
    if (current.type !== desired.type) {
      await client.delete(R.secrets, name, ns);
      await client.create(R.secrets, desired);
      return 'updated';
    }
    if (sameJson(current.data ?? {}, desired.data ?? {}) && isManagedByUs(current)) return 'unchanged';
    await client.update(R.secrets, {
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata?.labels, [MANAGED_BY_LABEL]: MANAGED_BY } },
      data: desired.data,
    });
    return 'updated';
  });
}

/**
 * Read-modify-write of one object: `mutate` gets a fresh copy and returns the object to PUT, or undefined
 * when nothing needs to change. The PUT carries the resourceVersion read, so a concurrent writer makes it
 * fail with 409 and the whole read-modify-write runs again.
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
    if (!current) {
      throw new StepError(`${type.kind} ${namespace ? `${namespace}/` : ''}${name} does not exist`, 'This object is part of every OpenShift cluster; check that the agent talks to the right cluster (--kubeconfig).');
    }
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

/** How long a step rides out an unreachable or restarting API (an SNO kube-apiserver restart takes ~1 min). */
export const API_OUTAGE_BUDGET_MS = 3 * 60_000;

/**
 * Runs an idempotent piece of step work again when the API is briefly unavailable (503, 429, connection
 * refused/reset: isTransient), with capped, jittered backoff on ctx.clock, for at most API_OUTAGE_BUDGET_MS.
 * Every step here re-reads before it writes, so running it again is safe.
 */
export async function rideOutApiOutages<T>(ctx: StepContext, what: string, fn: () => Promise<T>): Promise<T> {
  let giveUpAt: number | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      // The budget counts from the first failure: how long the API has been away, not how long the step ran.
      giveUpAt ??= ctx.clock.now() + API_OUTAGE_BUDGET_MS;
      if (!isTransient(e) || ctx.signal.aborted || ctx.clock.now() >= giveUpAt) throw e;
      const delay = Math.min(backoffDelay(attempt, 1_000, 15_000), Math.max(0, giveUpAt - ctx.clock.now()));
      ctx.log.warn({ err: (e as Error).message, retryInMs: delay }, `${what}: the API is not available; trying again`);
      await ctx.clock.sleep(delay, ctx.signal);
    }
  }
}

/** The step with every phase riding out short API outages (rideOutApiOutages). */
export function resilient(step: Step): Step {
  return {
    ...step,
    plan: (ctx) => rideOutApiOutages(ctx, step.title, () => step.plan(ctx)),
    check: (ctx) => rideOutApiOutages(ctx, step.title, () => step.check(ctx)),
    apply: (ctx) => rideOutApiOutages(ctx, step.title, () => step.apply(ctx)),
    verify: (ctx) => rideOutApiOutages(ctx, step.title, () => step.verify(ctx)),
  };
}
