// What the node can resolve, name by name, and what the site's proxy reaches.
//
// kubelet reaches the API as api-int.<cluster>.<installed domain> (Infrastructure status.apiServerInternalURL:
// machine-config-operator release-4.14 pkg/operator/sync.go, rendered into kubelet's kubeconfigs); from 4.14 the
// ingress operator probes its canary route's host under the installed apps domain (cluster-ingress-operator
// release-4.14 pkg/operator/controller/canary/route.go spec.subdomain, canary/http.go). At an edge site those names
// resolve only where something answers for them: a node-local DNS (assisted-service's
// 50-master-dnsmasq-configuration, or the agent's), or a site DNS that publishes the factory domain. Each of the
// installed domain's names — `api`, `api-int`, `apps` (the *.apps wildcard) — resolves or not on its own: a site
// DNS may publish api-int and nothing else.
//
// The site's proxy resolves with the site's DNS, which never knows the factory domain; whether it reaches the
// node by its new names (`proxyReachesNode`) is the site's choice: a store proxy does, a proxy at the head office
// usually does not.
import { clusterNames, type ResolvedOptions } from './options';

export const INSTALLED_NAMES = ['api', 'api-int', 'apps'] as const;
export type InstalledName = (typeof INSTALLED_NAMES)[number];

export class NodeNames {
  private readonly resolving: Set<InstalledName>;

  constructor(
    private readonly opts: Pick<ResolvedOptions, 'clusterName' | 'baseDomain'>,
    installedNames: boolean | readonly InstalledName[],
    private proxyReachesNode = true,
  ) {
    this.resolving = new Set(installedNames === true ? INSTALLED_NAMES : installedNames === false ? [] : installedNames);
  }

  /** Which of the installed domain's names `name` is, or undefined when it lies outside that domain. */
  private installedName(name: string): InstalledName | 'other' | undefined {
    const n = clusterNames(this.opts);
    if (name === n.apiInt) return 'api-int';
    if (name === n.api) return 'api';
    if (name.endsWith(`.${n.apps}`)) return 'apps';
    return name === n.clusterDomain || name.endsWith(`.${n.clusterDomain}`) ? 'other' : undefined;
  }

  /** Whether `name` resolves on the node: the installed domain's names only where provided for. */
  resolves(name: string): boolean {
    const which = this.installedName(name);
    return which === undefined || (which !== 'other' && this.resolving.has(which));
  }

  /** Whether the site's proxy reaches `name`: never a name of the installed (factory) domain. */
  proxyReaches(name: string): boolean {
    return this.installedName(name) === undefined && this.proxyReachesNode;
  }

  setInstalledNames(resolve: boolean | readonly InstalledName[]): void {
    this.resolving.clear();
    for (const n of resolve === true ? INSTALLED_NAMES : resolve === false ? [] : resolve) this.resolving.add(n);
  }

  setProxyReachesNode(reaches: boolean): void {
    this.proxyReachesNode = reaches;
  }

}
