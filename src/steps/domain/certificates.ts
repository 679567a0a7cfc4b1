// Which certificate serves which name, and where it comes from: the site-config, a still-valid one the agent
// stored earlier (re-runs reuse it: no new certificate on every run), or a new one signed by the cluster's
// own CA so every existing client keeps trusting it (names.ts SIGNERS).
//
// Three certificates in managed mode:
// - api: exactly api.<cluster>.<domain> (never api-int: a named certificate for it degrades the cluster,
//   openshift-docs customize-certificates-api-add-named.adoc);
// - ingress: *.apps.<new> plus *.<installed apps domain> — it becomes the default IngressController
//   certificate, which also serves everything still on the installed domain (spec.domain is immutable; the
//   canary route and routes nobody moved stay there), so those keep a certificate that verifies;
// - oauth: exactly the OAuth host, so browsers never reuse a console connection for OAuth (HTTP/2
//   connection coalescing on a shared wildcard: IngressController CRD, spec.defaultCertificate).
// With site-provided certificates, api uses spec.certificates.api and everything on the apps domain uses
// spec.certificates.ingress.
import { X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { issueServingCertificate } from '../../certs/issue';
import type { ServingKey } from '../../certs/keys';
import { joinPem, splitCertificates } from '../../certs/pem';
import { hasExactDnsNames, sanDnsNames as sanDnsNamesOf, servingPairProblems } from '../../certs/verify';
import { R } from '../../cluster/resources';
import type { ClusterClient } from '../../cluster/types';
import { ConfigRejectedError, StepError, type StepContext } from '../../engine/step';
import type { CertificatePair } from '../../siteconfig/types';
import { CONFIG_NAMESPACE, SECRETS, SIGNERS } from './names';
import { unb64, type Secret } from '../../cluster/objects';
import type { DomainTargets } from './targets';

export type CertRole = 'api' | 'ingress' | 'oauth';

/** A certificate is re-issued when it has less than this left (or half its signer's remaining life). */
const REUSE_MIN_REMAINING_MS = 30 * 86_400_000;

export interface CertPlan {
  role: CertRole;
  /** Secret in openshift-config (the ingress one is also copied to openshift-ingress). */
  secretName: string;
  /** SAN DNS names of an issued certificate. */
  dnsNames: string[];
  /** Concrete host names it must serve (checked on the wire by settle). */
  hosts: string[];
  source: 'provided' | 'reuse' | 'issue';
  /** Why a new one is issued. */
  reason?: string;
  /** Known for provided and reused certificates: tls.crt (leaf first, then its chain) and tls.key. */
  pair?: CertificatePair;
  /** PEM CA certificates a served certificate must verify against. */
  anchors: string[];
  signer?: { ref: string; certPem: string; keyPem: string };
}

export interface CertMaterial extends CertificatePair {
  role: CertRole;
  secretName: string;
  hosts: string[];
  anchors: string[];
  source: CertPlan['source'];
}

async function readSigner(client: ClusterClient, role: 'api' | 'ingress'): Promise<{ ref: string; certPem: string; keyPem: string }> {
  const { namespace, name } = SIGNERS[role];
  const ref = `${namespace}/${name}`;
  const secret = await client.get<Secret>(R.secrets, name, namespace);
  const certPem = unb64(secret?.data?.['tls.crt']);
  const keyPem = unb64(secret?.data?.['tls.key']);
  if (!certPem || !keyPem) {
    throw new StepError(
      `the cluster's CA secret ${ref} is missing or has no tls.crt/tls.key`,
      `Without it the agent cannot sign certificates the cluster's clients trust. Provide spec.certificates.${role} in the site-config, or check the ${role === 'api' ? 'kube-apiserver' : 'ingress'} operator.`,
    );
  }
  return { ref, certPem, keyPem };
}

/** Trust anchors for a site-provided chain: its own CA certificates, the site trust bundle, the system roots. */
function providedAnchors(pair: CertificatePair, trustBundle: string | undefined): string[] {
  return [...splitCertificates(pair.certPem).slice(1), ...splitCertificates(trustBundle ?? ''), ...rootCertificates];
}

function checkProvided(role: 'api' | 'ingress', pair: CertificatePair, hosts: string[], anchors: string[], now: Date): void {
  const problems = servingPairProblems(pair, `spec.certificates.${role}`, { hosts, anchors: anchors.map((p) => new X509Certificate(p)), now });
  if (problems.length > 0) {
    throw new ConfigRejectedError(problems.join('; '), `Fix spec.certificates.${role} in the site-config (leaf first, then intermediates; the key must match; it must cover ${hosts.join(', ')}), or leave it out to have the agent issue one signed by the cluster's CA.`);
  }
}

async function storedPair(client: ClusterClient, secretName: string): Promise<CertificatePair | undefined> {
  const secret = await client.get<Secret>(R.secrets, secretName, CONFIG_NAMESPACE);
  const certPem = unb64(secret?.data?.['tls.crt']);
  const keyPem = unb64(secret?.data?.['tls.key']);
  return certPem && keyPem ? { certPem, keyPem } : undefined;
}

/** Why a stored certificate cannot be reused for `dnsNames` (undefined = reuse it). */
function reuseProblem(stored: CertificatePair | undefined, dnsNames: string[], signerPem: string, now: Date): string | undefined {
  if (!stored) return 'none stored yet';
  const [leafPem] = splitCertificates(stored.certPem);
  if (!leafPem) return 'the stored secret holds no certificate';
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(leafPem);
  } catch {
    return 'the stored certificate cannot be parsed';
  }
  if (!hasExactDnsNames(leaf, dnsNames)) return `the stored certificate is for other names`;
  const signer = new X509Certificate(signerPem);
  const signerLeft = new Date(signer.validTo).getTime() - now.getTime();
  const minRemainingMs = Math.min(REUSE_MIN_REMAINING_MS, signerLeft / 2);
  const problems = servingPairProblems(stored, 'stored certificate', { hosts: [], anchors: [signer], now, minRemainingMs });
  return problems.length > 0 ? problems.join('; ') : undefined;
}

