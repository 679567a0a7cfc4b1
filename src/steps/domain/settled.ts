// The domain's part of settling: every new name must serve a certificate that verifies (checked on the wire
// against the node's own API and ingress addresses), and the routes still on an old apps domain are replaced
// as soon as openshift-apiserver generates hosts on the new one.
import type { ClusterClient } from '../../cluster/types';
import { endpointsOf } from '../../engine/context';
import type { Endpoint, StepContext } from '../../engine/step';
import type { Blocker } from '../rollouts';
import type { CertPlan } from './certificates';
import { desiredDomain, routePolicy } from './desired';
import { classifyRoutes, followUpOf, generatesHostsOn, leftBecause, replaceRoutes, routesToReplace, type RoutePolicy, type RouteProgress } from './routes';
import type { DomainTargets } from './targets';
import { checkServedCertificate, type ServedCheck } from './tls-check';

export interface TlsExpectation {
  endpoint: 'api' | 'ingress';
  serverName: string;
  anchors: string[];
}

export interface DomainChecks {
  targets: DomainTargets;
  tls: TlsExpectation[];
  routes: RoutePolicy;
  endpoints: { api: Endpoint; ingress: Endpoint };
}

function anchorsOf(plans: CertPlan[], role: CertPlan['role']): string[] {
  return plans.find((p) => p.role === role)?.anchors ?? plans.find((p) => p.role === 'ingress')?.anchors ?? [];
}

export async function domainChecks(ctx: StepContext, client: ClusterClient): Promise<DomainChecks> {
  const { targets, certificates: plans } = await desiredDomain(ctx, client);
  const routes = await routePolicy(ctx, client, targets);
  // The runner records where the node's API and router listen at the start of a run.
  const endpoints = ctx.facts.endpoints ?? (await endpointsOf(ctx.cluster, undefined));
  if (targets.mode === 'native') return { targets, tls: [], routes, endpoints };
  const { names } = targets;
  const ingress = anchorsOf(plans, 'ingress');
  return {
    targets,
    routes,
    endpoints,
    tls: [
      { endpoint: 'api', serverName: names.api, anchors: anchorsOf(plans, 'api') },
      { endpoint: 'ingress', serverName: names.console, anchors: ingress },
      { endpoint: 'ingress', serverName: names.oauth, anchors: anchorsOf(plans, 'oauth') },
      // Any other name under the new apps domain gets the IngressController's default certificate.
      { endpoint: 'ingress', serverName: `sno-reconfigure-check.${names.appsDomain}`, anchors: ingress },
    ],
  };
}

/** `now`: the step's clock, the one the certificates were issued by (certificates.ts), so validity is judged in one time. */
export async function tlsBlockers(checks: DomainChecks, now: Date): Promise<{ blockers: Blocker[]; results: ServedCheck[] }> {
  const results = await Promise.all(checks.tls.map((t) => checkServedCertificate(checks.endpoints[t.endpoint], t.serverName, t.anchors, { now })));
  return { results, blockers: results.filter((r) => !r.ok).map((r) => ({ key: `tls/${r.serverName}`, text: `${r.serverName} to serve its new certificate (${r.detail})` })) };
}

export interface RouteFollowUp {
  /** Routes on an old apps domain left to replace. */
  pending: number;
  /** Whether generated hosts already land on the new apps domain. */
  hostsReady: boolean;
}

/**
 * One pass: nothing to do when no route is on an old apps domain; otherwise, once openshift-apiserver
 * generates hosts on the new apps domain, replace them (routes.ts). Returns what is left. `rollingOut`:
 * openshift-apiserver is still rolling out, so the probe (a route created and deleted) is not even tried.
 */
export async function followUpRoutes(ctx: StepContext, client: ClusterClient, checks: DomainChecks, progress: RouteProgress, save: () => Promise<void>, rollingOut = false): Promise<RouteFollowUp> {
  const all = await classifyRoutes(client, checks.routes);
  for (const d of all) {
    const why = leftBecause(d, progress);
    if (why) ctx.warn(`route ${d.key} left on the old apps domain (${d.host}): ${why}`);
  }
  const todo = all.filter((d) => followUpOf(d, progress) === 'move');
  if (todo.length === 0 && !progress.inFlight) return { pending: 0, hostsReady: true };
  if (rollingOut && !progress.inFlight) return { pending: todo.length, hostsReady: false };
  const probe = await generatesHostsOn(client, checks.routes.newAppsDomain);
  if (!probe.ready) {
    ctx.log.info({ generatedHost: probe.host, appsDomain: checks.routes.newAppsDomain }, 'openshift-apiserver does not generate hosts on the new apps domain yet; routes wait');
    return { pending: todo.length, hostsReady: false };
  }
  const result = await replaceRoutes(ctx, client, checks.routes, progress, save);
  for (const r of result.unexpected) ctx.warn(`route ${r} was re-created but its generated host is not on ${checks.routes.newAppsDomain}`);
  return { pending: (await routesToReplace(client, checks.routes, progress)).length, hostsReady: true };
}
