// Step "mirrors": the site's image mirrors as one object named `sno-reconfigure`: an ImageDigestMirrorSet
// (config.openshift.io/v1) from OpenShift 4.13 on, an ImageContentSourcePolicy (operator.openshift.io/v1alpha1)
// below — ICSP is deprecated from 4.13 and IDMS does not exist before it (openshift/api 678536042;
// reference/anchor-ztpfw-domain.md 3.3).
//
// Never both kinds for one source (MCO #3037 once refused clusters mixing them; later docs allow it, so
// avoiding it is the safe side): on >= 4.13 the agent's own ICSP from an earlier run (before an upgrade) is
// deleted, and a source of ours found in someone else's ICSP is taken out of it. A source that someone
// else's IDMS also mirrors keeps their mirrorSourcePolicy in ours (conflicting policies for one source make the
// MCO refuse the update, MCO #4431). Creating an IDMS/ICSP needs no drain; editing or deleting one makes the
// MCD drain the node and reload CRI-O, without a reboot (machine-config-operator release-4.12…4.16
// pkg/daemon/update.go: registries.conf → postConfigChangeActionReloadCrio; pkg/daemon/drain.go
// isSafeContainerRegistryConfChanges; openshift-docs says "drains and reboots", the code does not): the report says so.
import { R } from '../cluster/resources';
import { isNotFound, type ClusterClient, type KubeObject } from '../cluster/types';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import type { MirrorRule } from '../siteconfig/types';
import { createOrUpdate, MANAGED_BY, MANAGED_BY_LABEL, sameJson, updateObject } from '../cluster/objects';
import { resilient } from './resilient';
import { MASTER_POOL, recordRollouts } from './rollouts';
import { notInPlace } from './not-in-place';

export const MIRROR_OBJECT_NAME = 'sno-reconfigure';

interface DigestMirror {
  source: string;
  mirrors?: string[];
  mirrorSourcePolicy?: 'NeverContactSource' | 'AllowContactingSource';
}

interface Idms extends KubeObject {
  spec?: { imageDigestMirrors?: DigestMirror[] };
}

interface Icsp extends KubeObject {
  spec?: { repositoryDigestMirrors?: DigestMirror[] };
}

export type MirrorKind = 'idms' | 'icsp';

/** "4.14.12" → IDMS; "4.12.30" → ICSP. Throws on something that is not a version. */
export function mirrorKindFor(version: string): MirrorKind {
  const m = /^(\d+)\.(\d+)/.exec(version.trim());
  if (!m) throw new StepError(`cannot read the cluster version "${version}"`, 'Check `oc get clusterversion`.');
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 4 || (major === 4 && minor >= 13) ? 'idms' : 'icsp';
}

/** Our mirrors, taking the mirrorSourcePolicy that another IDMS already sets for the same source. */
export function desiredMirrors(rules: MirrorRule[], others: Idms[]): DigestMirror[] {
  const policyOf = new Map<string, DigestMirror['mirrorSourcePolicy']>();
  for (const o of others) for (const m of o.spec?.imageDigestMirrors ?? []) if (m.mirrorSourcePolicy) policyOf.set(m.source, m.mirrorSourcePolicy);
  return rules.map((r) => {
    const policy = policyOf.get(r.source);
    return { source: r.source, mirrors: [...r.mirrors], ...(policy ? { mirrorSourcePolicy: policy } : {}) };
  });
}

/** Entries of another object's list without our sources. */
export function withoutSources(list: DigestMirror[] | undefined, sources: Set<string>): DigestMirror[] {
  return (list ?? []).filter((m) => !sources.has(m.source));
}

async function clusterVersion(ctx: StepContext, client: ClusterClient): Promise<string> {
  if (ctx.facts.clusterVersion) return ctx.facts.clusterVersion;
  const cv = await client.get<KubeObject & { status?: { desired?: { version?: string }; history?: { version?: string; state?: string }[] } }>(R.clusterVersions, 'version');
  const version = cv?.status?.desired?.version ?? cv?.status?.history?.find((h) => h.state === 'Completed')?.version;
  if (!version) throw new StepError('cannot tell the OpenShift version: ClusterVersion "version" has no status.desired.version', 'Check `oc get clusterversion`; the agent retries after a restart.');
  return version;
}

