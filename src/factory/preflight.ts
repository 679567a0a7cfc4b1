// `prepare` preflight: everything that must hold before a factory node is shut down for shipping. Each check
// says what it found and, when it fails, what the technician can do. Reads the cluster through the cluster
// client and the node through the Host; changes nothing.
import { X509Certificate } from 'node:crypto';
import { kubeadminProblem } from '../siteconfig/cluster-check';
import type { ClusterClient, KubeObject } from '../cluster/types';
import { R } from '../cluster/resources';
import type { Host } from '../host/host';
import { bootstrapperGroupsProblem } from '../csr/policy';
import { clientCertificateNotAfter } from '../certs/pem';
import { loadKubeconfig } from '../cluster/kubeconfig';
import { findRecoveryToken } from '../cluster/recovery-token';
import { KUBELET_BOOTSTRAP_KUBECONFIG, UNIT_NAME } from '../paths';
import { internalAddressProblem } from '../render/internal-ip';
import { DISPATCHER_PATHS, KUBELET_HOLD_DROPIN, RUNTIME_ENV_PATH } from '../render/layout';
import { parseRuntimeEnv, type PodmanRuntimeSettings } from '../render/podman';

export interface Check {
  id: string;
  ok: boolean;
  /** What was found, in a sentence. */
  detail: string;
  /** What to do about a failure. */
  remedy?: string;
}

export interface ClusterFacts {
  clusterName: string;
  baseDomain: string;
  apiServerURL?: string;
  infrastructureName?: string;
  platform?: string;
  openshiftVersion?: string;
  clusterID?: string;
  nodeName?: string;
  nodeAddresses: string[];
  /** The Node's InternalIP addresses: what the internal IP must be one of. */
  nodeInternalIPs: string[];
  /** When kube-system and kube-system/kubeadmin were created (the site refuses a kubeadmin hash it would ignore). */
  kubeadmin?: { kubeSystemCreated: string; secretCreated?: string };
}

export interface InstallFacts {
  unitPath?: string;
  runtime: 'host' | 'podman';
  podman?: PodmanRuntimeSettings;
  internalAddresses: string[];
}

export interface CertFacts {
  client?: { subject: string; notBefore: string; notAfter: string };
  server?: { subject: string; notBefore: string; notAfter: string };
  /** The groups the node-bootstrapper will have when kubelet re-bootstraps at the site. */
  bootstrapGroups?: string[];
}

type Condition = { type?: string; status?: string; reason?: string; message?: string };

function conditionsOf(obj: KubeObject | undefined): Condition[] {
  const status = obj?.status as { conditions?: Condition[] } | undefined;
  return Array.isArray(status?.conditions) ? status.conditions : [];
}

function cond(obj: KubeObject | undefined, type: string): Condition | undefined {
  return conditionsOf(obj).find((c) => c.type === type);
}

function describe(c: Condition | undefined): string {
  if (!c) return 'not reported';
  return `${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message.split('\n')[0]}` : ''})` : ''}`;
}

export const KUBELET_CLIENT_CERT = '/var/lib/kubelet/pki/kubelet-client-current.pem';
export const KUBELET_SERVER_CERT = '/var/lib/kubelet/pki/kubelet-server-current.pem';

