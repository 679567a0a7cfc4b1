// Structural-schema validation of objects against the openshift/api CRD schemas (the facts of each type,
// written in the project's compact notation in test/sim/schemas/openshift-api/, each citing its commit), the way the kube-apiserver's apiextensions code handles a write:
//   1. prune: unknown fields are dropped, not rejected (structural schemas; strict field validation is a
//      client opt-in, not the server default), and null values of non-nullable fields are dropped;
//   2. default: `default:` values are filled in where a field is absent;
//   3. validate with the OpenAPI v3 rules, producing field errors worded like the real 422
//      (kube-openapi pkg/validation/errors/schema.go, converted by apiextensions-apiserver's
//      kubeOpenAPIResultToFieldErrors; field.Error.ErrorBody in apimachinery util/validation/field).
// Formats: only those apiextensions validates (apiserver/validation/formats.go: uri, hostname, ipv4, ipv6,
// cidr, date-time, byte, uuid, ...); others (ip, int32 on strings) are ignored, as there.
// CEL `x-kubernetes-validations` are evaluated after the OpenAPI rules, unless those found the object
// malformed (./crd-cel.ts), e.g. `spec.domain: Invalid value: "string": <message>` for Ingress's immutable domain.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import * as path from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../support/bundle';
import { compileCelRule, evaluateCelRule, isTransitionRule, type CelRule } from './crd-cel';

/** The schemas of the openshift/api kinds the simulator serves and validates against (compact notation). */
export const CRD_DIR = path.join(PROJECT_ROOT, 'test', 'sim', 'schemas', 'openshift-api');

export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  uniqueItems?: boolean;
  nullable?: boolean;
  default?: unknown;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  not?: JsonSchema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
}

/** Cause types of metav1.StatusCause (apimachinery field.ErrorType). */
export type FieldErrorReason =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotFound'
  | 'InternalError';

/**
 * One field error. `message` is the body without the field (StatusCause.message); the full line the real
 * server prints is `${field}: ${message}` (see formatFieldError).
 */
export interface FieldError {
  field: string;
  reason: FieldErrorReason;
  message: string;
}

export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${e.message}`;
}

export interface ValidationResult {
  errors: FieldError[];
  /** The object after pruning and defaulting: what the server would store. */
  pruned: unknown;
  /** Paths of the fields pruning dropped ("spec.foo", "spec.items[0].bar"). */
  unknownFields: string[];
}

export interface CrdInfo {
  group: string;
  /** The served storage version whose schema is used. */
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  schema: JsonSchema;
  subresources: { status: boolean; scale: boolean };
  /** The CRD file it came from ('' for schemas registered in code). */
  file: string;
}

export interface CrdValidator {
  readonly crds: readonly CrdInfo[];
  /** By kind (and group when two groups share a kind). */
  crdFor(kind: string, group?: string): CrdInfo | undefined;
  crdForResource(group: string, plural: string): CrdInfo | undefined;
  /**
   * Prunes, defaults and validates `obj` against the CRD of `apiVersion`/`kind`. Pass the stored object as
   * `old` on updates so transition rules (immutability) apply. Throws when no CRD serves that kind/version.
   */
  validate(apiVersion: string, kind: string, obj: unknown, old?: unknown): ValidationResult;
}

// ---------------------------------------------------------------------------------------------------
// Value printing as Go prints them in field errors (field.Error.ErrorBody: %q for strings, %v for
// numbers and booleans, %#v for maps and slices).

function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u([0-9a-f]{4})/g, (_m, h: string) => `\\u${h}`);
}

export function goValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goInner).join(', ')}}`;
  return `map[string]interface {}{${Object.entries(v as Record<string, unknown>)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, x]) => `${goQuote(k)}:${goInner(x)}`)
    .join(', ')}}`;
}

function goInner(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  return goValue(v);
}

function jsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------
// Go RE2 patterns as JavaScript RegExps

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/**
 * Translates the RE2 syntax used in the CRDs to an equivalent JS RegExp: inline `(?i)`, POSIX classes
 * (`[[:cntrl:]]`), a `]` first in a class (literal in RE2, `[^]` means "anything" in JS), `\z`.
 */
