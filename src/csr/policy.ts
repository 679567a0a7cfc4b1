// The CSR approval policy: DESIGN.md section 5 (security Contract), a pure function.
//
// Beyond the contract's rules, adopted from cluster-machine-approver (pkg/controller/csr_check.go,
// node_client.go; reference/anchor-ztpfw-domain.md section 4) where they make sense for one node:
// - never deny, only leave pending (a denial cannot be undone; "might be someone else's CSR");
// - usages compare as exact sets. machine-approver's serving check accepts any 3 usages that include
//   {digital signature, server auth}, and its client check passes duplicates; both are closed here;
// - exactly one CN: Go's pkix keeps the last CN of several, so a second CN could hide behind the first.
// Deliberately different:
// - `nodeExists` does NOT block a bootstrap client CSR. machine-approver refuses it when the Node exists,
//   because on a multi-node cluster a new machine must not take over a registered name. On a relocated
//   SNO the Node always exists (it was registered at the factory), and a bootstrap client CSR for it is
//   exactly what the kubelet sends when its client certificate expired while the box was powered off —
//   the case machine-approver can never approve (anchor section 4). The name, time window and requestor
//   checks still apply.
// - `nodeExists === false` blocks SERVING CSRs: the kubelet asks for a serving certificate only once it
//   has patched its Node's status (kubernetes pkg/kubelet/certificate/kubelet.go newGetTemplateFn needs
//   addresses, which kubelet_node_status.go patchNodeStatus records), so a serving CSR for a Node that does
//   not exist was not made by our kubelet.
// - renewal client CSRs by `system:node:<name>` must also carry the groups a node certificate authenticates
//   with (system:nodes, system:authenticated), like serving CSRs.
// - serving CSRs: O must include system:nodes (contract) and hold no other `system:` group — that prefix
//   is reserved for Kubernetes/OpenShift identities (system:masters, system:cluster-admins), and the
//   contract lists system:masters among what is always left pending;
// - RSA keys below 2048 bits are refused; serving CSRs need at least one DNS or IP SAN (the kubelet never
//   requests a serving certificate without an address: kubelet.go newGetTemplateFn).
// - `spec.expirationSeconds` is not limited: the signer caps it at --cluster-signing-duration and the
//   field can only shorten a certificate. Requested keyUsage/extKeyUsage extensions inside the PKCS#10 are
//   not used by the signer (it issues `spec.usages`), so only `spec.usages` is checked.
import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { CsrParseError, parseCsrPem, requestToPem, type ParsedCsr } from './pkcs10';
import { formatIp, ipEqual, parseIp } from './ip';

export interface ExpectedNode {
  /** The node name (kubelet --hostname-override / Node.metadata.name). */
  name: string;
  /** The IPs the node may have in its serving certificate. */
  addresses: string[];
  /** DNS names besides `name` the node may have in its serving certificate. */
  dnsNames?: string[];
  /** Only CSRs created at or after this moment are approved (second precision, like creationTimestamp). */
  notBefore?: Date;
  /** Whether Node `name` exists; undefined = unknown (see the header comment for what it changes). */
  nodeExists?: boolean;
}

export interface CsrDecision {
  approve: boolean;
  kind: 'client' | 'serving' | 'other';
  reason: string;
}

export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const NODE_BOOTSTRAPPER = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
/**
 * The node-bootstrapper's groups come from the O of the bootstrap client certificate in
 * /etc/kubernetes/kubeconfig, plus system:authenticated. That file is written once at install and never
 * re-rendered; before openshift/installer PR #7032 (OCPBUGS-8349, 4.14; pkg/asset/tls/kubelet.go
 * KubeletClientCertKey) its O lacked system:serviceaccounts, so both sets are real (DESIGN.md section 5).
 */
export const NODE_BOOTSTRAPPER_REQUIRED_GROUPS = ['system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'];
export const NODE_BOOTSTRAPPER_OPTIONAL_GROUPS = ['system:serviceaccounts'];
const NODE_GROUP = 'system:nodes';
const AUTHENTICATED = 'system:authenticated';
const MIN_RSA_BITS = 2048;

