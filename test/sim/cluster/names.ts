// What the node can resolve. kubelet reaches the API as api-int.<cluster>.<installed domain>
// (Infrastructure status.apiServerInternalURL: machine-config-operator release-4.14 pkg/operator/sync.go,
// rendered into kubelet's kubeconfigs), and the ingress operator probes its canary route's host under the
// installed apps domain through DNS (cluster-ingress-operator release-4.14 pkg/operator/controller/canary/http.go).
// At an edge site those names resolve only where something answers for them: a node-local DNS
// (assisted-service's 50-master-dnsmasq-configuration, or the agent's), or a site DNS that publishes the
// factory domain. `installedNames: false` is a plain-installer SNO at a site without either.
import { clusterNames, type ResolvedOptions } from './options';

export class NodeNames {
  constructor(
    private readonly opts: Pick<ResolvedOptions, 'clusterName' | 'baseDomain'>,
    private installedNames: boolean,
  ) {}

  /** Whether `name` resolves on the node: names under the installed cluster domain only when provided for. */
  resolves(name: string): boolean {
    const installed = clusterNames(this.opts).clusterDomain;
    const underInstalled = name === installed || name.endsWith(`.${installed}`);
    return !underInstalled || this.installedNames;
  }

  setInstalledNames(resolve: boolean): void {
    this.installedNames = resolve;
  }

  get installedNamesResolve(): boolean {
    return this.installedNames;
  }
}