/** Cluster health and identity: ClusterVersion, ClusterOperators, the one node, the MachineConfigPool. */
export async function checkCluster(client: ClusterClient, role: string): Promise<{ checks: Check[]; facts: ClusterFacts }> {
  const checks: Check[] = [];
  const facts: ClusterFacts = { clusterName: '', baseDomain: '', nodeAddresses: [], nodeInternalIPs: [] };

  const ready = await client.readyz();
  checks.push({ id: 'api', ok: ready.ready, detail: ready.ready ? `kube-apiserver at ${client.server} is ready` : `kube-apiserver at ${client.server} is not ready: ${ready.detail}`, remedy: 'Prepare a node whose cluster is up: wait for the API, check `oc get clusteroperators`.' });
  if (!ready.ready) return { checks, facts };

  const cv = await client.get<KubeObject>(R.clusterVersions, 'version');
  const available = cond(cv, 'Available');
  const progressing = cond(cv, 'Progressing');
  const failing = cond(cv, 'Failing');
  const history = ((cv?.status as { history?: { state?: string; version?: string }[] } | undefined)?.history ?? []);
  facts.openshiftVersion = history.find((h) => h.state === 'Completed')?.version ?? (cv?.status as { desired?: { version?: string } } | undefined)?.desired?.version;
  facts.clusterID = (cv?.spec as { clusterID?: string } | undefined)?.clusterID;
  const cvOk = available?.status === 'True' && progressing?.status !== 'True' && failing?.status !== 'True';
  checks.push({
    id: 'clusterversion',
    ok: cvOk,
    detail: cv ? `ClusterVersion ${facts.openshiftVersion ?? '(no completed version)'}: Available=${describe(available)}, Progressing=${describe(progressing)}${failing ? `, Failing=${describe(failing)}` : ''}` : 'no ClusterVersion "version"',
    remedy: 'Wait until the installation or update has finished (`oc get clusterversion`: Available=True, Progressing=False).',
  });

  const cos = await client.list<KubeObject>(R.clusterOperators);
  const unhealthy = cos.items
    .filter((co) => cond(co, 'Degraded')?.status === 'True' || cond(co, 'Available')?.status !== 'True')
    .map((co) => `${co.metadata?.name} (Available=${cond(co, 'Available')?.status ?? '?'}, Degraded=${cond(co, 'Degraded')?.status ?? '?'})`);
  checks.push({
    id: 'clusteroperators',
    ok: cos.items.length > 0 && unhealthy.length === 0,
    detail: unhealthy.length === 0 ? `${cos.items.length} ClusterOperators available, none degraded` : `not healthy: ${unhealthy.join(', ')}`,
    remedy: 'Fix the operators first (`oc get clusteroperators`, `oc describe clusteroperator NAME`): a node shipped degraded arrives degraded.',
  });

  const infra = await client.get<KubeObject>(R.infrastructures, 'cluster');
  const infraStatus = (infra?.status ?? {}) as { controlPlaneTopology?: string; infrastructureName?: string; apiServerURL?: string; platformStatus?: { type?: string }; platform?: string };
  facts.infrastructureName = infraStatus.infrastructureName;
  facts.apiServerURL = infraStatus.apiServerURL;
  facts.platform = infraStatus.platformStatus?.type ?? infraStatus.platform;
  checks.push({
    id: 'topology',
    ok: infraStatus.controlPlaneTopology === 'SingleReplica',
    detail: `control plane topology ${infraStatus.controlPlaneTopology ?? 'unknown'}, platform ${facts.platform ?? 'unknown'}`,
    remedy: 'sno-reconfigure relocates single-node OpenShift only (Infrastructure status.controlPlaneTopology=SingleReplica).',
  });

  // dns.config.openshift.io spec.baseDomain is "<cluster name>.<base domain>" (the installer's metadata.name + baseDomain).
  const dns = await client.get<KubeObject>(R.dnses, 'cluster');
  const clusterDomain = (dns?.spec as { baseDomain?: string } | undefined)?.baseDomain ?? '';
  const dot = clusterDomain.indexOf('.');
  facts.clusterName = dot > 0 ? clusterDomain.slice(0, dot) : '';
  facts.baseDomain = dot > 0 ? clusterDomain.slice(dot + 1) : '';
  checks.push({
    id: 'domain',
    ok: dot > 0,
    detail: dot > 0 ? `cluster ${facts.clusterName}, base domain ${facts.baseDomain}` : `DNS "cluster" has no usable spec.baseDomain (${JSON.stringify(clusterDomain)})`,
    remedy: 'The cluster\'s DNS config (`oc get dns cluster -o yaml`) must carry <cluster name>.<base domain>.',
  });

  const nodes = await client.list<KubeObject>(R.nodes);
  const node = nodes.items[0];
  if (nodes.items.length === 1 && node) {
    facts.nodeName = node.metadata?.name;
    const addrs = ((node.status as { addresses?: { type?: string; address?: string }[] } | undefined)?.addresses ?? []).filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP');
    facts.nodeAddresses = addrs.map((a) => a.address ?? '').filter(Boolean);
    facts.nodeInternalIPs = internalIPsOf(node);
  }
  const nodeReady = node ? cond(node, 'Ready') : undefined;
  checks.push({
    id: 'node',
    ok: nodes.items.length === 1 && nodeReady?.status === 'True',
    detail: nodes.items.length === 1 ? `node ${facts.nodeName} Ready=${describe(nodeReady)}, addresses ${facts.nodeAddresses.join(', ') || 'none'}` : `${nodes.items.length} nodes (${nodes.items.map((n) => n.metadata?.name).join(', ')}); exactly one is expected`,
    remedy: nodes.items.length === 1 ? 'Wait until the node is Ready (`oc get nodes`).' : 'Only single-node clusters can be relocated; remove the extra nodes or use another tool.',
  });

  const kubeSystem = await client.get<KubeObject>(R.namespaces, 'kube-system');
  if (kubeSystem?.metadata?.creationTimestamp) {
    const secret = await client.get<KubeObject>(R.secrets, 'kubeadmin', 'kube-system');
    const secretCreated = secret?.metadata?.creationTimestamp;
    facts.kubeadmin = { kubeSystemCreated: String(kubeSystem.metadata.creationTimestamp), ...(secretCreated ? { secretCreated: String(secretCreated) } : {}) };
    // Said here, where it can still be kept: OpenShift ignores a kubeadmin Secret created after the cluster's
    // first hour (library-go bootstrapauthenticator), so once removed, no site-config can bring kubeadmin back.
    const honoured = secretCreated !== undefined && !kubeadminProblem({ ...facts.kubeadmin, now: Date.parse(String(kubeSystem.metadata.creationTimestamp)) });
    checks.push({
      id: 'kubeadmin',
      ok: true,
      detail: honoured
        ? 'the installer\'s kubeadmin Secret is there: a site-config may set a new kubeadmin password (23 characters or more)'
        : 'kubeadmin cannot log in on this cluster (its Secret was removed or created again later) and no site-config can bring it back: keep the hand-off kubeconfig (prepare --admin-kubeconfig) or an identity provider for the site',
    });
  }

  const pool = await client.get<KubeObject>(R.machineConfigPools, role);
  const updated = cond(pool, 'Updated');
  const degraded = cond(pool, 'Degraded');
  // A paused pool renders but does not roll out: it can say Updated for the config it has while a newer one waits
  // (the seventeenth hostile re-test of issue 36: a pool a cut-off run left paused passed here, and the factory's SSH
  // keys prepare put back never reached the node's disk).
  const paused = (pool?.spec as { paused?: boolean } | undefined)?.paused === true;
  checks.push({
    id: 'machineconfigpool',
    ok: pool !== undefined && updated?.status === 'True' && degraded?.status !== 'True' && !paused,
    detail: pool ? `MachineConfigPool ${role}: Updated=${describe(updated)}, Degraded=${describe(degraded)}${paused ? ', paused' : ''}` : `no MachineConfigPool "${role}"`,
    remedy: paused
      ? `Unpause it (\`oc patch mcp ${role} --type merge -p '{"spec":{"paused":false}}'\`), wait until it has rolled out (UPDATED True), then run prepare again.`
      : `Wait until the MCO has rolled out the sno-reconfigure MachineConfig (\`oc get mcp ${role}\`: UPDATED True, DEGRADED False).`,
  });
  return { checks, facts };
}

