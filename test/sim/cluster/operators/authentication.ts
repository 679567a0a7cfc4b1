// authentication operator, custom route part (cluster-authentication-operator
// pkg/controllers/customroute): Ingress `cluster` spec.componentRoutes entry
// openshift-authentication/oauth-openshift. The secret (openshift-config, optional) must carry a parseable
// tls.key and a server certificate in tls.crt, else Degraded with reason CustomRouteError. The route's
// host changes at once and status.componentRoutes reports it (currentHostnames, consumingUsers
// system:serviceaccount:oauth-openshift:authentication-operator, relatedObjects → the route); the oauth
// server deployment then rolls out before the new certificate is served.
import { R } from '../../../../src/cluster/resources';
import type { StoreEvent } from '../../store-types';
import type { OperatorRecord } from '../state';
import { secretTlsPair, sha256, tlsPairProblem } from '../x509';
import { clusterProxy, noProxyMatches, reachFailure } from '../proxy-path';
import { RolloutOperator, type Desired, type Problem } from './base';
import { componentRouteSpec, writeComponentRouteStatus, type WantedCondition } from './status';

export interface CustomRouteConfig {
  hostname: string;
  /** Absent: the route keeps the ingress default certificate. */
  secretName?: string;
  certPem?: string;
  keyPem?: string;
  custom: boolean;
}

export interface AuthenticationConfig {
  oauth: CustomRouteConfig;
}

const NS = 'openshift-authentication';
const NAME = 'oauth-openshift';

export class AuthenticationOperator extends RolloutOperator<AuthenticationConfig> {
  readonly key = 'authentication';
  readonly coName = 'authentication';

  protected durationMs(): number {
    return this.ctx.opts.durations.authenticationRollout;
  }

  protected relevant(e: StoreEvent): boolean {
    if (e.resource.plural === R.ingresses.plural && e.resource.group === R.ingresses.group) return true;
    // ProxyConfigController syncs on its route's changes; a Proxy change restarts the operator's pod with the
    // new environment (inject-proxy), which syncs at start.
    if (e.resource.plural === R.routes.plural && e.object.metadata?.namespace === NS) return true;
    if (e.resource.plural === R.proxies.plural) return true;
    return e.resource.plural === 'secrets' && e.resource.group === '' && e.object.metadata?.namespace === 'openshift-config';
  }

  protected desired(): Desired<AuthenticationConfig> {
    const ingress = this.ctx.store.get(R.ingresses, 'cluster');
    const spec = componentRouteSpec(ingress, NS, NAME);
    const defaultHost = `oauth-openshift.${this.ingressDomain()}`;
    if (!spec) {
      const config = { oauth: { hostname: defaultHost, custom: false } };
      return { hash: sha256(JSON.stringify(config)), config };
    }
    let certPem: string | undefined;
    let keyPem: string | undefined;
    if (spec.secretName) {
      const secret = this.ctx.store.get(R.secrets, spec.secretName, 'openshift-config');
      if (!secret) return { problem: customRouteError(`secrets "${spec.secretName}" not found`) };
      const pair = secretTlsPair(secret);
      const errors: string[] = [];
      if (!pair.keyPem) errors.push('custom route secret must include key tls.key');
      if (!pair.certPem) errors.push('custom route secret must include key tls.crt');
      const problem = errors.length === 0 ? tlsPairProblem(pair) : undefined;
      if (problem) errors.push(problem);
      if (errors.length > 0) return { problem: customRouteError(`error validating secret openshift-config/${spec.secretName}: [${errors.join(', ')}]`) };
      certPem = pair.certPem;
      keyPem = pair.keyPem;
    }
    const config = { oauth: { hostname: spec.hostname, secretName: spec.secretName, certPem, keyPem, custom: true } };
    return { hash: sha256(JSON.stringify(config)), config };
  }

  private oauthGeneration(record: OperatorRecord): number {
    return 3 + record.generation;
  }

  protected progressingCondition(_t: AuthenticationConfig, record: OperatorRecord): WantedCondition {
    const g = this.oauthGeneration(record);
    return {
      status: 'True',
      reason: 'OAuthServerDeployment_NewGeneration',
      message: `OAuthServerDeploymentProgressing: deployment/oauth-openshift.openshift-authentication: observed generation is ${g - 1}, desired generation is ${g}.`,
    };
  }

  protected settledConditions() {
    return {
      progressing: { status: 'False', reason: 'AsExpected', message: 'AuthenticatorCertKeyProgressing: All is well' } as WantedCondition,
      available: { status: 'True', reason: 'AsExpected', message: 'All is well' } as WantedCondition,
    };
  }

