// Step "proxy": the site's cluster-wide proxy in Proxy/cluster spec (httpProxy, httpsProxy, noProxy) and its CA
// bundle (spec.trustedCA → a ConfigMap in openshift-config, key ca-bundle.crt), as install-config's proxy
// becomes at install (config/v1 types_proxy.go). The network operator then validates it, merges the CAs into
// openshift-config-managed/trusted-ca-bundle and writes the status with the effective noProxy
// (cluster-network-operator release-4.12…4.16 pkg/controller/proxyconfig); the machine-config operator renders
// that *status* into /etc/mco/proxy.env and the CRI-O/kubelet drop-ins, so pool master rolls out and the MCD
// reboots the node once (release-4.12…4.16 pkg/operator/render.go, pkg/daemon/update.go) — settle waits for it.
//
// The bundle: the site's CAs plus those of the ConfigMap the Proxy referenced before (the installer's
// user-ca-bundle, say), each once, in a ConfigMap of our own — pods trust the merged bundle, so CAs the cluster
// trusted for its proxy stay trusted. Proxy/cluster as it was is saved in the state directory first.
//
// The node's own names go direct, old and new: the agent adds <cluster>.<installed domain> and
// <cluster>.<site domain> to noProxy by itself (a bare domain matches it and every name under it: api, api-int,
// *.apps — golang.org/x/net http/httpproxy useProxy). Operators reach the node's routes through the proxy
// otherwise, and a site's proxy resolves with the site's DNS: from 4.14 the ingress canary's host stays under the
// installed apps domain (cluster-ingress-operator release-4.14 pkg/operator/controller/canary/route.go, http.go
// http.ProxyFromEnvironment) and five failed probes degrade ingress (canary/controller.go, ingress/status.go);
// the authentication operator checks its route with and without the proxy (cluster-authentication-operator
// pkg/controllers/proxyconfig/proxyconfig_controller.go checkProxyConfig) and the console operator checks its
// route through it (console-operator release-4.14 pkg/console/controllers/healthcheck/controller.go). The node
// resolves those names itself (its local DNS, or the site DNS `prepare --no-local-dns` requires).
//
// Proxy URLs may hold a user and password: the agent writes them into the Proxy (the cluster needs them) and
// nowhere else; every message shows them as ***.
import * as path from 'node:path';
import { R } from '../cluster/resources';
import type { ClusterClient, KubeObject } from '../cluster/types';
import { condition, createOrUpdate, isTrue, MANAGED_BY, MANAGED_BY_LABEL, updateObject } from '../cluster/objects';
import { effectiveNoProxy, readNoProxyInputs } from '../cluster/no-proxy';
import { joinPem, splitCertificates } from '../certs/pem';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import { redactProxyUrl } from '../siteconfig/proxy-urls';
import { STATE_FILES } from '../paths';
import { clusterVersion, minorOf } from './cluster-version';
import { domainTargets, type DomainTargets } from './domain/targets';
import { notInPlace } from './not-in-place';
import { resilient } from './resilient';
import { MASTER_POOL, recordRollouts, type ClusterOperator } from './rollouts';

export const PROXY_CA_CONFIGMAP = 'sno-reconfigure-proxy-ca';
export const PROXY_BACKUP = `${STATE_FILES.backups}/proxy-cluster.json`;
const NAMESPACE = 'openshift-config';
/** The network operator answers a Proxy change in seconds; this bounds the wait for its status. */
const STATUS_WAIT_MS = 5 * 60_000;
const POLL_MS = 2_000;

interface ProxySpec {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  trustedCA?: { name?: string };
  readinessEndpoints?: string[];
}

interface Proxy extends KubeObject {
  spec?: ProxySpec;
  status?: { httpProxy?: string; httpsProxy?: string; noProxy?: string };
}

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

interface Assessment {
  proxy?: Proxy;
  spec: ProxySpec;
  bundle?: string;
  effective: string;
  changes: Change[];
}

const shown = (url: string | undefined) => (url ? redactProxyUrl(url) : 'none');