function internalIPsOf(node: KubeObject): string[] {
  const addresses = (node.status as { addresses?: { type?: string; address?: string }[] } | undefined)?.addresses ?? [];
  return addresses.filter((a) => a.type === 'InternalIP' && a.address).map((a) => a.address as string);
}

/** The single Node's name and InternalIP addresses; undefined when the cluster has not exactly one Node. */
export async function singleNodeInternalIPs(client: ClusterClient): Promise<{ name: string; addresses: string[] } | undefined> {
  const nodes = await client.list<KubeObject>(R.nodes);
  const node = nodes.items.length === 1 ? nodes.items[0] : undefined;
  return node ? { name: node.metadata?.name ?? '', addresses: internalIPsOf(node) } : undefined;
}

/** The internal IP the MachineConfig put on br-ex must be the Node's installed IP (src/render/internal-ip.ts). */
export function checkInternalAddresses(internal: string[], facts: ClusterFacts): Check | undefined {
  if (internal.length === 0 || !facts.nodeName) return undefined;
  const problem = internalAddressProblem(internal, facts.nodeName, facts.nodeInternalIPs);
  return {
    id: 'internal-ip',
    ok: !problem,
    detail: problem ?? `internal IP ${internal.join(', ')} is the node's installed IP`,
    remedy: `Render the MachineConfig again with --internal-ip set to the node's installed address (${facts.nodeInternalIPs.join(', ') || 'see `oc get node -o wide`'}) and its prefix, apply it, and wait for the pool to update.`,
  };
}

