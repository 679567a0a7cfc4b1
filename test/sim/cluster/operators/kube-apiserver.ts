// kube-apiserver operator: APIServer `cluster` spec.servingCerts.namedCertificates → a new static-pod
// revision (NodeInstaller), which on SNO ends with the single kube-apiserver pod being replaced (the API
// is unreachable for a while). Each named certificate must reference a kubernetes.io/tls secret in
// openshift-config (config/v1 types_apiserver.go); a missing or broken one makes the operator Degraded and
// it keeps serving the revision it has. The revision copies the secrets' contents, so the api endpoint
// serves exactly what was rolled out.
import { R } from '../../../../src/cluster/resources';
import type { StoreEvent } from '../../store-types';
import type { OperatorRecord, RolloutRecord } from '../state';
import { secretTlsPair, sha256, tlsSecretProblem } from '../x509';
import { RolloutOperator, type Desired, type Problem } from './base';
import type { WantedCondition } from './status';

const MAX_USER_NAMED_CERTS = 10;

export interface NamedCertificate {
  names: string[];
  secretName: string;
  certPem: string;
  keyPem: string;
}

export interface KubeApiserverConfig {
  namedCertificates: NamedCertificate[];
}

const BASE_REVISION = 7;

export class KubeApiserverOperator extends RolloutOperator<KubeApiserverConfig> {
  readonly key = 'kube-apiserver';
  readonly coName = 'kube-apiserver';

  protected durationMs(): number {
    return this.ctx.opts.durations.kubeApiserverRollout;
  }

  protected relevant(e: StoreEvent): boolean {
    if (e.resource.plural === R.apiServers.plural && e.resource.group === R.apiServers.group) return true;
    return e.resource.plural === 'secrets' && e.resource.group === '' && e.object.metadata?.namespace === 'openshift-config';
  }

  protected desired(): Desired<KubeApiserverConfig> {
    const apiserver = this.ctx.store.get(R.apiServers, 'cluster');
    const entries = ((apiserver?.spec as { servingCerts?: { namedCertificates?: unknown[] } } | undefined)?.servingCerts?.namedCertificates ?? []) as {
      names?: string[];
      servingCertificate?: { name?: string };
    }[];
    // cluster-kube-apiserver-operator pkg/operator/configobservation/apiserver/observe_apiserver.go
    // (release-4.12…4.16) observeNamedCertificates: more than maxUserNamedCerts (10) entries is an observation
    // error; the operator keeps the previous config and reports it, it does not roll out.
    if (entries.length > MAX_USER_NAMED_CERTS) {
      return { problem: { reason: 'ConfigObservation_Error', message: `ConfigObservationDegraded: spec.servingCerts.namedCertificates cannot have more than ${MAX_USER_NAMED_CERTS} entries` } };
    }
    const named: NamedCertificate[] = [];
    const problems: string[] = [];
    entries.forEach((entry, i) => {
      const secretName = entry.servingCertificate?.name ?? '';
      const secret = this.ctx.store.get(R.secrets, secretName, 'openshift-config');
      const problem = tlsSecretProblem(secret, 'openshift-config', secretName);
      if (problem) {
        problems.push(`spec.servingCerts.namedCertificates[${i}]: ${problem}`);
        return;
      }
      const pair = secretTlsPair(secret);
      named.push({ names: [...(entry.names ?? [])], secretName, certPem: pair.certPem!, keyPem: pair.keyPem! });
    });
    if (problems.length > 0) {
      return { problem: { reason: 'ConfigObservation_Error', message: `ConfigObservationDegraded: ${problems.join('; ')}` } };
    }
    const config = { namedCertificates: named };
    return { hash: sha256(JSON.stringify(config)), config };
  }

  private revision(record: OperatorRecord): number {
    return BASE_REVISION + record.generation;
  }

  protected progressingCondition(_target: KubeApiserverConfig, record: OperatorRecord): WantedCondition {
    const next = this.revision(record);
    return {
      status: 'True',
      reason: 'NodeInstaller',
      message: `NodeInstallerProgressing: 1 node is at revision ${next - 1}; 0 nodes have achieved new revision ${next}`,
    };
  }

  protected settledConditions(_current: KubeApiserverConfig | undefined, record: OperatorRecord) {
    const at = record.target ? this.revision(record) - 1 : this.revision(record);
    return {
      progressing: { status: 'False', reason: 'AsExpected', message: `NodeInstallerProgressing: 1 node is at revision ${at}` } as WantedCondition,
      available: { status: 'True', reason: 'AsExpected', message: `StaticPodsAvailable: 1 nodes are active; 1 node is at revision ${at}` } as WantedCondition,
    };
  }

  protected degradedCondition(problem: Problem): WantedCondition {
    return { status: 'True', reason: problem.reason, message: problem.message };
  }

  protected override milestones() {
    const d = this.ctx.opts.durations;
    return d.kubeApiserverRestartOutage > 0 ? [{ name: 'restart', offset: d.kubeApiserverRollout - d.kubeApiserverRestartOutage }] : [];
  }

  protected override onRolloutStart(): void {
    // A newer revision supersedes one whose pod was being replaced: that replacement is over.
    this.ctx.availability.unblock('kube-apiserver-restart');
  }

  protected override onMilestone(name: string): void {
    if (name !== 'restart') return;
    this.ctx.log('kube-apiserver: replacing the static pod with the new revision (API unavailable)');
    this.ctx.availability.block('kube-apiserver-restart');
  }

  protected override onResume(rollout: RolloutRecord): void {
    if (rollout.milestones.some((m) => m.name === 'restart' && m.fired)) this.ctx.availability.block('kube-apiserver-restart');
  }

  protected override onRolloutDone(): void {
    this.ctx.availability.unblock('kube-apiserver-restart');
  }

  /** Named certificates the api endpoint serves now (the rolled-out revision). */
  servedNamedCertificates(): NamedCertificate[] {
    return this.current()?.namedCertificates ?? [];
  }
}
