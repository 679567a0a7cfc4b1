// Step "domain": serve the cluster under api.<cluster>.<domain> and *.apps.<cluster>.<domain> (seed 000,
// "cluster Domain" a–e): certificates (certificates.ts), APIServer namedCertificates, Ingress appsDomain and
// componentRoutes, the default IngressController certificate, and the admin kubeconfig hand-off.
//
// It only writes and returns: the rollouts it starts (kube-apiserver, openshift-apiserver, authentication,
// console, ingress) are recorded for settle, which waits for all of them at once, then replaces the routes
// still on the old apps domain (openshift-apiserver must have rolled out appsDomain first) and checks on the
// wire that every new name serves a certificate that verifies.
import type { ClusterClient } from '../../cluster/types';
import { R } from '../../cluster/resources';
import { StepError, type Change, type Step, type StepContext } from '../../engine/step';
import { recordRollouts, type RolloutTarget } from '../rollouts';
import { displacedEntries, namedCertificatesProblem, namedCertificatesWouldChange, readNamedCertificates, ensureNamedCertificate } from './apiserver';
import { materialize, servedCertificate, withRenewals, type CertMaterial, type CertPlan } from './certificates';
import { desiredDomain, routePolicy } from './desired';
import { defaultCertificateTarget, ensureDefaultCertificate, readDefaultCertificate } from './ingress-controller';
import { desiredComponentRoutes, ensureIngress, ingressDiff, type IngressDesired } from './ingress';
import { ensureHandoffKubeconfig, handoffPath, recordHandoff, renderHandoffKubeconfig } from './kubeconfig';
import { CONFIG_NAMESPACE, INGRESS_NAMESPACE, SECRETS, SIGNERS } from './names';
import { isManagedByUs, unb64, type Secret } from '../../cluster/objects';
import { resilient } from '../resilient';
import { ensureSecret, tlsSecret } from './objects';
import { saveDomainStateOnce } from './state';
import type { DomainTargets } from './targets';
import { readIngressConfig } from './ingress';
import { classifyRoutes, leftBecause } from './routes';
import { ServingKeyPool } from '../../certs/keys';
import { splitCertificates } from '../../certs/pem';
import { notInPlace } from '../not-in-place';

interface SecretWork {
  namespace: string;
  name: string;
  plan?: CertPlan;
  /** Managed secret to delete (no longer referenced). */
  remove?: boolean;
  reason: string;
}

interface DomainWork {
  targets: DomainTargets;
  certPlans: CertPlan[];
  secrets: SecretWork[];
  namedCert?: { names: string[] };
  namedCertChanges: boolean;
  /** Other namedCertificates entries that also served the API name. */
  displaced: string[];
  ingress: IngressDesired;
  ingressChanges: { appsDomain: boolean; componentRoutes: boolean };
  defaultCertificate?: string;
  defaultCertificateChanges: boolean;
  currentDefaultCertificate?: string;
  kubeconfigCa: string[];
  kubeconfigChanges: boolean;
}

function planFor(plans: CertPlan[], role: CertPlan['role']): CertPlan | undefined {
  return plans.find((p) => p.role === role);
}

/** PEM CA data for the hand-off kubeconfig: what signs the API certificate (no system roots: a kubeconfig CA replaces them). */
function kubeconfigCa(ctx: StepContext, plans: CertPlan[], apiSignerPem?: string): string[] {
  const api = planFor(plans, 'api');
  if (api?.source === 'provided') return [...splitCertificates(api.pair?.certPem ?? '').slice(1), ...splitCertificates(ctx.site.resolved.additionalTrustBundle ?? '')];
  if (api) return api.anchors;
  return apiSignerPem ? splitCertificates(apiSignerPem) : [];
}

async function secretDiffers(client: ClusterClient, namespace: string, name: string, pair: { certPem: string; keyPem: string } | undefined): Promise<boolean> {
  const current = await client.get<Secret>(R.secrets, name, namespace);
  if (!pair) return current !== undefined;
  if (!current || current.type !== 'kubernetes.io/tls' || !isManagedByUs(current)) return true;
  return unb64(current.data?.['tls.crt']) !== pair.certPem || unb64(current.data?.['tls.key']) !== pair.keyPem;
}

/**
 * Reads the cluster and works out every difference from the desired state; writes nothing. With `renew`,
 * certificates the agent issued that are due for renewal (or all of them, `force`) are issued anew.
 */
