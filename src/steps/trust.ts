// Step "trust": the site's additionalTrustBundle becomes trusted for pulling from the site's registries:
// a ConfigMap in openshift-config with one key per registry host, referenced from image.config.openshift.io
// `cluster` spec.additionalTrustedCA. Key format `hostname[..port]` — the port's ':' written as '..'
// (openshift-docs "Setting up additional trusted certificate authorities for builds", docs.okd.io
// cicd/builds/setting-up-trusted-ca.html; image-registry docs "registry-with-port.example.com..5000").
//
// Which hosts: the registries the node pulls from because of this site-config — every mirror of
// imageDigestMirrors and imageTagMirrors (pulls go to the mirrors; the sources are the public registries they
// stand in for, with public CAs). Without mirrors, the registries of the site's pull secret. The same CA is trusted
// only for those hosts, never cluster-wide: the bundle is for registries, not for every TLS client.
//
// If image.config already references a ConfigMap, the agent adds its keys to it and keeps all others.
//
// No rollout is recorded for settle to wait for: the pool does not roll out for a registry CA. From 4.14 the
// MCO copies image.config's additionalTrustedCA into ControllerConfig and the MCD writes
// /etc/docker/certs.d/<host[:port]>/ca.crt in place, without a new rendered config (machine-config-operator
// release-4.14 pkg/operator/sync.go, pkg/daemon/certificate_writer.go); 4.12/4.13 leave it to the
// image-registry operator's node-ca DaemonSet. Waiting for a pool rollout here cost every trust-only run the
// 10-minute reaction grace.
import { R } from '../cluster/resources';
import type { ClusterClient, KubeObject } from '../cluster/types';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { joinPem, splitCertificates } from '../certs/pem';
import { createOrUpdate, MANAGED_BY, MANAGED_BY_LABEL, updateObject } from '../cluster/objects';
import { resilient } from './resilient';
import { notInPlace } from './not-in-place';

export const TRUST_CONFIGMAP = 'sno-reconfigure-registry-cas';
const NAMESPACE = 'openshift-config';

interface ImageConfig extends KubeObject {
  spec?: { additionalTrustedCA?: { name?: string }; [k: string]: unknown };
}

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** "registry.example.com:8443/ocp/release" → "registry.example.com:8443" */
export function registryHost(reference: string): string {
  return reference.replace(/^[a-z]+:\/\//i, '').split('/')[0]?.toLowerCase() ?? '';
}

/** ConfigMap key of a registry host: `host` or `host..port`. */
export function trustKey(host: string): string {
  return host.replace(/:(\d+)$/, '..$1');
}

/** The registry hosts the bundle is for (see the header). Wildcard pull-secret keys (*.example.com) cannot be keys. */
export function trustHosts(mirrors: { mirrors: string[] }[], pullSecretRegistries: string[]): string[] {
  const fromMirrors = mirrors.flatMap((m) => m.mirrors.map(registryHost));
  const hosts = fromMirrors.length > 0 ? fromMirrors : pullSecretRegistries.map(registryHost);
  return [...new Set(hosts.filter((h) => h && !h.startsWith('*')))].sort();
}

/** Existing data with our keys set to the bundle; every other key kept. */
export function mergeTrustData(existing: Record<string, string> | undefined, hosts: string[], bundlePem: string): Record<string, string> {
  const data = { ...(existing ?? {}) };
  for (const host of hosts) data[trustKey(host)] = bundlePem;
  return data;
}

interface Assessment {
  hosts: string[];
  bundle?: string;
  configMapName: string;
  imageConfigChange: boolean;
  configMapChange?: 'create' | 'update';
  keys: string[];
}

async function assess(ctx: StepContext, client: ClusterClient): Promise<Assessment> {
  const site = ctx.site.resolved;
  const certs = splitCertificates(site.additionalTrustBundle ?? '');
  const hosts = trustHosts([...site.imageDigestMirrors, ...(site.imageTagMirrors ?? [])], Object.keys(site.pullSecret?.auths ?? {}));
  const image = await client.get<ImageConfig>(R.images, 'cluster');
  const referenced = image?.spec?.additionalTrustedCA?.name || undefined;
  const configMapName = referenced ?? TRUST_CONFIGMAP;
  const none: Assessment = { hosts, configMapName, imageConfigChange: false, keys: [] };
  if (certs.length === 0 || hosts.length === 0) return none;
  if (!image) throw new StepError('the cluster has no image.config.openshift.io "cluster"', 'This object is part of every OpenShift cluster; check the kubeconfig the agent uses.');
  const bundle = joinPem(certs);
  const cm = await client.get<ConfigMap>(R.configMaps, configMapName, NAMESPACE);
  const keys = hosts.map(trustKey);
  const differs = !cm || keys.some((k) => cm.data?.[k] !== bundle);
  return { hosts, bundle, configMapName, imageConfigChange: referenced === undefined, ...(differs ? { configMapChange: cm ? 'update' : 'create' } : {}), keys };
}

function changesOf(a: Assessment): Change[] {
  const out: Change[] = [];
  if (a.configMapChange) out.push({ kind: 'ConfigMap', target: `${NAMESPACE}/${a.configMapName}`, action: a.configMapChange, detail: `registry CA for ${a.keys.join(', ')}` });
  if (a.imageConfigChange) out.push({ kind: 'Image', target: 'cluster', action: 'update', detail: `additionalTrustedCA ${a.configMapName}` });
  return out;
}

export const trustStep: Step = resilient({
  name: 'trust',
  title: 'Trust the site registry CA',

  async plan(ctx) {
    return changesOf(await assess(ctx, await ctx.cluster()));
  },

  async check(ctx) {
    const a = await assess(ctx, await ctx.cluster());
    if (ctx.site.resolved.additionalTrustBundle && a.hosts.length === 0) {
      ctx.warn('additionalTrustBundle is set but the site-config names no registry (no imageDigestMirrors or imageTagMirrors, no pull secret): the CA is not installed');
    }
    return changesOf(a).length === 0;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (!a.bundle || changesOf(a).length === 0) return;
    const bundle = a.bundle;
    if (a.configMapChange === 'create') {
      // createOrUpdate: a 409 on the create (AlreadyExists or Conflict) re-reads and merges instead of failing.
      await createOrUpdate<ConfigMap>(client, R.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: a.configMapName, namespace: NAMESPACE, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } }, data: mergeTrustData(undefined, a.hosts, bundle) }, (current) => ({ ...current, data: mergeTrustData(current.data, a.hosts, bundle) }));
    } else if (a.configMapChange === 'update') {
      await updateObject<ConfigMap>(client, R.configMaps, a.configMapName, NAMESPACE, (current) => ({ ...current, data: mergeTrustData(current.data, a.hosts, bundle) }));
    }
    if (a.imageConfigChange) {
      await updateObject<ImageConfig>(client, R.images, 'cluster', undefined, (current) => {
        if (current.spec?.additionalTrustedCA?.name) return undefined;
        return { ...current, spec: { ...current.spec, additionalTrustedCA: { name: a.configMapName } } };
      });
    }
    for (const c of changesOf(a)) ctx.changed(c);
  },

  async verify(ctx) {
    const left = changesOf(await assess(ctx, await ctx.cluster()));
    if (left.length > 0) throw notInPlace(`registry CA trust not in place: ${left.map((c) => `${c.kind} ${c.target}`).join(', ')}`);
  },
});
