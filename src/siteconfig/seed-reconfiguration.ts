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
import { SEED_RECONFIGURATION_FILE } from './media-names';

export { SEED_RECONFIGURATION_FILE };
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

/** A mirror entry as written: the site-config schema judges it as spec.imageDigestMirrors; `at` is where in its file. */
type Mirror = { source: unknown; mirrors: unknown; at: string };
type Found = { mirrors: Mirror[]; problems: string[]; warnings: string[] };

// The entries of openshift-install's image-digest-sources.json (the install-config's imageDigestSources as they are:
// openshift/installer pkg/asset/imagebased/configimage/imagedigestsources.go, keys of pkg/types/installconfig.go
// ImageDigestSource), and of the mirror-set objects other tools write (openshift/api config/v1
// types_image_digest_mirrors.go, operator/v1alpha1 types_image_content_source_policy.go): list and keys.
const ENTRIES: Record<string, [string, string[]]> = {
  '': ['', ['source', 'mirrors', 'sourcePolicy']],
  ImageDigestMirrorSet: ['imageDigestMirrors', ['source', 'mirrors', 'mirrorSourcePolicy']],
  ImageContentSourcePolicy: ['repositoryDigestMirrors', ['source', 'mirrors']],
};

function readEntries(list: unknown[], at: string, kind: string, out: Found): void {
  const known = ENTRIES[kind]![1];
  list.forEach((e, i) => {
    const where = `${at}[${i}]`;
    if (!isPlainObject(e)) return void out.problems.push(`${where}: expected a mapping with source and mirrors, got ${describeType(e)}`);
    const unknown = Object.keys(e).find((k) => !known.includes(k));
    if (unknown !== undefined) out.problems.push(`${where}: unknown field '${unknown.slice(0, 100)}' (an ${kind || 'install-config imageDigestSources'} entry has ${known.slice(0, -1).join(', ')} and ${known.at(-1)!})`);
    const policy = known[2] === undefined ? undefined : e[known[2]];
    // AllowContactingSource is what the agent's mirror set does anyway (openshift/api config/v1 MirrorSourcePolicy).
    if (typeof policy === 'string' && policy !== '' && policy !== 'AllowContactingSource') out.warnings.push(`${where}.${known[2]!}: ${policy.slice(0, 100)} is not applied: the agent's mirror set takes no source policy, so pulls may still try ${String(e.source).slice(0, 200)}`);
    out.mirrors.push({ source: e.source, mirrors: e.mirrors ?? [], at: where });
  });
}

