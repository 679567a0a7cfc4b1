// console operator, route part (console-operator pkg/console/controllers/route): Ingress `cluster`
// spec.componentRoutes entries openshift-console/console and openshift-console/downloads. A custom
// hostname gets its own route `console-custom` / `downloads-custom` (reencrypt, with the certificate from
// the openshift-config secret); the default routes stay. A hostname outside the cluster's apps domain
// needs a secret ("secret reference for custom route TLS secret is not defined"); the secret must be of
// type kubernetes.io/tls with a valid pair. Errors surface as <Route>CustomRouteSyncDegraded.
import { R } from '../../../../src/cluster/resources';
import type { StoreEvent } from '../../store-types';
import type { OperatorRecord } from '../state';
import { secretTlsPair, sha256, tlsPairProblem } from '../x509';
import type { CustomRouteConfig } from './authentication';
import { reachFailure } from '../proxy-path';
import { RolloutOperator, type Desired, type Problem } from './base';
import { componentRouteSpec, writeComponentRouteStatus, type WantedCondition } from './status';

export interface ConsoleConfig {
  console: CustomRouteConfig;
  downloads: CustomRouteConfig;
}

const NS = 'openshift-console';
const ROUTES = ['console', 'downloads'] as const;
type RouteName = (typeof ROUTES)[number];

export class ConsoleOperator extends RolloutOperator<ConsoleConfig> {
  readonly key = 'console';
  readonly coName = 'console';

  protected durationMs(): number {
    return this.ctx.opts.durations.consoleRollout;
  }

  protected relevant(e: StoreEvent): boolean {
    if (e.resource.plural === R.ingresses.plural && e.resource.group === R.ingresses.group) return true;
    if (e.resource.plural === R.proxies.plural) return true;
    return e.resource.plural === 'secrets' && e.resource.group === '' && e.object.metadata?.namespace === 'openshift-config';
  }

  private defaultHost(route: RouteName): string {
    return `${route}-${NS}.${this.ingressDomain()}`;
  }

  protected desired(): Desired<ConsoleConfig> {
    const ingress = this.ctx.store.get(R.ingresses, 'cluster');
    const config = {} as ConsoleConfig;
    for (const route of ROUTES) {
      const spec = componentRouteSpec(ingress, NS, route);
      if (!spec || spec.hostname === this.defaultHost(route)) {
        config[route] = { hostname: this.defaultHost(route), custom: false };
        continue;
      }
      const title = route === 'console' ? 'Console' : 'Downloads';
      if (!spec.secretName) {
        if (!spec.hostname.endsWith(this.ingressDomain())) {
          return { problem: routeProblem(title, 'InvalidCustomRouteConfig', 'secret reference for custom route TLS secret is not defined') };
        }
        config[route] = { hostname: spec.hostname, custom: true };
        continue;
      }
      const secret = this.ctx.store.get(R.secrets, spec.secretName, 'openshift-config');
      if (!secret) {
        return { problem: routeProblem(title, 'FailedCustomTLSSecretGet', `failed to GET custom route TLS secret: secrets "${spec.secretName}" not found`) };
      }
      if (secret.type !== 'kubernetes.io/tls') {
        return {
          problem: routeProblem(title, 'InvalidCustomTLSSecret', `custom cert secret is not in "kubernetes.io/tls" type, instead uses ${JSON.stringify(secret.type ?? 'Opaque')} type`),
        };
      }
      const pair = secretTlsPair(secret);
      const problem = tlsPairProblem(pair);
      if (problem) return { problem: routeProblem(title, 'InvalidCustomTLSSecret', problem) };
      config[route] = { hostname: spec.hostname, secretName: spec.secretName, certPem: pair.certPem, keyPem: pair.keyPem, custom: true };
    }
    return { hash: sha256(JSON.stringify(config)), config };
  }

  protected progressingCondition(_t: ConsoleConfig, _r: OperatorRecord): WantedCondition {
    return { status: 'True', reason: 'SyncLoopRefresh_InProgress', message: `SyncLoopRefreshProgressing: Working toward version ${this.ctx.opts.version}, 0 replicas available` };
  }

  protected settledConditions() {
    return {
      progressing: { status: 'False', reason: 'AsExpected', message: 'All is well' } as WantedCondition,
      available: { status: 'True', reason: 'AsExpected', message: 'All is well' } as WantedCondition,
    };
  }

  override init(): void {
    super.init();
    this.resyncHealth();
  }

