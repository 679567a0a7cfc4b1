// Step "mirrors": the site's image mirrors as objects named `sno-reconfigure`: an ImageDigestMirrorSet
// (config.openshift.io/v1) from OpenShift 4.13 on, an ImageContentSourcePolicy (operator.openshift.io/v1alpha1)
// below — ICSP is deprecated from 4.13 and IDMS does not exist before it (openshift/api 678536042;
// reference/anchor-ztpfw-domain.md 3.3) — and, for images pulled by tag (CatalogSource index images, many
// operator images), an ImageTagMirrorSet (config.openshift.io/v1) from spec.imageTagMirrors. There is no tag
// mirroring below 4.13 (ITMS came with IDMS), so such a site-config is refused there.
//
// Never both kinds for one source (MCO #3037 once refused clusters mixing them; later docs allow it, so
// avoiding it is the safe side): on >= 4.13 the agent's own ICSP from an earlier run (before an upgrade) is
// deleted, and a source of ours found in someone else's ICSP is taken out of it; likewise a source of our
// ITMS is taken out of someone else's ITMS. The MCO merges IDMS, ITMS and ICSP rules into one registries.conf
// and refuses the whole update when one source has two mirrorSourcePolicy values across them (MCO #4431;
// openshift/machine-config-operator master pkg/controller/container-runtime-config/helpers.go
// validateRegistriesConfScopes), so our entries keep the policy the cluster's other mirror sets give a source.
//
// Creating an IDMS/ICSP needs no drain; editing or deleting one, and any ITMS change (tag mirrors are not
// digest-only, so never "safe"), makes the MCD drain the node and reload CRI-O, without a reboot
// (machine-config-operator release-4.12…4.16 pkg/daemon/update.go: registries.conf →
// postConfigChangeActionReloadCrio; pkg/daemon/drain.go isSafeContainerRegistryConfChanges; openshift-docs
// says "drains and reboots", the code does not): the report says so.
//
// When the site has mirrors, a CatalogSource whose index image is pulled by tag and that no imageTagMirrors
// source covers cannot pull at a disconnected site: plan names it and the run warns (reference R8).
import { R } from '../cluster/resources';
import { ApiError, isNotFound, type ClusterClient, type KubeObject } from '../cluster/types';
import { ConfigRejectedError, StepError, type Change, type Step, type StepContext } from '../engine/step';
import type { MirrorRule } from '../siteconfig/types';
import { createOrUpdate, MANAGED_BY, MANAGED_BY_LABEL, sameJson, updateObject } from '../cluster/objects';
import { resilient } from './resilient';
import { clusterVersion } from './cluster-version';
import { MASTER_POOL, recordRollouts } from './rollouts';
import { notInPlace } from './not-in-place';

export const MIRROR_OBJECT_NAME = 'sno-reconfigure';
/** Where OpenShift's default CatalogSources live (operator-marketplace). */
const MARKETPLACE_NAMESPACE = 'openshift-marketplace';

/** One entry of an IDMS, ITMS or ICSP list: the three declare the same fields. */
interface MirrorEntry {
  source: string;
  mirrors?: string[];
  mirrorSourcePolicy?: 'NeverContactSource' | 'AllowContactingSource';
}

type SourcePolicy = NonNullable<MirrorEntry['mirrorSourcePolicy']>;

interface Idms extends KubeObject {
  spec?: { imageDigestMirrors?: MirrorEntry[] };
}

interface Itms extends KubeObject {
  spec?: { imageTagMirrors?: MirrorEntry[] };
}

/** operators.coreos.com/v1alpha1 CatalogSource: only the index image matters here. */
interface CatalogSource extends KubeObject {
  spec?: { image?: string };
}

/** The kind that carries the digest mirrors on this cluster. */
export type MirrorKind = 'idms' | 'icsp';
/** Every kind of mirror object the step writes. */
type ObjectKind = MirrorKind | 'itms';

const KIND_NAME: Record<ObjectKind, string> = { idms: 'ImageDigestMirrorSet', itms: 'ImageTagMirrorSet', icsp: 'ImageContentSourcePolicy' };
const TYPE = { idms: R.imageDigestMirrorSets, itms: R.imageTagMirrorSets, icsp: R.imageContentSourcePolicies } as const;
const API_VERSION = { idms: 'config.openshift.io/v1', itms: 'config.openshift.io/v1', icsp: 'operator.openshift.io/v1alpha1' } as const;
const LIST_KEY = { idms: 'imageDigestMirrors', itms: 'imageTagMirrors', icsp: 'repositoryDigestMirrors' } as const;
const DRAIN_NOTE = 'the machine-config operator may drain the node and reload CRI-O; no reboot';

