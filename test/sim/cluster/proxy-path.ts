// How an operator's HTTP client reaches one of the cluster's own https URLs: Go's http.ProxyFromEnvironment with
// the cluster proxy injected into its pod (Proxy/cluster status; the config.openshift.io/inject-proxy annotation,
// e.g. cluster-ingress-operator release-4.14 manifests/02-deployment.yaml), NO_PROXY matched as
// golang.org/x/net http/httpproxy/proxy.go useProxy does: `*` matches all; an IP or CIDR entry matches an IP host;
// `foo.com` matches foo.com and its subdomains, `.foo.com` (or `*.foo.com`) its subdomains only. Through the proxy a
// name is reached when the proxy reaches it (cluster/names.ts); directly when the node resolves it.
import { isIP } from 'node:net';
import { R } from '../../../src/cluster/resources';
import type { SimContext } from './context';

interface ProxyStatus {
  httpsProxy?: string;
  noProxy?: string;
}

/** Whether NO_PROXY lets `host` (a DNS name) go direct. */
export function noProxyMatches(noProxy: string, host: string): boolean {
  for (const raw of noProxy.split(',')) {
    let entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    if (isIP(entry) || entry.includes('/')) continue;
    entry = entry.replace(/:\d+$/, '');
    if (entry.startsWith('*.')) entry = entry.slice(1);
    const matchHost = !entry.startsWith('.');
    if (matchHost) entry = `.${entry}`;
    if (host.endsWith(entry) || (matchHost && host === entry.slice(1))) return true;
  }
  return false;
}

/** The cluster proxy the operators run with, or undefined when none is set. */
export function clusterProxy(ctx: SimContext): ProxyStatus | undefined {
  const status = (ctx.store.get(R.proxies, 'cluster')?.status ?? {}) as ProxyStatus;
  return status.httpsProxy ? status : undefined;
}

/** Why a GET of https://<host>/ from an operator fails, or undefined when it gets through. */
export function reachFailure(ctx: SimContext, host: string, viaProxy = true): string | undefined {
  const proxy = viaProxy ? clusterProxy(ctx) : undefined;
  if (proxy && !noProxyMatches(proxy.noProxy ?? '', host)) {
    if (ctx.names.proxyReaches(host)) return undefined;
    const via = new URL(proxy.httpsProxy!);
    return `Get "https://${host}": Service Unavailable (the proxy ${via.hostname}:${via.port || '80'} cannot resolve ${host})`;
  }
  return ctx.names.resolves(host) ? undefined : `Get "https://${host}": dial tcp: lookup ${host}: no such host`;
}