export function evaluateCsr(csr: V1CertificateSigningRequest, node: ExpectedNode): CsrDecision {
  const kind = kindOf(csr);
  const leave = (reason: string): CsrDecision => ({ approve: false, kind, reason });
  if (kind === 'other') {
    return leave(`signer ${csr.spec?.signerName || '(none)'} is not a kubelet signer (only ${CLIENT_SIGNER} and ${SERVING_SIGNER} are approved)`);
  }
  const state = decidedState(csr);
  if (state) return leave(`${kind} CSR is already ${state}`);
  if (!node.name) return leave(`${kind} CSR cannot be matched: the expected node name is not known yet`);
  const window = timeWindowProblem(csr, node);
  if (window) return leave(window);
  const verdict = checkIdentity(csr, node, kind);
  if (verdict.problems.length > 0) return leave(verdict.problems.join('; '));
  return { approve: true, kind, reason: verdict.approval };
}

/**
 * Which of the node's certificates this CSR has delivered: its kind when it is Approved, carries
 * `status.certificate`, was created in the window and passes every identity rule for `node`; otherwise
 * undefined. Also counts CSRs approved by someone else (kube-controller-manager auto-approves client
 * renewals) or by an earlier run of the agent (a power cut after approval).
 */
export function issuedKind(csr: V1CertificateSigningRequest, node: ExpectedNode): 'client' | 'serving' | undefined {
  const kind = kindOf(csr);
  if (kind === 'other' || decidedState(csr) !== 'approved' || !csr.status?.certificate) return undefined;
  if (timeWindowProblem(csr, node)) return undefined;
  return checkIdentity(csr, node, kind).problems.length === 0 ? kind : undefined;
}

export function kindOf(csr: V1CertificateSigningRequest): CsrDecision['kind'] {
  const signer = csr.spec?.signerName;
  return signer === CLIENT_SIGNER ? 'client' : signer === SERVING_SIGNER ? 'serving' : 'other';
}

/** 'approved' | 'denied' | 'failed' when a condition with status True says so; undefined = pending. */
export function decidedState(csr: V1CertificateSigningRequest): 'approved' | 'denied' | 'failed' | undefined {
  const conditions = csr.status?.conditions ?? [];
  const has = (type: string) => conditions.some((c) => c.type === type && (c.status ?? 'True') === 'True');
  if (has('Denied')) return 'denied';
  if (has('Failed')) return 'failed';
  if (has('Approved')) return 'approved';
  return undefined;
}

function timeWindowProblem(csr: V1CertificateSigningRequest, node: ExpectedNode): string | undefined {
  if (!node.notBefore) return undefined;
  const created = toDate(csr.metadata?.creationTimestamp);
  if (!created) return 'CSR has no valid creationTimestamp, so it cannot be placed after the start of this reconfiguration';
  // creationTimestamp has second precision: compare against notBefore truncated to its second.
  const floor = Math.floor(node.notBefore.getTime() / 1000) * 1000;
  if (created.getTime() < floor) {
    return `CSR was created at ${created.toISOString()}, before this reconfiguration started (${new Date(floor).toISOString()})`;
  }
  return undefined;
}

interface Verdict {
  problems: string[];
  approval: string;
}