/** "4.14.12" → IDMS; "4.12.30" → ICSP. Throws on something that is not a version. */
export function mirrorKindFor(version: string): MirrorKind {
  const m = /^(\d+)\.(\d+)/.exec(version.trim());
  if (!m) throw new StepError(`cannot read the cluster version "${version}"`, 'Check `oc get clusterversion`.');
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 4 || (major === 4 && minor >= 13) ? 'idms' : 'icsp';
}

/** Source → mirrorSourcePolicy over several mirror lists; a later list wins. */
function policiesOf(lists: (MirrorEntry[] | undefined)[]): Map<string, SourcePolicy> {
  const policyOf = new Map<string, SourcePolicy>();
  for (const list of lists) for (const m of list ?? []) if (m.mirrorSourcePolicy) policyOf.set(m.source, m.mirrorSourcePolicy);
  return policyOf;
}

function withPolicies(rules: MirrorRule[], policyOf: Map<string, SourcePolicy>): MirrorEntry[] {
  return rules.map((r) => {
    const policy = policyOf.get(r.source);
    return { source: r.source, mirrors: [...r.mirrors], ...(policy ? { mirrorSourcePolicy: policy } : {}) };
  });
}

/** Our mirrors, taking the mirrorSourcePolicy that another IDMS already sets for the same source. */
export function desiredMirrors(rules: MirrorRule[], others: Idms[]): MirrorEntry[] {
  return withPolicies(rules, policiesOf(others.map((o) => o.spec?.imageDigestMirrors)));
}

/**
 * Our tag mirrors, taking the mirrorSourcePolicy the cluster gives the same source elsewhere: in another
 * mirror set (ITMS or IDMS; the MCO checks one policy per source across all of them), else the one our ITMS
 * already carries — a policy taken from an ITMS whose entry for the source we then removed stays ours.
 */
export function desiredTagMirrors(rules: MirrorRule[], ours: MirrorEntry[] | undefined, others: (MirrorEntry[] | undefined)[]): MirrorEntry[] {
  return withPolicies(rules, policiesOf([ours, ...others]));
}

/** Entries of another object's list without our sources. */
export function withoutSources(list: MirrorEntry[] | undefined, sources: Set<string>): MirrorEntry[] {
  return (list ?? []).filter((m) => !sources.has(m.source));
}

/**
 * The repository of an image reference, without tag or digest; Docker Hub short names get their registry
 * (distribution/reference normalize.go splitDockerDomain: a first component without '.' or ':' that is not
 * localhost is not a host).
 */