async function assess(ctx: StepContext, client: ClusterClient, renew?: { force: boolean }): Promise<DomainWork> {
  const desired = await desiredDomain(ctx, client);
  const { targets } = desired;
  const certPlans = renew ? withRenewals(desired.certificates, new Date(ctx.clock.now()), renew) : desired.certificates;
  const { names } = targets;
  const managed = targets.mode === 'managed';

  const secrets: SecretWork[] = [];
  const want = new Map<string, CertPlan>();
  for (const plan of certPlans) want.set(`${CONFIG_NAMESPACE}/${plan.secretName}`, plan);
  const ingressPlan = planFor(certPlans, 'ingress');
  if (ingressPlan) want.set(`${INGRESS_NAMESPACE}/${SECRETS.ingress}`, ingressPlan);
  const everyOwned = [...Object.values(SECRETS).map((n) => `${CONFIG_NAMESPACE}/${n}`), `${INGRESS_NAMESPACE}/${SECRETS.ingress}`];
  for (const ref of everyOwned) {
    const [namespace, name] = ref.split('/') as [string, string];
    const plan = want.get(ref);
    if (plan) {
      const differs = plan.source === 'issue' || (await secretDiffers(client, namespace, name, plan.pair));
      if (differs) secrets.push({ namespace, name, plan, reason: plan.source === 'issue' ? `new certificate for ${plan.dnsNames.join(', ')} (${plan.reason})` : plan.source === 'provided' ? 'certificate from the site-config' : 'stored certificate' });
    } else {
      const current = await client.get<Secret>(R.secrets, name, namespace);
      if (current && isManagedByUs(current)) secrets.push({ namespace, name, remove: true, reason: 'no longer used' });
    }
  }

  const namedCert = managed ? { names: [names.api] } : undefined;
  const existingNamed = await readNamedCertificates(client);
  const namedCertChanges = namedCertificatesWouldChange(existingNamed, SECRETS.api, namedCert);
  const tooMany = namedCertChanges ? namedCertificatesProblem(existingNamed, SECRETS.api, namedCert) : undefined;
  if (tooMany) {
    // Refused before anything is written: the operator would keep the old list and only report Degraded.
    throw new StepError(`${tooMany}.`, 'Remove namedCertificates entries that are no longer used (`oc edit apiserver cluster`), then restart the service (`systemctl restart sno-reconfigure`).', false);
  }
  const displaced = namedCert && namedCertChanges ? displacedEntries(existingNamed, SECRETS.api, namedCert.names) : [];

  const oauthSecret = planFor(certPlans, 'oauth') ? SECRETS.oauth : SECRETS.ingress;
  const ingress: IngressDesired = {
    ...(names.appsDomain !== targets.installedAppsDomain ? { appsDomain: names.appsDomain } : {}),
    componentRoutes: managed ? desiredComponentRoutes(names, { console: SECRETS.ingress, downloads: SECRETS.ingress, oauth: oauthSecret }) : [],
  };
  const ingressChanges = ingressDiff(await readIngressConfig(client), ingress);

  const currentDefaultCertificate = await readDefaultCertificate(client);
  const defaultCertificate = defaultCertificateTarget(currentDefaultCertificate, managed ? SECRETS.ingress : undefined);
  const defaultCertificateChanges = defaultCertificate !== currentDefaultCertificate;

  let apiSignerPem: string | undefined;
  if (!planFor(certPlans, 'api')) {
    const signer = await client.get<Secret>(R.secrets, SIGNERS.api.name, SIGNERS.api.namespace);
    apiSignerPem = unb64(signer?.data?.['tls.crt']);
  }
  const ca = kubeconfigCa(ctx, certPlans, apiSignerPem);
  const rendered = await renderHandoffKubeconfig(ctx, { clusterName: names.clusterName, apiHost: names.api, caPems: ca });
  const kubeconfigChanges = (await ctx.host.readTextIfExists(handoffPath(ctx))) !== rendered;

  return {
    targets, certPlans, secrets, ...(namedCert ? { namedCert } : {}), namedCertChanges, displaced, ingress, ingressChanges,
    ...(defaultCertificate ? { defaultCertificate } : {}), defaultCertificateChanges,
    ...(currentDefaultCertificate ? { currentDefaultCertificate } : {}),
    kubeconfigCa: ca, kubeconfigChanges,
  };
}

