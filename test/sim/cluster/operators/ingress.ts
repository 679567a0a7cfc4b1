// ingress operator: IngressController openshift-ingress-operator/default spec.defaultCertificate names a
// secret in openshift-ingress (the operand namespace: cluster-ingress-operator
// RouterEffectiveDefaultCertificateSecretName). Changing it rolls the router-default deployment out; until
// then the router keeps serving the previous default — router-certs-default, the operator-generated
// wildcard for *.<status.domain> signed by openshift-ingress-operator/router-ca
// (pkg/operator/controller/certificate/default_cert.go).
import { R } from '../../../../src/cluster/resources';
import type { StoreEvent } from '../../store-types';
import type { OperatorRecord } from '../state';
import { secretTlsPair, sha256, tlsSecretProblem } from '../x509';
import { clusterNames, minorVersion } from '../options';
import { RolloutOperator, type Desired, type Problem } from './base';
import { reachFailure } from '../proxy-path';
import { mergeConditions, type Condition, type WantedCondition } from './status';

export interface IngressConfig {
  secretName: string;
  certPem: string;
  keyPem: string;
}

export const OPERAND_NS = 'openshift-ingress';
export const OPERATOR_NS = 'openshift-ingress-operator';
export const GENERATED_DEFAULT_CERT = 'router-certs-default';
/**
 * The canary probe (cluster-ingress-operator release-4.14 pkg/operator/controller/canary/controller.go: a check
 * every minute (canaryCheckFrequency), `http.Get("https://"+routeHost)` through http.ProxyFromEnvironment in
 * canary/http.go; after canaryCheckFailureCount = 5 successive failures CanaryChecksSucceeding turns False), and the
 * grace that condition gets before the default IngressController turns Degraded (ingress/status.go,
 * gracePeriod 60 s for CanaryChecksSucceeding).
 */
const CANARY_CHECK_EVERY_MS = 60_000;
const CANARY_FAILURES = 5;
const CANARY_GRACE_MS = 60_000;
const CANARY_DEGRADED: Problem = {
  reason: 'IngressDegraded',
  message: 'The "default" ingress controller reports Degraded=True: DegradedConditions: One or more other status conditions indicate a degraded state: CanaryChecksSucceeding=False (CanaryChecksRepetitiveFailures: Canary route checks for the default ingress controller are failing)',
};

export class IngressOperator extends RolloutOperator<IngressConfig> {
  readonly key = 'ingress';
  readonly coName = 'ingress';

  protected durationMs(): number {
    return this.ctx.opts.durations.ingressRollout;
  }

  protected relevant(e: StoreEvent): boolean {
    if (e.resource.plural === R.ingressControllers.plural && e.resource.group === R.ingressControllers.group) return true;
    return e.resource.plural === 'secrets' && e.resource.group === '' && e.object.metadata?.namespace === OPERAND_NS;
  }

  private canarySuccessiveFailures = 0;
  /** When CanaryChecksSucceeding turned False (after the fifth failure in a row). */
  private canaryFalseSince: number | undefined;
  private canaryDegraded = false;

  override init(): void {
    super.init();
    this.probeCanary();
  }

  /**
   * From 4.14 the canary route is a spec.subdomain route (canary/route.go), so its host stays under the default
   * IngressController's domain, the installed one; 4.12/4.13 generate a host the agent moves to the new domain
   * (not probed here). The probe goes through the cluster proxy unless noProxy covers the host (cluster/proxy-path.ts).
   */
  private probeCanary(): void {
    if (minorVersion(this.ctx.opts.version) >= 14) {
      const host = `canary-openshift-ingress-canary.${clusterNames(this.ctx.opts).apps}`;
      const failure = reachFailure(this.ctx, host);
      const now = this.ctx.clock.now();
      this.canarySuccessiveFailures = failure ? this.canarySuccessiveFailures + 1 : 0;
      if (this.canarySuccessiveFailures >= CANARY_FAILURES) {
        if (this.canaryFalseSince === undefined) {
          this.canaryFalseSince = now;
          this.ctx.log(`ingress: canary checks failing ${CANARY_FAILURES} times in a row for ${host}: ${failure}`);
          this.ctx.clock.after(CANARY_GRACE_MS, () => this.judgeCanary());
        }
      } else this.canaryFalseSince = undefined;
      this.judgeCanary();
    }
    this.ctx.clock.after(CANARY_CHECK_EVERY_MS, () => this.probeCanary());
  }