export function repositoryOf(image: string): string {
  const name = image.split('@')[0] ?? '';
  const lastSlash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const repo = colon > lastSlash ? name.slice(0, colon) : name;
  const first = repo.split('/')[0] ?? '';
  if (repo.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')) return repo;
  return `docker.io/${repo.includes('/') ? repo : `library/${repo}`}`;
}

/**
 * Whether a mirror source applies to a repository (containers-registries.conf(5) `prefix`): the repository
 * itself or one of its parent namespaces or its host; `*.example.com` applies to every host under example.com.
 */
export function sourceCovers(source: string, repository: string): boolean {
  const src = source.toLowerCase();
  const repo = repository.toLowerCase();
  if (src.startsWith('*.')) return (repo.split('/')[0] ?? '').endsWith(src.slice(1));
  return repo === src || repo.startsWith(`${src}/`);
}

export interface TagPulledCatalog {
  name: string;
  image: string;
}

/** The CatalogSources that pull their index image by tag (no @digest) from a repository no tag mirror covers. */
export function uncoveredTagPulls(catalogs: CatalogSource[], tagRules: MirrorRule[]): TagPulledCatalog[] {
  return catalogs.flatMap((c) => {
    const image = c.spec?.image;
    if (!image || image.includes('@')) return [];
    const repository = repositoryOf(image);
    return tagRules.some((r) => sourceCovers(r.source, repository)) ? [] : [{ name: c.metadata?.name ?? '', image }];
  });
}

export function tagPullWarning(c: TagPulledCatalog): string {
  return `CatalogSource ${c.name} pulls ${c.image} by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site`;
}

/** Lists a kind, treating "this cluster has no such API" (404: IDMS/ITMS below 4.13) as empty. */
async function listKind<T extends KubeObject>(client: ClusterClient, type: (typeof TYPE)[ObjectKind]): Promise<T[]> {
  try {
    return (await client.list<T>(type)).items;
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}

/**
 * The marketplace's CatalogSources; none when the cluster refuses to list them (no OLM: the marketplace
 * capability is optional). Only a warning depends on them, so an API error never fails the step.
 */
async function listCatalogs(ctx: StepContext, client: ClusterClient): Promise<CatalogSource[]> {
  try {
    return (await client.list<CatalogSource>(R.catalogSources, { namespace: MARKETPLACE_NAMESPACE })).items;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    ctx.log.debug({ status: e.statusCode }, 'cannot list the CatalogSources; not checking them for tag pulls');
    return [];
  }
}

type Action =
  | { op: 'create' | 'update'; kind: ObjectKind; spec: MirrorEntry[] }
  | { op: 'delete'; kind: ObjectKind; name: string; why: string }
  /** Someone else's object loses the sources `by` (our object of that kind) mirrors now. */
  | { op: 'strip'; kind: ObjectKind; by: ObjectKind; name: string; sources: string[]; removeAll: boolean };

interface Assessment {
  kind: MirrorKind;
  actions: Action[];
  tagPulls: TagPulledCatalog[];
}

const isOurs = (o: KubeObject): boolean => o.metadata?.name === MIRROR_OBJECT_NAME;

function entriesOf(kind: ObjectKind, o: KubeObject): MirrorEntry[] | undefined {
  return ((o.spec ?? {}) as Record<string, MirrorEntry[] | undefined>)[LIST_KEY[kind]];
}

/** Create, update or delete our object of `kind` so it holds `desired` (none: no object). */
function ownObjectAction(kind: ObjectKind, ours: KubeObject | undefined, desired: MirrorEntry[], field: string): Action[] {
  if (desired.length === 0) return ours ? [{ op: 'delete', kind, name: MIRROR_OBJECT_NAME, why: `the site-config has no ${field}` }] : [];
  if (!ours) return [{ op: 'create', kind, spec: desired }];
  return sameJson(entriesOf(kind, ours) ?? [], desired) ? [] : [{ op: 'update', kind, spec: desired }];
}

/** Takes our sources out of the `kind` objects of others. */
function stripActions(kind: ObjectKind, by: ObjectKind, others: KubeObject[], sources: Set<string>): Action[] {
  return others.flatMap((o): Action[] => {
    const list = entriesOf(kind, o);
    const overlap = (list ?? []).filter((m) => sources.has(m.source)).map((m) => m.source);
    return overlap.length > 0 ? [{ op: 'strip', kind, by, name: o.metadata?.name ?? '', sources: overlap, removeAll: withoutSources(list, sources).length === 0 }] : [];
  });
}

async function assess(ctx: StepContext, client: ClusterClient): Promise<Assessment> {
  const rules = ctx.site.resolved.imageDigestMirrors;
  const tagRules = ctx.site.resolved.imageTagMirrors ?? [];
  const version = await clusterVersion(ctx, client);
  const kind = mirrorKindFor(version);
  if (kind === 'icsp' && tagRules.length > 0) {
    throw new ConfigRejectedError(
      `spec.imageTagMirrors needs OpenShift 4.13 or later (ImageTagMirrorSet); this cluster runs ${version}`,
      'Remove spec.imageTagMirrors from the site-config (before 4.13 images pulled by tag cannot be mirrored), or upgrade the cluster to 4.13 or later first.',
    );
  }
  const other: MirrorKind = kind === 'idms' ? 'icsp' : 'idms';
  const idms = await listKind<Idms>(client, R.imageDigestMirrorSets);
  const icsps = await listKind<KubeObject>(client, R.imageContentSourcePolicies);
  const sameKind: KubeObject[] = kind === 'idms' ? idms : icsps;
  const otherKind: KubeObject[] = kind === 'idms' ? icsps : idms;

  const desired = desiredMirrors(rules, (kind === 'idms' ? idms : []).filter((o) => !isOurs(o)));
  const actions: Action[] = ownObjectAction(kind, sameKind.find(isOurs), desired, 'imageDigestMirrors');
  if (otherKind.some(isOurs)) actions.push({ op: 'delete', kind: other, name: MIRROR_OBJECT_NAME, why: `replaced by the ${KIND_NAME[kind]} of the same name` });
  actions.push(...stripActions(other, kind, otherKind.filter((o) => !isOurs(o)), new Set(rules.map((r) => r.source))));

  if (kind === 'idms') {
    const itms = await listKind<Itms>(client, R.imageTagMirrorSets);
    const ours = itms.find(isOurs);
    const theirs = itms.filter((o) => !isOurs(o));
    const desiredTags = desiredTagMirrors(tagRules, ours?.spec?.imageTagMirrors, [...idms.map((o) => o.spec?.imageDigestMirrors), ...theirs.map((o) => o.spec?.imageTagMirrors)]);
    actions.push(...ownObjectAction('itms', ours, desiredTags, 'imageTagMirrors'));
    actions.push(...stripActions('itms', 'itms', theirs, new Set(tagRules.map((r) => r.source))));
  }

  const tagPulls = rules.length + tagRules.length > 0 ? uncoveredTagPulls(await listCatalogs(ctx, client), tagRules) : [];
  return { kind, actions, tagPulls };
}

function specFor(kind: ObjectKind, list: MirrorEntry[]): Record<string, unknown> {
  return { [LIST_KEY[kind]]: list };
}

function changeOf(a: Action): Change {
  switch (a.op) {
    case 'create':
    case 'update': {
      const entries = a.spec.map((m) => `${m.source} → ${(m.mirrors ?? []).join(', ')}`).join('; ');
      return { kind: KIND_NAME[a.kind], target: MIRROR_OBJECT_NAME, action: a.op, detail: a.kind === 'itms' ? `${entries}; ${DRAIN_NOTE}` : entries };
    }
    case 'delete':
      return { kind: KIND_NAME[a.kind], target: a.name, action: 'delete', detail: `${a.why}; ${DRAIN_NOTE}` };
    case 'strip':
      return { kind: KIND_NAME[a.kind], target: a.name, action: a.removeAll ? 'delete' : 'update', detail: `takes out ${a.sources.join(', ')} (mirrored by the agent's ${KIND_NAME[a.by]} now); ${DRAIN_NOTE}` };
  }
}

/** In a plan: a CatalogSource the run leaves as it is, with why it will not pull at the site. */
function catalogChange(c: TagPulledCatalog): Change {
  return { kind: 'CatalogSource', target: `${MARKETPLACE_NAMESPACE}/${c.name}`, action: 'leave', detail: `pulls ${c.image} by tag; without an imageTagMirrors entry for it, it cannot pull at a disconnected site` };
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
        const spec = (current.spec ?? {}) as Record<string, MirrorEntry[] | undefined>;
        return { ...current, spec: { ...spec, [LIST_KEY[a.kind]]: withoutSources(spec[LIST_KEY[a.kind]], new Set(a.sources)) } };
      }, { optional: true });
      return;
  }
}

