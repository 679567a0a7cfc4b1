// Discovery documents (/api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>) in the shapes
// kubectl and @kubernetes/client-node read: APIVersions, APIGroupList, APIGroup, APIResourceList.
import type { ResourceRegistry, ServedResource } from './resources';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

function resourceEntries(r: ServedResource): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: r.type.plural,
    singularName: r.singular,
    namespaced: r.type.namespaced,
    kind: r.type.kind,
    verbs: VERBS,
  };
  if (r.shortNames.length) main.shortNames = r.shortNames;
  if (r.categories.length) main.categories = r.categories;
  if (!r.builtIn) main.storageVersionHash = Buffer.from(`${r.type.group}/${r.type.version}/${r.type.kind}`).toString('base64').slice(0, 11);
  const subs = r.subresources.map((s) => ({
    name: `${r.type.plural}/${s}`,
    singularName: '',
    namespaced: r.type.namespaced,
    kind: r.type.kind,
    verbs: SUBRESOURCE_VERBS,
  }));
  return [main, ...subs];
}

export function groupVersions(registry: ResourceRegistry): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const r of registry.all) {
    if (!r.type.group) continue;
    const versions = groups.get(r.type.group) ?? [];
    if (!versions.includes(r.type.version)) versions.push(r.type.version);
    groups.set(r.type.group, versions);
  }
  // v1 before v1alpha1: the preferred version comes first, as kube's version priority orders them.
  for (const v of groups.values()) v.sort((a, b) => versionPriority(a) - versionPriority(b));
  return groups;
}

function versionPriority(v: string): number {
  const m = /^v(\d+)(alpha|beta)?(\d*)$/.exec(v);
  if (!m) return 1000;
  const stability = m[2] === 'alpha' ? 200 : m[2] === 'beta' ? 100 : 0;
  return stability - Number(m[1]) * 10 - Number(m[3] || 0);
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(name: string, versions: string[]): Record<string, unknown> {
  const gvs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: gvs, preferredVersion: gvs[0] };
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...groupVersions(registry)].map(([name, versions]) => apiGroup(name, versions)) };
}

export function apiGroupDoc(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  const versions = groupVersions(registry).get(group);
  return versions ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, versions) } : undefined;
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const served = registry.all.filter((r) => r.type.group === group && r.type.version === version);
  if (served.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: served.flatMap(resourceEntries),
  };
}
