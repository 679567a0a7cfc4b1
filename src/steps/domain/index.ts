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
import type { Change, Step, StepContext } from '../../engine/step';
import { StepError } from '../../engine/step';
import { recordRollouts, type RolloutTarget } from '../settle/rollouts';
import { displacedEntries, namedCertificatesWouldChange, readNamedCertificates, ensureNamedCertificate } from './apiserver';
import { materialize, planCertificates, type CertMaterial, type CertPlan } from './certificates';
import { defaultCertificateTarget, ensureDefaultCertificate, readDefaultCertificate } from './ingress-controller';
import { desiredComponentRoutes, ensureIngress, ingressDiff, type IngressDesired } from './ingress';
import { ensureHandoffKubeconfig, handoffPath, recordHandoff, renderHandoffKubeconfig } from './kubeconfig';
import { CONFIG_NAMESPACE, INGRESS_NAMESPACE, SECRETS, SIGNERS, COMPONENT_ROUTES, routeKey } from './names';
import { ensureSecret, isManagedByUs, resilient, tlsSecret, unb64, type Secret } from './objects';
import { readDomainState, saveDomainStateOnce } from './state';
import { domainTargets, readIngressConfig, type DomainTargets } from './targets';
import { routesToReplace, type RoutePolicy } from './routes';
import { ServingKeyPool } from '../../certs/keys';
import { splitCertificates } from '../../certs/pem';
import { titleOf } from '../titles';

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

/** Reads the cluster and works out every difference from the desired state; writes nothing. */
async function assess(ctx: StepContext, client: ClusterClient): Promise<DomainWork> {
  const targets = await domainTargets(ctx, client);
  const { names } = targets;
  const managed = targets.mode === 'managed';
  const certPlans = managed ? await planCertificates(ctx, client, targets) : [];

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
  const now = new Date();
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

function pending(w: DomainWork): boolean {
  return w.secrets.length > 0 || w.namedCertChanges || w.ingressChanges.appsDomain || w.ingressChanges.componentRoutes || w.defaultCertificateChanges || w.kubeconfigChanges;
}

/** The route policy settle applies once openshift-apiserver generates hosts on the new apps domain. */
export async function routePolicy(ctx: StepContext, client: ClusterClient, targets?: DomainTargets): Promise<RoutePolicy> {
  const t = targets ?? (await domainTargets(ctx, client));
  const state = await readDomainState(ctx);
  const ingress = await readIngressConfig(client);
  const componentRoutes = new Set<string>([...Object.values(COMPONENT_ROUTES).map(routeKey), ...(ingress.status?.componentRoutes ?? []).map((r) => `${r.namespace}/${r.name}`)]);
  const old = new Set<string>([t.installedAppsDomain, ...(state?.previousAppsDomain ? [state.previousAppsDomain] : [])]);
  old.delete(t.names.appsDomain);
  return { oldDomains: [...old], newAppsDomain: t.names.appsDomain, componentRoutes };
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
  title: titleOf('domain'),

  // Keys for the certificates this step will likely issue, made while the node network, kubelet and API come
  // up. When the certificates turn out to be in place (or the domain does not change) they are never used.
  prepare(ctx) {
    servingKeys(ctx).prepare(keysToPrepare(ctx));
  },

  async plan(ctx) {
    const client = await ctx.cluster();
    const w = await assess(ctx, client);
    const changes = describeChanges(ctx, w);
    const policy = await routePolicy(ctx, client, w.targets);
    for (const d of await routesToReplace(client, policy)) {
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
      throw new StepError(`the domain configuration is not in place after writing it: ${left.map((c) => `${c.kind} ${c.target}${c.detail ? ` (${c.detail})` : ''}`).join('; ')}`, 'Something else changed these objects at the same time; the agent retries after a restart.');
    }
  },
});