export function goRegExp(pattern: string): RegExp {
  let flags = '';
  let src = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === 'z') src += '$';
      else if (n === 'A') src += '^';
      else src += c + (n ?? '');
      i++;
      continue;
    }
    if (pattern.startsWith('(?i)', i)) {
      flags += flags.includes('i') ? '' : 'i';
      i += 3;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      let cls = '[';
      if (pattern[j] === '^') {
        cls += '^';
        j++;
      }
      if (pattern[j] === ']') {
        cls += '\\]';
        j++;
      }
      for (; j < pattern.length && pattern[j] !== ']'; j++) {
        if (pattern[j] === '\\') {
          cls += pattern[j] + (pattern[j + 1] ?? '');
          j++;
        } else if (pattern[j] === '[' && pattern[j + 1] === ':') {
          const end = pattern.indexOf(':]', j + 2);
          const name = end > 0 ? pattern.slice(j + 2, end) : '';
          if (!(name in POSIX_CLASSES)) throw new Error(`unsupported POSIX class in pattern ${pattern}`);
          cls += POSIX_CLASSES[name];
          j = end + 1;
        } else if (pattern[j] === '[') {
          cls += '\\[';
        } else {
          cls += pattern[j];
        }
      }
      src += `${cls}]`;
      i = j;
      continue;
    }
    src += c;
  }
  if (/\\p\{/.test(src)) flags += 'u';
  return new RegExp(src, flags);
}

// ---------------------------------------------------------------------------------------------------
// Formats (apiextensions-apiserver/pkg/apiserver/validation/formats.go lists the validated ones)

const HOSTNAME_LABEL = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;

function validDuration(s: string): boolean {
  // Go time.ParseDuration, or strfmt's "22 ns" style.
  return /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(s) || s === '0' || /^\d+\s*(ns|us|ms|s|m|h|d|w)\w*$/i.test(s);
}

const FORMAT_CHECKS: Record<string, (s: string) => boolean> = {
  hostname: (s) => s.length <= 255 && s.split('.').every((l) => HOSTNAME_LABEL.test(l)),
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  cidr: (s) => {
    const m = /^(.+)\/(\d{1,3})$/.exec(s);
    if (!m) return false;
    const v = isIP(m[1]);
    return v !== 0 && Number(m[2]) <= (v === 4 ? 32 : 128);
  },
  uri: (s) => {
    if (s.startsWith('/')) return true;
    try {
      new URL(s);
      return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s);
    } catch {
      return false;
    }
  },
  datetime: (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  duration: validDuration,
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  mac: (s) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s),
  email: (s) => /^[^\s@]+@[^\s@]+$/.test(s),
  password: () => true,
};

// ---------------------------------------------------------------------------------------------------
// Prune and default

/** ObjectMeta fields a CR's metadata keeps (the apiserver prunes the rest). */
const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Drops unknown fields (their paths go to `unknown`, as the decoder reports them) and fills in defaults. */
function pruneAndDefault(value: unknown, schema: JsonSchema, root: boolean, at = '', unknown: string[] = []): unknown {
  if (isPlainObject(value)) {
    const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
    const props = schema.properties;
    const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    if (!props && !additional && (preserve || schema['x-kubernetes-embedded-resource'])) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (root && (key === 'apiVersion' || key === 'kind')) {
        out[key] = v;
        continue;
      }
      if (root && key === 'metadata') {
        if (isPlainObject(v)) for (const k of Object.keys(v).filter((k) => !OBJECT_META_FIELDS.has(k))) unknown.push(`metadata.${k}`);
        out[key] = isPlainObject(v) ? Object.fromEntries(Object.entries(v).filter(([k]) => OBJECT_META_FIELDS.has(k))) : v;
        continue;
      }
      const sub = props?.[key] ?? additional;
      if (sub) {
        if (v === null && !sub.nullable) continue; // nulls of non-nullable fields are pruned (then defaulted)
        out[key] = pruneAndDefault(v, sub, false, child(at, key), unknown);
      } else if (preserve || schema.additionalProperties === true) {
        out[key] = v;
      } else {
        unknown.push(child(at, key)); // unknown field, dropped
      }
    }
    for (const [key, sub] of Object.entries(props ?? {})) {
      if (!(key in out) && sub.default !== undefined) out[key] = pruneAndDefault(clone(sub.default), sub, false);
    }
    return out;
  }
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    return value.map((v, i) => pruneAndDefault(v, items, false, `${at}[${i}]`, unknown));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Validate

interface Ctx {
  errors: FieldError[];
}