/** Lists a kind, treating "this cluster has no such API" (404: IDMS below 4.13) as empty. */
async function listKind<T extends KubeObject>(client: ClusterClient, type: typeof R.imageDigestMirrorSets | typeof R.imageContentSourcePolicies): Promise<T[]> {
  try {
    return (await client.list<T>(type)).items;
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}

type Action =
  | { op: 'create' | 'update'; kind: MirrorKind; spec: DigestMirror[] }
  | { op: 'delete'; kind: MirrorKind; name: string; why: string }
  | { op: 'strip'; kind: MirrorKind; name: string; sources: string[]; removeAll: boolean };

interface Assessment {
  kind: MirrorKind;
  actions: Action[];
}

async function assess(ctx: StepContext, client: ClusterClient): Promise<Assessment> {
  const rules = ctx.site.resolved.imageDigestMirrors;
  const kind = mirrorKindFor(await clusterVersion(ctx, client));
  const other: MirrorKind = kind === 'idms' ? 'icsp' : 'idms';
  const idms = await listKind<Idms>(client, R.imageDigestMirrorSets);
  const icsps = await listKind<Icsp>(client, R.imageContentSourcePolicies);
  const listOf = (k: MirrorKind, o: KubeObject): DigestMirror[] | undefined => (k === 'idms' ? (o as Idms).spec?.imageDigestMirrors : (o as Icsp).spec?.repositoryDigestMirrors);
  const sameKind: KubeObject[] = kind === 'idms' ? idms : icsps;
  const otherKind: KubeObject[] = kind === 'idms' ? icsps : idms;
  const ours = sameKind.find((o) => o.metadata?.name === MIRROR_OBJECT_NAME);
  const actions: Action[] = [];

  const desired = desiredMirrors(rules, (kind === 'idms' ? idms : []).filter((o) => o.metadata?.name !== MIRROR_OBJECT_NAME));
  if (rules.length === 0) {
    if (ours) actions.push({ op: 'delete', kind, name: MIRROR_OBJECT_NAME, why: 'the site-config has no imageDigestMirrors' });
  } else if (!ours) {
    actions.push({ op: 'create', kind, spec: desired });
  } else if (!sameJson(listOf(kind, ours) ?? [], desired)) {
    actions.push({ op: 'update', kind, spec: desired });
  }

  const sources = new Set(rules.map((r) => r.source));
  for (const o of otherKind) {
    const name = o.metadata?.name ?? '';
    if (name === MIRROR_OBJECT_NAME) {
      actions.push({ op: 'delete', kind: other, name, why: `replaced by the ${kind === 'idms' ? 'ImageDigestMirrorSet' : 'ImageContentSourcePolicy'} of the same name` });
      continue;
    }
    const list = listOf(other, o);
    const overlap = (list ?? []).filter((m) => sources.has(m.source)).map((m) => m.source);
    if (overlap.length > 0) actions.push({ op: 'strip', kind: other, name, sources: overlap, removeAll: withoutSources(list, sources).length === 0 });
  }
  return { kind, actions };
}

const KIND_NAME: Record<MirrorKind, string> = { idms: 'ImageDigestMirrorSet', icsp: 'ImageContentSourcePolicy' };
const TYPE = { idms: R.imageDigestMirrorSets, icsp: R.imageContentSourcePolicies } as const;
const API_VERSION = { idms: 'config.openshift.io/v1', icsp: 'operator.openshift.io/v1alpha1' } as const;

function specFor(kind: MirrorKind, list: DigestMirror[]): Record<string, unknown> {
  return kind === 'idms' ? { imageDigestMirrors: list } : { repositoryDigestMirrors: list };
}

function changeOf(a: Action): Change {
  switch (a.op) {
    case 'create':
    case 'update':
      return { kind: KIND_NAME[a.kind], target: MIRROR_OBJECT_NAME, action: a.op, detail: a.spec.map((m) => `${m.source} → ${(m.mirrors ?? []).join(', ')}`).join('; ') };
    case 'delete':
      return { kind: KIND_NAME[a.kind], target: a.name, action: 'delete', detail: `${a.why}; the machine-config operator may drain the node and reloads CRI-O for it (no reboot)` };
    case 'strip':
      return { kind: KIND_NAME[a.kind], target: a.name, action: a.removeAll ? 'delete' : 'update', detail: `takes out ${a.sources.join(', ')} (mirrored by the agent's ${KIND_NAME[a.kind === 'idms' ? 'icsp' : 'idms']} now); the machine-config operator may drain the node and reloads CRI-O for it (no reboot)` };
  }
}

async function perform(client: ClusterClient, a: Action): Promise<void> {
  const type = TYPE[a.kind];
  switch (a.op) {
    case 'create':
      // A 409 on the create (AlreadyExists: created meanwhile, or Conflict) re-reads and sets the spec instead of failing.
      await createOrUpdate<KubeObject>(client, type, { apiVersion: API_VERSION[a.kind], kind: KIND_NAME[a.kind], metadata: { name: MIRROR_OBJECT_NAME, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } }, spec: specFor(a.kind, a.spec) }, (current) => ({ ...current, spec: specFor(a.kind, a.spec) }));
      return;
    case 'update':
      await updateObject<KubeObject>(client, type, MIRROR_OBJECT_NAME, undefined, (current) => ({ ...current, spec: specFor(a.kind, a.spec) }));
      return;
    case 'delete':
      await client.delete(type, a.name);
      return;
    case 'strip':
      if (a.removeAll) {
        await client.delete(type, a.name);
        return;
      }
      await updateObject<KubeObject>(client, type, a.name, undefined, (current) => {
        const key = a.kind === 'idms' ? 'imageDigestMirrors' : 'repositoryDigestMirrors';
        const spec = (current.spec ?? {}) as Record<string, DigestMirror[] | undefined>;
        return { ...current, spec: { ...spec, [key]: withoutSources(spec[key], new Set(a.sources)) } };
      }, { optional: true });
      return;
  }
}

