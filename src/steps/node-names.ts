// The node's own names at the site (issue 14 item 2; src/render/local-dns.ts has the why and the sources).
// Before kubelet starts: the new names go into the node-local DNS (to the site address), and
// api-int.<cluster>.<installed domain> — what kubelet dials — must resolve, on the node, to one of the node's
// addresses; otherwise the network change is rolled back like any failed verification. After the change:
// whether the site's own DNS knows the new names (a warning; clients outside the node need them).
import { ipEqual, parseIp } from '../csr/ip';
import type { Host } from '../host/host';
import { currentAddresses, resolveOnce, type CheckOutcome } from '../host/netcheck';
import { resolvesThrough } from '../host/site-dns';
import { assistedDnsmasqMarker, clusterRecords, dnsmasqRecords, LOCAL_DNS_UNIT, SITE_NAMES_CONF } from '../host/local-dns';
import type { StepContext } from '../engine/step';
import { bootstrapApiHost } from '../engine/identity';
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

/** The new domain's api and *.apps → the site address, in the node-local DNS (when the node has one). */
export async function publishSiteNames(ctx: StepContext): Promise<void> {
  const installed = await installedNames(ctx.host);
  const cluster = clusterNameOf(ctx, installed);
  const address = siteAddress(ctx);
  if (!cluster || !address || !(await hasLocalDns(ctx.host))) return;
  const domain = `${cluster}.${ctx.site.resolved.baseDomain}`;
  const text = dnsmasqRecords(`The new names of ${cluster} at this site, to the site address.`, clusterRecords(domain, address, false));
  if ((await ctx.host.readTextIfExists(SITE_NAMES_CONF)) === text) return;
  await ctx.host.writeFileAtomic(SITE_NAMES_CONF, text, 0o644);
  // Whichever dnsmasq runs (ours, or assisted-service's dnsmasq.service) reads it on restart.
  try {
    await systemctl(ctx.host, ['try-restart', LOCAL_DNS_UNIT, 'dnsmasq.service'], 60_000);
  } catch (e) {
    if (!(e instanceof CommandError)) throw e;
    ctx.log.warn(`could not restart the node-local DNS (${e.detail})`);
  }
  ctx.changed({ kind: 'file', target: SITE_NAMES_CONF, action: 'write', detail: `api.${domain} and *.apps.${domain} → ${address} in the node-local DNS` });
}

const NEVER_REGISTERS = '; kubelet reaches the API by this name, so it would never register';

/** The built-in pre-kubelet check: kubelet's api-int name resolves on the node to one of its addresses. */
export async function apiIntCheck(host: Host): Promise<{ key: string; run: () => Promise<CheckOutcome> } | undefined> {
  const installed = await installedNames(host);
  if (!installed) return undefined;
  return {
    key: `resolve ${installed.apiInt}`,
    run: async () => {
      const outcome = await resolveOnce(host, installed.apiInt);
      if (!outcome.ok) return { ...outcome, detail: `${outcome.detail}${NEVER_REGISTERS}` };
      const mine = (await currentAddresses(host)).map((a) => parseIp(a)).filter((b): b is Buffer => b !== undefined);
      const resolved = outcome.detail.split(', ');
      const ok = resolved.some((a) => {
        const ip = parseIp(a);
        return ip !== undefined && mine.some((m) => ipEqual(m, ip));
      });
      return ok ? outcome : { ...outcome, ok: false, detail: `resolves to ${outcome.detail}, not to an address of this node${NEVER_REGISTERS}` };
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