function child(p: string, key: string): string {
  return p ? `${p}.${key}` : key;
}

function invalid(ctx: Ctx, field: string, value: unknown, detail: string, reason: FieldErrorReason = 'FieldValueInvalid'): void {
  ctx.errors.push({ field, reason, message: `Invalid value: ${goValue(value)}: ${detail}` });
}

function typeMatches(value: unknown, schema: JsonSchema): boolean {
  const t = jsonType(value);
  if (schema['x-kubernetes-int-or-string']) return t === 'integer' || t === 'string';
  switch (schema.type) {
    case undefined:
      return true;
    case 'number':
      return t === 'number' || t === 'integer';
    default:
      return t === schema.type;
  }
}

/** Validates value against the schema's OpenAPI rules, recording errors (CEL rules: validateCelRules). */
function validateValue(ctx: Ctx, value: unknown, schema: JsonSchema, fieldPath: string): void {
  const name = fieldPath || '.';
  if (value === null || value === undefined) {
    if ((schema.type || schema['x-kubernetes-int-or-string']) && !schema.nullable) {
      const expected = schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type;
      ctx.errors.push({ field: fieldPath, reason: 'FieldValueTypeInvalid', message: `Invalid value: "null": ${name} in body must be of type ${expected}: "null"` });
      return;
    }
  } else if (!typeMatches(value, schema)) {
    const actual = jsonType(value);
    const expected = schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type;
    ctx.errors.push({ field: fieldPath, reason: 'FieldValueTypeInvalid', message: `Invalid value: "${actual}": ${name} in body must be of type ${expected}: "${actual}"` });
    return;
  }

  if (schema.enum && !schema.enum.some((e) => deepEqual(e, value))) {
    const values = schema.enum.map((e) => goQuote(typeof e === 'string' ? e : JSON.stringify(e)));
    ctx.errors.push({ field: fieldPath, reason: 'FieldValueNotSupported', message: `Unsupported value: ${goValue(value)}: supported values: ${values.join(', ')}` });
  }

  if (typeof value === 'string') validateString(ctx, value, schema, fieldPath, name);
  if (typeof value === 'number') validateNumber(ctx, value, schema, fieldPath, name);
  if (Array.isArray(value)) validateArray(ctx, value, schema, fieldPath, name);
  if (isPlainObject(value)) validateObject(ctx, value, schema, fieldPath, name);

  validateCombinators(ctx, value, schema, fieldPath, name);
}

function validateString(ctx: Ctx, value: string, schema: JsonSchema, fieldPath: string, name: string): void {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    ctx.errors.push({ field: fieldPath, reason: 'FieldValueTooLong', message: `Too long: may not be longer than ${schema.maxLength}` });
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    invalid(ctx, fieldPath, value, `${name} in body should be at least ${schema.minLength} chars long`);
  }
  if (schema.pattern !== undefined && !compiledPattern(schema.pattern).test(value)) {
    invalid(ctx, fieldPath, value, `${name} in body should match '${schema.pattern}'`);
  }
  if (schema.format) {
    const check = FORMAT_CHECKS[schema.format.replace(/-/g, '')];
    if (check && !check(value)) {
      ctx.errors.push({ field: fieldPath, reason: 'FieldValueTypeInvalid', message: `Invalid value: ${goValue(value)}: ${name} in body must be of type ${schema.format}: ${goQuote(value)}` });
    }
  }
}

function validateNumber(ctx: Ctx, value: number, schema: JsonSchema, fieldPath: string, name: string): void {
  if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
    invalid(ctx, fieldPath, value, `${name} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`);
  }
  if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
    invalid(ctx, fieldPath, value, `${name} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`);
  }
  if (schema.multipleOf !== undefined && Math.abs(value / schema.multipleOf - Math.round(value / schema.multipleOf)) > 1e-9) {
    invalid(ctx, fieldPath, value, `${name} in body should be a multiple of ${schema.multipleOf}`);
  }
}

