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
import { describeType, formatPath, isPlainObject } from './problems';

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
  /** Translated path → the manifest.json field (or file) it came from; see seedPathOf. */
  origins: [string, string][];
  problems: { path: string; message: string }[];
  warnings: { path: string; message: string }[];
}

/**
 * A SeedReconfiguration: a mapping with api_version and no apiVersion — or any mapping without apiVersion read
 * from cluster-configuration/manifest.json, which can only be one (then "api_version is required" says what it lacks).
 */
export const isSeedReconfiguration = (v: unknown, fileName?: string): v is Record<string, unknown> =>
  isPlainObject(v) && !('apiVersion' in v) && ('api_version' in v || (fileName !== undefined && isSeedReconfigurationFile(fileName)));

/** Whether a path is image-based install's cluster-configuration/manifest.json. */
export const isSeedReconfigurationFile = (p: string): boolean => p.replace(/\\/g, '/').endsWith(SEED_RECONFIGURATION_FILE);

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

type Mirror = { source: string; mirrors: string[] };

/** `at: message`, or the message alone when it is about the whole file. */
const located = (at: string, message: string): string => (at === '' ? message : `${at}: ${message}`);
const below = (at: string, key: string): string => (at === '' ? key : `${at}.${key}`);

/**
 * One mirror entry: an install-config imageDigestSources entry {source, mirrors, sourcePolicy} (openshift/installer
 * pkg/types/installconfig.go ImageDigestSource), an IDMS imageDigestMirrors entry {source, mirrors,
 * mirrorSourcePolicy} or an ICSP repositoryDigestMirrors entry {source, mirrors} (openshift/api config/v1
 * types_image_digest_mirrors.go, operator/v1alpha1 types_image_content_source_policy.go).
 */
function mirrorEntry(e: unknown, at: string, what: string, known: string[], policy: string | undefined, out: { problems: string[]; warnings: string[] }): Mirror | undefined {
  if (!isPlainObject(e)) {
    out.problems.push(located(at, `expected a mapping with source and mirrors, got ${describeType(e)}`));
    return undefined;
  }
  const unknown = Object.keys(e).filter((k) => !known.includes(k));
  if (unknown.length > 0) out.problems.push(located(at, `unknown field '${unknown[0]!.slice(0, 100)}' (${what} entry has ${known.slice(0, -1).join(', ')} and ${known[known.length - 1]!})`));
  const { source, mirrors } = e;
  let ok = true;
  if (typeof source !== 'string' || source === '') {
    out.problems.push(located(below(at, 'source'), 'is required: the registry or repository the images are named by'));
    ok = false;
  }
  if (mirrors !== undefined && mirrors !== null && !(Array.isArray(mirrors) && mirrors.every((m) => typeof m === 'string'))) {
    out.problems.push(located(below(at, 'mirrors'), `expected a list of registry or repository names, got ${describeType(mirrors)}`));
    ok = false;
  }
  if (policy !== undefined && e[policy] !== undefined && e[policy] !== null && e[policy] !== '') {
    if (typeof e[policy] !== 'string') out.problems.push(located(below(at, policy), `expected a string, got ${describeType(e[policy])}`));
    else if (ok) out.warnings.push(located(below(at, policy), `${e[policy]} is not applied: the agent's mirror set takes no source policy, so pulls may still try ${source as string}`));
  }
  return ok ? { source: source as string, mirrors: (mirrors ?? []) as string[] } : undefined;
}

const DIGEST_SOURCE_KEYS = ['source', 'mirrors', 'sourcePolicy'];
const MIRROR_SETS: Record<string, { list: string; what: string; known: string[]; policy?: string }> = {
  ImageDigestMirrorSet: { list: 'imageDigestMirrors', what: 'an ImageDigestMirrorSet', known: ['source', 'mirrors', 'mirrorSourcePolicy'], policy: 'mirrorSourcePolicy' },
  ImageContentSourcePolicy: { list: 'repositoryDigestMirrors', what: 'an ImageContentSourcePolicy', known: ['source', 'mirrors'] },
};

