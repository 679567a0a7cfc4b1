// The node's own names at the site (issue 14 item 2; src/render/local-dns.ts has the why and the sources).
// Before kubelet starts: the new names go into the node-local DNS (to the site address), and
// api-int.<cluster>.<installed domain> — what kubelet dials — must resolve, on the node, to one of the node's
// addresses; otherwise the network change is rolled back like any failed verification. From OpenShift 4.14 a
// name under the installed *.apps must resolve to the node too: the ingress canary route is a spec.subdomain route
// on the installed apps domain and its probe dials that name, so ingress stays Degraded without it
// (cluster-ingress-operator release-4.14 pkg/operator/controller/canary/route.go, http.go); 4.12/4.13 generate a
// canary host that moves with the domain. The version is the one `prepare` recorded in the factory baseline;
// without one only api-int is required. After the change:
// whether the site's own DNS knows the new names (a warning; clients outside the node need them).
import { ipEqual, parseIp } from '../csr/ip';
import type { Host } from '../host/host';
import { currentAddresses, resolveOnce, type CheckOutcome } from '../host/netcheck';
import { resolvesThrough } from '../host/site-dns';
import { assistedDnsmasqMarker, canaryHost, clusterRecords, namesTheNodeNeeds, dnsmasqRecords, INSTALLED_NAMES_CONF, LOCAL_DNS_UNIT, SITE_NAMES_CONF } from '../host/local-dns';
import type { Change, StepContext } from '../engine/step';
import { bootstrapApiHost } from '../engine/identity';
import { BASELINE_FILE } from '../paths';
import { addressesFromNmstate } from '../siteconfig/nmstate';
import { CommandError } from '../host/command-error';
import { systemctl } from '../host/systemctl';

export interface InstalledNames {
  /** api-int.<cluster>.<installed domain> */
  apiInt: string;
  clusterName: string;
}

/** The API name kubelet uses, from its bootstrap kubeconfig; undefined when it is an address or the file is absent. */
export async function installedNames(host: Host): Promise<InstalledNames | undefined> {
  const hostname = await bootstrapApiHost(host);
  const m = hostname ? /^api-int\.([^.]+)\.(.+)$/.exec(hostname) : null;
  return m?.[1] ? { apiInt: hostname!, clusterName: m[1] } : undefined;
}

async function hasLocalDns(host: Host): Promise<boolean> {
  return (await host.exists(`/etc/systemd/system/${LOCAL_DNS_UNIT}`)) || (await assistedDnsmasqMarker(host)) !== undefined;
}

function siteAddress(ctx: StepContext): string | undefined {
  const addresses = addressesFromNmstate(ctx.site.resolved.network?.nmstate);
  return addresses.find((a) => !a.includes(':')) ?? addresses[0];
}

function clusterNameOf(ctx: StepContext, installed: InstalledNames | undefined): string | undefined {
  return ctx.site.resolved.clusterName ?? installed?.clusterName;
}

/**
 * The new domain's api and *.apps → the site address, in the node-local DNS (when the node has one). `actual` is
 * the address the node holds after the change (with DHCP the state names none: the lease on br-ex decides).
 */
/**
 * The site's names in the node-local DNS as they should be now, and whether its file holds them already; undefined when
 * the node has nothing to publish.
 */
async function siteNames(ctx: StepContext, actual?: string): Promise<{ text: string; domain: string; address: string; written: boolean } | undefined> {
  const cluster = clusterNameOf(ctx, await installedNames(ctx.host));
  const address = actual ?? siteAddress(ctx);
  if (!cluster || !address || !(await hasLocalDns(ctx.host))) return undefined;
  const domain = `${cluster}.${ctx.site.resolved.baseDomain}`;
  const text = dnsmasqRecords(`The new names of ${cluster} at this site, to the site address.`, clusterRecords(domain, address, false));
  return { text, domain, address, written: (await ctx.host.readTextIfExists(SITE_NAMES_CONF)) === text };
}

/** Whether the node-local DNS already answers the site's names as publishSiteNames would write them. */
export async function siteNamesInPlace(ctx: StepContext, actual?: string): Promise<boolean> {
  const names = await siteNames(ctx, actual);
  return !names || names.written;
}

/**
 * Writes them and restarts the node-local DNS, also when the file already holds them: a run cut off between the write
 * and the restart left them unread (the twenty-first hostile re-test of issue 36, F4).
 */
export async function publishSiteNames(ctx: StepContext, actual?: string): Promise<void> {
  const names = await siteNames(ctx, actual);
  if (!names) return;
  if (!names.written) await ctx.host.writeFileAtomic(SITE_NAMES_CONF, names.text, 0o644);
  // Whichever dnsmasq runs (ours, or assisted-service's dnsmasq.service) reads it on restart.
  try {
    await systemctl(ctx.host, ['try-restart', LOCAL_DNS_UNIT, 'dnsmasq.service'], 60_000);
  } catch (e) {
    if (!(e instanceof CommandError)) throw e;
    ctx.log.warn(`could not restart the node-local DNS (${e.detail})`);
  }
  if (!names.written) ctx.changed({ kind: 'file', target: SITE_NAMES_CONF, action: 'write', detail: `api.${names.domain} and *.apps.${names.domain} → ${names.address} in the node-local DNS` });
}

