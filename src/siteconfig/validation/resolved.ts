// The last stage: the site-config as the steps use it, once every check passed, and the digest that tells a
// changed config (a new run) from the same one.
import { sha256Hex } from '../signature';
import type { SiteConfigDocument } from '../schema';
import { validValue, verifySchema } from '../schema';
import type { ResolvedSiteConfig } from '../types';
import { get, type CheckedFields, type Contents } from './context';

/** The site-config as the steps use it, once every check passed. */
export function resolvedForm(doc: SiteConfigDocument, spec: unknown, fields: CheckedFields & { baseDomain: string }, contents: Contents): ResolvedSiteConfig {
  const network = get(spec, 'network');
  const verify = validValue(verifySchema, network !== undefined ? get(network, 'verify') : undefined);
  return {
    name: doc.metadata.name,
    ...(doc.spec.match ? { match: doc.spec.match } : {}),
    ...(fields.clusterName !== undefined ? { clusterName: fields.clusterName } : {}),
    ...(fields.hostname !== undefined ? { hostname: fields.hostname } : {}),
    baseDomain: fields.baseDomain,
    ...(contents.nmstate ? { network: { nmstate: contents.nmstate, verify: { ping: verify?.ping ?? [], resolve: verify?.resolve ?? [] } } } : {}),
    ...(contents.pullSecret ? { pullSecret: contents.pullSecret } : {}),
    pullSecretMode: doc.spec.pullSecretMode ?? 'merge',
    imageDigestMirrors: fields.mirrors,
    ...(fields.tagMirrors.length > 0 ? { imageTagMirrors: fields.tagMirrors } : {}),
    ...(contents.trustBundle !== undefined ? { additionalTrustBundle: contents.trustBundle } : {}),
    certificates: contents.certificates,
    ...(doc.spec.certificateRenewal ? { certificateRenewal: doc.spec.certificateRenewal } : {}),
    ...(doc.spec.nodeLabels ? { nodeLabels: { set: doc.spec.nodeLabels.set ?? {}, remove: doc.spec.nodeLabels.remove ?? [] } } : {}),
    ...(doc.spec.ssh && contents.sshKeys ? { ssh: { authorizedKeys: contents.sshKeys, factoryKeys: doc.spec.ssh.factoryKeys } } : {}),
    ...(doc.spec.proxy
      ? {
          proxy: {
            ...(doc.spec.proxy.httpProxy ? { httpProxy: doc.spec.proxy.httpProxy } : {}),
            ...(doc.spec.proxy.httpsProxy ? { httpsProxy: doc.spec.proxy.httpsProxy } : {}),
            noProxy: doc.spec.proxy.noProxy ?? [],
            ...(contents.proxyCa !== undefined ? { trustedCA: contents.proxyCa } : {}),
          },
        }
      : {}),
    ...(contents.manifests.length ? { extraManifests: contents.manifests } : {}),
    ...(doc.spec.ntp ? { ntp: { servers: doc.spec.ntp.servers ?? [], pools: doc.spec.ntp.pools ?? [] } } : {}),
    ...(doc.spec.kubeadminPassword ? { kubeadminPassword: doc.spec.kubeadminPassword.hash !== undefined ? { hash: doc.spec.kubeadminPassword.hash } : { remove: true as const } } : {}),
    timeouts: fields.timeouts,
  };
}

/**
 * sha256 over the site-config and every referenced file, each framed by its field and length so that moving
 * bytes between files changes the digest: a changed config is a new run.
 */
export function siteDigest(main: Uint8Array, refs: ReadonlyArray<{ field: string; bytes?: Uint8Array }>): string {
  const parts: Uint8Array[] = [Buffer.from(`site-config\0${main.length}\0`), main];
  for (const r of refs) {
    if (!r.bytes) continue;
    parts.push(Buffer.from(`\0${r.field}\0${r.bytes.length}\0`), r.bytes);
  }
  return sha256Hex(Buffer.concat(parts));
}