export const mirrorsStep: Step = resilient({
  name: 'mirrors',
  title: 'Configure the image mirrors',

  async plan(ctx) {
    return (await assess(ctx, await ctx.cluster())).actions.map(changeOf);
  },

  async check(ctx) {
    const a = await assess(ctx, await ctx.cluster());
    if (a.actions.length === 0) ctx.log.info({ kind: KIND_NAME[a.kind] }, 'image mirrors already as configured; nothing to write');
    return a.actions.length === 0;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (a.actions.length === 0) return;
    const disruptive = a.actions.some((x) => x.op === 'delete' || x.op === 'strip' || x.op === 'update');
    await recordRollouts(ctx, client, 'mirrors', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `${KIND_NAME[a.kind]} ${MIRROR_OBJECT_NAME}` }]);
    // Ours first, then the other kind goes: the sources are never without a mirror in between.
    const order = [...a.actions.filter((x) => x.op === 'create' || x.op === 'update'), ...a.actions.filter((x) => x.op !== 'create' && x.op !== 'update')];
    for (const action of order) {
      await perform(client, action);
      ctx.changed(changeOf(action));
    }
    if (disruptive) ctx.warn('changing or deleting an existing mirror object makes the machine-config operator drain the node (its workloads restart) and reload CRI-O; the node does not reboot');
  },

  async verify(ctx) {
    const left = (await assess(ctx, await ctx.cluster())).actions;
    if (left.length > 0) {
      throw notInPlace(`image mirror configuration not in place: ${left.map((x) => changeOf(x).target).join(', ')}`, 'the mirror objects');
    }
  },
});