export const mirrorsStep: Step = resilient({
  name: 'mirrors',
  title: 'Configure the image mirrors',

  async plan(ctx) {
    const a = await assess(ctx, await ctx.cluster());
    return [...a.actions.map(changeOf), ...a.tagPulls.map(catalogChange)];
  },

  async check(ctx) {
    const a = await assess(ctx, await ctx.cluster());
    for (const c of a.tagPulls) ctx.warn(tagPullWarning(c));
    if (a.actions.length === 0) ctx.log.info({ kind: KIND_NAME[a.kind] }, 'image mirrors already as configured; nothing to write');
    return a.actions.length === 0;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const a = await assess(ctx, client);
    if (a.actions.length === 0) return;
    const tagMirrorsChange = a.actions.some((x) => x.kind === 'itms');
    const disruptive = tagMirrorsChange || a.actions.some((x) => x.op !== 'create');
    const kinds = [...new Set(a.actions.map((x) => KIND_NAME[x.kind]))].join(' and ');
    await recordRollouts(ctx, client, 'mirrors', [{ kind: 'machineconfigpool', name: MASTER_POOL, reason: `${kinds} ${MIRROR_OBJECT_NAME}` }]);
    // Ours first, then the other objects go: the sources are never without a mirror in between.
    const order = [...a.actions.filter((x) => x.op === 'create' || x.op === 'update'), ...a.actions.filter((x) => x.op !== 'create' && x.op !== 'update')];
    for (const action of order) {
      await perform(client, action);
      ctx.changed(changeOf(action));
    }
    if (disruptive) {
      const what = tagMirrorsChange ? 'a change of the image tag mirrors (ImageTagMirrorSet)' : 'changing or deleting an existing mirror object';
      ctx.warn(`${what} makes the machine-config operator drain the node (its workloads restart) and reload CRI-O; the node does not reboot`);
    }
  },

  async verify(ctx) {
    const left = (await assess(ctx, await ctx.cluster())).actions;
    if (left.length > 0) {
      throw notInPlace(`image mirror configuration not in place: ${left.map((x) => `${KIND_NAME[x.kind]} ${changeOf(x).target}`).join(', ')}`, 'the mirror objects');
    }
  },
});
