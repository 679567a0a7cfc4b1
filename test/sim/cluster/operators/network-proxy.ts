// The network operator's proxy controller (cluster-network-operator release-4.12…4.16
// pkg/controller/proxyconfig/controller.go Reconcile, validation.go, status.go; pkg/util/proxyconfig/no_proxy.go):
// on a change of Proxy/cluster, a ConfigMap in openshift-config, Network/cluster or Infrastructure/cluster it
// validates the Proxy spec, validates and merges the trustedCA bundle into openshift-config-managed/
// trusted-ca-bundle, and writes the Proxy status — httpProxy and httpsProxy as given, noProxy the sorted union
// of the system entries and the user's (or `*` alone). A bad spec or bundle makes ClusterOperator network
// Degraded with the controller's message; the status then keeps what it had. The proxy never makes network
// Progressing (statusmanager.ProxyConfig only degrades).
//
// This is a transcription of the Go code, written apart from the agent's src/steps/proxy.ts on purpose: the
// tests compare the two.
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { parse } from 'yaml';
import { R } from '../../../../src/cluster/resources';
import type { StoreEvent } from '../../store-types';
import type { SimContext } from '../context';
import { minorVersion } from '../options';
import type { OperatorView } from './base';
import { asExpected, writeClusterOperatorConditions } from './status';

interface ProxySpec {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  trustedCA?: { name?: string };
  readinessEndpoints?: string[];
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** pkg/util/validation URI: url.ParseRequestURI, absolute, port 1–65535; returns the scheme. */
function uriScheme(uri: string): string {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new Error(`parse "${uri}": invalid URI for request`);
  }
  if (u.port && (Number(u.port) < 1 || Number(u.port) > 65535)) throw new Error(`failed to validate port for URL "${uri}"`);
  return u.protocol.replace(/:$/, '');
}

/** validation.go ValidateProxyConfig. */
function validateSpec(spec: ProxySpec): void {
  if (!spec.httpProxy && !spec.httpsProxy) throw new Error('httpProxy or httpsProxy must be set when using proxy');
  if (spec.httpProxy && uriScheme(spec.httpProxy) !== 'http') throw new Error("httpProxy requires a 'http' URI scheme");
  if (spec.httpsProxy && !['http', 'https'].includes(uriScheme(spec.httpsProxy))) throw new Error("httpsProxy requires a 'http' or 'https' URI scheme");
  if (spec.noProxy && spec.noProxy !== '*') {
    for (const raw of spec.noProxy.split(',')) {
      const v = raw.trim();
      const domain = v.replace(/^\./, '').replace(/\.$/, '');
      const cidr = /^(.+)\/(\d+)$/.exec(v);
      const ipOrCidr = isIP(v) !== 0 || (cidr !== null && isIP(cidr[1]!) !== 0 && Number(cidr[2]) <= (isIP(cidr[1]!) === 4 ? 32 : 128));
      if (!(domain.length <= 253 && DNS1123_SUBDOMAIN.test(domain)) && !ipOrCidr) throw new Error(`invalid noProxy: ${v}`);
    }
  }
  // Each readiness endpoint is fetched through the proxy (validateReadinessEndpoint, 3 tries). The simulated
  // cluster reaches nothing beyond itself, so every probe fails as a GET through an unknown proxy host does.
  for (const endpoint of spec.readinessEndpoints ?? []) {
    const scheme = uriScheme(endpoint);
    const via = scheme === 'https' && spec.httpsProxy ? spec.httpsProxy : spec.httpProxy ?? '';
    const host = via ? new URL(via).hostname : '';
    throw new Error(`readinessEndpoint probe failed for endpoint '${endpoint}': Get "${endpoint}": proxyconnect tcp: dial tcp: lookup ${host}: no such host`);
  }
}

export class NetworkProxyController implements OperatorView {
  readonly coName = 'network';
  private queued = false;

  constructor(private readonly ctx: SimContext) {}

  init(): void {
    this.reconcile();
  }

  private problem: { reason: string; message: string } | undefined;

  /** Degraded as the proxy controller left it, unless the simulator injected a degradation. */
  publish(): void {
    const injected = this.ctx.file.state.injectedDegraded[this.coName] ?? this.problem;
    writeClusterOperatorConditions(this.ctx, this.coName, { Degraded: injected ? { status: 'True', reason: injected.reason, message: injected.message } : asExpected('All is well') });
  }