function certFacts(pem: string): { cert: X509Certificate; facts: { subject: string; notBefore: string; notAfter: string } } {
  const cert = new X509Certificate(pem);
  return { cert, facts: { subject: cert.subject.replace(/\n/g, ', '), notBefore: new Date(cert.validFrom).toISOString(), notAfter: new Date(cert.validTo).toISOString() } };
}

const DAY_MS = 86_400_000;

export { KUBELET_BOOTSTRAP_KUBECONFIG };

/**
 * kubelet's client and serving certificates should outlive the shipment. OpenShift signs them for 30 days
 * (kube-controller-manager --cluster-signing-duration=720h) and kubelet renews them after 70-90 % of their
 * lifetime (client-go certificate manager), so a healthy node has 3 to 30 days left at any time. When they
 * expire on the way, kubelet bootstraps again at the site with its bootstrap kubeconfig and the agent approves
 * the new CSRs (strictly, DESIGN.md section 5): slower, but not stranded, provided that bootstrap credential
 * still works, which is checked too.
 */
export async function checkKubeletCerts(host: Host, nowMs: number, minValidityMs: number, nodeName: string | undefined): Promise<{ checks: Check[]; certs: CertFacts }> {
  const checks: Check[] = [];
  const certs: CertFacts = {};
  const days = (ms: number) => `${Math.floor(ms / DAY_MS)} days`;
  for (const [kind, file] of [['client', KUBELET_CLIENT_CERT], ['server', KUBELET_SERVER_CERT]] as const) {
    const text = await host.readTextIfExists(file);
    if (text === undefined) {
      checks.push({ id: `kubelet-${kind}-cert`, ok: false, detail: `${file} is missing`, remedy: 'Run prepare on the node itself (or pass --root to its filesystem), after kubelet has joined the cluster.' });
      continue;
    }
    let parsed;
    try {
      parsed = certFacts(text);
    } catch (e) {
      checks.push({ id: `kubelet-${kind}-cert`, ok: false, detail: `${file} is not a readable certificate (${(e as Error).message})`, remedy: 'Let kubelet renew it: restart kubelet and approve its CSRs (`oc get csr`).' });
      continue;
    }
    certs[kind] = parsed.facts;
    const left = Date.parse(parsed.facts.notAfter) - nowMs;
    const cn = /CN=([^,\n]+)/.exec(parsed.cert.subject)?.[1];
    const problems: string[] = [];
    if (Date.parse(parsed.facts.notBefore) > nowMs) problems.push(`it is not valid before ${parsed.facts.notBefore} (is the clock right?)`);
    if (left < minValidityMs) problems.push(`it expires ${parsed.facts.notAfter}, in ${days(Math.max(0, left))}, less than the ${days(minValidityMs)} a shipment needs`);
    if (nodeName && cn !== `system:node:${nodeName}`) problems.push(`it is for ${cn ?? 'an unknown subject'}, not system:node:${nodeName}`);
    checks.push({
      id: `kubelet-${kind}-cert`,
      ok: problems.length === 0,
      detail: problems.length === 0 ? `kubelet ${kind} certificate valid until ${parsed.facts.notAfter} (${days(left)})` : `kubelet ${kind} certificate ${file}: ${problems.join('; ')}`,
      remedy: 'Ship within that time and lower --min-cert-validity, or let kubelet renew first (it does at 70-90 % of the lifetime; approve pending CSRs with `oc get csr`). Certificates that expire in transit are renewed at the site through the bootstrap kubeconfig, which takes longer.',
    });
  }
  const bootstrap = await checkBootstrapKubeconfig(host, nowMs, minValidityMs);
  checks.push(bootstrap.check);
  if (bootstrap.groups) certs.bootstrapGroups = bootstrap.groups;
  return { checks, certs };
}