/** The site's CAs after those of `existing`, each certificate once (compared as PEM text without spaces). */
export function mergeBundles(existing: string | undefined, site: string): string {
  const seen = new Set<string>();
  const blocks = [...splitCertificates(existing ?? ''), ...splitCertificates(site)].filter((b) => {
    const key = b.replace(/\s+/g, '');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return joinPem(blocks);
}

/** <cluster>.<installed domain> (from api-int's name) and <cluster>.<site domain>: the node's own names. */
function nodeDomains(apiServerInternalURI: string, targets: DomainTargets): string[] {
  const installed = new URL(apiServerInternalURI).hostname.replace(/^api-int\./, '').toLowerCase();
  return [...new Set([installed, `${targets.names.clusterName}.${targets.names.baseDomain}`])];
}

/** The site's noProxy, then each of the node's domains it does not already name (none after `*`). */
export function withNodeNames(site: readonly string[], domains: readonly string[]): string[] {
  if (site.includes('*')) return [...site];
  const named = new Set(site.map((e) => e.toLowerCase()));
  return [...site, ...domains.filter((d) => !named.has(d))];
}

async function assess(ctx: StepContext, client: ClusterClient): Promise<Assessment | undefined> {
  const site = ctx.site.resolved.proxy;
  if (!site) return undefined;
  const proxy = await client.get<Proxy>(R.proxies, 'cluster');
  const before = proxy?.spec ?? {};
  let bundle: string | undefined;
  let caName = before.trustedCA?.name ?? '';
  const changes: Change[] = [];
  if (site.trustedCA !== undefined) {
    const previous = caName && caName !== PROXY_CA_CONFIGMAP ? (await client.get<ConfigMap>(R.configMaps, caName, NAMESPACE))?.data?.['ca-bundle.crt'] : undefined;
    const ours = await client.get<ConfigMap>(R.configMaps, PROXY_CA_CONFIGMAP, NAMESPACE);
    // Kept when ours already holds the site's CAs (a re-run): the earlier CAs are in it from the first run.
    const base = caName === PROXY_CA_CONFIGMAP ? ours?.data?.['ca-bundle.crt'] : previous;
    bundle = mergeBundles(base, site.trustedCA);
    if (ours?.data?.['ca-bundle.crt'] !== bundle) {
      const kept = splitCertificates(previous ?? '').length;
      changes.push({ kind: 'ConfigMap', target: `${NAMESPACE}/${PROXY_CA_CONFIGMAP}`, action: ours ? 'update' : 'create', detail: `the proxy's CA bundle: ${splitCertificates(bundle).length} certificate(s)${kept ? `, ${kept} of them from ${caName}, which the proxy used before` : ''}` });
    }
    caName = PROXY_CA_CONFIGMAP;
  }
  const minor = minorOf(await clusterVersion(ctx, client));
  const inputs = await readNoProxyInputs(client, minor);
  const noProxy = withNodeNames(site.noProxy, nodeDomains(inputs.apiServerInternalURI, await domainTargets(ctx, client)));
  const spec: ProxySpec = {
    ...(site.httpProxy ? { httpProxy: site.httpProxy } : {}),
    ...(site.httpsProxy ? { httpsProxy: site.httpsProxy } : {}),
    ...(noProxy.length ? { noProxy: noProxy.join(',') } : {}),
    trustedCA: { name: caName },
    ...(before.readinessEndpoints ? { readinessEndpoints: before.readinessEndpoints } : {}),
  };
  const effective = effectiveNoProxy(noProxy, inputs);
  const same = (k: keyof ProxySpec) => JSON.stringify(before[k] ?? '') === JSON.stringify(spec[k] ?? '');
  if (!proxy || !(['httpProxy', 'httpsProxy', 'noProxy'] as const).every(same) || (before.trustedCA?.name ?? '') !== caName) {
    changes.push({
      kind: 'Proxy',
      target: 'cluster',
      action: proxy ? 'update' : 'create',
      detail: `httpProxy ${shown(site.httpProxy)}, httpsProxy ${shown(site.httpsProxy)}; not through the proxy: ${effective} (the node's own names are added so that the cluster's checks of its routes go direct); the node reboots once to apply it`,
    });
  }
  return { ...(proxy ? { proxy } : {}), spec, ...(bundle !== undefined ? { bundle } : {}), effective, changes };
}

/**
 * In a plan without spec.proxy: a proxy the factory set stays as it is, and when its noProxy does not name the
 * node's own domains the cluster's checks of its routes go through it (see the top of this file).
 */
async function factoryProxyLeft(ctx: StepContext, client: ClusterClient): Promise<Change | undefined> {
  const spec = (await client.get<Proxy>(R.proxies, 'cluster'))?.spec;
  if (!spec?.httpProxy && !spec?.httpsProxy) return undefined;
  const listed = (spec.noProxy ?? '').split(',').map((e) => e.trim().toLowerCase());
  if (listed.includes('*')) return undefined;
  const infra = (await client.get<KubeObject & { status?: { apiServerInternalURI?: string } }>(R.infrastructures, 'cluster'))?.status?.apiServerInternalURI;
  if (!infra) return undefined;
  const missing = nodeDomains(infra, await domainTargets(ctx, client)).filter((d) => !listed.includes(d));
  if (missing.length === 0) return undefined;
  return { kind: 'Proxy', target: 'cluster', action: 'leave', detail: `the factory's proxy (${shown(spec.httpsProxy ?? spec.httpProxy)}) stays, and its noProxy does not name ${missing.join(', ')}: ingress (4.14+), authentication and console check the node's routes through it; give spec.proxy, which adds them` };
}

/** Saves Proxy/cluster as it was before the agent's first change (kept across runs: the oldest is the original). */
async function backUp(ctx: StepContext, proxy: Proxy | undefined): Promise<void> {
  const target = path.posix.join(ctx.stateDir, PROXY_BACKUP);
  if (await ctx.host.exists(target)) return;
  await ctx.host.writeFileAtomic(target, `${JSON.stringify({ savedAt: new Date(ctx.clock.now()).toISOString(), existed: proxy !== undefined, spec: proxy?.spec ?? {} }, null, 2)}\n`, 0o600);
}

/** Waits until the network operator has taken the spec (status = spec, noProxy merged); fails on its Degraded. */
async function waitForOperator(ctx: StepContext, client: ClusterClient, a: Assessment): Promise<void> {
  const deadline = ctx.deadline('the network operator to take the proxy', STATUS_WAIT_MS);
  for (;;) {
    const status = (await client.get<Proxy>(R.proxies, 'cluster'))?.status ?? {};
    if ((status.httpProxy ?? '') === (a.spec.httpProxy ?? '') && (status.httpsProxy ?? '') === (a.spec.httpsProxy ?? '') && status.noProxy) {
      if (status.noProxy !== a.effective) ctx.warn(`The network operator's noProxy for the cluster (${status.noProxy}) differs from the one the agent expected (${a.effective}); the operator's is the one in use.`);
      return;
    }
    const network = await client.get<ClusterOperator>(R.clusterOperators, 'network');
    const degraded = isTrue(network, 'Degraded') ? condition(network, 'Degraded') : undefined;
    if (degraded && /proxy/i.test(`${degraded.reason} ${degraded.message}`)) {
      throw new ConfigRejectedError(`the network operator refused the proxy: ${degraded.message ?? degraded.reason}`, 'Correct spec.proxy in the site-config (the URLs, noProxy or the CA bundle) and insert the media again; `oc get clusteroperator network` shows the message.');
    }
    if (deadline.expired()) throw new StepError(`the network operator did not take the proxy within ${deadline.progress()}: Proxy cluster's status still differs from its spec`, 'Check `oc get clusteroperator network` and the network operator\'s log; the agent retries after a restart.');
    ctx.progress.status(`waiting for the network operator to take the proxy — ${deadline.progress()}`);
    await ctx.clock.sleep(POLL_MS, ctx.signal);
  }
}

export const proxyStep: Step = resilient({
  name: 'proxy',
  title: 'Set the cluster-wide proxy',

  async plan(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (a) return a.changes;
    const kept = await factoryProxyLeft(ctx, client);
    return kept ? [kept] : [];
  },

  async check(ctx) {
    return ((await assess(ctx, await ctx.cluster()))?.changes.length ?? 0) === 0;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (!a || a.changes.length === 0) return;
    await backUp(ctx, a.proxy);
    await recordRollouts(ctx, client, 'proxy', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: 'Proxy cluster' }]);
    if (a.bundle !== undefined) {
      const data = { 'ca-bundle.crt': a.bundle };
      await createOrUpdate<ConfigMap>(client, R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PROXY_CA_CONFIGMAP, namespace: NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } }, data }, (cm) => ({ ...cm, data }));
    }
    if (a.proxy) await updateObject<Proxy>(client, R.proxies, 'cluster', undefined, (p) => ({ ...p, spec: a.spec }));
    else await client.create<Proxy>(R.proxies, { apiVersion: 'config.openshift.io/v1', kind: 'Proxy', metadata: { name: 'cluster' }, spec: a.spec });
    for (const c of a.changes) {
      ctx.changed(c);
      ctx.log.info(`${c.kind} ${c.target}: ${c.detail}`);
    }
  },

  async verify(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (!a) return;
    if (a.changes.length > 0) throw notInPlace("Proxy cluster does not hold the site's proxy after the update", 'that object');
    await waitForOperator(ctx, client, a);
  },
});
