// APIServer `cluster` spec.servingCerts.namedCertificates: the agent's entry for api.<cluster>.<domain>,
// merged into whatever else is there (ZTPFW and cluster-relocation-operator overwrote the whole list;
// reference/anchor-ztpfw-domain.md section 1.1 and "Weaknesses").
import type { ClusterClient, KubeObject } from '../../cluster/types';
import { R } from '../../cluster/resources';
import { sameJson, updateObject } from '../../cluster/objects';

/**
 * The kube-apiserver operator serves at most this many user namedCertificates; beyond it the whole list is
 * refused as an observation error and the operator reports Degraded (cluster-kube-apiserver-operator
 * pkg/operator/configobservation/apiserver/observe_apiserver.go, maxUserNamedCerts, release-4.12…4.16).
 */
export const MAX_USER_NAMED_CERTS = 10;

export interface NamedCertificate {
  names?: string[];
  servingCertificate: { name: string };
  [field: string]: unknown;
}

interface APIServer extends KubeObject {
  spec?: { servingCerts?: { namedCertificates?: NamedCertificate[] }; [k: string]: unknown };
}

/**
 * The list with our entry (`secretName` serving `names`) in place, or without it when `ours` is undefined.
 * Entries of others are kept in order; a name we serve is taken out of another entry (two entries for one
 * name make kube-apiserver's choice arbitrary), and an entry left with no names at all is dropped. Entries
 * without `names` (names implied by their certificate) are left alone.
 */
export function mergeNamedCertificates(existing: NamedCertificate[] | undefined, secretName: string, ours: { names: string[] } | undefined): NamedCertificate[] {
  if (ours?.names.some((n) => /^api-int\./i.test(n))) {
    // openshift-docs customize-certificates-api-add-named.adoc: a named certificate for api-int degrades the cluster.
    throw new Error('refusing to add a named certificate for api-int');
  }
  const taken = new Set((ours?.names ?? []).map((n) => n.toLowerCase()));
  const merged: NamedCertificate[] = [];
  for (const entry of existing ?? []) {
    if (entry.servingCertificate?.name === secretName) continue;
    if (!entry.names || entry.names.length === 0) {
      merged.push(entry);
      continue;
    }
    const names = entry.names.filter((n) => !taken.has(n.toLowerCase()));
    if (names.length === 0) continue;
    merged.push(names.length === entry.names.length ? entry : { ...entry, names });
  }
  if (ours) merged.push({ names: [...ours.names], servingCertificate: { name: secretName } });
  return merged;
}

/** Entries of others that lose a name to ours (for a warning). */
export function displacedEntries(existing: NamedCertificate[] | undefined, secretName: string, names: string[]): string[] {
  const taken = new Set(names.map((n) => n.toLowerCase()));
  return (existing ?? []).filter((e) => e.servingCertificate?.name !== secretName && (e.names ?? []).some((n) => taken.has(n.toLowerCase()))).map((e) => e.servingCertificate?.name ?? '?');
}

export async function readNamedCertificates(client: ClusterClient): Promise<NamedCertificate[] | undefined> {
  const apiserver = await client.get<APIServer>(R.apiServers, 'cluster');
  return apiserver?.spec?.servingCerts?.namedCertificates;
}

/** Why the merged list cannot be written, or undefined when it can. */
export function namedCertificatesProblem(existing: NamedCertificate[] | undefined, secretName: string, ours: { names: string[] } | undefined): string | undefined {
  const merged = mergeNamedCertificates(existing, secretName, ours);
  if (merged.length <= MAX_USER_NAMED_CERTS) return undefined;
  return `APIServer cluster already has ${(existing ?? []).length} namedCertificates entries; with the one for the new API name there would be ${merged.length}, more than the ${MAX_USER_NAMED_CERTS} the kube-apiserver operator accepts`;
}

export function namedCertificatesWouldChange(existing: NamedCertificate[] | undefined, secretName: string, ours: { names: string[] } | undefined): boolean {
  return !sameJson(existing ?? [], mergeNamedCertificates(existing, secretName, ours));
}

/** Applies the merge with read-modify-write; true when it wrote. */
export async function ensureNamedCertificate(client: ClusterClient, secretName: string, ours: { names: string[] } | undefined): Promise<boolean> {
  const result = await updateObject<APIServer>(client, R.apiServers, 'cluster', undefined, (current) => {
    const existing = current.spec?.servingCerts?.namedCertificates;
    const merged = mergeNamedCertificates(existing, secretName, ours);
    if (sameJson(existing ?? [], merged)) return undefined;
    const spec = { ...current.spec };
    const servingCerts = { ...spec.servingCerts };
    if (merged.length > 0) servingCerts.namedCertificates = merged;
    else delete servingCerts.namedCertificates;
    spec.servingCerts = servingCerts;
    return { ...current, spec };
  });
  return result.changed;
}