/** The API server's groups for a client certificate: its O values, plus system:authenticated. */
function groupsOfCertificate(cert: X509Certificate): string[] {
  const orgs = cert.subject.split('\n').filter((rdn) => rdn.startsWith('O=')).map((rdn) => rdn.slice(2));
  return [...orgs, 'system:authenticated'];
}

/** The groups of the node-bootstrapper service account's own token (a token-based bootstrap kubeconfig). */
const SERVICE_ACCOUNT_TOKEN_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'];

/**
 * The bootstrap certificate's O is what the site's approver sees as the CSR's groups. Clusters installed
 * before 4.14 lack system:serviceaccounts there (openshift/installer PR #7032); the file is never
 * re-rendered, so saying which set this node has tells the factory what the site will see.
 */
function describeBootstrapGroups(groups: string[]): string {
  const era = groups.includes('system:serviceaccounts') ? 'the set of clusters installed with 4.14 or later' : 'the set of clusters installed before 4.14, without system:serviceaccounts';
  return `kubelet will re-bootstrap at the site as the node-bootstrapper with groups ${groups.join(', ')} (${era})`;
}

// No MachineConfig holds the bootstrap kubeconfig (01-master-kubelet's kubelet unit only names the path): the
// Machine Config Server adds it to every config it serves, made from its node-bootstrapper token
// (openshift/machine-config-operator 7ff337a pkg/server/server.go appendKubeConfig, cluster_server.go
// kubeconfigFromSecret; port 22623, pkg/server/api.go SecurePort).
const RESTORE_BOOTSTRAP_KUBECONFIG =
  "Restore /etc/kubernetes/kubeconfig from the Machine Config Server, which adds it to every config it serves: on the node, `curl -sk -H 'Accept: application/vnd.coreos.ignition+json;version=3.2.0' https://api-int.<cluster>.<domain>:22623/config/master` and decode the data: URL of /etc/kubernetes/kubeconfig among its storage.files (mode 0600)";

async function checkBootstrapKubeconfig(host: Host, nowMs: number, minValidityMs: number): Promise<{ check: Check; groups?: string[] }> {
  const result = await inspectBootstrapKubeconfig(host, nowMs, minValidityMs);
  if (!result.groups || !result.check.ok) return result;
  const problem = bootstrapperGroupsProblem(result.groups);
  const described = describeBootstrapGroups(result.groups);
  if (!problem) return { check: { ...result.check, detail: `${result.check.detail}; ${described}` }, groups: result.groups };
  return {
    groups: result.groups,
    check: {
      ...result.check,
      ok: false,
      detail: `${result.check.detail}; its node-bootstrapper ${problem.replace(/^has groups/, 'would have groups')}, so the agent would never approve kubelet's bootstrap request at the site`,
      remedy: `${RESTORE_BOOTSTRAP_KUBECONFIG}, or ship within the lifetime of kubelet's current certificates.`,
    },
  };
}

async function inspectBootstrapKubeconfig(host: Host, nowMs: number, minValidityMs: number): Promise<{ check: Check; groups?: string[] }> {
  const id = 'kubelet-bootstrap';
  const remedy = `kubelet needs its bootstrap kubeconfig to get new certificates if the current ones expire in transit. ${RESTORE_BOOTSTRAP_KUBECONFIG}, or ship within the certificates' lifetime.`;
  const text = await host.readTextIfExists(KUBELET_BOOTSTRAP_KUBECONFIG);
  if (text === undefined) return { check: { id, ok: false, detail: `${KUBELET_BOOTSTRAP_KUBECONFIG} is missing`, remedy } };
  const token = /^\s*token:\s*\S+/m.test(text);
  const certData = /client-certificate-data:\s*([A-Za-z0-9+/=]+)/.exec(text)?.[1];
  if (certData) {
    try {
      const { cert, facts } = certFacts(Buffer.from(certData, 'base64').toString('utf8'));
      const left = Date.parse(facts.notAfter) - nowMs;
      const groups = groupsOfCertificate(cert);
      return left >= minValidityMs
        ? { check: { id, ok: true, detail: `bootstrap kubeconfig ${KUBELET_BOOTSTRAP_KUBECONFIG}: client certificate valid until ${facts.notAfter}` }, groups }
        : { check: { id, ok: false, detail: `bootstrap kubeconfig ${KUBELET_BOOTSTRAP_KUBECONFIG}: its client certificate expires ${facts.notAfter}`, remedy }, groups };
    } catch (e) {
      return { check: { id, ok: false, detail: `bootstrap kubeconfig ${KUBELET_BOOTSTRAP_KUBECONFIG}: unreadable client certificate (${(e as Error).message})`, remedy } };
    }
  }
  if (token) return { check: { id, ok: true, detail: `bootstrap kubeconfig ${KUBELET_BOOTSTRAP_KUBECONFIG}: node-bootstrapper token present` }, groups: SERVICE_ACCOUNT_TOKEN_GROUPS };
  return { check: { id, ok: false, detail: `bootstrap kubeconfig ${KUBELET_BOOTSTRAP_KUBECONFIG} has neither a token nor a client certificate`, remedy } };
}

