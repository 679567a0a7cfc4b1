// Step "manifests": the site's extra objects (spec.extraManifestFiles) into the cluster, the way image-based
// install applies its extra-manifests (openshift-kni/lifecycle-agent main, lca-cli/postpivot applyManifests,
// internal/extramanifest): an object that does not exist is created; one that does is replaced (PUT with the
// stored resourceVersion), or with `lca.openshift.io/apply-type: merge` merged (here a JSON merge patch,
// RFC 7386: a list in the manifest replaces the stored list). The annotation itself is dropped, as there.
// Order — image-based install has none by kind (MGMT-19028): CustomResourceDefinitions first, and the run waits
// until each is Established (apiextensions-apiserver pkg/controller/establish) so its kind is served; then
// Namespaces; then the rest. Within each, `lca.openshift.io/apply-wave` ascending (none = last), then by
// metadata.name, as lifecycle-agent sorts (internal/common/manifest_helpers.go SortAndGroupByApplyWave). A
// namespaced object that names no namespace goes into `default`, as there (internal/extramanifest/extramanifest.go).
//
// Each kind is looked up in the API's discovery, or in a CRD among the manifests, for all objects before the
// first write: a kind neither knows (an operator not installed at the factory) refuses the site-config before
// anything is applied. An object that exists is saved in the state directory before its first change. A MachineConfig
// starts a pool rollout, which settle waits for.
import * as path from 'node:path';
import { R } from '../cluster/resources';
import { isConflict, isNotFound, type ClusterClient, type KubeObject, type ResourceType } from '../cluster/types';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import { APPLY_TYPE, APPLY_WAVE, objectLabel, type ManifestObject } from '../siteconfig/manifests';
import { STATE_FILES } from '../paths';
import { MASTER_POOL, recordRollouts } from './rollouts';
import { resilient } from './resilient';
import { notInPlace } from './not-in-place';

interface Planned {
  file: string;
  type: ResourceType;
  object: ManifestObject;
  mode: 'replace' | 'merge';
  /** Namespaced, named no namespace: placed in `default`. */
  defaulted?: boolean;
  current?: KubeObject;
  change?: Change;
}

/** RFC 7386 JSON merge patch of `patch` onto `target`. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The object as written: without the apply-type annotation (and without an annotations map left empty). */
function written(o: ManifestObject): ManifestObject {
  const { [APPLY_TYPE]: _dropped, ...annotations } = o.metadata.annotations ?? {};
  const { annotations: _all, ...metadata } = o.metadata;
  return { ...o, metadata: { ...metadata, ...(Object.keys(annotations).length ? { annotations } : {}) } };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * True when every field the manifest sets has that value in `current` (a merge of it would change nothing).
 * For replace too: the API server adds defaults and labels of its own (a Namespace's finalizers,
 * kubernetes.io/metadata.name), so "the same object" can only mean "what the manifest says holds".
 */
function inPlace(want: ManifestObject, current: KubeObject): boolean {
  return sameJson(mergePatch(current, want), current);
}

/** Where a namespaced object without metadata.namespace goes (lifecycle-agent extramanifest.go). */
const DEFAULT_NAMESPACE = 'default';
const wave = (o: ManifestObject) => Number(o.metadata.annotations?.[APPLY_WAVE] ?? 2147483647);
const isCrd = (o: { apiVersion?: string; kind?: string }) => o.kind === R.customResourceDefinitions.kind && o.apiVersion === `${R.customResourceDefinitions.group}/${R.customResourceDefinitions.version}`;
const rank = (o: ManifestObject) => (isCrd(o) ? 0 : o.kind === 'Namespace' ? 1 : 2);
/** How long a new CRD may take to be Established (its names accepted, its kind served): seconds on a real cluster. */
const ESTABLISH_WAIT_MS = 2 * 60_000;

interface CrdSpec {
  group: string;
  names: { plural: string; kind: string };
  scope: string;
  versions: { name: string; served?: boolean }[];
}

/** The kinds the manifests' own CRDs will serve, by apiVersion. */
function kindsFromCrds(objects: readonly ManifestObject[]): Map<string, ResourceType[]> {
  const out = new Map<string, ResourceType[]>();
  for (const o of objects.filter(isCrd)) {
    const spec = o.spec as CrdSpec | undefined;
    for (const v of spec?.versions ?? []) {
      if (!spec || v.served === false) continue;
      const apiVersion = `${spec.group}/${v.name}`;
      out.set(apiVersion, [...(out.get(apiVersion) ?? []), { group: spec.group, version: v.name, plural: spec.names.plural, kind: spec.names.kind, namespaced: spec.scope === 'Namespaced' }]);
    }
  }
  return out;
}

async function assess(ctx: StepContext, client: ClusterClient): Promise<Planned[]> {
  const items = ctx.site.resolved.extraManifests ?? [];
  const fromCrds = kindsFromCrds(items.map((i) => i.object));
  const kinds = new Map<string, ResourceType[] | undefined>();
  const unknown: string[] = [];
  const planned: Planned[] = [];
  for (const { file, object } of items) {
    if (!kinds.has(object.apiVersion)) kinds.set(object.apiVersion, await client.resourceTypes(object.apiVersion));
    const type = [...(kinds.get(object.apiVersion) ?? []), ...(fromCrds.get(object.apiVersion) ?? [])].find((t) => t.kind === object.kind);
    if (!type) {
      unknown.push(`${object.kind} (${object.apiVersion}) in '${file}'`);
      continue;
    }
    if (!type.namespaced && object.metadata.namespace !== undefined) {
      throw new ConfigRejectedError(`'${file}': ${objectLabel(object)} is cluster-wide and must not name a metadata.namespace`, `Correct '${file}' on the media and insert it again.`);
    }
    const placed = type.namespaced && object.metadata.namespace === undefined ? { ...object, metadata: { ...object.metadata, namespace: DEFAULT_NAMESPACE } } : object;
    const mode = object.metadata.annotations?.[APPLY_TYPE] === 'merge' ? 'merge' : 'replace';
    planned.push({ file, type, object: written(placed), mode, ...(placed !== object ? { defaulted: true } : {}) });
  }
  if (unknown.length > 0) {
    throw new ConfigRejectedError(`this cluster has no API for ${unknown.join(', ')}`, 'Install the operator that serves it at the factory, or remove the object from the extra manifests; then insert the media again.');
  }
  planned.sort((a, b) => rank(a.object) - rank(b.object) || wave(a.object) - wave(b.object) || (a.object.metadata.name < b.object.metadata.name ? -1 : a.object.metadata.name > b.object.metadata.name ? 1 : 0));
  for (const p of planned) {
    // A kind only a manifest CRD serves has nothing stored yet (its resource answers 404 until the CRD exists).
    const current = await client.get<KubeObject>(p.type, p.object.metadata.name, p.object.metadata.namespace).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (current) p.current = current;
    if (current && inPlace(p.object, current)) continue;
    p.change = { kind: p.object.kind, target: `${p.object.metadata.namespace ? `${p.object.metadata.namespace}/` : ''}${p.object.metadata.name}`, action: current ? (p.mode === 'merge' ? 'update' : 'replace') : 'create', detail: `from ${p.file}${p.defaulted ? `, in namespace ${DEFAULT_NAMESPACE}: the manifest names none (image-based install places it there too)` : ''}` };
  }
  return planned;
}

/** Waits until every CRD of `crds` is Established: only then is its kind served and its objects can be written. */
async function waitEstablished(ctx: StepContext, client: ClusterClient, crds: Planned[]): Promise<void> {
  const deadline = ctx.deadline('the new CustomResourceDefinitions to be established', ESTABLISH_WAIT_MS);
  for (const p of crds) {
    for (;;) {
      const crd = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string; message?: string }[] } }>(R.customResourceDefinitions, p.object.metadata.name);
      const conditions = crd?.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (deadline.expired()) {
        const names = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
        throw new StepError(`CustomResourceDefinition ${p.object.metadata.name} from ${p.file} is not established after ${deadline.progress()}${names?.message ? `: ${names.message}` : ''}`, 'Check it with `oc get crd` (its conditions say why), correct the manifest, and restart the service.');
      }
      ctx.progress.status(`waiting for CustomResourceDefinition ${p.object.metadata.name} to be established — ${deadline.progress()}`);
      await ctx.clock.sleep(500, ctx.signal);
    }
  }
}