function validateArray(ctx: Ctx, value: unknown[], schema: JsonSchema, fieldPath: string, name: string): void {
  const listType = schema['x-kubernetes-list-type'];
  const mapKeys = schema['x-kubernetes-list-map-keys'] ?? [];
  const items = schema.items;
  if (items) value.forEach((item, i) => validateValue(ctx, item, items, `${fieldPath}[${i}]`));
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    invalid(ctx, fieldPath, value.length, `${name} in body should have at least ${schema.minItems} items`);
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    ctx.errors.push({ field: fieldPath, reason: 'FieldValueTooMany', message: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
  }
  if (schema.uniqueItems && value.some((v, i) => value.findIndex((w) => deepEqual(v, w)) !== i)) {
    invalid(ctx, fieldPath, value, `${name} in body shouldn't contain duplicates`);
  }
  if (listType === 'set') {
    value.forEach((v, i) => {
      if (value.findIndex((w) => deepEqual(v, w)) !== i) ctx.errors.push({ field: `${fieldPath}[${i}]`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${goValue(v)}` });
    });
  } else if (listType === 'map' && mapKeys.length > 0) {
    const keyOf = (v: unknown) => (isPlainObject(v) ? Object.fromEntries(mapKeys.filter((k) => k in v).map((k) => [k, v[k]])) : v);
    value.forEach((v, i) => {
      if (value.findIndex((w) => deepEqual(keyOf(v), keyOf(w))) !== i) ctx.errors.push({ field: `${fieldPath}[${i}]`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${goValue(keyOf(v))}` });
    });
  }
}

function validateObject(ctx: Ctx, value: Record<string, unknown>, schema: JsonSchema, fieldPath: string, name: string): void {
  for (const key of schema.required ?? []) {
    if (!(key in value)) ctx.errors.push({ field: child(fieldPath, key), reason: 'FieldValueRequired', message: 'Required value' });
  }
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    ctx.errors.push({ field: fieldPath, reason: 'FieldValueTooMany', message: `Too many: ${count}: must have at most ${schema.maxProperties} items` });
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    invalid(ctx, fieldPath, count, `${name} in body should have at least ${schema.minProperties} properties`);
  }
  // Go iterates the properties map in random order; sorted keys make the error order deterministic.
  for (const [key, v] of Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (!sub) continue;
    validateValue(ctx, v, sub, child(fieldPath, key));
  }
}

function validateCombinators(ctx: Ctx, value: unknown, schema: JsonSchema, fieldPath: string, name: string): void {
  // go-openapi's schemaPropsValidator: failures are reported at the "<nil>" field with the schema path.
  const attempt = (s: JsonSchema): FieldError[] => {
    const sub: Ctx = { errors: [] };
    validateValue(sub, value, s, fieldPath);
    return sub.errors;
  };
  if (schema.allOf) {
    const failures = schema.allOf.map(attempt).filter((e) => e.length > 0);
    if (failures.length > 0) {
      ctx.errors.push({ field: '<nil>', reason: 'FieldValueInvalid', message: `Invalid value: "": "${name}" must validate all the schemas (allOf)` });
      for (const f of failures) ctx.errors.push(...f);
    }
  }
  if (schema.anyOf) {
    const results = schema.anyOf.map(attempt);
    if (!results.some((e) => e.length === 0)) {
      ctx.errors.push({ field: '<nil>', reason: 'FieldValueInvalid', message: `Invalid value: "": "${name}" must validate at least one schema (anyOf)` });
      ctx.errors.push(...results[0]);
    }
  }
  if (schema.oneOf) {
    const passing = schema.oneOf.map(attempt).filter((e) => e.length === 0).length;
    if (passing !== 1) ctx.errors.push({ field: '<nil>', reason: 'FieldValueInvalid', message: `Invalid value: "": "${name}" must validate one and only one schema (oneOf)` });
  }
  if (schema.not && attempt(schema.not).length === 0) {
    ctx.errors.push({ field: '<nil>', reason: 'FieldValueInvalid', message: `Invalid value: "": "${name}" must not validate the schema (not)` });
  }
}

// ---------------------------------------------------------------------------------------------------
// CEL rules (x-kubernetes-validations)

/** The CEL value of a JSON value: integers are CEL ints (bigint) unless the schema says number. */
function toCelValue(value: unknown, schema: JsonSchema | undefined): unknown {
  if (typeof value === 'number') return Number.isInteger(value) && schema?.type !== 'number' ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map((v) => toCelValue(v, schema?.items));
  if (isPlainObject(value)) {
    const additional = typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCelValue(v, schema?.properties?.[k] ?? additional)]));
  }
  return value;
}

const celBelow = new WeakMap<JsonSchema, boolean>();