/** The mirrors of one object of cluster-configuration/manifests/: a generated IDMS or ICSP; anything else is a problem. */
function objectMirrors(o: unknown, at: string, out: { problems: string[]; warnings: string[] }): Mirror[] {
  const kind = isPlainObject(o) && typeof o.kind === 'string' ? o.kind : undefined;
  const name = isPlainObject(o) && isPlainObject(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name.slice(0, 100) : undefined;
  if (kind === undefined) {
    out.problems.push(located(at, `expected a mirror set object (kind ImageDigestMirrorSet or ImageContentSourcePolicy) or a list of {source, mirrors} entries, got ${isPlainObject(o) ? 'a mapping without kind' : describeType(o)}`));
    return [];
  }
  const set = MIRROR_SETS[kind];
  if (!set) {
    // The SSH MachineConfigs image-based install generates carry ssh_key, which is mapped itself.
    if (!(kind === 'MachineConfig' && name !== undefined && /-ssh$/.test(name))) out.problems.push(located(at, `holds ${kind.slice(0, 100)} ${name ?? '(no metadata.name)'}: only mirror sets are read from there (put other objects in extra-manifests/)`));
    return [];
  }
  const entries = isPlainObject(o) && isPlainObject(o.spec) ? o.spec[set.list] : undefined;
  if (!Array.isArray(entries)) {
    out.problems.push(located(at, `${kind} ${name ?? ''} has no spec.${set.list} list`));
    return [];
  }
  return entries.flatMap((e, i) => mirrorEntry(e, `${below(at, `spec.${set.list}`)}[${i}]`, set.what, set.known, set.policy, out) ?? []);
}

/**
 * The mirrors one file of cluster-configuration/manifests/ holds. openshift-install writes there
 * image-digest-sources.json, the install-config's imageDigestSources as they are, a JSON list of {source, mirrors,
 * sourcePolicy} (openshift/installer pkg/asset/imagebased/configimage/imagedigestsources.go); other tools write
 * mirror-set objects. Messages start with where in the file (`[0].source: …`), or with nothing for the whole file.
 */
export function seedManifestMirrors(name: string, text: string): { mirrors: Mirror[]; problems: string[]; warnings: string[] } {
  const out = { mirrors: [] as Mirror[], problems: [] as string[], warnings: [] as string[] };
  if (/\.json$/i.test(name)) {
    try {
      JSON.parse(text);
    } catch {
      out.problems.push('is not valid JSON: openshift-install writes this file as a JSON list of {source, mirrors} entries');
      return out;
    }
  }
  const parsed = parseYamlDocuments(text);
  if (!parsed.ok) {
    out.problems.push(...parsed.messages);
    return out;
  }
  parsed.values.forEach((v, d) => {
    const doc = parsed.values.length > 1 ? `document ${d + 1} ` : '';
    if (Array.isArray(v) && v.every((e) => !isPlainObject(e) || !('kind' in e))) {
      v.forEach((e, i) => {
        const m = mirrorEntry(e, `${doc}[${i}]`, 'an install-config imageDigestSources', DIGEST_SOURCE_KEYS, 'sourcePolicy', out);
        if (m) out.mirrors.push(m);
      });
    } else if (Array.isArray(v)) v.forEach((o, i) => out.mirrors.push(...objectMirrors(o, `${doc}[${i}]`, out)));
    else if (isPlainObject(v) && Array.isArray(v.items)) v.items.forEach((o, i) => out.mirrors.push(...objectMirrors(o, `${doc}items[${i}]`, out)));
    else out.mirrors.push(...objectMirrors(v, doc.trim(), out));
  });
  return out;
}

/** Fields of SeedReconfiguration that are strings (json tags of seedreconfig.go): another type is refused, as Go's json.Unmarshal refuses it. */
const STRING_FIELDS = ['base_domain', 'cluster_name', 'cluster_id', 'infra_id', 'node_ip', 'release_registry', 'hostname', 'ssh_key', 'kubeadmin_password_hash', 'raw_nm_state_config', 'pull_secret', 'machine_network', 'install_config', 'chrony_config'];
const OBJECT_FIELDS = ['proxy', 'status_proxy', 'additionalTrustBundle', 'node_labels', 'KubeconfigCryptoRetention'];
const LIST_FIELDS = ['node_ips', 'machine_networks', 'server_ssh_keys'];

function typeProblems(seed: Record<string, unknown>): SeedTranslation['problems'] {
  const problems: SeedTranslation['problems'] = [];
  const wrong = (field: string, expected: string) => problems.push({ path: field, message: `expected ${expected}, got ${describeType(seed[field])}` });
  for (const field of STRING_FIELDS) if (seed[field] !== undefined && seed[field] !== null && typeof seed[field] !== 'string') wrong(field, 'a string');
  for (const field of OBJECT_FIELDS) if (seed[field] !== undefined && seed[field] !== null && !isPlainObject(seed[field])) wrong(field, 'a mapping');
  for (const field of LIST_FIELDS) if (seed[field] !== undefined && seed[field] !== null && !Array.isArray(seed[field])) wrong(field, 'a list');
  for (const [field, keys] of [['proxy', ['httpProxy', 'httpsProxy', 'noProxy']], ['additionalTrustBundle', ['userCaBundle', 'proxyConfigmapName', 'proxyConfigmapBundle']]] as const) {
    const o = seed[field];
    if (!isPlainObject(o)) continue;
    for (const k of keys) if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'string') problems.push({ path: `${field}.${k}`, message: `expected a string, got ${describeType(o[k])}` });
  }
  if (Array.isArray(seed.node_ips)) seed.node_ips.forEach((ip, i) => typeof ip !== 'string' && problems.push({ path: `node_ips[${i}]`, message: `expected an IP address string, got ${describeType(ip)}` }));
  return problems;
}

