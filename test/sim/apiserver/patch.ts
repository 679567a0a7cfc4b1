// The three patch formats the kube-apiserver applies (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
// patch.go): JSON merge patch (RFC 7386), JSON patch (RFC 6902: failures are 422, malformed patches 400),
// and strategic merge patch for built-in types, with the patchMergeKey/patchStrategy of the fields the
// simulator serves (from the Go struct tags of k8s.io/api core/v1 and meta/v1).
import { SimApiError, badRequest } from './status';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// RFC 6902

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function unprocessable(message: string): SimApiError {
  // NewGenericServerResponse(422, ...) with the json-patch library's message (patch.go applyJSPatch).
  return new SimApiError(422, 'Invalid', message);
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function container(doc: unknown, tokens: string[], op: string, pointer: string): { parent: unknown; key: string } {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined || cur === null) throw unprocessable(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  }
  return { parent: cur, key: tokens[tokens.length - 1] };
}

function arrayIndex(arr: unknown[], key: string, allowEnd: boolean, op: string, pointer: string): number {
  if (allowEnd && key === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(key)) throw unprocessable(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  const i = Number(key);
  if (i > arr.length || (!allowEnd && i === arr.length)) throw unprocessable(`Unable to access invalid index: ${i}: invalid index referenced`);
  return i;
}

function getAt(doc: unknown, pointer: string, op: string): unknown {
  let cur = doc;
  for (const t of parsePointer(pointer)) {
    if (Array.isArray(cur) && /^\d+$/.test(t)) cur = cur[Number(t)];
    else if (isObject(cur) && t in cur) cur = cur[t];
    else cur = undefined;
    if (cur === undefined) throw unprocessable(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  }
  return cur;
}

function removeAt(doc: unknown, pointer: string, op: string): unknown {
  const { parent, key } = container(doc, parsePointer(pointer), op, pointer);
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, key, false, op, pointer);
    return parent.splice(i, 1)[0];
  }
  if (isObject(parent) && key in parent) {
    const v = parent[key];
    delete parent[key];
    return v;
  }
  throw unprocessable(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
}

function addAt(doc: unknown, pointer: string, value: unknown, op: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return clone(value);
  const { parent, key } = container(doc, tokens, op, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true, op, pointer), 0, clone(value));
  else if (isObject(parent)) parent[key] = clone(value) as Json;
  else throw unprocessable(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  return doc;
}

/** RFC 6902 JSON patch. Throws 400 for a malformed patch and 422 when an operation does not apply. */
export function jsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = clone(target);
  for (const raw of patch as unknown[]) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') throw badRequest('invalid JSON patch operation: op and path are required');
    const o = raw as unknown as Operation;
    switch (o.op) {
      case 'add':
        if (!('value' in raw)) throw badRequest('add operation missing value');
        doc = addAt(doc, o.path, o.value, 'add');
        break;
      case 'remove':
        removeAt(doc, o.path, 'remove');
        break;
      case 'replace': {
        if (!('value' in raw)) throw badRequest('replace operation missing value');
        const tokens = parsePointer(o.path);
        if (tokens.length === 0) {
          doc = clone(o.value);
          break;
        }
        const { parent, key } = container(doc, tokens, 'replace', o.path);
        if (Array.isArray(parent)) parent[arrayIndex(parent, key, false, 'replace', o.path)] = clone(o.value) as Json;
        else if (isObject(parent) && key in parent) parent[key] = clone(o.value) as Json;
        else throw unprocessable(`replace operation does not apply: doc is missing key: ${o.path}: missing value`);
        break;
      }
      case 'move': {
        if (typeof o.from !== 'string') throw badRequest('move operation missing from');
        const v = removeAt(doc, o.from, 'move');
        doc = addAt(doc, o.path, v, 'move');
        break;
      }
      case 'copy': {
        if (typeof o.from !== 'string') throw badRequest('copy operation missing from');
        doc = addAt(doc, o.path, getAt(doc, o.from, 'copy'), 'copy');
        break;
      }
      case 'test': {
        let actual: unknown;
        try {
          actual = getAt(doc, o.path, 'test');
        } catch {
          actual = undefined;
        }
        if (!deepEqual(actual, o.value)) throw unprocessable(`testing value ${o.path} failed: test failed`);
        break;
      }
      default:
        throw badRequest(`Unexpected kind: ${o.op}`);
    }
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------------
// Strategic merge patch

/** patchStrategy/patchMergeKey of list fields, by dotted path (list indexes dropped). */
export interface MergeStrategy {
  /** Merge object items by this key. */
  key?: string;
  /** Merge a list of primitives as a set. */
  primitive?: boolean;
}

const META_STRATEGIES: Record<string, MergeStrategy> = {
  'metadata.finalizers': { primitive: true },
  'metadata.ownerReferences': { key: 'uid' },
};

/** From the Go struct tags of the built-in types served. Lists absent here are replaced whole. */
export const STRATEGIC_MERGE_KEYS: Record<string, Record<string, MergeStrategy>> = {
  nodes: {
    'status.conditions': { key: 'type' },
    'status.addresses': { key: 'type' },
    'spec.podCIDRs': { primitive: true },
  },
  namespaces: { 'status.conditions': { key: 'type' } },
  secrets: {},
  configmaps: {},
  certificatesigningrequests: {},
  routes: {},
};

function smpList(original: unknown, patch: Json[], strategy: MergeStrategy | undefined, path: string, strategies: Record<string, MergeStrategy>): unknown {
  if (!strategy) return patch.filter((p) => !(isObject(p) && '$patch' in p)).map((p) => stripDirectives(p));
  const base = Array.isArray(original) ? clone(original) : [];
  if (strategy.primitive) {
    for (const v of patch) if (!base.some((b) => deepEqual(b, v))) base.push(clone(v));
    return base;
  }
  const key = strategy.key as string;
  for (const item of patch) {
    if (!isObject(item)) throw badRequest(`unable to find api field in struct for the list at ${path}`);
    if (!(key in item)) throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const idx = base.findIndex((b) => isObject(b) && deepEqual(b[key], item[key]));
    if (item.$patch === 'delete') {
      if (idx >= 0) base.splice(idx, 1);
      continue;
    }
    if (item.$patch === 'replace') {
      const repl = stripDirectives(item);
      if (idx >= 0) base[idx] = repl;
      else base.push(repl);
      continue;
    }
    if (idx >= 0) base[idx] = smpObject(base[idx], item, path, strategies);
    else base.push(stripDirectives(item));
  }
  return base;
}

function stripDirectives(v: unknown): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v as Json;
  return Object.fromEntries(Object.entries(v).filter(([k]) => !k.startsWith('$')).map(([k, x]) => [k, stripDirectives(x)])) as Json;
}

function smpObject(original: unknown, patch: Record<string, Json>, path: string, strategies: Record<string, MergeStrategy>): Json {
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch === 'delete') return null;
  const out: Record<string, Json> = isObject(original) ? clone(original) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k.startsWith('$setElementOrder/') || k === '$retainKeys') continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const list = out[field];
      if (Array.isArray(list) && Array.isArray(v)) out[field] = list.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    const childPath = path ? `${path}.${k}` : k;
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      out[k] = smpList(out[k], v, strategies[childPath], childPath, strategies) as Json;
    } else if (isObject(v)) {
      const merged = smpObject(out[k], v, childPath, strategies);
      if (merged === null) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** Strategic merge patch of a built-in object of resource `plural`. */
export function strategicMergePatch(plural: string, target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
  return smpObject(target, patch, '', { ...META_STRATEGIES, ...(STRATEGIC_MERGE_KEYS[plural] ?? {}) });
}