function checkIdentity(csr: V1CertificateSigningRequest, node: ExpectedNode, kind: 'client' | 'serving'): Verdict {
  const nodeUser = `system:node:${node.name}`;
  let parsed: ParsedCsr;
  try {
    parsed = parseCsrPem(requestToPem(csr.spec?.request));
  } catch (e) {
    const msg = e instanceof CsrParseError ? e.message : 'unreadable request';
    return { problems: [`${kind} CSR request is not a valid PKCS#10 certificate request: ${msg}`], approval: '' };
  }
  const problems: string[] = [];
  if (!parsed.signatureValid) problems.push(`${kind} CSR signature is invalid: ${parsed.signatureProblem ?? 'does not verify'}`);
  if (parsed.publicKey.algorithm === 'RSA' && (parsed.publicKey.bits ?? 0) < MIN_RSA_BITS) {
    problems.push(`${kind} CSR has a ${parsed.publicKey.bits ?? '?'}-bit RSA key; at least ${MIN_RSA_BITS} bits are required`);
  }
  const username = csr.spec?.username ?? '';
  const groups = csr.spec?.groups ?? [];
  const cns = parsed.subject.commonNames;
  const cnProblem = cns.length !== 1
    ? `subject has ${cns.length} CNs ${list(cns.map(quote))}; expected exactly one, "${nodeUser}"`
    : cns[0] !== nodeUser ? `subject CN is "${cns[0]}", expected "${nodeUser}" (this node is ${node.name})` : undefined;
  if (cnProblem) problems.push(`${kind} CSR ${cnProblem}`);
  const orgs = parsed.subject.organizations;
  const usages = csr.spec?.usages ?? [];
  const sans = parsed.sans;

  if (kind === 'client') {
    let approval: string;
    if (username === NODE_BOOTSTRAPPER) {
      const groupProblem = bootstrapperGroupsProblem(groups);
      if (groupProblem) problems.push(`client CSR by the node-bootstrapper ${groupProblem}`);
      approval = node.nodeExists
        ? `client CSR for node ${node.name} by the node-bootstrapper matches the node's identity (Node exists: the kubelet re-bootstraps after its client certificate expired)`
        : `client CSR for node ${node.name} by the node-bootstrapper matches the node's identity`;
    } else if (username === nodeUser) {
      const missing = [NODE_GROUP, AUTHENTICATED].filter((g) => !groups.includes(g));
      if (missing.length) problems.push(`client renewal CSR by ${nodeUser} lacks groups ${list(missing)} (has ${list(groups)})`);
      approval = `client certificate renewal by ${nodeUser} matches the node's identity`;
    } else {
      problems.push(`client CSR was requested by "${username || '(none)'}", expected the node-bootstrapper (${NODE_BOOTSTRAPPER}) or ${nodeUser} renewing its own certificate`);
      approval = '';
    }
    if (orgs.length !== 1 || orgs[0] !== NODE_GROUP) problems.push(`client CSR subject O is ${list(orgs)}, expected exactly [${NODE_GROUP}]`);
    const anySans = describeSans(sans);
    if (anySans.length) problems.push(`client CSR must have no SANs, but has ${anySans.join(', ')}`);
    const usageProblem = usagesProblem(usages, 'client auth');
    if (usageProblem) problems.push(`client CSR ${usageProblem}`);
    return { problems, approval };
  }

  // serving
  if (username !== nodeUser) problems.push(`serving CSR was requested by "${username || '(none)'}", expected ${nodeUser}`);
  const missing = [NODE_GROUP, AUTHENTICATED].filter((g) => !groups.includes(g));
  if (missing.length) problems.push(`serving CSR requestor lacks groups ${list(missing)} (has ${list(groups)})`);
  if (!orgs.includes(NODE_GROUP)) problems.push(`serving CSR subject O is ${list(orgs)}, which does not include ${NODE_GROUP}`);
  const privileged = orgs.filter((o) => o !== NODE_GROUP && o.startsWith('system:'));
  if (privileged.length) problems.push(`serving CSR subject O includes ${list(privileged)}; no group but ${NODE_GROUP} from the reserved system: namespace is allowed`);
  const usageProblem = usagesProblem(usages, 'server auth');
  if (usageProblem) problems.push(`serving CSR ${usageProblem}`);

  const allowedNames = [node.name, ...(node.dnsNames ?? [])];
  const normalizeName = (n: string) => n.trim().replace(/\.$/, '').toLowerCase();
  const allowedNormalized = new Set(allowedNames.map(normalizeName));
  for (const dns of sans.dns) {
    if (!allowedNormalized.has(normalizeName(dns))) problems.push(`serving CSR has DNS SAN ${dns} not among the node's names ${list(allowedNames)}`);
  }
  const allowedIps = node.addresses.map((a) => parseIp(a)).filter((b): b is Buffer => b !== undefined);
  for (const ip of sans.ip) {
    if (!allowedIps.some((a) => ipEqual(a, ip))) problems.push(`serving CSR has IP SAN ${formatIp(ip)} not among the node addresses ${list(node.addresses)}`);
  }
  if (sans.email.length) problems.push(`serving CSR has email SANs ${list(sans.email)}; none are allowed`);
  if (sans.uri.length) problems.push(`serving CSR has URI SANs ${list(sans.uri)}; none are allowed`);
  if (sans.other.length) problems.push(`serving CSR has ${list(sans.other)} SANs; only DNS and IP SANs are allowed`);
  if (sans.dns.length === 0 && sans.ip.length === 0) problems.push('serving CSR has no DNS or IP SAN (the kubelet always requests its addresses)');
  if (node.nodeExists === false) {
    problems.push(`serving CSR for node ${node.name}, but Node ${node.name} does not exist (a kubelet requests its serving certificate only after registering its Node)`);
  }
  const names = [...sans.dns, ...sans.ip.map(formatIp)];
  return { problems, approval: `serving CSR for node ${node.name} with SANs ${list(names)}, all belonging to the node` };
}