async function planGenerated(client: ClusterClient, role: CertRole, signerRole: 'api' | 'ingress', dnsNames: string[], hosts: string[], now: Date): Promise<CertPlan> {
  const signer = await readSigner(client, signerRole);
  const signerCa = splitCertificates(signer.certPem);
  const secretName = SECRETS[role];
  const stored = await storedPair(client, secretName);
  const problem = reuseProblem(stored, dnsNames, signer.certPem, now);
  const base = { role, secretName, dnsNames, hosts, anchors: signerCa, signer };
  return problem ? { ...base, source: 'issue', reason: problem } : { ...base, source: 'reuse', pair: stored as CertificatePair };
}

/** The certificate plan for the managed mode (nothing is issued here: `plan` and `check` use it too). */
export async function planCertificates(ctx: StepContext, client: ClusterClient, t: DomainTargets, now = new Date(ctx.clock.now())): Promise<CertPlan[]> {
  const { names } = t;
  const provided = ctx.site.resolved.certificates;
  const trust = ctx.site.resolved.additionalTrustBundle;
  const plans: CertPlan[] = [];

  if (provided.api) {
    const anchors = providedAnchors(provided.api, trust);
    checkProvided('api', provided.api, [names.api], anchors, now);
    plans.push({ role: 'api', secretName: SECRETS.api, dnsNames: [names.api], hosts: [names.api], source: 'provided', pair: provided.api, anchors });
  } else {
    plans.push(await planGenerated(client, 'api', 'api', [names.api], [names.api], now));
  }

  const ingressHosts = [names.console, names.downloads, names.oauth];
  if (provided.ingress) {
    const anchors = providedAnchors(provided.ingress, trust);
    checkProvided('ingress', provided.ingress, ingressHosts, anchors, now);
    plans.push({ role: 'ingress', secretName: SECRETS.ingress, dnsNames: [names.appsWildcard], hosts: ingressHosts, source: 'provided', pair: provided.ingress, anchors });
  } else {
    const wildcards = [names.appsWildcard, ...(t.installedAppsDomain !== names.appsDomain ? [`*.${t.installedAppsDomain}`] : [])];
    plans.push(await planGenerated(client, 'ingress', 'ingress', wildcards, [names.console, names.downloads], now));
    plans.push(await planGenerated(client, 'oauth', 'ingress', [names.oauth], [names.oauth], now));
  }
  return plans;
}

