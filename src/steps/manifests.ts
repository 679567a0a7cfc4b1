// Step "manifests": the site's extra objects (spec.extraManifestFiles) into the cluster, the way image-based
// install applies its extra-manifests (openshift-kni/lifecycle-agent main, lca-cli/postpivot applyManifests,
// internal/extramanifest): an object that does not exist is created; one that does is replaced (PUT with the
// stored resourceVersion), or with `lca.openshift.io/apply-type: merge` merged (here a JSON merge patch,
// RFC 7386: a list in the manifest replaces the stored list). The annotation itself is dropped, as there.
// Order: `lca.openshift.io/apply-wave` ascending (none = last), within a wave Namespaces first — image-based
// install does not order by kind (MGMT-19028) — then file order.
//
// Each kind is looked up in the API's discovery first, for all objects before the first write: a kind this
// cluster does not serve (an operator not installed at the factory) refuses the site-config before anything is
// applied. An object that exists is saved in the state directory before its first change. A MachineConfig
// starts a pool rollout, which settle waits for.
import * as path from 'node:path';
import { R } from '../cluster/resources';
import { isConflict, type ClusterClient, type KubeObject, type ResourceType } from '../cluster/types';
import { ConfigRejectedError, type Change, type Step, type StepContext } from '../engine/step';
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

const wave = (o: ManifestObject) => Number(o.metadata.annotations?.[APPLY_WAVE] ?? 2147483647);

async function assess(ctx: StepContext, client: ClusterClient): Promise<Planned[]> {
  const items = ctx.site.resolved.extraManifests ?? [];
  const kinds = new Map<string, ResourceType[] | undefined>();
  const unknown: string[] = [];
  const planned: Planned[] = [];
  for (const { file, object } of items) {
    if (!kinds.has(object.apiVersion)) kinds.set(object.apiVersion, await client.resourceTypes(object.apiVersion));
    const type = kinds.get(object.apiVersion)?.find((t) => t.kind === object.kind);
    if (!type) {
      unknown.push(`${object.kind} (${object.apiVersion}) in '${file}'`);
      continue;
    }
    if (type.namespaced !== (object.metadata.namespace !== undefined)) {
      throw new ConfigRejectedError(`'${file}': ${objectLabel(object)} ${type.namespaced ? 'is namespaced and names no metadata.namespace' : 'is cluster-wide and must not name a metadata.namespace'}`, `Correct '${file}' on the media and insert it again.`);
    }
    const mode = object.metadata.annotations?.[APPLY_TYPE] === 'merge' ? 'merge' : 'replace';
    planned.push({ file, type, object: written(object), mode });
  }
  if (unknown.length > 0) {
    throw new ConfigRejectedError(`this cluster has no API for ${unknown.join(', ')}`, 'Install the operator that serves it at the factory, or remove the object from the extra manifests; then insert the media again.');
  }
  planned.sort((a, b) => wave(a.object) - wave(b.object) || Number(b.object.kind === 'Namespace') - Number(a.object.kind === 'Namespace'));
  for (const p of planned) {
    const current = await client.get<KubeObject>(p.type, p.object.metadata.name, p.object.metadata.namespace);
    if (current) p.current = current;
    if (current && inPlace(p.object, current)) continue;
    p.change = { kind: p.object.kind, target: `${p.object.metadata.namespace ? `${p.object.metadata.namespace}/` : ''}${p.object.metadata.name}`, action: current ? (p.mode === 'merge' ? 'update' : 'replace') : 'create', detail: `from ${p.file}` };
  }
  return planned;
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
    const planned = (await assess(ctx, client)).filter((p) => p.change);
    const machineConfigs = planned.filter((p) => p.object.kind === 'MachineConfig' && p.type.group === R.machineConfigs.group);
    if (machineConfigs.length > 0) await recordRollouts(ctx, client, 'manifests', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `MachineConfig ${machineConfigs.map((p) => p.object.metadata.name).join(', ')}` }]);
    for (const p of planned) {
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