/** The object as it was before the agent's first change of it (kept across runs: the oldest is the original). */
async function backUp(ctx: StepContext, p: Planned): Promise<void> {
  const name = `${p.type.group || 'core'}_${p.object.kind}_${p.object.metadata.namespace ?? ''}_${p.object.metadata.name}.json`.replace(/[^A-Za-z0-9._-]/g, '_');
  const target = path.posix.join(ctx.stateDir, STATE_FILES.backups, 'manifests', name);
  if (await ctx.host.exists(target)) return;
  await ctx.host.mkdirp(path.posix.dirname(target), 0o700);
  await ctx.host.writeFileAtomic(target, `${JSON.stringify(p.current, null, 2)}\n`, 0o600);
}

async function write(client: ClusterClient, p: Planned): Promise<void> {
  const { name, namespace } = p.object.metadata;
  if (!p.current) {
    try {
      await client.create(p.type, p.object);
      return;
    } catch (e) {
      // Created meanwhile (by an operator, or before a power cut): apply over it.
      if (!isConflict(e)) throw e;
      p.current = await client.get<KubeObject>(p.type, name, namespace);
    }
  }
  if (p.mode === 'merge') await client.patch(p.type, name, p.object, 'merge', namespace);
  else await client.update(p.type, { ...p.object, metadata: { ...p.object.metadata, resourceVersion: p.current?.metadata?.resourceVersion } });
}

export const manifestsStep: Step = resilient({
  name: 'manifests',
  title: 'Apply the extra manifests',

  async plan(ctx) {
    return (await assess(ctx, await ctx.cluster())).flatMap((p) => (p.change ? [p.change] : []));
  },

  async check(ctx) {
    return (await assess(ctx, await ctx.cluster())).every((p) => !p.change);
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const all = await assess(ctx, client);
    const planned = all.filter((p) => p.change);
    let established = false;
    const machineConfigs = planned.filter((p) => p.object.kind === 'MachineConfig' && p.type.group === R.machineConfigs.group);
    if (machineConfigs.length > 0) await recordRollouts(ctx, client, 'manifests', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `MachineConfig ${machineConfigs.map((p) => p.object.metadata.name).join(', ')}` }]);
    for (const p of planned) {
      if (!isCrd(p.object) && !established) {
        await waitEstablished(ctx, client, all.filter((q) => isCrd(q.object)));
        established = true;
      }
      if (p.current) await backUp(ctx, p);
      await write(client, p);
      ctx.changed(p.change!);
      ctx.log.info(`${p.change!.action === 'create' ? 'created' : p.change!.action === 'replace' ? 'replaced' : 'merged into'} ${objectLabel(p.object)} ${p.change!.detail}`);
    }
  },

  async verify(ctx) {
    const left = (await assess(ctx, await ctx.cluster())).filter((p) => p.change);
    if (left.length > 0) throw notInPlace(`${left.map((p) => objectLabel(p.object)).join(', ')} not as the extra manifests say after applying them (an operator may be changing it back)`, 'those objects');
  },
});