function describeChanges(ctx: StepContext, w: DomainWork): Change[] {
  const changes: Change[] = [];
  const { names } = w.targets;
  for (const s of w.secrets.filter((x) => !x.remove)) changes.push({ kind: 'Secret', target: `${s.namespace}/${s.name}`, action: 'apply', detail: s.reason });
  if (w.namedCertChanges) {
    changes.push({ kind: 'APIServer', target: 'cluster', action: 'update', detail: w.namedCert ? `namedCertificates: ${names.api} served from ${CONFIG_NAMESPACE}/${SECRETS.api}` : 'namedCertificates: remove the agent\'s entry' });
  }
  if (w.ingressChanges.appsDomain || w.ingressChanges.componentRoutes) {
    const parts = [
      w.ingressChanges.appsDomain ? (w.ingress.appsDomain ? `appsDomain ${w.ingress.appsDomain}` : 'remove appsDomain') : '',
      w.ingressChanges.componentRoutes ? (w.ingress.componentRoutes.length ? `componentRoutes ${w.ingress.componentRoutes.map((r) => `${r.name} → ${r.hostname}`).join(', ')}` : 'remove the agent\'s componentRoutes') : '',
    ].filter(Boolean);
    changes.push({ kind: 'Ingress', target: 'cluster', action: 'update', detail: parts.join('; ') });
  }
  if (w.defaultCertificateChanges) {
    changes.push({ kind: 'IngressController', target: 'openshift-ingress-operator/default', action: 'update', detail: w.defaultCertificate ? `defaultCertificate ${INGRESS_NAMESPACE}/${w.defaultCertificate}` : 'defaultCertificate: back to the operator-generated one' });
  }
  if (w.kubeconfigChanges) changes.push({ kind: 'file', target: handoffPath(ctx), action: 'write', detail: `admin kubeconfig for https://${names.api}:6443 (mode 0600)` });
  for (const s of w.secrets.filter((x) => x.remove)) changes.push({ kind: 'Secret', target: `${s.namespace}/${s.name}`, action: 'delete', detail: s.reason });
  return changes;
}

function rolloutsFor(w: DomainWork): (RolloutTarget & { reason: string })[] {
  const co = (name: string, reason: string) => ({ kind: 'clusteroperator' as const, name, reason });
  const out: (RolloutTarget & { reason: string })[] = [];
  const secretChanged = (ns: string, name: string) => w.secrets.some((s) => s.namespace === ns && s.name === name);
  if (w.namedCertChanges || secretChanged(CONFIG_NAMESPACE, SECRETS.api)) out.push(co('kube-apiserver', 'APIServer namedCertificates'));
  if (w.ingressChanges.appsDomain) out.push(co('openshift-apiserver', 'Ingress appsDomain'));
  if (w.ingressChanges.componentRoutes || secretChanged(CONFIG_NAMESPACE, SECRETS.oauth) || secretChanged(CONFIG_NAMESPACE, SECRETS.ingress)) {
    out.push(co('authentication', 'Ingress componentRoutes'), co('console', 'Ingress componentRoutes'));
  }
  if (w.defaultCertificateChanges || secretChanged(INGRESS_NAMESPACE, SECRETS.ingress)) out.push(co('ingress', 'IngressController defaultCertificate'));
  return out;
}

