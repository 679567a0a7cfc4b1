// The noProxy the cluster will use: what the network operator writes into Proxy/cluster status from the
// site's list (cluster-network-operator release-4.12…4.16 pkg/util/proxyconfig/no_proxy.go
// mergeUserSystemNoProxy; image-based install copies the same rule, lifecycle-agent lca-cli/postpivot). The
// agent computes it to show it in `plan` and the report, and to know when the operator has caught up.
import { parseYamlCore } from '../util/yaml';
import { R } from './resources';
import type { ClusterClient, KubeObject } from './types';

export interface NoProxyInputs {
  /** Infrastructure status.apiServerInternalURI (https://api-int.<cluster>.<domain>:6443). */
  apiServerInternalURI: string;
  serviceNetwork: string[];
  clusterNetwork: string[];
  /** install-config networking.machineNetwork[].cidr and the older machineCIDR. */
  machineNetworks: string[];
  /** Infrastructure status.platformStatus.type: clouds add their metadata address. */
  platform: string;
  /** The OpenShift minor: from 4.14 a machine network of 0.0.0.0/0 is left out. */
  minor: number;
}

/** Sorted in byte order and joined with commas, as the operator's sets.String.List(); `*` stays alone. */
export function effectiveNoProxy(user: readonly string[], c: NoProxyInputs): string {
  if (user.length === 1 && user[0] === '*') return '*';
  const set = new Set(['127.0.0.1', 'localhost', '.svc', '.cluster.local']);
  for (const cidr of c.machineNetworks) if (!(c.minor >= 14 && cidr === '0.0.0.0/0')) set.add(cidr);
  set.add(new URL(c.apiServerInternalURI).hostname);
  for (const s of c.serviceNetwork) set.add(s);
  if (['AWS', 'GCP', 'Azure', 'OpenStack'].includes(c.platform)) set.add('169.254.169.254');
  for (const n of c.clusterNetwork) set.add(n);
  for (const u of user) set.add(u);
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',');
}

/** The cluster's values the rule needs; throws naming what is missing, as the operator does. */
export async function readNoProxyInputs(client: ClusterClient, minor: number): Promise<NoProxyInputs> {
  const infra = (await client.get<KubeObject & { status?: { apiServerInternalURI?: string; platformStatus?: { type?: string } } }>(R.infrastructures, 'cluster'))?.status;
  const net = (await client.get<KubeObject & { status?: { serviceNetwork?: string[]; clusterNetwork?: { cidr: string }[] } }>(R.networks, 'cluster'))?.status;
  const ic = (await client.get<KubeObject & { data?: Record<string, string> }>(R.configMaps, 'cluster-config-v1', 'kube-system'))?.data?.['install-config'];
  if (!infra?.apiServerInternalURI) throw new Error('Infrastructure cluster has no status.apiServerInternalURI');
  if (!net?.serviceNetwork?.length || !net.clusterNetwork?.length) throw new Error('Network cluster has no service or cluster network in its status');
  if (!ic) throw new Error('kube-system/cluster-config-v1 has no install-config');
  const networking = (parseYamlCore(ic) as { networking?: { machineCIDR?: string; machineNetwork?: { cidr?: string }[] } } | null)?.networking;
  const machineNetworks = [...(networking?.machineCIDR ? [networking.machineCIDR] : []), ...(networking?.machineNetwork ?? []).map((m) => m.cidr ?? '').filter(Boolean)];
  return { apiServerInternalURI: infra.apiServerInternalURI, serviceNetwork: net.serviceNetwork, clusterNetwork: net.clusterNetwork.map((n) => n.cidr), machineNetworks, platform: infra.platformStatus?.type ?? 'None', minor };
}
