// Image-based install's configuration media as a site-config: `cluster-configuration/manifest.json`, the
// SeedReconfiguration `openshift-install image-based create config-image` writes (openshift-kni/lifecycle-agent
// api/seedreconfig/seedreconfig.go, api_version 1; consumed by lca-cli/postpivot/postpivot.go), with its
// `cluster-configuration/manifests/` and the volume's `extra-manifests/`. What the agent's steps do is mapped
// to site-config fields; what only recert can do — another cluster name, host name, node IP or cluster ID —
// is refused at the node before any change (cluster-check.ts): this node keeps its installed name and IP.
// Semantics follow image-based install: the pull secret and the SSH key replace the cluster's, and an empty
// kubeadmin_password_hash deletes the kubeadmin secret (postpivot.go, "not accepting a possibly compromised
// seed password").
import { parseYamlDocuments } from './parse-text';
import type { ManifestObject } from './manifests';

export const SEED_RECONFIGURATION_FILE = 'cluster-configuration/manifest.json';
/** Relative to manifest.json: the generated mirror sets and the site's extra manifests. */
export const SEED_MANIFESTS_DIR = 'manifests/';
export const SEED_EXTRA_MANIFESTS_DIR = '../extra-manifests/';

/** SeedReconfiguration fields the agent has no use for, and why (shown as warnings when they are set). */
export const IGNORED_SEED_FIELDS: Record<string, string> = {
  infra_id: 'the node keeps its infrastructure ID',
  release_registry: 'the release image stays where the cluster pulls it from',
  KubeconfigCryptoRetention: 'the cluster keeps its own signers and kubeconfigs',
  server_ssh_keys: 'the node keeps its SSH host keys',
  machine_network: 'the cluster keeps its machine network',
  machine_networks: 'the cluster keeps its machine network',
  status_proxy: "the network operator computes the proxy's status",
  install_config: 'the cluster keeps its install-config',
};

export interface SeedTranslation {
  /** The site-config document the translation gives (valid or not: the usual validation judges it). */
  document: Record<string, unknown>;
  /** What needs recert, checked against the node when the agent starts. */
  identity: { nodeIPs?: string[]; clusterID?: string };
  problems: { path: string; message: string }[];
  warnings: { path: string; message: string }[];
}

export const isSeedReconfiguration = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v) && 'api_version' in v && !('apiVersion' in v);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : undefined);

/** `server NAME …` and `pool NAME …` lines of a chrony.conf: the only part of it the agent applies. */
export function chronySources(conf: string): { servers: string[]; pools: string[] } {
  const servers: string[] = [];
  const pools: string[] = [];
  for (const line of conf.split('\n')) {
    const m = /^\s*(server|pool)\s+(\S+)/.exec(line);
    if (m) (m[1] === 'server' ? servers : pools).push(m[2]!);
  }
  return { servers, pools };
}

/** The mirrors of generated ImageDigestMirrorSets and ImageContentSourcePolicies; anything else is a problem. */
function mirrorsOf(objects: ManifestObject[], problems: SeedTranslation['problems'], path: string): { source: string; mirrors: string[] }[] {
  const out: { source: string; mirrors: string[] }[] = [];
  for (const o of objects) {
    const spec = (o.spec ?? {}) as { imageDigestMirrors?: { source: string; mirrors?: string[] }[]; repositoryDigestMirrors?: { source: string; mirrors?: string[] }[] };
    const entries = o.kind === 'ImageDigestMirrorSet' ? spec.imageDigestMirrors : o.kind === 'ImageContentSourcePolicy' ? spec.repositoryDigestMirrors : undefined;
    if (entries) out.push(...entries.map((e) => ({ source: e.source, mirrors: e.mirrors ?? [] })));
    // The SSH MachineConfigs image-based install generates carry ssh_key, which is mapped itself.
    else if (!(o.kind === 'MachineConfig' && /-ssh$/.test(o.metadata.name))) problems.push({ path, message: `holds ${o.kind} ${o.metadata.name}: only mirror sets are read from there (put other objects in extra-manifests/)` });
  }
  return out;
}

type DigestSource = { source: string; mirrors?: string[]; sourcePolicy?: string };
const DIGEST_SOURCE_KEYS = ['source', 'mirrors', 'sourcePolicy'];

/**
 * openshift-install's image-digest-sources.json: the install-config's imageDigestSources as they are, a list of
 * {source, mirrors, sourcePolicy} rather than objects (openshift/installer
 * pkg/asset/imagebased/configimage/imagedigestsources.go; keys from pkg/types/installconfig.go ImageDigestSource).
 */
function isDigestSourceList(v: unknown): v is DigestSource[] {
  return Array.isArray(v) && v.every((e) => typeof e === 'object' && e !== null && !('kind' in e) && typeof (e as DigestSource).source === 'string');
}

function digestSourceMirrors(list: DigestSource[], out: Pick<SeedTranslation, 'problems' | 'warnings'>, path: string): { source: string; mirrors: string[] }[] {
  list.forEach((e, i) => {
    const unknown = Object.keys(e).filter((k) => !DIGEST_SOURCE_KEYS.includes(k));
    if (unknown.length > 0) out.problems.push({ path, message: `[${i}]: unknown field '${unknown[0]}' (an install-config imageDigestSources entry has source, mirrors and sourcePolicy)` });
    if (e.sourcePolicy) out.warnings.push({ path, message: `[${i}].sourcePolicy: ${e.sourcePolicy} is not applied: the agent's mirror set takes no source policy, so pulls may still try ${e.source}` });
  });
  return list.map((e) => ({ source: e.source, mirrors: e.mirrors ?? [] }));
}

