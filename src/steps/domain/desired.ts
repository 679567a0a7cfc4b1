// The desired domain state, described once: the names the cluster must serve (targets), the certificates
// that serve them (plan), and which routes must move. The domain step writes towards it; its settle check
// (settled.ts) verifies it on the wire and moves the routes. Both read this module, so they never disagree.
import type { ClusterClient } from '../../cluster/types';
import type { StepContext } from '../../engine/step';
import { planCertificates, type CertPlan } from './certificates';
import { COMPONENT_ROUTES, routeKey } from './names';
import type { RoutePolicy } from './routes';
import { readDomainState } from './state';
import { domainTargets, type DomainTargets } from './targets';
import { readIngressConfig } from './ingress';

export interface DesiredDomain {
  targets: DomainTargets;
  /** The certificates the agent serves the new names with (none when the site keeps its installed domain). */
  certificates: CertPlan[];
}

export async function desiredDomain(ctx: StepContext, client: ClusterClient): Promise<DesiredDomain> {
  const targets = await domainTargets(ctx, client);
  const certificates = targets.mode === 'managed' ? await planCertificates(ctx, client, targets) : [];
  return { targets, certificates };
}

/**
 * Which routes move: those on the installed apps domain or on one an earlier relocation set (kept in the
 * domain state: after the change the cluster no longer says what it was), except the component routes the
 * Ingress config places itself.
 */
export async function routePolicy(ctx: StepContext, client: ClusterClient, targets?: DomainTargets): Promise<RoutePolicy> {
  const t = targets ?? (await domainTargets(ctx, client));
  const state = await readDomainState(ctx);
  const ingress = await readIngressConfig(client);
  const componentRoutes = new Set<string>([...Object.values(COMPONENT_ROUTES).map(routeKey), ...(ingress.status?.componentRoutes ?? []).map((r) => `${r.namespace}/${r.name}`)]);
  const old = new Set<string>([t.installedAppsDomain, ...(state?.previousAppsDomain ? [state.previousAppsDomain] : [])]);
  old.delete(t.names.appsDomain);
  return { oldDomains: [...old], newAppsDomain: t.names.appsDomain, componentRoutes };
}
