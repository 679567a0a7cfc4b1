// Ingress `cluster` (config.openshift.io/v1): spec.appsDomain and spec.componentRoutes.
// spec.domain is immutable once set (openshift/api config/v1/types_ingress.go, CEL `self == oldSelf`): it is
// never written. componentRoutes is a list-map keyed on namespace+name (CRD x-kubernetes-list-map-keys), so
// entries are merged by that key and entries of others are kept.
import { R } from '../../cluster/resources';
import type { ClusterClient, KubeObject } from '../../cluster/types';
import { StepError } from '../../engine/step';
import { COMPONENT_ROUTES, SECRETS, routeKey, type DomainNames } from './names';
import { sameJson, updateObject } from '../../cluster/objects';

export interface IngressConfig extends KubeObject {
  spec?: { domain?: string; appsDomain?: string; componentRoutes?: ComponentRouteSpec[]; [k: string]: unknown };
  status?: { componentRoutes?: { namespace?: string; name?: string; currentHostnames?: string[]; defaultHostname?: string }[]; [k: string]: unknown };
}

export async function readIngressConfig(client: ClusterClient): Promise<IngressConfig> {
  const ingress = await client.get<IngressConfig>(R.ingresses, 'cluster');
  if (!ingress?.spec?.domain) {
    throw new StepError('the cluster has no Ingress config "cluster" with spec.domain', 'This does not look like an OpenShift cluster; check the kubeconfig the agent uses.');
  }
  return ingress;
}

export interface ComponentRouteSpec {
  namespace: string;
  name: string;
  hostname: string;
  servingCertKeyPairSecret?: { name: string };
  [field: string]: unknown;
}

export interface IngressDesired {
  /** undefined: no spec.appsDomain (routes default to spec.domain). */
  appsDomain?: string;
  componentRoutes: ComponentRouteSpec[];
}

/** The three component routes on the new names, each with the secret that serves it. */
export function desiredComponentRoutes(names: DomainNames, secrets: { console: string; downloads: string; oauth: string }): ComponentRouteSpec[] {
  return [
    { ...COMPONENT_ROUTES.console, hostname: names.console, servingCertKeyPairSecret: { name: secrets.console } },
    { ...COMPONENT_ROUTES.downloads, hostname: names.downloads, servingCertKeyPairSecret: { name: secrets.downloads } },
    { ...COMPONENT_ROUTES.oauth, hostname: names.oauth, servingCertKeyPairSecret: { name: secrets.oauth } },
  ];
}

const OWN_SECRETS: string[] = Object.values(SECRETS);

/**
 * Existing entries with a key we want are replaced in place (keeping fields we do not set, such as labels);
 * entries that point at one of our secrets but are no longer wanted are removed; all others are kept in
 * order; new ones are appended.
 */
export function mergeComponentRoutes(existing: ComponentRouteSpec[] | undefined, desired: ComponentRouteSpec[]): ComponentRouteSpec[] {
  const wanted = new Map(desired.map((d) => [routeKey(d), d]));
  const placed = new Set<string>();
  const merged: ComponentRouteSpec[] = [];
  for (const entry of existing ?? []) {
    const key = routeKey(entry);
    const ours = wanted.get(key);
    if (ours) {
      if (placed.has(key)) continue;
      const { servingCertKeyPairSecret: _drop, ...rest } = entry;
      merged.push({ ...rest, ...ours });
      placed.add(key);
    } else if (!OWN_SECRETS.includes(entry.servingCertKeyPairSecret?.name ?? '')) {
      merged.push(entry);
    }
  }
  for (const d of desired) if (!placed.has(routeKey(d))) merged.push(d);
  return merged;
}

export interface IngressDiff {
  appsDomain: boolean;
  componentRoutes: boolean;
}

export function ingressDiff(current: IngressConfig, desired: IngressDesired): IngressDiff {
  const routes = current.spec?.componentRoutes ?? [];
  return {
    appsDomain: (current.spec?.appsDomain || undefined) !== desired.appsDomain,
    componentRoutes: !sameJson(routes, mergeComponentRoutes(routes, desired.componentRoutes)),
  };
}

export async function ensureIngress(client: ClusterClient, desired: IngressDesired): Promise<IngressDiff> {
  let diff: IngressDiff = { appsDomain: false, componentRoutes: false };
  await updateObject<IngressConfig>(client, R.ingresses, 'cluster', undefined, (current) => {
    diff = ingressDiff(current, desired);
    if (!diff.appsDomain && !diff.componentRoutes) return undefined;
    const spec = { ...current.spec };
    if (desired.appsDomain) spec.appsDomain = desired.appsDomain;
    else delete spec.appsDomain;
    const routes = mergeComponentRoutes(current.spec?.componentRoutes, desired.componentRoutes);
    if (routes.length > 0) spec.componentRoutes = routes;
    else delete spec.componentRoutes;
    spec.domain = current.spec?.domain;
    return { ...current, spec };
  });
  return diff;
}