  /** The health check controller resyncs every 30 s (console-operator release-4.14 pkg/console/controllers/healthcheck/controller.go). */
  private resyncHealth(): void {
    this.safely('route health check', () => this.publish());
    this.ctx.clock.after(30_000, () => this.resyncHealth());
  }

  /**
   * RouteHealth (healthcheck/controller.go CheckRouteHealth): GET https://<active console route host>/health with
   * http.ProxyFromEnvironment; a failed GET is RouteHealthDegraded with reason FailedGet.
   */
  protected override healthProblem(): Problem | undefined {
    const host = (this.target() ?? this.current())?.console.hostname ?? this.defaultHost('console');
    const failure = reachFailure(this.ctx, host);
    return failure ? { reason: 'RouteHealth_FailedGet', message: `RouteHealthDegraded: failed to GET route (https://${host}/health): ${failure}` } : undefined;
  }

  protected degradedCondition(problem: Problem): WantedCondition {
    return { status: 'True', reason: problem.reason, message: problem.message };
  }

  protected override onRolloutStart(target: ConsoleConfig): void {
    for (const route of ROUTES) {
      this.applyCustomRoute(route, target[route]);
      this.writeStatus(route, target[route], { status: 'True', reason: 'SyncLoopRefresh_InProgress', message: 'Working toward the new route' });
    }
  }

  protected override onRolloutDone(current: ConsoleConfig): void {
    for (const route of ROUTES) this.writeStatus(route, current[route], { status: 'False', reason: 'AsExpected', message: 'All is well' });
  }

  protected override onProblemChanged(problem: Problem | undefined): void {
    for (const route of ROUTES) {
      const cfg = this.target()?.[route] ?? this.current()?.[route] ?? { hostname: this.defaultHost(route), custom: false };
      const mine = problem && problem.reason.toLowerCase().startsWith(route);
      this.writeStatus(
        route,
        cfg,
        mine ? { status: 'False', reason: problem.reason, message: problem.message } : { status: this.target() ? 'True' : 'False', reason: 'AsExpected', message: 'All is well' },
        mine ? { status: 'True', reason: problem.reason, message: problem.message } : undefined,
      );
    }
  }

  private applyCustomRoute(route: RouteName, cfg: CustomRouteConfig): void {
    const name = `${route}-custom`;
    const existing = this.ctx.store.get(R.routes, name, NS);
    if (!cfg.custom) {
      if (existing) this.ctx.store.delete(R.routes, name, NS);
      return;
    }
    const tls: Record<string, unknown> = { termination: 'reencrypt', insecureEdgeTerminationPolicy: 'Redirect' };
    if (cfg.certPem && cfg.keyPem) {
      tls.certificate = cfg.certPem;
      tls.key = cfg.keyPem;
    }
    const spec = { host: cfg.hostname, to: { kind: 'Service', name: route, weight: 100 }, port: { targetPort: 'https' }, tls, wildcardPolicy: 'None' };
    if (existing) {
      existing.spec = spec;
      this.ctx.store.update(R.routes, existing);
    } else {
      this.ctx.store.create(R.routes, {
        apiVersion: 'route.openshift.io/v1',
        kind: 'Route',
        metadata: { name, namespace: NS, labels: { app: 'console' }, annotations: { 'haproxy.router.openshift.io/timeout': '5m' } },
        spec,
      });
    }
  }

  private writeStatus(route: RouteName, cfg: CustomRouteConfig, progressing: WantedCondition, degraded?: WantedCondition): void {
    writeComponentRouteStatus(
      this.ctx,
      {
        namespace: NS,
        name: route,
        defaultHostname: this.defaultHost(route),
        consumingUsers: ['system:serviceaccount:openshift-console-operator:console-operator'],
        currentHostnames: [cfg.hostname],
        relatedObjects: [{ group: 'route.openshift.io', resource: 'routes', namespace: NS, name: cfg.custom ? `${route}-custom` : route }],
      },
      { Progressing: progressing, Degraded: degraded ?? { status: 'False', reason: 'AsExpected', message: 'All is well' } },
    );
  }

  /** Hostname → TLS pair served now (after the rollout). */
  servedCertificates(): { hostname: string; certPem: string; keyPem: string }[] {
    const c = this.current();
    if (!c) return [];
    return ROUTES.flatMap((r) => (c[r].certPem && c[r].keyPem ? [{ hostname: c[r].hostname, certPem: c[r].certPem!, keyPem: c[r].keyPem! }] : []));
  }
}

function routeProblem(title: string, reason: string, detail: string): Problem {
  return { reason: `${title}CustomRouteSync_${reason}`, message: `${title}CustomRouteSyncDegraded: ${detail}` };
}