/**
 * The site-config of a SeedReconfiguration. `manifests`: the files of cluster-configuration/manifests/ (name →
 * text); `extraManifests`: whether the volume has an extra-manifests/ folder.
 */
export function fromSeedReconfiguration(seed: Record<string, unknown>, manifests: Record<string, string>, extraManifests: boolean): SeedTranslation {
  const problems: SeedTranslation['problems'] = [];
  const warnings: SeedTranslation['warnings'] = [];
  if (seed.api_version !== 1) problems.push({ path: 'api_version', message: `is ${JSON.stringify(seed.api_version)}: only version 1 of image-based install's SeedReconfiguration is understood` });
  for (const [field, why] of Object.entries(IGNORED_SEED_FIELDS)) {
    const v = seed[field];
    // Unset is absent (Go's omitempty), or null, '', [] or {} in a manifest.json written by other means.
    if (v !== undefined && v !== null && v !== '' && !(typeof v === 'object' && Object.keys(v).length === 0)) warnings.push({ path: field, message: `is not applied: ${why}` });
  }
  const spec: Record<string, unknown> = { baseDomain: seed.base_domain };
  if (str(seed.cluster_name)) spec.clusterName = seed.cluster_name;
  if (str(seed.hostname)) spec.hostname = seed.hostname;
  if (str(seed.raw_nm_state_config)) {
    const parsed = parseYamlDocuments(seed.raw_nm_state_config as string, false);
    if (parsed.ok) spec.network = { nmstate: parsed.values[0] };
    else problems.push({ path: 'raw_nm_state_config', message: parsed.messages.join('; ') });
  }
  if (str(seed.pull_secret)) {
    try {
      spec.pullSecret = JSON.parse(seed.pull_secret as string);
      spec.pullSecretMode = 'replace';
    } catch {
      problems.push({ path: 'pull_secret', message: 'is not JSON: a pull secret ({"auths": {...}}) is expected' });
    }
  }
  if (str(seed.ssh_key)) spec.ssh = { authorizedKeys: (seed.ssh_key as string).split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')), factoryKeys: 'replace' };
  spec.kubeadminPassword = str(seed.kubeadmin_password_hash) ? { hash: seed.kubeadmin_password_hash } : { remove: true };
  const proxy = (seed.proxy ?? {}) as { httpProxy?: string; httpsProxy?: string; noProxy?: string };
  const bundle = (seed.additionalTrustBundle ?? {}) as { userCaBundle?: string; proxyConfigmapBundle?: string };
  if (str(proxy.httpProxy) || str(proxy.httpsProxy)) {
    spec.proxy = {
      ...(str(proxy.httpProxy) ? { httpProxy: proxy.httpProxy } : {}),
      ...(str(proxy.httpsProxy) ? { httpsProxy: proxy.httpsProxy } : {}),
      ...(str(proxy.noProxy) ? { noProxy: proxy.noProxy!.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
      ...(str(bundle.proxyConfigmapBundle) ? { trustedCA: bundle.proxyConfigmapBundle } : {}),
    };
  }
  if (str(bundle.userCaBundle)) spec.additionalTrustBundle = bundle.userCaBundle;
  if (str(seed.chrony_config)) {
    const sources = chronySources(seed.chrony_config as string);
    if (sources.servers.length + sources.pools.length > 0) spec.ntp = { ...(sources.servers.length ? { servers: sources.servers } : {}), ...(sources.pools.length ? { pools: sources.pools } : {}) };
  }
  if (seed.node_labels && typeof seed.node_labels === 'object' && Object.keys(seed.node_labels).length > 0) spec.nodeLabels = { set: seed.node_labels };
  const mirrors: { source: string; mirrors: string[] }[] = [];
  for (const [name, text] of Object.entries(manifests)) {
    const path = `cluster-configuration/${SEED_MANIFESTS_DIR}${name}`;
    const parsed = parseYamlDocuments(text);
    if (!parsed.ok) {
      problems.push({ path, message: parsed.messages.join('; ') });
      continue;
    }
    const objects: ManifestObject[] = [];
    for (const v of parsed.values) {
      if (isDigestSourceList(v)) mirrors.push(...digestSourceMirrors(v, { problems, warnings }, path));
      else objects.push(...((Array.isArray(v) ? v : (v as { items?: unknown[] }).items ?? [v]) as ManifestObject[]));
    }
    mirrors.push(...mirrorsOf(objects, problems, path));
  }
  if (mirrors.length > 0) spec.imageDigestMirrors = mirrors;
  if (extraManifests) spec.extraManifestFiles = [SEED_EXTRA_MANIFESTS_DIR];
  const nodeIPs = Array.isArray(seed.node_ips) && seed.node_ips.length > 0 ? (seed.node_ips as string[]) : str(seed.node_ip) ? [seed.node_ip as string] : undefined;
  const name = `image-based config ${String(seed.cluster_name ?? '')}.${String(seed.base_domain ?? '')}`;
  return {
    document: { apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name }, spec },
    identity: { ...(nodeIPs ? { nodeIPs } : {}), ...(str(seed.cluster_id) ? { clusterID: seed.cluster_id as string } : {}) },
    problems,
    warnings,
  };
}