/**
 * What `plan` says of our node-local DNS: the address the installed names answer with, and whether the node keeps it
 * at the site (the internal IP; `prepare` refuses a node-local DNS without one, src/factory/local-dns.ts).
 */
export async function installedNamesPlan(ctx: StepContext): Promise<Change | undefined> {
  const address = /^address=\/api-int\.[^/]+\/(.+)$/m.exec((await ctx.host.readTextIfExists(INSTALLED_NAMES_CONF)) ?? '')?.[1];
  if (!address || (await assistedDnsmasqMarker(ctx.host))) return undefined;
  const internal = (ctx.facts.internalAddresses ?? []).includes(address);
  const site = addressesFromNmstate(ctx.site.resolved.network?.nmstate).includes(address);
  const why = internal ? 'the internal IP, kept at every site' : site ? 'the site address' : `which the node will not have here (no internal IP): the site network would be rolled back; call the office (render --internal-ip ${address}/PREFIX, prepare again)`;
  return { kind: 'DNS', target: 'the node-local DNS', action: 'leave', detail: `the installed api, api-int and *.apps answer with ${address}, ${why}` };
}

const NEVER_REGISTERS = '; kubelet reaches the API by this name, so it would never register';

/** The OpenShift minor `prepare` recorded, if any. */
async function recordedMinor(host: Host): Promise<number | undefined> {
  try {
    const version = (JSON.parse((await host.readTextIfExists(BASELINE_FILE)) ?? '{}') as { openshiftVersion?: unknown }).openshiftVersion;
    const m = typeof version === 'string' ? /^4\.(\d+)\./.exec(version) : null;
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `name` resolves on the node to one of its addresses. */
async function resolvesToNode(host: Host, name: string): Promise<CheckOutcome> {
  const outcome = await resolveOnce(host, name);
  if (!outcome.ok) return outcome;
  const mine = (await currentAddresses(host)).map((a) => parseIp(a)).filter((b): b is Buffer => b !== undefined);
  const ok = outcome.detail.split(', ').some((a) => {
    const ip = parseIp(a);
    return ip !== undefined && mine.some((m) => ipEqual(m, ip));
  });
  return ok ? outcome : { ...outcome, ok: false, detail: `resolves to ${outcome.detail}, not to an address of this node` };
}

/**
 * The built-in pre-kubelet check: kubelet's api-int name resolves on the node to one of its addresses, and from
 * 4.14 the ingress canary's name under the installed apps domain too.
 */
export async function apiIntCheck(host: Host): Promise<{ key: string; run: () => Promise<CheckOutcome> } | undefined> {
  const installed = await installedNames(host);
  if (!installed) return undefined;
  const clusterDomain = installed.apiInt.replace(/^api-int\./, '');
  const canary = namesTheNodeNeeds(clusterDomain, await recordedMinor(host)).includes(canaryHost(clusterDomain));
  return {
    key: `resolve ${installed.apiInt}`,
    run: async () => {
      const outcome = await resolvesToNode(host, installed.apiInt);
      if (!outcome.ok) return { ...outcome, detail: `${outcome.detail}${NEVER_REGISTERS}` };
      if (!canary) return outcome;
      const apps = await resolvesToNode(host, canaryHost(clusterDomain));
      if (apps.ok) return outcome;
      return { ...outcome, ok: false, detail: `${outcome.detail}, but ${canaryHost(clusterDomain)} ${apps.detail}; from OpenShift 4.14 the ingress operator probes its canary by this name under the installed *.apps, and ingress stays Degraded without it` };
    },
  };
}

/** Warnings for the new names the site's own DNS does not resolve. */
export async function siteDnsWarnings(ctx: StepContext): Promise<string[]> {
  const dns = ctx.site.resolved.network?.nmstate?.['dns-resolver'] as { config?: { server?: unknown[] } } | undefined;
  const servers = (dns?.config?.server ?? []).filter((s): s is string => typeof s === 'string');
  const cluster = clusterNameOf(ctx, await installedNames(ctx.host));
  if (servers.length === 0 || !cluster) return [];
  const domain = `${cluster}.${ctx.site.resolved.baseDomain}`;
  const warnings: string[] = [];
  for (const name of [`api.${domain}`, `console-openshift-console.apps.${domain}`]) {
    const r = await resolvesThrough(ctx.host, servers, name);
    if (r.ok === undefined) {
      ctx.log.info(`the site's DNS could not be asked for the new names: ${r.detail}`);
      return [];
    }
    if (!r.ok) warnings.push(`the site's DNS does not resolve ${name} (${r.detail}): clients outside the node need api.${domain} and *.apps.${domain} there`);
  }
  return warnings;
}