/** undefined when `groups` holds both required groups, at most the optional one besides, and no duplicate. */
export function bootstrapperGroupsProblem(groups: string[]): string | undefined {
  const missing = NODE_BOOTSTRAPPER_REQUIRED_GROUPS.filter((g) => !groups.includes(g));
  const allowed = [...NODE_BOOTSTRAPPER_REQUIRED_GROUPS, ...NODE_BOOTSTRAPPER_OPTIONAL_GROUPS];
  const extra = groups.filter((g) => !allowed.includes(g));
  const duplicated = new Set(groups).size !== groups.length;
  if (missing.length === 0 && extra.length === 0 && !duplicated) return undefined;
  const found = [
    missing.length ? `lacks ${list(missing)}` : '',
    extra.length ? `has other groups ${list(extra)}` : '',
    duplicated ? 'repeats a group' : '',
  ].filter(Boolean).join(' and ');
  return `has groups ${list(groups)}: it ${found}; expected ${list(NODE_BOOTSTRAPPER_REQUIRED_GROUPS)}, optionally with ${list(NODE_BOOTSTRAPPER_OPTIONAL_GROUPS)}, and nothing else`;
}

/** undefined when `usages` is exactly {digital signature, <purpose>} or that plus key encipherment. */
function usagesProblem(usages: string[], purpose: 'client auth' | 'server auth'): string | undefined {
  const base = ['digital signature', purpose];
  const withEncipherment = [...base, 'key encipherment'];
  if (sameSet(usages, base) || sameSet(usages, withEncipherment)) return undefined;
  return `usages are ${list(usages)}, expected exactly [${base.join(', ')}] (optionally with key encipherment)`;
}

/** Set equality that also refuses duplicates (a duplicated usage or group is not a well-formed request). */
function sameSet(actual: string[], expected: string[]): boolean {
  if (actual.length !== expected.length) return false;
  const set = new Set(actual);
  return set.size === actual.length && expected.every((e) => set.has(e));
}

function describeSans(sans: ParsedCsr['sans']): string[] {
  return [
    ...sans.dns.map((d) => `DNS:${d}`),
    ...sans.ip.map((ip) => `IP:${formatIp(ip)}`),
    ...sans.email.map((e) => `email:${e}`),
    ...sans.uri.map((u) => `URI:${u}`),
    ...sans.other,
  ];
}

function toDate(value: Date | string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

const list = (items: string[]): string => `[${items.join(', ')}]`;
const quote = (s: string): string => `"${s}"`;
