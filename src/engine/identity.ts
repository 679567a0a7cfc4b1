// Who this node is: the factory baseline written by `prepare`, and the node name.
import { hostname as osHostname } from 'node:os';
import { whyUnreadable, type Host } from '../host/host';
import { isPlainObject } from '../siteconfig/problems';
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

const isString = (v: unknown) => typeof v === 'string';
const isStrings = (v: unknown) => Array.isArray(v) && v.every(isString);
/** What `prepare` writes in each field (src/factory/prepare.ts): a field of another type means the file is damaged. */
const BASELINE_FIELDS: Record<keyof Baseline, (v: unknown) => boolean> = {
  preparedAt: isString,
  clusterName: isString,
  baseDomain: isString,
  nodeName: isString,
  nodeAddresses: isStrings,
  internalAddresses: isStrings,
  openshiftVersion: isString,
  clusterID: isString,
  kubeadmin: (v) => isPlainObject(v) && isString(v.kubeSystemCreated) && (v.secretCreated === undefined || isString(v.secretCreated)),
};

/**
 * The factory's record. A damaged one (the node's own file, but disks fail and hands edit) is said and the agent goes
 * on as on a node prepared by hand, never a crash (the tenth hostile re-test of issue 36: `null` in it stopped every
 * start with a stack trace).
 */
export async function readBaseline(host: Host, log: Logger): Promise<Baseline> {
  let data: unknown;
  let problem: string | undefined;
  try {
    const text = await host.readTextIfExists(BASELINE_FILE);
    if (!text) return {};
    data = JSON.parse(text);
  } catch (e) {
    problem = e instanceof SyntaxError ? 'it is not complete JSON' : whyUnreadable(e);
  }
  if (problem === undefined && !isPlainObject(data)) problem = 'it holds no record of the node';
  const wrong = isPlainObject(data) ? Object.entries(BASELINE_FIELDS).filter(([k, ok]) => data[k] !== undefined && !ok(data[k])).map(([k]) => k) : [];
  if (problem === undefined && wrong.length > 0) problem = `its ${wrong.join(', ')} ${wrong.length > 1 ? 'are' : 'is'} not what prepare writes`;
  if (problem === undefined) return data as Baseline;
  log.warn(`the factory's record of this node (baseline.json) cannot be used: ${problem}. The agent goes on without it, so it cannot compare the site-config with the names the node was installed with; if the run fails on the cluster name or the network, call the office (the factory's prepare writes the record again)`);
  return {};
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