/** Whether the schema or anything under it carries CEL rules (so that walk can stop early). */
function hasCelRules(schema: JsonSchema): boolean {
  let known = celBelow.get(schema);
  if (known === undefined) {
    known =
      (schema['x-kubernetes-validations'] ?? []).length > 0 ||
      Object.values(schema.properties ?? {}).some(hasCelRules) ||
      (schema.items !== undefined && hasCelRules(schema.items)) ||
      (typeof schema.additionalProperties === 'object' && hasCelRules(schema.additionalProperties));
    celBelow.set(schema, known);
  }
  return known;
}

/**
 * apiextensions-apiserver pkg/registry/customresource/strategy.go hasBlockingErr: after these OpenAPI errors
 * the CEL rules are not evaluated, and one error says so.
 */
const BLOCKING_REASONS = new Set<FieldErrorReason>(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

function validateCelRules(ctx: Ctx, value: unknown, schema: JsonSchema, fieldPath: string, old: unknown, hasOld: boolean): void {
  if (value === undefined || value === null || !hasCelRules(schema)) return;
  const rules = schema['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    const self = toCelValue(value, schema);
    const oldSelf = hasOld ? toCelValue(old, schema) : undefined;
    for (const rule of rules) {
      const transition = isTransitionRule(rule.rule);
      if (transition && (!hasOld || old === undefined || old === null)) continue; // transition rules need both values
      const outcome = evaluateCelRule(rule, self, oldSelf, transition);
      if (outcome.ok) continue;
      const field = (rule.fieldPath ? child(fieldPath, rule.fieldPath.replace(/^\./, '')) : fieldPath) || '<nil>';
      if (outcome.reason === 'FieldValueForbidden') ctx.errors.push({ field, reason: 'FieldValueForbidden', message: `Forbidden: ${outcome.detail}` });
      else if (outcome.reason === 'FieldValueRequired') ctx.errors.push({ field, reason: 'FieldValueRequired', message: `Required value: ${outcome.detail}` });
      else ctx.errors.push({ field, reason: 'FieldValueInvalid', message: `Invalid value: ${goQuote(schema.type ?? '')}: ${outcome.detail}` });
    }
  }
  if (Array.isArray(value) && schema.items) {
    const mapKeys = schema['x-kubernetes-list-map-keys'] ?? [];
    const oldItems = hasOld && Array.isArray(old) && schema['x-kubernetes-list-type'] === 'map' ? old : undefined;
    value.forEach((item, i) => {
      // Only map-list items correlate with the stored object (by their keys).
      const oldItem = oldItems && isPlainObject(item) ? oldItems.find((o) => isPlainObject(o) && mapKeys.every((k) => deepEqual(o[k], item[k]))) : undefined;
      validateCelRules(ctx, item, schema.items as JsonSchema, `${fieldPath}[${i}]`, oldItem, oldItem !== undefined);
    });
  } else if (isPlainObject(value)) {
    const oldObj = hasOld && isPlainObject(old) ? old : undefined;
    const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    for (const [key, v] of Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const sub = schema.properties?.[key] ?? additional;
      if (sub) validateCelRules(ctx, v, sub, child(fieldPath, key), oldObj?.[key], oldObj !== undefined && key in oldObj);
    }
  }
}

const patternCache = new Map<string, RegExp>();

function compiledPattern(pattern: string): RegExp {
  let re = patternCache.get(pattern);
  if (!re) {
    re = goRegExp(pattern);
    patternCache.set(pattern, re);
  }
  return re;
}

function eachSchema(schema: JsonSchema, visit: (s: JsonSchema) => void): void {
  visit(schema);
  for (const s of Object.values(schema.properties ?? {})) eachSchema(s, visit);
  if (schema.items) eachSchema(schema.items, visit);
  if (typeof schema.additionalProperties === 'object') eachSchema(schema.additionalProperties, visit);
  for (const s of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) eachSchema(s, visit);
  if (schema.not) eachSchema(schema.not, visit);
}

/**
 * Prunes, defaults and validates one object against a structural schema (the root of an
 * openAPIV3Schema). Used for the CRDs and for the types the simulator describes in code.
 */
export function validateAgainstSchema(schema: JsonSchema, obj: unknown, old?: unknown): ValidationResult {
  const unknownFields: string[] = [];
  const pruned = pruneAndDefault(clone(obj), schema, true, '', unknownFields);
  const ctx: Ctx = { errors: [] };
  const rootSchema: JsonSchema = { ...schema, properties: { ...schema.properties } };
  // metadata is ObjectMeta, validated by the generic metadata rules, not by the CRD's `type: object`.
  delete rootSchema.properties?.metadata;
  validateValue(ctx, pruned, rootSchema, '');
  if (hasCelRules(rootSchema)) {
    if (ctx.errors.some((e) => BLOCKING_REASONS.has(e.reason))) {
      ctx.errors.push({ field: '<nil>', reason: 'FieldValueInvalid', message: 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation' });
    } else {
      validateCelRules(ctx, pruned, rootSchema, '', old, old !== undefined);
    }
  }
  return { errors: ctx.errors, pruned, unknownFields };
}

export interface CrdDocument {
  kind?: string;
  spec?: {
    group: string;
    scope: 'Cluster' | 'Namespaced';
    names: { kind: string; listKind?: string; plural: string; singular?: string; shortNames?: string[]; categories?: string[] };
    versions: { name: string; served: boolean; storage: boolean; schema?: { openAPIV3Schema: JsonSchema }; subresources?: { status?: object; scale?: object } }[];
  };
}

const loadedDirs = new Map<string, CrdInfo[]>();

/**
 * One kind's schema file in the project's compact notation (test/sim/schemas/README.md): the names a CRD
 * gives its kind, and the schema of its served version, with shorthands for the commonest nodes.
 */
export interface CompactSchemaFile {
  kind: string;
  group: string;
  version: string;
  plural: string;
  singular: string;
  listKind: string;
  shortNames?: string[];
  scope: 'Cluster' | 'Namespaced';
  subresources: ('status' | 'scale')[];
  schema: unknown;
}

const SCHEMA_TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
/** Keywords whose value is data (kept as written) rather than a nested schema node. */
const DATA_KEYWORDS = new Set([
  'type', 'format', 'enum', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'nullable', 'default', 'required',
  'x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource', 'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-validations',
]);

/**
 * A compact schema node as the JsonSchema the validator walks: `string` (a bare type) is `{type: string}`,
 * `[X]` is `{type: array, items: X}`, a map keeps the OpenAPI keywords. Anything else (a `description`, a
 * keyword the validator does not know) is refused, so a file cannot carry prose or a rule that is silently ignored.
 */
export function expandCompactSchema(node: unknown, at: string): JsonSchema {
  if (typeof node === 'string') {
    if (!SCHEMA_TYPES.has(node)) throw new Error(`${at}: "${node}" is not a schema type`);
    return { type: node as JsonSchema['type'] };
  }
  if (Array.isArray(node)) {
    if (node.length !== 1) throw new Error(`${at}: the array shorthand holds exactly one item schema`);
    return { type: 'array', items: expandCompactSchema(node[0], `${at}[]`) };
  }
  if (!isPlainObject(node)) throw new Error(`${at}: a schema node is a type name, [item schema] or a map of keywords`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(k)) out[k] = v;
    else if (k === 'properties') {
      if (!isPlainObject(v)) throw new Error(`${at}.properties: a map of field schemas`);
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, expandCompactSchema(s, `${at}.${name}`)]));
    } else if (k === 'items' || k === 'not') out[k] = expandCompactSchema(v, `${at}.${k}`);
    else if (k === 'additionalProperties') out[k] = typeof v === 'boolean' ? v : expandCompactSchema(v, `${at}.additionalProperties`);
    else if (k === 'allOf' || k === 'anyOf' || k === 'oneOf') {
      if (!Array.isArray(v)) throw new Error(`${at}.${k}: a list of schemas`);
      out[k] = v.map((s, i) => expandCompactSchema(s, `${at}.${k}[${i}]`));
    } else throw new Error(`${at}: "${k}" is not a keyword of the compact schema notation`);
  }
  return out as JsonSchema;
}

