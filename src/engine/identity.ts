// Who this node is: the factory baseline written by `prepare`, and the node name.
import { hostname as osHostname } from 'node:os';
import type { Host } from '../host/host';
import type { Logger } from '../log';
import { BASELINE_FILE, KUBELET_BOOTSTRAP_KUBECONFIG } from '../paths';

/** What `prepare` recorded at the factory (optional: a node prepared by hand has none). */
export interface Baseline {
  /** When the factory ran `prepare` (ISO 8601): the node's clock cannot be earlier. */
  preparedAt?: string;
  clusterName?: string;
  baseDomain?: string;
  nodeName?: string;
  nodeAddresses?: string[];
  internalAddresses?: string[];
  openshiftVersion?: string;
  clusterID?: string;
  /** When kube-system and kube-system/kubeadmin were created, at `prepare` (a kubeadmin hash is judged by them). */
  kubeadmin?: { kubeSystemCreated: string; secretCreated?: string };
}

export async function readBaseline(host: Host, log: Logger): Promise<Baseline> {
  const text = await host.readTextIfExists(BASELINE_FILE);
  if (!text) return {};
  try {
    return JSON.parse(text) as Baseline;
  } catch {
    log.warn(`the factory baseline ${BASELINE_FILE} is not valid JSON; ignoring it`);
    return {};
  }
}

export async function nodeNameOf(host: Host, baseline: Baseline): Promise<string> {
  if (baseline.nodeName) return baseline.nodeName;
  const etcHostname = (await host.readTextIfExists('/etc/hostname'))?.trim();
  return etcHostname || (host.root === '/' ? osHostname() : '');
}

/**
 * The host name of the API server in kubelet's bootstrap kubeconfig (api-int.<cluster>.<installed domain> on an
 * OpenShift node), which the installer writes once and nothing renames; undefined when the file is absent or
 * names an address.
 */
export async function bootstrapApiHost(host: Host): Promise<string | undefined> {
  const text = await host.readTextIfExists(KUBELET_BOOTSTRAP_KUBECONFIG).catch(() => undefined);
  const server = text && /^\s*server:\s*["']?([^\s"']+)/m.exec(text)?.[1];
  if (!server) return undefined;
  try {
    return new URL(server).hostname;
  } catch {
    return undefined;
  }
}

/**
 * The cluster's name without the API: the factory baseline's, else the first label after `api-int.` (or
 * `api.`) of the bootstrap kubeconfig's server. A site-config asking for another name is then refused before
 * anything changes, even on a node prepared without a baseline.
 */
export async function clusterNameOf(host: Host, baseline: Baseline): Promise<string | undefined> {
  if (baseline.clusterName) return baseline.clusterName;
  return /^api(?:-int)?\.([^.]+)\./.exec((await bootstrapApiHost(host)) ?? '')?.[1];
}
