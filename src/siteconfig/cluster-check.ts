// The checks that need the cluster itself, called by the run loop once it knows the cluster's name and the
// node's name (the offline validator cannot). Renaming a cluster or changing the node's host name is not
// supported by OpenShift (seed 000, "Hostname" and "Cluster name"): a site-config that asks for either is
// refused before anything changes.
import { coverageProblem, leafCertificate } from './certificates';
import { checkComposedNames } from './names';
import { addressesFromNmstate, nmstateHostname } from './nmstate';
import { Findings } from './problems';
import type { ResolvedSiteConfig, ValidationProblem } from './types';

export interface ClusterIdentity {
  /** The cluster's name (Infrastructure status / install-config metadata.name); unknown when undefined or ''. */
  clusterName?: string;
  /** The Node object's name; unknown when undefined or ''. */
  nodeName?: string;
  /** The node's addresses at the factory (baseline), for image-based install's node_ips. */
  nodeAddresses?: string[];
  /** ClusterVersion spec.clusterID (baseline), for image-based install's cluster_id. */
  clusterID?: string;
  /** What the cluster has for the kubeadmin user (read when the site-config sets a kubeadmin hash). */
  kubeadmin?: KubeadminState;
}

export interface KubeadminState {
  /** creationTimestamp of the kube-system Namespace: when the cluster was installed. */
  kubeSystemCreated: string;
  /** creationTimestamp of the Secret kube-system/kubeadmin; undefined when there is none. */
  secretCreated?: string;
  /** The agent's clock (ms since 1970), for a Secret that would be created now. */
  now: number;
}

// The OAuth server honours kube-system/kubeadmin only while it is at most an hour younger than kube-system
// ("kubeadmin secret cannot be recreated"; openshift/library-go pkg/authentication/bootstrapauthenticator/
// bootstrap.go getBootstrapUserSecret). A Secret deleted at the factory, or re-created there, can never carry a
// working password again: setting a hash would be reported as done and change nothing a person can use.
const KUBEADMIN_WINDOW_MS = 3600_000;
const KUBEADMIN_INSTEAD = 'leave the kubeadmin hash out and log in with the hand-off kubeconfig or an identity provider';

export function kubeadminProblem(state: KubeadminState): string | undefined {
  const installed = Date.parse(state.kubeSystemCreated);
  if (Number.isNaN(installed)) return undefined;
  const day = state.kubeSystemCreated.slice(0, 10);
  if (state.secretCreated !== undefined) {
    if (Date.parse(state.secretCreated) <= installed + KUBEADMIN_WINDOW_MS) return undefined;
    return `cannot take effect: the Secret kube-system/kubeadmin was re-created on ${state.secretCreated.slice(0, 10)}, more than an hour after this cluster was installed (${day}), and OpenShift ignores such a Secret, so kubeadmin cannot log in with any password: ${KUBEADMIN_INSTEAD}`;
  }
  if (state.now <= installed + KUBEADMIN_WINDOW_MS) return undefined;
  return `cannot take effect: this cluster has no Secret kube-system/kubeadmin (kubeadmin was removed, at the factory or by an earlier site-config), and OpenShift ignores one created more than an hour after the cluster was installed (${day}), so kubeadmin cannot come back: ${KUBEADMIN_INSTEAD}`;
}

/** Appended to every refusal of an image-based install config: what it asks needs recert. */
const KEEPS = 'this node keeps its installed name and IP; use an image-based install for a rename';

export function checkAgainstCluster(resolved: ResolvedSiteConfig, cluster: ClusterIdentity): ValidationProblem[] {
  const f = new Findings();
  const actualCluster = cluster.clusterName || undefined;
  const node = cluster.nodeName || undefined;
  const ibi = resolved.imageBased;
  if (actualCluster !== undefined && resolved.clusterName !== undefined && resolved.clusterName !== actualCluster) {
    if (ibi) f.error('cluster_name', `is '${resolved.clusterName}', but this cluster is named '${actualCluster}': ${KEEPS}`);
    else f.error('spec.clusterName', `is '${resolved.clusterName}', but this cluster is named '${actualCluster}': renaming a cluster is not supported by OpenShift (leave clusterName out, or set it to '${actualCluster}')`);
  }
  if (node !== undefined && resolved.hostname !== undefined && resolved.hostname !== node) {
    if (ibi) f.error('hostname', `is '${resolved.hostname}', but this node is named '${node}': ${KEEPS}`);
    else f.error('spec.hostname', `is '${resolved.hostname}', but this node is named '${node}': changing the node's host name is not supported by OpenShift (leave hostname out, or set it to '${node}')`);
  }
  // node_ips may be an address the site network gives the node (raw_nm_state_config) or one it has: the cluster
  // keeps its own node address either way. Any other address is one only recert could move the cluster to.
  const reachable = [...(cluster.nodeAddresses ?? []), ...addressesFromNmstate(resolved.network?.nmstate)];
  const foreign = (ibi?.nodeIPs ?? []).filter((ip) => !reachable.includes(ip));
  if (foreign.length > 0 && cluster.nodeAddresses?.length) f.error('node_ips', `is ${foreign.join(', ')}, neither an address of this node (${cluster.nodeAddresses.join(', ')}) nor one raw_nm_state_config gives it: ${KEEPS}`);
  // openshift-install draws a new random cluster ID for every config ISO unless image-based-config.yaml gives
  // one (openshift/installer pkg/asset/imagebased/configimage/clusterconfiguration.go): say how to keep this one.
  if (ibi?.clusterID && cluster.clusterID && ibi.clusterID !== cluster.clusterID) {
    f.error('cluster_id', `is ${ibi.clusterID}, but this cluster's ID is ${cluster.clusterID}: ${KEEPS}. openshift-install draws a new cluster ID for each config ISO unless image-based-config.yaml sets clusterID: set it to ${cluster.clusterID} and make the ISO again`);
  }
  const kubeadmin = resolved.kubeadminPassword && 'hash' in resolved.kubeadminPassword && cluster.kubeadmin ? kubeadminProblem(cluster.kubeadmin) : undefined;
  if (kubeadmin) f.error(ibi ? 'kubeadmin_password_hash' : 'spec.kubeadminPassword.hash', kubeadmin);
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