/** A compact schema file as the CustomResourceDefinition document it states. */
export function crdDocumentOf(file: CompactSchemaFile, name: string): CrdDocument {
  for (const k of ['kind', 'group', 'version', 'plural', 'singular', 'listKind', 'scope'] as const) {
    if (typeof file?.[k] !== 'string') throw new Error(`${name}: ${k} is required`);
  }
  const schema = expandCompactSchema(file.schema, `${name}: schema`);
  const subresources = Object.fromEntries((file.subresources ?? []).map((s) => [s, {}]));
  return {
    kind: 'CustomResourceDefinition',
    spec: {
      group: file.group,
      scope: file.scope,
      names: { kind: file.kind, listKind: file.listKind, plural: file.plural, singular: file.singular, shortNames: file.shortNames },
      versions: [{ name: file.version, served: true, storage: true, schema: { openAPIV3Schema: schema }, subresources }],
    },
  };
}

/**
 * The schema files of dir, as CRD documents. YAML parsing costs noticeable time per process under load, so
 * the parsed form is cached as JSON under .cache/, keyed by the files' contents.
 */
function readCrdDocuments(dir: string): { file: string; doc: CrdDocument }[] {
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  const texts = files.map((f) => readFileSync(path.join(dir, f), 'utf8'));
  const hash = createHash('sha256');
  files.forEach((f, i) => hash.update(`${f}\0${texts[i]}\0`));
  const cacheFile = path.join(PROJECT_ROOT, '.cache', 'crd-json', `compact-${hash.digest('hex').slice(0, 32)}.json`);
  try {
    return JSON.parse(readFileSync(cacheFile, 'utf8')) as { file: string; doc: CrdDocument }[];
  } catch {
    // not cached yet
  }
  const docs = files.map((file, i) => ({ file, doc: crdDocumentOf(parse(texts[i]) as CompactSchemaFile, file) }));
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(docs));
    renameSync(tmp, cacheFile);
  } catch {
    // a read-only checkout still works, just slower
  }
  return docs;
}