/**
 * Where a problem the site-config validation finds in the translation is in manifest.json: the field the person
 * wrote (`kubeadmin_password_hash`, `ssh_key (line 2)`), not the site-config field it became. `origins` pairs a
 * translated path with the manifest.json field (or file) it came from; the longest matching one wins.
 */
export function seedPathOf(origins: readonly (readonly [string, string])[], path: string): string {
  let best: readonly [string, string] | undefined;
  for (const o of origins) {
    const [from] = o;
    const under = path === from || path.startsWith(`${from}.`) || path.startsWith(`${from}[`);
    if (under && (!best || from.length > best[0].length)) best = o;
  }
  if (!best) return path;
  const rest = path.slice(best[0].length);
  // A file's own position (`file[0]`) reads as the file; a field's rest is its sub-path.
  return best[1].includes('/') || best[1].includes(' ') ? best[1] : `${best[1]}${rest}`;
}

/**
 * The site-config of a SeedReconfiguration. `manifests`: the files of cluster-configuration/manifests/ (name →
 * text); `extraManifests`: whether the volume has an extra-manifests/ folder.
 */
export function fromSeedReconfiguration(seed: Record<string, unknown>, manifests: Record<string, string>, extraManifests: boolean): SeedTranslation {
  const problems: SeedTranslation['problems'] = typeProblems(seed);
  const warnings: SeedTranslation['warnings'] = [];
  const origins: [string, string][] = [
    ['spec.baseDomain', 'base_domain'],
    ['spec.clusterName', 'cluster_name'],
    ['spec.hostname', 'hostname'],
    ['spec.network', 'raw_nm_state_config'],
    ['spec.network.nmstate', 'raw_nm_state_config'],
    ['spec.pullSecret', 'pull_secret'],
    ['spec.pullSecretMode', 'pull_secret'],
    ['spec.ssh', 'ssh_key'],
    ['spec.kubeadminPassword', 'kubeadmin_password_hash'],
    ['spec.kubeadminPassword.hash', 'kubeadmin_password_hash'],
    ['spec.proxy', 'proxy'],
    ['spec.proxy.trustedCA', 'additionalTrustBundle.proxyConfigmapBundle'],
    ['spec.additionalTrustBundle', 'additionalTrustBundle.userCaBundle'],
    ['spec.ntp', 'chrony_config'],
    ['spec.nodeLabels', 'node_labels'],
    ['spec.nodeLabels.set', 'node_labels'],
    ['spec.imageDigestMirrors', `cluster-configuration/${SEED_MANIFESTS_DIR}`],
    ['spec.extraManifestFiles', SEED_EXTRA_MANIFESTS_DIR.replace(/^\.\.\//, '')],
  ];
  if (seed.api_version === undefined) problems.push({ path: 'api_version', message: "is required (1): cluster-configuration/manifest.json is image-based install's SeedReconfiguration, version 1" });
  else if (seed.api_version !== 1) problems.push({ path: 'api_version', message: `is ${JSON.stringify(seed.api_version) ?? describeType(seed.api_version)}: only version 1 of image-based install's SeedReconfiguration is understood` });
  const known = ['api_version', ...STRING_FIELDS, ...OBJECT_FIELDS, ...LIST_FIELDS];
  // lifecycle-agent reads manifest.json with encoding/json, which skips fields it does not know: so does the agent.
  for (const field of Object.keys(seed)) if (!known.includes(field)) warnings.push({ path: formatPath([field]), message: 'is not a field of SeedReconfiguration version 1: it is ignored (check its spelling)' });
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
  if (str(seed.ssh_key)) {
    const keys: string[] = [];
    (seed.ssh_key as string).split('\n').forEach((line, n) => {
      const key = line.trim();
      if (key === '' || key.startsWith('#')) return;
      origins.push([`spec.ssh.authorizedKeys[${keys.length}]`, `ssh_key (line ${n + 1})`]);
      keys.push(key);
    });
    spec.ssh = { authorizedKeys: keys, factoryKeys: 'replace' };
  }
  spec.kubeadminPassword = str(seed.kubeadmin_password_hash) ? { hash: seed.kubeadmin_password_hash } : { remove: true };
  const proxy = (isPlainObject(seed.proxy) ? seed.proxy : {}) as { httpProxy?: unknown; httpsProxy?: unknown; noProxy?: unknown };
  const bundle = (isPlainObject(seed.additionalTrustBundle) ? seed.additionalTrustBundle : {}) as { userCaBundle?: unknown; proxyConfigmapBundle?: unknown };
  if (str(proxy.httpProxy) || str(proxy.httpsProxy)) {
    spec.proxy = {
      ...(str(proxy.httpProxy) ? { httpProxy: proxy.httpProxy } : {}),
      ...(str(proxy.httpsProxy) ? { httpsProxy: proxy.httpsProxy } : {}),
      ...(str(proxy.noProxy) ? { noProxy: (proxy.noProxy as string).split(',').map((s) => s.trim()).filter(Boolean) } : {}),
      ...(str(bundle.proxyConfigmapBundle) ? { trustedCA: bundle.proxyConfigmapBundle } : {}),
    };
  }
  if (str(bundle.userCaBundle)) spec.additionalTrustBundle = bundle.userCaBundle;
  if (str(seed.chrony_config)) {
    const sources = chronySources(seed.chrony_config as string);
    if (sources.servers.length + sources.pools.length > 0) spec.ntp = { ...(sources.servers.length ? { servers: sources.servers } : {}), ...(sources.pools.length ? { pools: sources.pools } : {}) };
  }
  if (isPlainObject(seed.node_labels) && Object.keys(seed.node_labels).length > 0) spec.nodeLabels = { set: seed.node_labels };
  const mirrors: Mirror[] = [];
  for (const [name, text] of Object.entries(manifests)) {
    const path = `cluster-configuration/${SEED_MANIFESTS_DIR}${name}`;
    const found = seedManifestMirrors(name, text);
    for (const m of found.problems) problems.push({ path, message: m });
    for (const m of found.warnings) warnings.push({ path, message: m });
    found.mirrors.forEach((_, i) => origins.push([`spec.imageDigestMirrors[${mirrors.length + i}]`, path]));
    mirrors.push(...found.mirrors);
  }
  if (mirrors.length > 0) spec.imageDigestMirrors = mirrors;
  if (extraManifests) spec.extraManifestFiles = [SEED_EXTRA_MANIFESTS_DIR];
  const nodeIPs = Array.isArray(seed.node_ips) && seed.node_ips.length > 0 ? seed.node_ips.filter((ip): ip is string => typeof ip === 'string') : str(seed.node_ip) ? [seed.node_ip as string] : undefined;
  const name = `image-based config ${str(seed.cluster_name) ?? ''}.${str(seed.base_domain) ?? ''}`;
  return {
    document: { apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name }, spec },
    identity: { ...(nodeIPs && nodeIPs.length > 0 ? { nodeIPs } : {}), ...(str(seed.cluster_id) ? { clusterID: seed.cluster_id as string } : {}) },
    origins,
    problems,
    warnings,
  };
}