/** One object of cluster-configuration/manifests/: a mirror set gives its entries; anything else is a problem. */
function readObject(o: unknown, at: string, out: Found): void {
  const kind = isPlainObject(o) && typeof o.kind === 'string' ? o.kind.slice(0, 100) : undefined;
  const name = isPlainObject(o) && isPlainObject(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name.slice(0, 100) : '';
  const problem = (m: string) => void out.problems.push(at === '' ? m : `${at}: ${m}`);
  if (kind === undefined) return problem(`expected a list of {source, mirrors} entries or a mirror set object, got ${isPlainObject(o) ? 'a mapping without kind' : describeType(o)}`);
  const list = Object.hasOwn(ENTRIES, kind) ? ENTRIES[kind]![0] : undefined;
  const spec = isPlainObject(o) && isPlainObject(o.spec) ? o.spec : {};
  // What is not read of an object is said, as a source policy is (the fourth hostile re-test of issue 36: extra
  // content passed validate without a word).
  const unread = (fields: string[], why: string) => {
    if (fields.length > 0) out.warnings.push(`${at === '' ? '' : `${at}: `}${kind} ${name}: ${fields.slice(0, 5).join(', ')}${fields.length > 5 ? ` and ${fields.length - 5} more` : ''} ${fields.length === 1 ? 'is' : 'are'} not applied: ${why}`);
  };
  // The SSH MachineConfigs image-based install generates carry ssh_key, which is mapped itself (openshift/installer
  // pkg/asset/machines/machineconfig/authorizedkeys.go ForAuthorizedKeys: spec.config with ignition.version and
  // passwd.users' sshAuthorizedKeys; openshift/api machineconfiguration/v1 MachineConfigSpec writes osImageURL,
  // kernelArguments, extensions, fips and kernelType without omitempty, so they come empty).
  if (!list && kind === 'MachineConfig' && /-ssh$/.test(name)) {
    const config = isPlainObject(spec.config) ? spec.config : {};
    const set = (v: unknown) => given(v) && v !== false && !(Array.isArray(v) && v.length === 0) && !(isPlainObject(v) && Object.keys(v).length === 0);
    const extra = [...Object.keys(spec).filter((k) => k !== 'config' && set(spec[k])).map((k) => `spec.${k}`), ...Object.keys(config).filter((k) => k !== 'ignition' && k !== 'passwd' && set(config[k])).map((k) => `spec.config.${k}`)];
    return unread(extra.map((f) => f.slice(0, 100)), "the SSH key is taken from manifest.json's ssh_key; put other objects in extra-manifests/");
  }
  if (!list) return problem(`holds ${kind} ${name}: only mirror sets are read from there (put other objects in extra-manifests/)`);
  const entries = spec[list];
  if (!Array.isArray(entries)) return problem(`${kind} ${name} has no spec.${list} list`);
  unread(Object.keys(spec).filter((k) => k !== list).map((k) => `spec.${k.slice(0, 100)}`), `only spec.${list} is read from an ${kind} here (tag mirrors need signed media and spec.imageTagMirrors in a site-config)`);
  readEntries(entries, `${at === '' ? '' : `${at}.`}spec.${list}`, kind, out);
}

/**
 * The mirrors one file of cluster-configuration/manifests/ holds: openshift-install's list of entries, or mirror-set
 * objects. Messages start with where in the file (`[0]: …`), or with nothing for the whole file.
 */
export function seedManifestMirrors(name: string, text: string): Found {
  const out: Found = { mirrors: [], problems: [], warnings: [] };
  try {
    if (/\.json$/i.test(name)) JSON.parse(text);
  } catch {
    out.problems.push('is not valid JSON: openshift-install writes this file as a JSON list of {source, mirrors} entries');
    return out;
  }
  const parsed = parseYamlDocuments(text);
  if (!parsed.ok) return { ...out, problems: parsed.messages };
  parsed.values.forEach((v, d) => {
    const doc = parsed.values.length > 1 ? `document ${d + 1} ` : '';
    if (Array.isArray(v) && v.every((e) => !isPlainObject(e) || !('kind' in e))) readEntries(v, doc, '', out);
    else if (Array.isArray(v)) v.forEach((o, i) => readObject(o, `${doc}[${i}]`, out));
    else if (isPlainObject(v) && Array.isArray(v.items)) v.items.forEach((o, i) => readObject(o, `${doc}items[${i}]`, out));
    else readObject(v, doc.trim(), out);
  });
  return out;
}

/**
 * The one field the agent adds to a SeedReconfiguration: what binds signed media to a machine and a date and pins
 * the files beside manifest.json (its `.sig` covers manifest.json's bytes only). lifecycle-agent reads manifest.json
 * with apimachinery's YAMLOrJSONDecoder (utils/client_helper.go ReadSeedReconfigurationFromFile → ReadYamlOrJSONFile),
 * which decodes JSON with encoding/json and skips a field it does not know, so the same ISO still installs. Its keys are the site-config's: `match` becomes spec.match,
 * `issued` and `expires` metadata.issued and metadata.expires, `sha256` spec.sha256 (paths relative to manifest.json).
 */
export const SEED_BINDING_FIELD = 'sno_reconfigure';
const BINDING_KEYS = ['match', 'issued', 'expires', 'sha256'];

/** The json tags of SeedReconfiguration version 1 (lifecycle-agent api/seedreconfig/seedreconfig.go): these and IGNORED_SEED_FIELDS. */
/** RHEL's default public NTP pool (chrony's rhel chrony.conf: `pool 2.rhel.pool.ntp.org iburst`; 0–3). */
const RHEL_PUBLIC_POOL = /^[0-3]\.rhel\.pool\.ntp\.org$/i;

const SEED_FIELDS = ['api_version', 'base_domain', 'cluster_name', 'cluster_id', 'node_ip', 'node_ips', 'hostname', 'ssh_key', 'kubeadmin_password_hash', 'raw_nm_state_config', 'pull_secret', 'proxy', 'chrony_config', 'additionalTrustBundle', 'node_labels', SEED_BINDING_FIELD];
const given = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

/**
 * Fields the translation reads itself rather than handing them to the site-config schema: another type is refused,
 * as Go's json.Unmarshal refuses it.
 */
function typeProblems(seed: Record<string, unknown>): SeedTranslation['problems'] {
  const wrong: [string, string][] = [];
  for (const f of ['raw_nm_state_config', 'pull_secret', 'ssh_key', 'chrony_config', 'cluster_id', 'node_ip']) if (given(seed[f]) && typeof seed[f] !== 'string') wrong.push([f, 'a string']);
  for (const f of ['proxy', 'additionalTrustBundle', SEED_BINDING_FIELD]) if (given(seed[f]) && !isPlainObject(seed[f])) wrong.push([f, 'a mapping']);
  const problems = wrong.map(([path, what]) => ({ path, message: `expected ${what}, got ${describeType(seed[path])}` }));
  if (given(seed.node_ips) && !(Array.isArray(seed.node_ips) && seed.node_ips.every((ip) => typeof ip === 'string'))) problems.push({ path: 'node_ips', message: 'must be a list of IP address strings' });
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
  // A folder (extra-manifests/) and a line (ssh_key (line 2)) are named as they are; a field or an entry with its sub-path.
  return !best ? path : /\/$| /.test(best[1]) ? best[1] : `${best[1]}${path.slice(best[0].length)}`;
}

/**
 * The site-config of a SeedReconfiguration. `manifests`: the files of cluster-configuration/manifests/ (name →
 * text); `extraManifests`: whether the volume has an extra-manifests/ folder. Values are handed on as written, so the
 * site-config's own checks judge them; `origins` names them back by their manifest.json fields.
 */
export function fromSeedReconfiguration(seed: Record<string, unknown>, manifests: Record<string, string>, extraManifests: boolean): SeedTranslation {
  const problems = typeProblems(seed);
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
    ['spec.ssh.authorizedKeys', 'ssh_key'],
    ['spec.kubeadminPassword', 'kubeadmin_password_hash'],
    ['spec.kubeadminPassword.hash', 'kubeadmin_password_hash'],
    ['spec.proxy', 'proxy'],
    ['spec.proxy.trustedCA', 'additionalTrustBundle.proxyConfigmapBundle'],
    ['spec.additionalTrustBundle', 'additionalTrustBundle.userCaBundle'],
    ['spec.ntp', 'chrony_config'],
    ['spec.nodeLabels', 'node_labels'],
    ['spec.nodeLabels.set', 'node_labels'],
    ['spec.imageDigestMirrors', `cluster-configuration/${SEED_MANIFESTS_DIR}`],
    ['spec.extraManifestFiles', 'extra-manifests/'],
    ['spec.match', `${SEED_BINDING_FIELD}.match`],
    ['spec.sha256', `${SEED_BINDING_FIELD}.sha256`],
    ['metadata.issued', `${SEED_BINDING_FIELD}.issued`],
    ['metadata.expires', `${SEED_BINDING_FIELD}.expires`],
  ];
  if (seed.api_version === undefined) problems.push({ path: 'api_version', message: "is required (1): cluster-configuration/manifest.json is image-based install's SeedReconfiguration, version 1" });
  else if (seed.api_version !== 1) problems.push({ path: 'api_version', message: `is ${JSON.stringify(seed.api_version) ?? describeType(seed.api_version)}: only version 1 of image-based install's SeedReconfiguration is understood` });
  // lifecycle-agent reads manifest.json with encoding/json, which skips fields it does not know: so does the agent.
  for (const field of Object.keys(seed)) if (!SEED_FIELDS.includes(field) && !Object.hasOwn(IGNORED_SEED_FIELDS, field)) warnings.push({ path: formatPath([field]), message: 'is not a field of SeedReconfiguration version 1: it is ignored (check its spelling)' });
  for (const [field, why] of Object.entries(IGNORED_SEED_FIELDS)) {
    const v = seed[field];
    // Unset is absent (Go's omitempty), or null, '', [] or {} in a manifest.json written by other means.
    if (given(v) && !(typeof v === 'object' && Object.keys(v!).length === 0)) warnings.push({ path: field, message: `is not applied: ${why}` });
  }
  const spec: Record<string, unknown> = { baseDomain: seed.base_domain };
  const binding = isPlainObject(seed[SEED_BINDING_FIELD]) ? seed[SEED_BINDING_FIELD] : {};
  for (const key of Object.keys(binding).filter((k) => !BINDING_KEYS.includes(k))) problems.push({ path: `${SEED_BINDING_FIELD}.${key.slice(0, 100)}`, message: `is not a field of ${SEED_BINDING_FIELD}: it holds match, issued, expires and sha256 (what binds signed media to a machine and a date, and pins the files beside manifest.json)` });
  if (binding.match !== undefined) spec.match = binding.match;
  if (binding.sha256 !== undefined) spec.sha256 = binding.sha256;
  const bound = Object.fromEntries(['issued', 'expires'].filter((k) => binding[k] !== undefined).map((k) => [k, binding[k]]));
  if (given(seed.cluster_name)) spec.clusterName = seed.cluster_name;
  if (given(seed.hostname)) spec.hostname = seed.hostname;
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
  spec.kubeadminPassword = given(seed.kubeadmin_password_hash) ? { hash: seed.kubeadmin_password_hash } : { remove: true };
  const proxy = isPlainObject(seed.proxy) ? seed.proxy : {};
  const bundle = isPlainObject(seed.additionalTrustBundle) ? seed.additionalTrustBundle : {};
  if (given(proxy.httpProxy) || given(proxy.httpsProxy)) {
    const set = (key: string, v: unknown) => (given(v) ? { [key]: v } : {});
    spec.proxy = {
      ...set('httpProxy', proxy.httpProxy),
      ...set('httpsProxy', proxy.httpsProxy),
      ...set('noProxy', typeof proxy.noProxy === 'string' ? proxy.noProxy.split(',').map((s) => s.trim()).filter(Boolean) : proxy.noProxy),
      ...set('trustedCA', bundle.proxyConfigmapBundle),
    };
  }
  if (given(bundle.userCaBundle)) spec.additionalTrustBundle = bundle.userCaBundle;
  if (str(seed.chrony_config)) {
    const sources = chronySources(seed.chrony_config as string);
    // openshift-install starts chrony_config with RHEL's public pool whatever the site named (its default
    // chrony text, then a server line per additionalNTPSources); the agent's chrony.conf never carries the public
    // pool (src/host/chrony.ts), so that line is the installer's boilerplate, not a source of the site.
    const publicPools = sources.pools.filter((p) => RHEL_PUBLIC_POOL.test(p));
    for (const p of publicPools) warnings.push({ path: 'chrony_config', message: `pool ${p} is RHEL's public pool, which openshift-install writes whatever the site named: not applied, as the agent never adds the public pool to chrony.conf (name it in additionalNTPSources if the site wants it)` });
    const pools = sources.pools.filter((p) => !publicPools.includes(p));
    if (sources.servers.length + pools.length > 0) spec.ntp = { ...(sources.servers.length ? { servers: sources.servers } : {}), ...(pools.length ? { pools } : {}) };
  }
  if (given(seed.node_labels) && !(isPlainObject(seed.node_labels) && Object.keys(seed.node_labels).length === 0)) spec.nodeLabels = { set: seed.node_labels };
  const mirrors: Mirror[] = [];
  for (const [name, text] of Object.entries(manifests)) {
    const path = `cluster-configuration/${SEED_MANIFESTS_DIR}${name}`;
    const found = seedManifestMirrors(name, text);
    for (const m of found.problems) problems.push({ path, message: m });
    for (const m of found.warnings) warnings.push({ path, message: m });
    // A problem with an entry reads as `file[0].source`, or `file:spec.imageDigestMirrors[0]…` in a mirror-set object.
    for (const m of found.mirrors) origins.push([`spec.imageDigestMirrors[${mirrors.push(m) - 1}]`, `${path}${m.at.startsWith('[') ? '' : ':'}${m.at}`]);
  }
  if (mirrors.length > 0) spec.imageDigestMirrors = mirrors.map(({ source, mirrors: to }) => ({ source, mirrors: to }));
  if (extraManifests) spec.extraManifestFiles = [SEED_EXTRA_MANIFESTS_DIR];
  const nodeIPs = Array.isArray(seed.node_ips) && seed.node_ips.length > 0 ? seed.node_ips.filter((ip): ip is string => typeof ip === 'string') : str(seed.node_ip) ? [seed.node_ip as string] : [];
  const name = `image-based config ${str(seed.cluster_name) ?? ''}.${str(seed.base_domain) ?? ''}`;
  return {
    document: { apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name, ...bound }, spec },
    identity: { ...(nodeIPs.length > 0 ? { nodeIPs } : {}), ...(str(seed.cluster_id) ? { clusterID: seed.cluster_id as string } : {}) },
    origins,
    problems,
    warnings,
  };
}