/** What a CustomResourceDefinition document serves (its served storage version); throws on rules it cannot compile. */
export function crdInfoOf(doc: CrdDocument, file: string): CrdInfo {
  if (!doc.spec) throw new Error(`${file}: a CustomResourceDefinition without spec`);
  const { group, names, scope, versions } = doc.spec;
  const version = versions.find((v) => v.served && v.storage) ?? versions.find((v) => v.served);
  if (!version?.schema) throw new Error(`${file}: no served version with a schema`);
  const schema = version.schema.openAPIV3Schema;
  eachSchema(schema, (s) => {
    for (const rule of s['x-kubernetes-validations'] ?? []) {
      try {
        compileCelRule(rule.rule);
        if (rule.messageExpression) compileCelRule(rule.messageExpression);
      } catch (e) {
        throw new Error(`${file}: ${(e as Error).message}`);
      }
    }
    if (s.pattern !== undefined) {
      try {
        compiledPattern(s.pattern);
      } catch (e) {
        throw new Error(`${file}: pattern ${s.pattern} does not translate to a JS RegExp: ${(e as Error).message}`);
      }
    }
  });
  return {
    group,
    version: version.name,
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    namespaced: scope === 'Namespaced',
    schema,
    subresources: { status: version.subresources?.status !== undefined, scale: version.subresources?.scale !== undefined },
    file,
  };
}

/** Reads every compact schema file in dir (once per process and directory). */
export function loadCrds(dir: string = CRD_DIR): CrdInfo[] {
  const cached = loadedDirs.get(path.resolve(dir));
  if (cached) return cached;
  const out: CrdInfo[] = [];
  for (const { file, doc } of readCrdDocuments(dir)) {
    if (doc?.kind !== 'CustomResourceDefinition' || !doc.spec) continue;
    out.push(crdInfoOf(doc as CrdDocument, file));
  }
  loadedDirs.set(path.resolve(dir), out);
  return out;
}

/**
 * Loads the schema files of `dir` (default: the openshift/api kinds, CRD_DIR) plus any schemas given in
 * `extra` (for types with no schema file, e.g. MachineConfigPool).
 */
export function loadCrdValidator(dir: string = CRD_DIR, extra: CrdInfo[] = []): CrdValidator {
  const crds = [...loadCrds(dir), ...extra];
  const crdFor = (kind: string, group?: string) => crds.find((c) => c.kind === kind && (group === undefined || c.group === group));
  return {
    crds,
    crdFor,
    crdForResource: (group, plural) => crds.find((c) => c.group === group && c.plural === plural),
    validate(apiVersion, kind, obj, old) {
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      const crd = crdFor(kind, group);
      if (!crd || crd.version !== version) throw new Error(`no CRD serves ${kind} in ${apiVersion}`);
      return validateAgainstSchema(crd.schema, obj, old);
    },
  };
}