  private judgeCanary(): void {
    const degraded = this.canaryFalseSince !== undefined && this.ctx.clock.now() - this.canaryFalseSince >= CANARY_GRACE_MS;
    if (degraded === this.canaryDegraded) return;
    this.canaryDegraded = degraded;
    this.ctx.log(degraded ? 'ingress: the default IngressController is Degraded: CanaryChecksSucceeding=False for longer than 60 s' : 'ingress: canary checks succeed again');
    this.safely('reconcile', () => this.reconcile());
  }

  protected desired(): Desired<IngressConfig> {
    if (this.canaryDegraded) return { problem: CANARY_DEGRADED };
    const ic = this.ctx.store.get(R.ingressControllers, 'default', OPERATOR_NS);
    const secretName = (ic?.spec as { defaultCertificate?: { name?: string } } | undefined)?.defaultCertificate?.name || GENERATED_DEFAULT_CERT;
    const secret = this.ctx.store.get(R.secrets, secretName, OPERAND_NS);
    const problem = tlsSecretProblem(secret, OPERAND_NS, secretName);
    if (problem) {
      return {
        problem: {
          reason: 'IngressDegraded',
          message: `The "default" ingress controller reports Degraded=True: DegradedConditions: One or more other status conditions indicate a degraded state: DeploymentReplicasAllAvailable=False (DeploymentReplicasNotAvailable: 0/1 of replicas are available: ${problem})`,
        },
      };
    }
    const pair = secretTlsPair(secret);
    const config = { secretName, certPem: pair.certPem!, keyPem: pair.keyPem! };
    return { hash: sha256(JSON.stringify(config)), config };
  }

  protected progressingCondition(): WantedCondition {
    return {
      status: 'True',
      reason: 'Reconciling',
      message:
        'ingresscontroller "default" is progressing: IngressControllerProgressing: One or more status conditions indicate progressing: DeploymentRollingOut=True (DeploymentRollingOut: Waiting for router deployment rollout to finish: 1 old replica(s) are pending termination...\n).',
    };
  }

  protected settledConditions(_c: IngressConfig | undefined, _r: OperatorRecord) {
    return {
      progressing: { status: 'False', reason: 'AsExpected', message: 'desired and current number of IngressControllers are equal' } as WantedCondition,
      available: { status: 'True', reason: 'IngressAvailable', message: 'The "default" ingress controller reports Available=True.' } as WantedCondition,
    };
  }

  protected degradedCondition(problem: Problem): WantedCondition {
    return { status: 'True', reason: problem.reason, message: problem.message };
  }

  override publish(): void {
    super.publish();
    this.writeIngressControllerConditions();
  }

  /** IngressController default status conditions mirror the rollout (operator.openshift.io/v1 status). */
  private writeIngressControllerConditions(): void {
    const ic = this.ctx.store.get(R.ingressControllers, 'default', OPERATOR_NS);
    if (!ic) return;
    const rolling = !!this.record.target;
    const degraded = this.problem;
    const wanted: Record<string, WantedCondition> = {
      Available: { status: 'True', reason: 'Valid', message: '' },
      DeploymentRollingOut: rolling
        ? { status: 'True', reason: 'DeploymentRollingOut', message: 'Waiting for router deployment rollout to finish: 1 old replica(s) are pending termination...' }
        : { status: 'False', reason: 'DeploymentNotRollingOut', message: 'Deployment is not actively rolling out' },
      Progressing: rolling
        ? { status: 'True', reason: 'IngressControllerProgressing', message: 'One or more status conditions indicate progressing: DeploymentRollingOut=True' }
        : { status: 'False', reason: 'AsExpected', message: '' },
      Degraded: degraded ? { status: 'True', reason: 'DegradedConditions', message: degraded.message } : { status: 'False', reason: 'AsExpected', message: '' },
    };
    const status = (ic.status ?? {}) as { conditions?: Condition[] };
    const before = status.conditions ?? [];
    const after = mergeConditions(before, wanted, this.ctx.clock.iso());
    if (JSON.stringify(before) === JSON.stringify(after)) return;
    ic.status = { ...status, conditions: after };
    this.ctx.store.updateStatus(R.ingressControllers, ic);
  }

  /** The default certificate the router serves now. */
  servedDefault(): IngressConfig | undefined {
    return this.current();
  }
}
