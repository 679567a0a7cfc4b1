// The checks that need the cluster itself, called by the run loop once it knows the cluster's name and the
// node's name (the offline validator cannot). Renaming a cluster or changing the node's host name is not
// supported by OpenShift (seed 000, "Hostname" and "Cluster name"): a site-config that asks for either is
// refused before anything changes.
import { coverageProblem, leafCertificate } from './certificates';
import { checkComposedNames } from './names';
import { nmstateHostname } from './nmstate';
import { Findings } from './problems';
import type { ResolvedSiteConfig, ValidationProblem } from './types';

export interface ClusterIdentity {
  /** The cluster's name (Infrastructure status / install-config metadata.name); unknown when undefined or ''. */
  clusterName?: string;
  /** The Node object's name; unknown when undefined or ''. */
  nodeName?: string;
}

export function checkAgainstCluster(resolved: ResolvedSiteConfig, cluster: ClusterIdentity): ValidationProblem[] {
  const f = new Findings();
  const actualCluster = cluster.clusterName || undefined;
  const node = cluster.nodeName || undefined;
  if (actualCluster !== undefined && resolved.clusterName !== undefined && resolved.clusterName !== actualCluster) {
    f.error('spec.clusterName', `is '${resolved.clusterName}', but this cluster is named '${actualCluster}': renaming a cluster is not supported by OpenShift (leave clusterName out, or set it to '${actualCluster}')`);
  }
  if (node !== undefined && resolved.hostname !== undefined && resolved.hostname !== node) {
    f.error('spec.hostname', `is '${resolved.hostname}', but this node is named '${node}': changing the node's host name is not supported by OpenShift (leave hostname out, or set it to '${node}')`);
  }
  const nmHost = resolved.network ? nmstateHostname(resolved.network.nmstate) : undefined;
  if (node !== undefined && nmHost !== undefined && nmHost !== node) {
    f.error('spec.network.nmstate.hostname.config', `would change the host name to '${nmHost}', but this node is named '${node}': changing the node's host name is not supported by OpenShift`);
  }
  // Offline, a missing clusterName was checked with a placeholder: now with the real one.
  const clusterName = resolved.clusterName ?? actualCluster;
  if (clusterName !== undefined && resolved.clusterName === undefined) {
    f.addAll(checkComposedNames(clusterName, resolved.baseDomain, false));
    for (const role of ['api', 'ingress'] as const) {
      const pair = resolved.certificates[role];
      const leaf = pair ? leafCertificate(pair.certPem) : undefined;
      const problem = leaf ? coverageProblem(leaf, role, clusterName, resolved.baseDomain) : undefined;
      if (problem) f.error(`spec.certificates.${role}.certFile`, `the certificate ${problem}`);
    }
  }
  return f.errors;
}