  /**
   * ProxyConfigController (cluster-authentication-operator release-4.12…4.16
   * pkg/controllers/proxyconfig/proxyconfig_controller.go sync, checkProxyConfig): with a proxy set, GET
   * https://<oauth route host>/healthz with and without the proxy; a host NO_PROXY does not cover that the proxy
   * cannot reach degrades the operator ("missing in NO_PROXY" when it is reachable directly), as does a host
   * NO_PROXY covers that is not reachable directly. Reported as ProxyConfigControllerDegraded
   * (WithSyncDegradedOnError).
   */
  protected override healthProblem(): Problem | undefined {
    const proxy = clusterProxy(this.ctx);
    const host = (this.ctx.store.get(R.routes, NAME, NS)?.spec as { host?: string } | undefined)?.host;
    if (!proxy || !host) return undefined;
    const url = `https://${host}/healthz`;
    const noProxy = proxy.noProxy ?? '';
    const withProxy = () => reachFailure(this.ctx, host, true);
    const withoutProxy = () => reachFailure(this.ctx, host, false);
    let error: string | undefined;
    if (noProxyMatches(noProxy, host) && withoutProxy()) {
      error = withProxy() ? `endpoint("${url}") found in NO_PROXY("${noProxy}") is unreachable with proxy(${withProxy()}) and without proxy(${withoutProxy()})` : `failed to reach endpoint("${url}") found in NO_PROXY("${noProxy}") with error: ${withoutProxy()}`;
    } else if (!noProxyMatches(noProxy, host) && withProxy()) {
      error = withoutProxy() ? `endpoint("${url}") is unreachable with proxy(${withProxy()}) and without proxy(${withoutProxy()})` : `failed to reach endpoint("${url}") missing in NO_PROXY("${noProxy}") with error: ${withProxy()}`;
    }
    return error ? { reason: 'ProxyConfigController_SyncError', message: `ProxyConfigControllerDegraded: ${error}` } : undefined;
  }

  protected degradedCondition(problem: Problem): WantedCondition {
    return { status: 'True', reason: problem.reason, message: problem.message };
  }

  protected override onRolloutStart(target: AuthenticationConfig): void {
    this.applyRoute(target.oauth.hostname);
    this.writeStatus(target.oauth.hostname, {
      Progressing: { status: 'True', reason: 'ErrorReachingOutToService', message: `unexpected error at ${target.oauth.hostname}: the oauth server is not serving this host yet` },
      Degraded: { status: 'False', reason: 'AsExpected', message: 'All is well' },
    });
  }

  protected override onRolloutDone(current: AuthenticationConfig): void {
    this.writeStatus(current.oauth.hostname, {
      Progressing: { status: 'False', reason: 'AsExpected', message: 'All is well' },
      Degraded: { status: 'False', reason: 'AsExpected', message: 'All is well' },
    });
  }

  protected override onProblemChanged(problem: Problem | undefined): void {
    const host = this.target()?.oauth.hostname ?? this.current()?.oauth.hostname ?? `oauth-openshift.${this.ingressDomain()}`;
    if (problem) {
      const message = `Error Configuring custom route: [${problem.message.replace(/^CustomRouteControllerDegraded: custom route configuration failed verification: /, '')}]`;
      this.writeStatus(host, {
        Progressing: { status: 'False', reason: 'CustomRouteError', message },
        Degraded: { status: 'True', reason: 'CustomRouteError', message },
      });
    } else {
      this.writeStatus(host, {
        Progressing: { status: this.target() ? 'True' : 'False', reason: this.target() ? 'ErrorReachingOutToService' : 'AsExpected', message: 'All is well' },
        Degraded: { status: 'False', reason: 'AsExpected', message: 'All is well' },
      });
    }
  }

  /** The operator owns route openshift-authentication/oauth-openshift and sets its host (customroute applyRoute). */
  private applyRoute(hostname: string): void {
    const route = this.ctx.store.get(R.routes, NAME, NS);
    if (!route) return;
    const spec = (route.spec ?? {}) as { host?: string };
    if (spec.host === hostname) return;
    route.spec = { ...spec, host: hostname };
    this.ctx.store.update(R.routes, route);
  }

  private writeStatus(currentHost: string, wanted: Record<string, WantedCondition>): void {
    writeComponentRouteStatus(
      this.ctx,
      {
        namespace: NS,
        name: NAME,
        defaultHostname: `oauth-openshift.${this.ingressDomain()}`,
        consumingUsers: ['system:serviceaccount:oauth-openshift:authentication-operator'],
        currentHostnames: [currentHost],
        relatedObjects: [{ group: 'route.openshift.io', resource: 'routes', namespace: NS, name: NAME }],
      },
      { ...wanted, Upgradeable: { status: 'True', reason: 'AsExpected', message: 'All is well' } },
    );
  }

  /** Hostname → TLS pair the oauth server serves now (after the rollout). */
  servedCertificates(): { hostname: string; certPem: string; keyPem: string }[] {
    const c = this.current()?.oauth;
    return c?.certPem && c.keyPem ? [{ hostname: c.hostname, certPem: c.certPem, keyPem: c.keyPem }] : [];
  }
}

function customRouteError(detail: string): Problem {
  return { reason: 'CustomRouteController_SyncError', message: `CustomRouteControllerDegraded: custom route configuration failed verification: ${detail}` };
}
