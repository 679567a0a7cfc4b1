// openshift-apiserver operator and the route host it generates. Ingress `cluster` spec.appsDomain (or
// spec.domain when unset) becomes openshift-apiserver's routing subdomain only after its deployment rolled
// out (openshift-docs nw-ingress-configuring-application-domain: "wait for the openshift-apiserver
// rollout"). From then on a Route created WITHOUT spec.host gets `<name>-<namespace>.<subdomain>` and the
// annotation openshift.io/host.generated: "true"; existing routes keep their host, which is why a domain
// change has to re-create generated routes.
import { R } from '../../../../src/cluster/resources';
import { clusterNames } from '../options';
import type { KubeObject, ResourceType } from '../../../../src/cluster/types';
import type { StoreEvent } from '../../store-types';
import type { OperatorRecord } from '../state';
import { sha256 } from '../x509';
import { RolloutOperator, type Desired, type Problem } from './base';
import type { WantedCondition } from './status';

export interface OpenshiftApiserverConfig {
  routeSubdomain: string;
}

export const HOST_GENERATED_ANNOTATION = 'openshift.io/host.generated';

export class OpenshiftApiserverOperator extends RolloutOperator<OpenshiftApiserverConfig> {
  readonly key = 'openshift-apiserver';
  readonly coName = 'openshift-apiserver';

  protected durationMs(): number {
    return this.ctx.opts.durations.openshiftApiserverRollout;
  }

  protected relevant(e: StoreEvent): boolean {
    return e.resource.plural === R.ingresses.plural && e.resource.group === R.ingresses.group;
  }

  protected desired(): Desired<OpenshiftApiserverConfig> {
    const spec = (this.ctx.store.get(R.ingresses, 'cluster')?.spec ?? {}) as { domain?: string; appsDomain?: string };
    const routeSubdomain = spec.appsDomain || spec.domain || clusterNames(this.ctx.opts).apps;
    const config = { routeSubdomain };
    return { hash: sha256(JSON.stringify(config)), config };
  }

  private deploymentGeneration(record: OperatorRecord): number {
    return 3 + record.generation;
  }

  protected progressingCondition(_t: OpenshiftApiserverConfig, record: OperatorRecord): WantedCondition {
    const g = this.deploymentGeneration(record);
    return {
      status: 'True',
      reason: 'APIServerDeployment_NewGeneration',
      message: `APIServerDeploymentProgressing: deployment/apiserver.openshift-apiserver: observed generation is ${g - 1}, desired generation is ${g}.`,
    };
  }

  protected settledConditions() {
    return {
      progressing: { status: 'False', reason: 'AsExpected', message: 'All is well' } as WantedCondition,
      available: { status: 'True', reason: 'AsExpected', message: 'All is well' } as WantedCondition,
    };
  }

  protected degradedCondition(problem: Problem): WantedCondition {
    return { status: 'True', reason: problem.reason, message: problem.message };
  }

  /** The subdomain route hosts are generated from now. */
  routeSubdomain(): string {
    return this.current()?.routeSubdomain ?? clusterNames(this.ctx.opts).apps;
  }

  /**
   * Mutating admission for routes, as openshift-apiserver's route strategy does on create: an empty
   * spec.host is allocated from the routing subdomain. On update an emptied host keeps the old one (a
   * route's host is not re-allocated; changing it needs the routes/custom-host permission).
   */
  admit(op: 'CREATE' | 'UPDATE', resource: ResourceType, obj: KubeObject, previous: KubeObject | undefined): void {
    if (resource.plural !== R.routes.plural || resource.group !== R.routes.group) return;
    const spec = (obj.spec ?? {}) as { host?: string; subdomain?: string };
    obj.spec = spec;
    if (spec.host) return;
    if (op === 'UPDATE' && previous) {
      const prevHost = (previous.spec as { host?: string } | undefined)?.host;
      if (prevHost) {
        spec.host = prevHost;
        const prevGenerated = previous.metadata?.annotations?.[HOST_GENERATED_ANNOTATION];
        if (prevGenerated) setAnnotation(obj, HOST_GENERATED_ANNOTATION, prevGenerated);
      }
      return;
    }
    const name = obj.metadata?.name ?? '';
    const namespace = obj.metadata?.namespace ?? '';
    spec.host = spec.subdomain ? `${spec.subdomain}.${this.routeSubdomain()}` : `${name}-${namespace}.${this.routeSubdomain()}`;
    setAnnotation(obj, HOST_GENERATED_ANNOTATION, 'true');
  }
}

function setAnnotation(obj: KubeObject, key: string, value: string): void {
  obj.metadata ??= {};
  obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [key]: value };
}
