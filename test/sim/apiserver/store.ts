// The simulated cluster's object store: what etcd plus the kube-apiserver's registry strategies do on every
// write. One global resourceVersion counter, uid/creationTimestamp/generation assignment, status
// subresource separation, finalizers, validation (CRD schemas and built-in rules), mutating admission hooks,
// an event history for watch resumption (with compaction -> 410 Gone) and optional persistence to a JSON
// file, written atomically after every change so the "cluster" survives a power cut, as etcd would.
import { randomUUID, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { KubeObject, ResourceType } from '../../../src/cluster/types';
import type { AdmissionHook, Identity, SimStore, StoreEvent, StoreEventType } from '../store-types';
import { validateAgainstSchema, type FieldError } from '../crd-schema';
import { ResourceRegistry, apiVersionOf, servedFromCrdObject, type ServedResource } from './resources';
import { R } from '../../../src/cluster/resources';
import { SimApiError, alreadyExists, badRequest, conflict, invalid, notFound } from './status';
import { validateCsrUpdate, validateMetadata, validateTypeRules } from './validation-core';

export interface StoreOptions {
  /** OpenShift version the API surface follows (IDMS/ITMS exist from 4.13). Default "4.16.0". */
  clusterVersion?: string;
  /** When set: loaded at creation if the file exists, rewritten atomically after every change. */
  persistPath?: string;
  /** CRD directory (default: the reference openshift/api CRDs). */
  crdDir?: string;
  /** Clock for timestamps (B2 scales time). Default Date.now. */
  now?: () => number;
  /** Events kept for watch resumption before the oldest are compacted away. Default 10000. */
  historyLimit?: number;
}

interface PersistedStore {
  format: 'sno-reconfigure-sim-store/v1';
  clusterVersion: string;
  resourceVersion: number;
  objects: Record<string, KubeObject[]>;
}

/** How an update reaches the object: the main resource, or one of its subresources. */
export type UpdatePath = 'main' | 'status' | 'approval';

export interface WriteOptions {
  actor?: Identity;
  /** Dry run: validate and return the result without storing it. */
  dryRun?: boolean;
  /**
   * What unknown fields cause (the fieldValidation query parameter): dropped silently (Ignore), dropped with a
   * warning in `warnings` (Warn, the default), or a 400 (Strict). Checked for CRD-described types only: the
   * schemas written in code for core types are partial.
   */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /** Receives the warnings of the write ('unknown field "spec.foo"'). */
  warnings?: string[];
}

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789'; // k8s.io/apimachinery/pkg/util/rand

function clone<T>(v: T): T {
  return structuredClone(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  return v;
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/** First offset Go's base64.StdEncoding.DecodeString reports as "illegal base64 data at input byte N". */
function base64ErrorOffset(s: string): number | undefined {
  const bad = s.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return bad;
  const pad = s.indexOf('=');
  if (pad >= 0 && !/^=+$/.test(s.slice(pad))) return pad;
  if (s.length % 4 !== 0) return Math.floor(s.length / 4) * 4;
  return undefined;
}

const GO_TYPES: Record<string, string> = { string: 'string', integer: 'int64', number: 'float64', boolean: 'bool', array: '[]string', object: 'map[string]string' };
const JSON_NAMES: Record<string, string> = { string: 'string', integer: 'number', number: 'number', boolean: 'bool', array: 'array', object: 'object', null: 'null' };

export class SimObjectStore implements SimStore {
  readonly registry: ResourceRegistry;
  readonly clusterVersion: string;
  readonly persistPath?: string;
  private readonly now: () => number;
  private readonly historyLimit: number;
  private readonly objects = new Map<string, Map<string, KubeObject>>();
  private rv = 0;
  private history: StoreEvent[] = [];
  /** Events at or below this resourceVersion are no longer in the history. */
  private floor = 0;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly admission: AdmissionHook[] = [];

  constructor(opts: StoreOptions = {}) {
    this.clusterVersion = opts.clusterVersion ?? '4.16.0';
    this.registry = new ResourceRegistry(this.clusterVersion, opts.crdDir);
    this.now = opts.now ?? Date.now;
    this.historyLimit = opts.historyLimit ?? 10_000;
    this.persistPath = opts.persistPath;
    if (this.persistPath && existsSync(this.persistPath)) this.load(this.persistPath);
  }

  // ----------------------------------------------------------------------------------------------
  // SimStore

  resourceVersion(): string {
    return String(this.rv);
  }

  get(resource: ResourceType, name: string, namespace?: string): KubeObject | undefined {
    const r = this.registry.resolve(resource);
    const obj = this.bucket(r).get(objectKey(r.type.namespaced ? namespace : undefined, name));
    return obj ? clone(obj) : undefined;
  }

  list(resource: ResourceType, namespace?: string): KubeObject[] {
    return this.listRaw(this.registry.resolve(resource), namespace).map(clone);
  }

  create(resource: ResourceType, obj: KubeObject, actor?: Identity): KubeObject {
    return this.createObject(resource, obj, { actor });
  }

  update(resource: ResourceType, obj: KubeObject, actor?: Identity): KubeObject {
    return this.updateObject(resource, obj, 'main', { actor });
  }

  updateStatus(resource: ResourceType, obj: KubeObject): KubeObject {
    return this.updateObject(resource, obj, 'status', {});
  }

  delete(resource: ResourceType, name: string, namespace?: string): boolean {
    return this.deleteObject(resource, name, namespace) !== undefined;
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  addAdmission(hook: AdmissionHook): () => void {
    this.admission.push(hook);
    return () => {
      const i = this.admission.indexOf(hook);
      if (i >= 0) this.admission.splice(i, 1);
    };
  }

  saveTo(file: string): void {
    const objects: Record<string, KubeObject[]> = {};
    for (const [key, bucket] of this.objects) objects[key] = [...bucket.values()];
    const doc: PersistedStore = { format: 'sno-reconfigure-sim-store/v1', clusterVersion: this.clusterVersion, resourceVersion: this.rv, objects };
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(doc));
    renameSync(tmp, file);
  }

  // ----------------------------------------------------------------------------------------------
  // Beyond the contract (the HTTP layer and tests use these)

  /** PUT .../certificatesigningrequests/<name>/approval: the only path that may add Approved/Denied. */
  updateApproval(obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    return this.updateObject(this.registry.resolve({ group: 'certificates.k8s.io', plural: 'certificatesigningrequests' }).type, obj, 'approval', opts);
  }

  /** Events after resourceVersion `rv`, or undefined when they were compacted away (410 Gone). */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv < this.floor) return undefined;
    const i = this.history.findIndex((e) => Number(e.object.metadata?.resourceVersion) > rv);
    return i < 0 ? [] : this.history.slice(i);
  }

  /** The oldest resourceVersion a watch can still start from. */
  oldestResourceVersion(): number {
    return this.floor;
  }

  /** Forget the event history, as etcd compaction does: watches from any older resourceVersion get 410. */
  compact(): void {
    this.history = [];
    this.floor = this.rv;
  }

  listRaw(r: ServedResource, namespace?: string): KubeObject[] {
    const items = [...this.bucket(r).entries()].filter(([key]) => namespace === undefined || !r.type.namespaced || key.startsWith(`${namespace}/`));
    return items.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  getRaw(r: ServedResource, name: string, namespace?: string): KubeObject | undefined {
    return this.bucket(r).get(objectKey(r.type.namespaced ? namespace : undefined, name));
  }

  createObject(resource: ResourceType, input: KubeObject, opts: WriteOptions = {}): KubeObject {
    const r = this.registry.resolve(resource);
    const obj = this.prepareInput(r, input);
    const md = (obj.metadata ??= {});
    if (md.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    if (!r.type.namespaced) delete md.namespace;
    if (!md.name && md.generateName) md.name = `${md.generateName}${Array.from({ length: 5 }, () => GENERATE_NAME_ALPHABET[randomInt(GENERATE_NAME_ALPHABET.length)]).join('')}`;
    if (r.type.namespaced && md.namespace) this.requireNamespace(md.namespace);
    delete md.uid;
    delete md.creationTimestamp;
    delete md.deletionTimestamp;
    delete md.generation;
    delete md.selfLink;
    this.prepareCreate(r, obj, opts.actor);
    for (const hook of this.admission) hook('CREATE', r.type, obj, undefined);
    const stored = this.validated(r, obj, undefined, 'main', opts);
    const smd = stored.metadata ?? {};
    if (this.bucket(r).has(objectKey(smd.namespace, smd.name ?? ''))) throw alreadyExists(r.type, smd.name ?? '');
    smd.uid = randomUUID();
    smd.creationTimestamp = this.timestamp() as unknown as Date; // JSON wire form (V1ObjectMeta types it as Date)
    if (r.tracksGeneration) smd.generation = 1;
    stored.metadata = smd;
    if (opts.dryRun) return clone(stored);
    return clone(this.commit(r, stored, 'ADDED', undefined));
  }

  updateObject(resource: ResourceType, input: KubeObject, via: UpdatePath, opts: WriteOptions = {}): KubeObject {
    const r = this.registry.resolve(resource);
    const incoming = this.prepareInput(r, input);
    const name = incoming.metadata?.name ?? '';
    const namespace = r.type.namespaced ? incoming.metadata?.namespace : undefined;
    if (!name) throw invalid(r.type, '', [{ field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name is required' }]);
    const old = this.bucket(r).get(objectKey(namespace, name));
    if (!old) throw notFound(r.type, name);
    const wantRv = incoming.metadata?.resourceVersion;
    if (wantRv && wantRv !== old.metadata?.resourceVersion) throw conflict(r.type, name);
    if (incoming.metadata?.uid && incoming.metadata.uid !== old.metadata?.uid) {
      throw invalid(r.type, name, [{ field: 'metadata.uid', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(incoming.metadata.uid)}: field is immutable` }]);
    }

    let next = this.applyUpdatePath(r, incoming, old, via);
    const nmd = (next.metadata ??= {});
    nmd.uid = old.metadata?.uid;
    nmd.creationTimestamp = old.metadata?.creationTimestamp;
    nmd.resourceVersion = old.metadata?.resourceVersion;
    if (old.metadata?.deletionTimestamp) nmd.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete nmd.deletionTimestamp;
    if (old.metadata?.generation !== undefined) nmd.generation = old.metadata.generation;
    else delete nmd.generation;
    if (r.type.namespaced) nmd.namespace = old.metadata?.namespace;
    else delete nmd.namespace;
    if (via === 'main') for (const hook of this.admission) hook('UPDATE', r.type, next, clone(old));

    next = this.validated(r, next, old, via, opts);
    if (deepEqual(next, old)) return clone(old); // no-op: no new resourceVersion, no event (as the real server)
    if (r.tracksGeneration && this.specChanged(r, next, old)) next.metadata = { ...next.metadata, generation: (old.metadata?.generation ?? 0) + 1 };
    if (opts.dryRun) return clone(next);
    if (next.metadata?.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      // The last finalizer is gone: the deletion completes.
      this.bucket(r).delete(objectKey(namespace, name));
      return clone(this.commit(r, next, 'DELETED', old, false));
    }
    return clone(this.commit(r, next, 'MODIFIED', old));
  }

  /**
   * Deletes an object: immediately, or — with finalizers — marks it with deletionTimestamp and lets the last
   * finalizer removal finish the job. Deleting a namespace deletes everything in it. Returns the object as
   * deleted (or marked); undefined when it did not exist.
   */
  deleteObject(resource: ResourceType, name: string, namespace?: string, precondition?: { uid?: string; resourceVersion?: string }): KubeObject | undefined {
    const r = this.registry.resolve(resource);
    const key = objectKey(r.type.namespaced ? namespace : undefined, name);
    const old = this.bucket(r).get(key);
    if (!old) return undefined;
    if (precondition?.uid && precondition.uid !== old.metadata?.uid) {
      throw conflict(r.type, name, `Precondition failed: UID in precondition: ${precondition.uid}, UID in object meta: ${old.metadata?.uid}`);
    }
    if (precondition?.resourceVersion && precondition.resourceVersion !== old.metadata?.resourceVersion) {
      throw conflict(r.type, name, `Precondition failed: ResourceVersion in precondition: ${precondition.resourceVersion}, ResourceVersion in object meta: ${old.metadata?.resourceVersion}`);
    }
    if ((old.metadata?.finalizers ?? []).length > 0) {
      if (old.metadata?.deletionTimestamp) return clone(old);
      const marked = clone(old);
      marked.metadata = { ...marked.metadata, deletionTimestamp: this.timestamp() as unknown as Date, deletionGracePeriodSeconds: 0 }; // wire form
      return clone(this.commit(r, marked, 'MODIFIED', old));
    }
    if (r.type.plural === 'namespaces') {
      for (const other of this.registry.all.filter((x) => x.type.namespaced)) {
        for (const o of this.listRaw(other, name)) {
          this.bucket(other).delete(objectKey(name, o.metadata?.name ?? ''));
          this.commit(other, clone(o), 'DELETED', o, false);
        }
      }
    }
    this.bucket(r).delete(key);
    return clone(this.commit(r, clone(old), 'DELETED', old, false));
  }

  // ----------------------------------------------------------------------------------------------
  // internals

  private bucket(r: ServedResource): Map<string, KubeObject> {
    const key = `${r.type.group}/${r.type.plural}`;
    let b = this.objects.get(key);
    if (!b) {
      b = new Map();
      this.objects.set(key, b);
    }
    return b;
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private requireNamespace(namespace: string): void {
    const nsResource = this.registry.resolve({ group: '', plural: 'namespaces' });
    const ns = this.bucket(nsResource).get(objectKey(undefined, namespace));
    if (!ns) throw notFound(nsResource.type, namespace);
    if (ns.metadata?.deletionTimestamp) {
      throw new SimApiError(403, 'Forbidden', `unable to create new content in namespace ${namespace} because it is being terminated`, { name: namespace, kind: 'namespaces' });
    }
  }

  /** Copies the input, fixes apiVersion/kind, folds Secret stringData into data (the v1 -> internal conversion). */
  private prepareInput(r: ServedResource, input: KubeObject): KubeObject {
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw badRequest(`${r.type.kind} in version "${r.type.version}" cannot be handled as a ${r.type.kind}: expected an object`);
    const obj = clone(input);
    const apiVersion = apiVersionOf(r.type);
    if (obj.kind !== undefined && obj.kind !== r.type.kind) {
      throw badRequest(`${obj.kind} in version "${r.type.version}" cannot be handled as a ${r.type.kind}: the object kind ${obj.kind} does not match ${r.type.kind}`);
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersion})`);
    }
    const rest: Record<string, unknown> = { ...obj };
    delete rest.apiVersion;
    delete rest.kind;
    delete rest.metadata;
    const ordered: KubeObject = { apiVersion, kind: r.type.kind, metadata: obj.metadata ?? {}, ...rest };
    return this.foldStringData(r, ordered);
  }

  private foldStringData(r: ServedResource, obj: KubeObject): KubeObject {
    if (r.type.plural === 'secrets' && obj.stringData && typeof obj.stringData === 'object') {
      const data = { ...((obj.data as Record<string, string>) ?? {}) };
      for (const [k, v] of Object.entries(obj.stringData as Record<string, unknown>)) data[k] = Buffer.from(String(v)).toString('base64');
      obj.data = data;
      delete obj.stringData;
    }
    return obj;
  }

  private prepareCreate(r: ServedResource, obj: KubeObject, actor: Identity | undefined): void {
    switch (r.type.plural) {
      case 'namespaces':
        obj.spec = { finalizers: ['kubernetes'] };
        obj.status = { phase: 'Active' };
        return;
      case 'secrets':
        obj.type ??= 'Opaque';
        return;
      case 'certificatesigningrequests': {
        // csrStrategy.PrepareForCreate: status cleared; the requester's identity is recorded by the server.
        delete obj.status;
        if (actor) {
          const spec = (obj.spec ?? {}) as Record<string, unknown>;
          spec.username = actor.user;
          spec.groups = actor.groups;
          delete spec.uid;
          delete spec.extra;
          obj.spec = spec;
        }
        return;
      }
      default:
        // "create cannot set status" for custom resources with a status subresource
        // (apiextensions-apiserver pkg/registry/customresource/strategy.go PrepareForCreate).
        if (!r.builtIn && this.registry.hasStatus(r)) delete obj.status;
    }
  }

  /**
   * Which parts of the incoming object an update through `via` may change: the registry strategies'
   * PrepareForUpdate (customresource strategy/status strategy: the main resource keeps the stored status,
   * /status keeps everything but status; certificates csrStrategy/csrStatusStrategy/csrApprovalStrategy).
   */
  private applyUpdatePath(r: ServedResource, incoming: KubeObject, old: KubeObject, via: UpdatePath): KubeObject {
    const isCsr = r.type.plural === 'certificatesigningrequests';
    if (via === 'approval') {
      if (!isCsr) throw notFound(r.type, incoming.metadata?.name ?? '');
      const next = clone(incoming);
      const conditions = (incoming.status as { conditions?: unknown[] } | undefined)?.conditions;
      next.spec = clone(old.spec);
      next.status = { ...(clone(old.status) as object), conditions: conditions ?? [] };
      this.stampConditions(next, old);
      return next;
    }
    if (via === 'status') {
      if (!this.registry.hasStatus(r)) throw notFound(r.type, incoming.metadata?.name ?? '');
      if (isCsr) {
        const next = clone(incoming);
        next.spec = clone(old.spec);
        this.preserveApprovalConditions(next, old);
        this.stampConditions(next, old);
        return next;
      }
      if (r.builtIn) {
        const next = clone(incoming);
        if (old.spec === undefined) delete next.spec;
        else next.spec = clone(old.spec);
        return next;
      }
      const next = clone(old);
      if (incoming.status === undefined) delete next.status;
      else next.status = clone(incoming.status);
      return next;
    }
    // main resource
    if (isCsr) {
      // csrStrategy.PrepareForUpdate: spec and status are immutable through the main resource.
      const next = clone(incoming);
      next.spec = clone(old.spec);
      if (old.status === undefined) delete next.status;
      else next.status = clone(old.status);
      return next;
    }
    const next = clone(incoming);
    if (this.registry.hasStatus(r)) {
      if (old.status === undefined) delete next.status;
      else next.status = clone(old.status);
    }
    return next;
  }

  /** csrStatusStrategy: Approved/Denied conditions keep their stored instances unless added or removed. */
  private preserveApprovalConditions(next: KubeObject, old: KubeObject): void {
    type Cond = { type?: string };
    const nowConds = ((next.status as { conditions?: Cond[] } | undefined)?.conditions ?? []) as Cond[];
    const oldConds = ((old.status as { conditions?: Cond[] } | undefined)?.conditions ?? []) as Cond[];
    for (const t of ['Approved', 'Denied']) {
      const oldIdx = oldConds.flatMap((c, i) => (c.type === t ? [i] : []));
      const newIdx = nowConds.flatMap((c, i) => (c.type === t ? [i] : []));
      if (oldIdx.length !== newIdx.length) continue; // added/removed: validation rejects it
      newIdx.forEach((ni, k) => {
        nowConds[ni] = clone(oldConds[oldIdx[k]]);
      });
    }
  }

  /** populateConditionTimestamps: lastUpdateTime when missing; lastTransitionTime kept unless the status changed. */
  private stampConditions(next: KubeObject, old: KubeObject): void {
    type Cond = { type?: string; status?: string; lastUpdateTime?: string; lastTransitionTime?: string };
    const nowConds = ((next.status as { conditions?: Cond[] } | undefined)?.conditions ?? []) as Cond[];
    const oldConds = ((old.status as { conditions?: Cond[] } | undefined)?.conditions ?? []) as Cond[];
    const ts = this.timestamp();
    for (const c of nowConds) {
      if (!c || typeof c !== 'object') continue;
      c.lastUpdateTime ??= ts;
      if (!c.lastTransitionTime) {
        const prev = oldConds.find((o) => o.type === c.type);
        c.lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : ts;
      }
    }
  }

  /** Prunes, defaults and validates; throws 400 (decode) or 422 (invalid). Returns what would be stored. */
  private validated(r: ServedResource, obj: KubeObject, old: KubeObject | undefined, via: UpdatePath = 'main', opts: WriteOptions = {}): KubeObject {
    const name = obj.metadata?.name ?? '';
    const { errors, pruned, unknownFields } = validateAgainstSchema(r.schema, obj, old);
    const next = pruned as KubeObject;
    if (r.crdFile !== undefined && unknownFields.length > 0 && opts.fieldValidation !== 'Ignore') {
      // The decoder reports the fields it drops (kubernetes/kubernetes release-1.29
      // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go and update.go: a strict decoding error
      // is a warning under Warn, a 400 under Strict, transformDecodeError wording).
      const found = unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`);
      if (opts.fieldValidation === 'Strict') {
        throw badRequest(`${r.type.kind} in version "${r.type.version}" cannot be handled as a ${r.type.kind}: strict decoding error: ${found.join(', ')}`);
      }
      opts.warnings?.push(...found);
    }
    if (r.builtIn && r.crdFile === undefined) this.throwDecodeErrors(r, obj, errors);
    const all: FieldError[] = [...validateMetadata(r, next), ...errors];
    if (r.type.plural === 'certificatesigningrequests' && old && via !== 'main') all.push(...validateCsrUpdate(next, old, via));
    else all.push(...validateTypeRules(r, next, old));
    if (all.length > 0) throw invalid(r.type, name, all);
    return next;
  }

  /** Built-in types fail JSON decoding (400) on wrong types and bad base64, before any validation. */
  private throwDecodeErrors(r: ServedResource, obj: KubeObject, errors: FieldError[]): void {
    const decode = errors.find((e) => e.reason === 'FieldValueTypeInvalid');
    if (!decode) return;
    const prefix = `${r.type.kind} in version "${r.type.version}" cannot be handled as a ${r.type.kind}`;
    const format = / must be of type (byte): /.exec(decode.message);
    if (format) {
      // Byte fields are data[key]/binaryData[key] (keys may contain dots) or spec.request/status.certificate.
      const [top, ...rest] = decode.field.split('.');
      const holder = (obj[top] ?? {}) as Record<string, unknown>;
      const value = top === 'data' || top === 'binaryData' ? holder[rest.join('.')] : holder[rest[0]];
      throw badRequest(`${prefix}: illegal base64 data at input byte ${base64ErrorOffset(String(value)) ?? 0}`);
    }
    const m = /must be of type ([a-z,]+): "([a-z]+)"/.exec(decode.message);
    const expected = m?.[1] ?? 'string';
    const actual = m?.[2] ?? 'null';
    const goField = decode.field.replace(/\[\d+\]/g, '');
    throw badRequest(`${prefix}: json: cannot unmarshal ${JSON_NAMES[actual] ?? actual} into Go struct field ${r.type.kind}.${goField} of type ${GO_TYPES[expected] ?? expected}`);
  }

  private specChanged(r: ServedResource, next: KubeObject, old: KubeObject): boolean {
    const strip = (o: KubeObject) => {
      const rest: Record<string, unknown> = { ...o };
      delete rest.metadata;
      if (this.registry.hasStatus(r)) delete rest.status;
      return rest;
    };
    return !deepEqual(strip(next), strip(old));
  }

  private commit(r: ServedResource, obj: KubeObject, type: StoreEventType, previous: KubeObject | undefined, store = true): KubeObject {
    this.rv += 1;
    obj.metadata = { ...obj.metadata, resourceVersion: String(this.rv) };
    if (store) this.bucket(r).set(objectKey(obj.metadata.namespace, obj.metadata.name ?? ''), obj);
    const event: StoreEvent = { type, resource: r.type, object: obj, ...(previous ? { previous } : {}) };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.floor = Number(dropped[dropped.length - 1].object.metadata?.resourceVersion ?? this.floor);
    }
    if (this.persistPath) this.saveTo(this.persistPath);
    for (const listener of [...this.listeners]) {
      try {
        listener({ type, resource: r.type, object: clone(obj), ...(previous ? { previous: clone(previous) } : {}) });
      } catch (e) {
        console.error(`sim store listener failed on ${type} ${r.type.plural}/${obj.metadata.name}:`, e);
      }
    }
    return obj;
  }

  private load(file: string): void {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as PersistedStore;
    if (doc.format !== 'sno-reconfigure-sim-store/v1') throw new Error(`${file}: not a simulator store file`);
    // The kinds of established CRDs are served again before their objects are loaded.
    const crds = `${R.customResourceDefinitions.group}/${R.customResourceDefinitions.plural}`;
    for (const crd of doc.objects[crds] ?? []) {
      try {
        this.registry.register(servedFromCrdObject(crd));
      } catch {
        // Not established before the restart either.
      }
    }
    for (const [key, objs] of Object.entries(doc.objects)) {
      const [group, plural] = key.split('/');
      const r = this.registry.resolve({ group, plural });
      for (const o of objs) this.bucket(r).set(objectKey(o.metadata?.namespace, o.metadata?.name ?? ''), o);
    }
    this.rv = doc.resourceVersion;
    // A restarted API server cannot replay what happened before: older watches get 410 Gone.
    this.floor = this.rv;
  }
}

export function createStore(opts: StoreOptions = {}): SimObjectStore {
  return new SimObjectStore(opts);
}