async function write(ctx: StepContext, client: ClusterClient, w: DomainWork): Promise<void> {
  const { names } = w.targets;
  await saveDomainStateOnce(ctx, {
    ...(w.targets.currentAppsDomain && w.targets.currentAppsDomain !== names.appsDomain ? { previousAppsDomain: w.targets.currentAppsDomain } : {}),
    ...(w.currentDefaultCertificate ? { previousDefaultCertificate: w.currentDefaultCertificate } : {}),
  });
  await recordRollouts(ctx, client, 'domain', rolloutsFor(w));
  for (const other of w.displaced) {
    ctx.warn(`APIServer namedCertificates entry "${other}" also served ${names.api}; that name is now served by ${SECRETS.api} only`);
  }

  // Certificates first: every reference written afterwards points at a secret that already exists.
  const material = new Map<CertPlan, CertMaterial>();
  const now = new Date(ctx.clock.now());
  const toIssue = [...new Set(w.secrets.filter((x) => !x.remove && x.plan?.source === 'issue').map((x) => x.plan as CertPlan))];
  const keys = new Map(await Promise.all(toIssue.map(async (plan) => [plan, await servingKeys(ctx).take()] as const)));
  for (const s of w.secrets.filter((x) => !x.remove)) {
    const plan = s.plan as CertPlan;
    let m = material.get(plan);
    if (!m) {
      m = materialize(plan, now, keys.get(plan));
      material.set(plan, m);
    }
    const result = await ensureSecret(client, tlsSecret(s.namespace, s.name, m.certPem, m.keyPem));
    if (result !== 'unchanged') ctx.changed({ kind: 'Secret', target: `${s.namespace}/${s.name}`, action: result === 'created' ? 'create' : 'update', detail: s.reason });
  }
  if (w.namedCertChanges && (await ensureNamedCertificate(client, SECRETS.api, w.namedCert))) {
    ctx.changed({ kind: 'APIServer', target: 'cluster', action: 'update', detail: w.namedCert ? `namedCertificates: ${names.api} → ${SECRETS.api}` : 'namedCertificates: removed the agent\'s entry' });
  }
  if (w.ingressChanges.appsDomain || w.ingressChanges.componentRoutes) {
    const diff = await ensureIngress(client, w.ingress);
    if (diff.appsDomain || diff.componentRoutes) {
      ctx.changed({ kind: 'Ingress', target: 'cluster', action: 'update', detail: [diff.appsDomain ? `appsDomain ${w.ingress.appsDomain ?? '(removed)'}` : '', diff.componentRoutes ? `componentRoutes ${w.ingress.componentRoutes.map((r) => r.hostname).join(', ') || '(agent entries removed)'}` : ''].filter(Boolean).join('; ') });
    }
  }
  if (w.defaultCertificateChanges) {
    const r = await ensureDefaultCertificate(client, w.targets.mode === 'managed' ? SECRETS.ingress : undefined);
    if (r.changed) ctx.changed({ kind: 'IngressController', target: 'openshift-ingress-operator/default', action: 'update', detail: `defaultCertificate ${r.previous ?? '(generated)'} → ${w.defaultCertificate ?? '(generated)'}` });
  }
  await writeKubeconfig(ctx, w);
  recordCertificates(ctx, w.certPlans.map((p) => material.get(p) ?? materialize(p, now)));
  for (const s of w.secrets.filter((x) => x.remove)) {
    if (await client.delete(R.secrets, s.name, s.namespace)) ctx.changed({ kind: 'Secret', target: `${s.namespace}/${s.name}`, action: 'delete', detail: s.reason });
  }
}

async function writeKubeconfig(ctx: StepContext, w: DomainWork): Promise<void> {
  const { names } = w.targets;
  const text = await renderHandoffKubeconfig(ctx, { clusterName: names.clusterName, apiHost: names.api, caPems: w.kubeconfigCa });
  if (await ensureHandoffKubeconfig(ctx, text)) ctx.changed({ kind: 'file', target: handoffPath(ctx), action: 'write', detail: `admin kubeconfig for https://${names.api}:6443 (mode 0600)` });
  await recordHandoff(ctx);
}

/** The expiry of what serves the new names, for the report, `status` and the banner (this step is the writer). */
function recordCertificates(ctx: StepContext, served: { role: CertPlan['role']; secretName: string; certPem: string; source: CertPlan['source'] }[]): void {
  ctx.facts.certificates = served.map(servedCertificate);
}

/** The certificates in place now (a plan's stored or provided pair; nothing is issued to describe them). */
function inPlace(plans: CertPlan[]): { role: CertPlan['role']; secretName: string; certPem: string; source: CertPlan['source'] }[] {
  return plans.flatMap((p) => (p.pair ? [{ role: p.role, secretName: p.secretName, certPem: p.pair.certPem, source: p.source }] : []));
}

function pending(w: DomainWork): boolean {
  return w.secrets.length > 0 || w.namedCertChanges || w.ingressChanges.appsDomain || w.ingressChanges.componentRoutes || w.defaultCertificateChanges || w.kubeconfigChanges;
}

/**
 * check()'s reading of the cluster, for the apply() the runner calls right after it with the same context:
 * assessing reads ~15 objects, and reading them twice in a row only delayed the writes (issue #8).
 */
const assessedByCheck = new WeakMap<StepContext, DomainWork>();

const SERVING_KEYS = 'serving-keys';