/**
 * Renewal (`sno-reconfigure renew-certificates`, and its optional timer): a certificate the agent issued is
 * renewed once this share of its lifetime has passed — 80 %, the point at which kubelet's own certificate
 * manager rotates (k8s.io/client-go util/certificate/certificate_manager.go, nextRotationDeadline: 70–90 %).
 */
export const RENEW_AT_LIFETIME_FRACTION = 0.8;

/** Why a certificate in use should be renewed now, or undefined when it is not due. */
export function renewalDue(certPem: string, now: Date, fraction = RENEW_AT_LIFETIME_FRACTION): string | undefined {
  const [leafPem] = splitCertificates(certPem);
  if (!leafPem) return 'the stored secret holds no certificate';
  const leaf = new X509Certificate(leafPem);
  const from = Date.parse(leaf.validFrom);
  const to = Date.parse(leaf.validTo);
  const used = (now.getTime() - from) / Math.max(1, to - from);
  if (used < fraction) return undefined;
  return `${Math.min(100, Math.round(used * 100))} % of its lifetime used (it expires ${new Date(to).toISOString()})`;
}

/** What `renew` changes in a plan: agent-issued certificates in use that are due (or all of them, `force`). */
export function withRenewals(plans: CertPlan[], now: Date, opts: { force: boolean }): CertPlan[] {
  return plans.map((p) => {
    if (p.source !== 'reuse' || !p.pair) return p;
    const due = opts.force ? 'renewal asked for (--force)' : renewalDue(p.pair.certPem, now);
    return due ? { ...p, source: 'issue', reason: `renewal: ${due}` } : p;
  });
}

/** One certificate the cluster serves for the new names, as the report and `status` list it. */
export interface ServedCertificate {
  role: CertRole;
  /** openshift-config secret. */
  secret: string;
  names: string[];
  notAfter: string;
  /** issued: signed by the cluster's own CA (renewable with renew-certificates); provided: from the site-config. */
  source: 'issued' | 'provided';
}

export function servedCertificate(m: { role: CertRole; secretName: string; certPem: string; source: CertPlan['source'] }): ServedCertificate {
  const [leafPem] = splitCertificates(m.certPem);
  const leaf = new X509Certificate(leafPem ?? m.certPem);
  return { role: m.role, secret: m.secretName, names: sanDnsNamesOf(leaf), notAfter: new Date(leaf.validTo).toISOString(), source: m.source === 'provided' ? 'provided' : 'issued' };
}

/** Turns a plan into certificate material, issuing a new certificate when the plan says so. */
export function materialize(plan: CertPlan, now = new Date(), key?: ServingKey): CertMaterial {
  const common = { role: plan.role, secretName: plan.secretName, hosts: plan.hosts, anchors: plan.anchors, source: plan.source };
  if (plan.source !== 'issue') {
    const pair = plan.pair as CertificatePair;
    return { ...common, certPem: pair.certPem, keyPem: pair.keyPem };
  }
  const signer = plan.signer as NonNullable<CertPlan['signer']>;
  try {
    const issued = issueServingCertificate({ signer, dnsNames: plan.dnsNames, now, signerName: signer.ref, ...(key ? { key } : {}) });
    // tls.crt carries the chain (leaf, then the CA): what openshift-docs ask for in named/default certificates.
    return { ...common, certPem: joinPem([issued.certPem, issued.caPem]), keyPem: issued.keyPem };
  } catch (e) {
    throw new StepError(`cannot issue the ${plan.role} certificate: ${(e as Error).message}`, `Provide spec.certificates.${plan.role === 'api' ? 'api' : 'ingress'} in the site-config instead.`, false);
  }
}