export interface AgentCredentialFacts {
  kubeconfig: string;
  notAfter?: string;
  /** Node path of the localhost-recovery-client token the agent falls back to on a 401. */
  recoveryToken?: string;
}

/**
 * The agent's own credential at the site: the node-kubeconfig's client certificate (node-system-admin-client,
 * 120 days on 4.12-4.15, refreshed after 30: cluster-kube-apiserver-operator certrotationcontroller.go) and
 * the recovery token it falls back to (src/engine/credentials.ts). An expired certificate is survivable with
 * the token, a shipment past both is not.
 */
export async function checkAgentCredential(host: Host, kubeconfig: string, nowMs: number, minValidityMs: number): Promise<{ check: Check; facts: AgentCredentialFacts }> {
  const id = 'agent-credential';
  const facts: AgentCredentialFacts = { kubeconfig };
  const token = await findRecoveryToken(host);
  if (token) facts.recoveryToken = token;
  const fallback = token ? `; if it expires, the agent falls back to the localhost-recovery-client token ${token}` : '; no localhost-recovery-client token was found to fall back to';
  let kc;
  try {
    kc = await loadKubeconfig((p) => host.readFile(p), kubeconfig);
  } catch (e) {
    return { check: { id, ok: false, detail: `the agent's kubeconfig ${kubeconfig} cannot be read: ${(e as Error).message}`, remedy: 'Pass the node-local kubeconfig with --kubeconfig.' }, facts };
  }
  const notAfter = clientCertificateNotAfter(kc.clientCert);
  if (!notAfter) return { check: { id, ok: true, detail: `the agent's kubeconfig ${kubeconfig} uses a token${fallback}` }, facts };
  facts.notAfter = notAfter;
  const left = Date.parse(notAfter) - nowMs;
  const ok = left >= minValidityMs || token !== undefined;
  return {
    facts,
    check: {
      id,
      ok,
      detail: `the agent's client certificate (${kubeconfig}) is valid until ${notAfter}, ${Math.floor(Math.max(0, left) / DAY_MS)} days${fallback}`,
      remedy: 'Let the kube-apiserver operator renew node-system-admin-client first (it does after 30 days), or ship within its lifetime.',
    },
  };
}

/**
 * The oldest Node.js the agent is supported on: 22 LTS (maintained until 2027-04-30; esbuild target node22). Node 20
 * and RHEL's nodejs:20 stream ended on 2026-04-30; RHEL 9 has nodejs:22 and nodejs:24 streams, RHEL 10 ships 22.
 */
export const MIN_NODE_MAJOR = 22;

/** The host runtime runs the bundle with the node binary its unit names: it must run and be recent enough. */
async function checkNodeRuntime(host: Host, node: string): Promise<Check> {
  const remedy =
    'This node cannot run the agent with its own Node.js (RHCOS ships none). Render the MachineConfig with the podman runtime ' +
    '(`sno-reconfigure render machineconfig --node-image NAME@sha256:DIGEST`, the default) and apply it instead; or, on RHEL or an ' +
    `image-mode node, install Node.js ${MIN_NODE_MAJOR} or later.`;
  const res = await host.run(host.toolPath(node), ['--version'], { timeoutMs: 30_000 });
  const version = /^v(\d+)\.\d+\.\d+/.exec(res.stdout.trim());
  if (res.code !== 0 || !version) {
    const why = res.code === 127 ? 'is missing' : `does not run (\`${node} --version\` exit ${res.code}: ${(res.stderr || res.stdout).trim().split('\n')[0] ?? ''})`;
    return { id: 'node-runtime', ok: false, detail: `${node}, which the unit runs the agent with, ${why}`, remedy };
  }
  const ok = Number(version[1]) >= MIN_NODE_MAJOR;
  return { id: 'node-runtime', ok, detail: ok ? `${node} is Node.js ${version[0]}` : `${node} is Node.js ${version[0]}; the agent needs ${MIN_NODE_MAJOR} or later`, remedy };
}