/** The run's pool of serving keys (src/certs/keys.ts), made on first use. */
function servingKeys(ctx: StepContext): ServingKeyPool {
  return ctx.background.get<ServingKeyPool>(SERVING_KEYS) ?? ctx.background.add(SERVING_KEYS, new ServingKeyPool());
}

/** Certificates the agent issues unless the site-config provides them: the API's, the ingress wildcard and OAuth's. */
function keysToPrepare(ctx: StepContext): number {
  const provided = ctx.site.resolved.certificates;
  return (provided.api ? 0 : 1) + (provided.ingress ? 0 : 2);
}

export const domainStep: Step = resilient({
  name: 'domain',
  title: 'Move the cluster to the new domain',

  // Keys for the certificates this step will likely issue, made while kubelet and the API come up (the runner
  // asks once the site network is in place). When the certificates turn out to be in place (or the domain does not
  // change) they are never used.
  prepare(ctx) {
    servingKeys(ctx).prepare(keysToPrepare(ctx));
  },

  async plan(ctx) {
    const client = await ctx.cluster();
    const w = await assess(ctx, client);
    const changes = describeChanges(ctx, w);
    const policy = await routePolicy(ctx, client, w.targets);
    for (const d of await classifyRoutes(client, policy)) {
      const left = leftBecause(d, {});
      if (left) {
        changes.push({ kind: 'Route', target: d.key, action: 'leave', detail: `stays on the old apps domain (${d.host}): ${left}` });
        continue;
      }
      changes.push({ kind: 'Route', target: d.key, action: d.action === 'recreate' ? 'replace' : 'update', detail: d.action === 'recreate' ? `${d.host} → a generated host on ${policy.newAppsDomain} (once openshift-apiserver uses appsDomain, while settling)` : `${d.host} → ${d.newHost} (while settling)` });
    }
    return changes;
  },

  async check(ctx) {
    const w = await assess(ctx, await ctx.cluster());
    if (pending(w)) {
      assessedByCheck.set(ctx, w);
      return false;
    }
    await recordHandoff(ctx);
    recordCertificates(ctx, inPlace(w.certPlans));
    ctx.log.info({ domain: w.targets.names.appsDomain, mode: w.targets.mode }, 'domain configuration already in place; nothing to write');
    return true;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    // Taken once: an apply retried after an API outage (resilient) reads the cluster again.
    const w = assessedByCheck.get(ctx) ?? (await assess(ctx, client));
    assessedByCheck.delete(ctx);
    ctx.progress.status(`configuring the domain ${w.targets.names.baseDomain}`);
    await write(ctx, client, w);
  },

  async verify(ctx) {
    const w = await assess(ctx, await ctx.cluster());
    const left = describeChanges(ctx, w);
    if (left.length > 0) {
      throw notInPlace(`the domain configuration is not in place after writing it: ${left.map((c) => `${c.kind} ${c.target}${c.detail ? ` (${c.detail})` : ''}`).join('; ')}`);
    }
  },
});

/** What renew-certificates found and did. */
export interface RenewalResult {
  /** Certificates issued anew (or, with dryRun, that would be), with why. */
  renewed: { secret: string; reason: string }[];
  /** The expiry of every certificate serving the new names afterwards. */
  certificates: NonNullable<StepContext['facts']['certificates']>;
}

/**
 * `sno-reconfigure renew-certificates`: the domain step's certificate part again, long after the run, with the
 * config of record. Idempotent: certificates not due are kept, and a second call right after writes nothing.
 * Only certificates the agent issued are renewed (from the same cluster signers); provided ones are the site's.
 */
export async function renewDomainCertificates(ctx: StepContext, opts: { force: boolean; dryRun: boolean }): Promise<RenewalResult> {
  const client = await ctx.cluster();
  const w = await assess(ctx, client, { force: opts.force });
  if (w.targets.mode !== 'managed') return { renewed: [], certificates: [] };
  const renewed = w.secrets.filter((s) => !s.remove && s.plan?.reason?.startsWith('renewal:')).map((s) => ({ secret: `${s.namespace}/${s.name}`, reason: s.plan?.reason ?? '' }));
  if (!opts.dryRun && pending(w)) await write(ctx, client, w);
  else recordCertificates(ctx, inPlace(w.certPlans));
  return { renewed, certificates: ctx.facts.certificates ?? [] };
}
