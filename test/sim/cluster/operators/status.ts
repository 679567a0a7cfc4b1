// ClusterOperator and componentRoute status writing, the way library-go operators do it: conditions keep
// their lastTransitionTime while their status does not change, and nothing is written when nothing changed
// (a watch on ClusterOperators must not see a stream of no-op updates).
import { R } from '../../../../src/cluster/resources';
import type { KubeObject } from '../../../../src/cluster/types';
import type { SimContext } from '../context';

export type CondStatus = 'True' | 'False' | 'Unknown';

export interface WantedCondition {
  status: CondStatus;
  reason: string;
  message: string;
}

export interface Condition {
  type: string;
  status: CondStatus;
  reason?: string;
  message?: string;
  lastTransitionTime: string;
  [k: string]: unknown;
}

/** Merges wanted conditions into existing ones (order kept, new types appended). */
export function mergeConditions(existing: Condition[], wanted: Record<string, WantedCondition>, nowIso: string): Condition[] {
  const out = existing.map((c) => ({ ...c }));
  for (const [type, w] of Object.entries(wanted)) {
    const cur = out.find((c) => c.type === type);
    if (cur) {
      if (cur.status !== w.status) cur.lastTransitionTime = nowIso;
      cur.status = w.status;
      cur.reason = w.reason;
      cur.message = w.message;
    } else {
      out.push({ type, status: w.status, reason: w.reason, message: w.message, lastTransitionTime: nowIso });
    }
  }
  return out;
}

export const asExpected = (message = 'All is well'): WantedCondition => ({ status: 'False', reason: 'AsExpected', message });

/** Writes a ClusterOperator's conditions (status subresource) when they differ from what is stored. */
export function writeClusterOperatorConditions(ctx: SimContext, name: string, wanted: Record<string, WantedCondition>): void {
  const co = ctx.store.get(R.clusterOperators, name);
  if (!co) return;
  const status = (co.status ?? {}) as { conditions?: Condition[] };
  const before = status.conditions ?? [];
  const after = mergeConditions(before, wanted, ctx.clock.iso());
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  co.status = { ...status, conditions: after };
  ctx.store.updateStatus(R.clusterOperators, co);
}

/** The conditions of a ClusterOperator as stored. */
export function clusterOperatorConditions(ctx: SimContext, name: string): Condition[] {
  return ((ctx.store.get(R.clusterOperators, name)?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).map((c) => ({ ...c }));
}

export interface ComponentRouteStatus {
  namespace: string;
  name: string;
  defaultHostname: string;
  consumingUsers?: string[];
  currentHostnames?: string[];
  conditions?: Condition[];
  relatedObjects: { group: string; resource: string; namespace?: string; name: string }[];
}

/**
 * Updates one entry of Ingress `cluster` status.componentRoutes (a list-map keyed by namespace+name,
 * config/v1 types_ingress.go), leaving the other operators' entries alone — as the operators' server-side
 * apply with their own field manager does.
 */
export function writeComponentRouteStatus(
  ctx: SimContext,
  entry: Omit<ComponentRouteStatus, 'conditions'>,
  wanted: Record<string, WantedCondition>,
): void {
  const ingress = ctx.store.get(R.ingresses, 'cluster');
  if (!ingress) return;
  const status = (ingress.status ?? {}) as { componentRoutes?: ComponentRouteStatus[] };
  const routes = (status.componentRoutes ?? []).map((r) => ({ ...r }));
  const i = routes.findIndex((r) => r.namespace === entry.namespace && r.name === entry.name);
  const prev = i >= 0 ? routes[i]! : undefined;
  const next: ComponentRouteStatus = { ...entry, conditions: mergeConditions(prev?.conditions ?? [], wanted, ctx.clock.iso()) };
  if (i >= 0) routes[i] = next;
  else routes.push(next);
  if (JSON.stringify(prev) === JSON.stringify(next)) return;
  ingress.status = { ...status, componentRoutes: routes };
  ctx.store.updateStatus(R.ingresses, ingress);
}

/** Ingress `cluster` spec.componentRoutes entry for namespace/name, if any. */
export function componentRouteSpec(ingress: KubeObject | undefined, namespace: string, name: string): { hostname: string; secretName?: string } | undefined {
  const list = ((ingress?.spec as { componentRoutes?: unknown[] } | undefined)?.componentRoutes ?? []) as {
    namespace?: string;
    name?: string;
    hostname?: string;
    servingCertKeyPairSecret?: { name?: string };
  }[];
  const e = list.find((r) => r.namespace === namespace && r.name === name);
  if (!e || !e.hostname) return undefined;
  return { hostname: e.hostname, secretName: e.servingCertKeyPairSecret?.name || undefined };
}