  handle(e: StoreEvent): void {
    const r = e.resource;
    const ns = e.object.metadata?.namespace;
    const relevant =
      (r.group === R.proxies.group && [R.proxies.plural, R.networks.plural, R.infrastructures.plural].includes(r.plural)) ||
      (r.group === '' && r.plural === 'configmaps' && (ns === 'openshift-config' || (ns === 'kube-system' && e.object.metadata?.name === 'cluster-config-v1')));
    if (!relevant || this.queued) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      try {
        this.reconcile();
      } catch (err) {
        this.ctx.log(`network: proxy reconcile failed: ${(err as Error).message}`);
      }
    });
  }

  private degrade(reason: string | undefined, message?: string): void {
    this.problem = reason ? { reason, message: message! } : undefined;
    this.publish();
  }

  private reconcile(): void {
    const store = this.ctx.store;
    const proxy = store.get(R.proxies, 'cluster');
    if (!proxy) return;
    const spec = (proxy.spec ?? {}) as ProxySpec;
    const invalid = (e: unknown) => `The configuration is invalid for proxy 'cluster' (${(e as Error).message}). Use 'oc edit proxy.config.openshift.io cluster' to fix.`;
    if (spec.httpProxy || spec.httpsProxy || spec.noProxy) {
      try {
        validateSpec(spec);
      } catch (e) {
        this.ctx.log(`network: failed to validate proxy 'cluster': ${(e as Error).message}`);
        return this.degrade('InvalidProxyConfig', invalid(e));
      }
    }
    let bundle = '';
    if (spec.trustedCA?.name) {
      const cm = store.get(R.configMaps, spec.trustedCA.name, 'openshift-config');
      const data = (cm?.data as Record<string, string> | undefined)?.['ca-bundle.crt'];
      try {
        if (!cm) throw new Error(`failed to get trustedCA configmap for proxy cluster: configmaps "${spec.trustedCA.name}" not found`);
        if (!data) throw new Error(`data key 'ca-bundle.crt' not found`);
        const blocks = data.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
        if (blocks.length === 0) throw new Error('failed to parse certificate PEM');
        for (const b of blocks) new X509Certificate(b);
      } catch (e) {
        return this.degrade('InvalidProxyConfig', invalid(new Error(`failed to validate trust bundle for proxy trustedCA '${spec.trustedCA.name}': ${(e as Error).message}`)));
      }
      bundle = data;
    }
    // The merged bundle pods mount (config.openshift.io/inject-trusted-cabundle); the sim has no system bundle to add.
    const managed = store.get(R.configMaps, 'trusted-ca-bundle', 'openshift-config-managed');
    if ((managed?.data as Record<string, string> | undefined)?.['ca-bundle.crt'] !== bundle) {
      const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'trusted-ca-bundle', namespace: 'openshift-config-managed' }, data: { 'ca-bundle.crt': bundle } };
      if (managed) store.update(R.configMaps, { ...managed, data: obj.data });
      else store.create(R.configMaps, obj);
    }
    let noProxy = '';
    if (spec.httpProxy || spec.httpsProxy || spec.noProxy) {
      try {
        noProxy = spec.noProxy === '*' ? '*' : this.mergedNoProxy(spec.noProxy ?? '');
      } catch (e) {
        return this.degrade('StatusError', `Could not update proxy 'cluster' status: failed to merge user/system noProxy settings: ${(e as Error).message}`);
      }
    }
    const status = { httpProxy: spec.httpProxy ?? '', httpsProxy: spec.httpsProxy ?? '', noProxy };
    const before = (proxy.status ?? {}) as Record<string, string>;
    if ((before.httpProxy ?? '') !== status.httpProxy || (before.httpsProxy ?? '') !== status.httpsProxy || (before.noProxy ?? '') !== status.noProxy) {
      // Empty fields are omitted (omitempty).
      store.updateStatus(R.proxies, { ...proxy, status: Object.fromEntries(Object.entries(status).filter(([, v]) => v !== '')) });
      this.ctx.log(`network: proxy 'cluster' status updated`);
    }
    this.degrade(undefined);
  }

  /** no_proxy.go mergeUserSystemNoProxy for platform None (no cloud metadata entries), sorted like sets.String.List. */
  private mergedNoProxy(user: string): string {
    const store = this.ctx.store;
    const installConfig = (store.get(R.configMaps, 'cluster-config-v1', 'kube-system')?.data as Record<string, string> | undefined)?.['install-config'];
    if (!installConfig) throw new Error('missing install-config in configmap');
    const ic = parse(installConfig) as { networking?: { machineCIDR?: string; machineNetwork?: { cidr: string }[] } };
    const set = new Set(['127.0.0.1', 'localhost', '.svc', '.cluster.local']);
    // From 4.14 a machine network of 0.0.0.0/0 is left out (commit aef22da63, "Skip rendering 0.0.0.0/0").
    const all = minorVersion(this.ctx.opts.version) >= 14 ? '0.0.0.0/0' : undefined;
    if (ic.networking?.machineCIDR && ic.networking.machineCIDR !== all) set.add(ic.networking.machineCIDR);
    for (const m of ic.networking?.machineNetwork ?? []) if (m.cidr !== all) set.add(m.cidr);
    const infra = store.get(R.infrastructures, 'cluster')?.status as { apiServerInternalURI?: string } | undefined;
    if (!infra?.apiServerInternalURI) throw new Error("internal api server url missing from infrastructure config 'cluster'");
    set.add(new URL(infra.apiServerInternalURI).hostname);
    const net = store.get(R.networks, 'cluster')?.status as { serviceNetwork?: string[]; clusterNetwork?: { cidr: string }[] } | undefined;
    if (!net?.serviceNetwork?.length) throw new Error("serviceNetwork missing from network 'cluster' status");
    for (const s of net.serviceNetwork) set.add(s);
    if (!net.clusterNetwork?.length) throw new Error('clusterNetwork missing from network `cluster` status');
    for (const c of net.clusterNetwork) set.add(c.cidr);
    for (const v of user.split(',')) if (v !== '') set.add(v);
    // Go's sort.Strings: byte order.
    return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(',');
  }
}