/** The agent as the MachineConfig (or the RPM) installed it. */
export async function checkInstall(host: Host): Promise<{ checks: Check[]; install: InstallFacts }> {
  const checks: Check[] = [];
  const unitPaths = [`/etc/systemd/system/${UNIT_NAME}`, `/usr/lib/systemd/system/${UNIT_NAME}`];
  let unitPath: string | undefined;
  for (const p of unitPaths) if (!unitPath && (await host.exists(p))) unitPath = p;
  const unitText = unitPath ? await host.readText(unitPath) : '';
  checks.push({ id: 'unit', ok: unitPath !== undefined, detail: unitPath ? `${UNIT_NAME} installed at ${unitPath}` : `${UNIT_NAME} is not installed`, remedy: 'Apply the MachineConfig from `sno-reconfigure render machineconfig` (or install the RPM) and wait for the pool to update.' });

  const holdPaths = [`/etc/systemd/system/kubelet.service.d/${KUBELET_HOLD_DROPIN}`, `/usr/lib/systemd/system/kubelet.service.d/${KUBELET_HOLD_DROPIN}`];
  let hold: string | undefined;
  for (const p of holdPaths) if (!hold && (await host.exists(p))) hold = p;
  checks.push({ id: 'kubelet-hold-dropin', ok: hold !== undefined, detail: hold ? `kubelet hold drop-in at ${hold}` : 'the kubelet hold drop-in is not installed', remedy: 'Apply the current MachineConfig from `sno-reconfigure render machineconfig`; without the drop-in kubelet would start before the site network is in place.' });

  const execStart = /^ExecStart=(\S+)(?:\s+(\S+))?/m.exec(unitText);
  const install: InstallFacts = { runtime: 'host', internalAddresses: [] };
  if (unitPath) install.unitPath = unitPath;
  const envText = await host.readTextIfExists(RUNTIME_ENV_PATH);
  let settings: PodmanRuntimeSettings | undefined;
  if (envText !== undefined) {
    try {
      settings = parseRuntimeEnv(envText);
    } catch (e) {
      checks.push({ id: 'runtime-env', ok: false, detail: `${RUNTIME_ENV_PATH}: ${(e as Error).message}`, remedy: 'Re-render and re-apply the MachineConfig with --runtime podman --node-image NAME@sha256:DIGEST.' });
    }
  }
  if (settings) {
    install.runtime = 'podman';
    install.podman = settings;
    const ok = await host.exists(settings.bundle);
    checks.push({ id: 'bundle', ok, detail: ok ? `bundle ${settings.bundle} (podman runtime, image ${settings.image})` : `bundle ${settings.bundle} is missing`, remedy: 'Re-apply the MachineConfig.' });
  } else if (execStart?.[1]) {
    const bundle = execStart[1].endsWith('/node') ? execStart[2] : undefined;
    const ok = bundle !== undefined && (await host.exists(bundle));
    checks.push({ id: 'bundle', ok, detail: ok ? `bundle ${bundle}, run by ${execStart[1]}` : `the unit runs ${execStart[1]} ${execStart[2] ?? ''}, but ${bundle ?? 'its bundle'} is missing`, remedy: 'Re-apply the MachineConfig (or reinstall the RPM).' });
    checks.push(await checkNodeRuntime(host, execStart[1]));
  }
  const script = await host.readTextIfExists(DISPATCHER_PATHS[0]);
  if (script) install.internalAddresses = [...script.matchAll(/^add_address [46] ([0-9a-fA-F.:]+)\/\d+/gm)].map((m) => m[1] ?? '').filter(Boolean);
  return { checks, install };
}
