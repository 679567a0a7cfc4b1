// Label and field selectors as the kube-apiserver parses them (k8s.io/apimachinery/pkg/labels and
// pkg/fields): labels support =, ==, !=, in, notin, exists and !exists; fields support =, == and != on the
// labels a resource registers (metadata.name, metadata.namespace, plus per-type ones such as
// spec.signerName for CSRs); anything else is a 400.
import type { KubeObject } from '../../../src/cluster/types';
import type { ServedResource } from './resources';
import { badRequest } from './status';

type LabelOp = 'exists' | '!' | '=' | '!=' | 'in' | 'notin';

interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export type Matcher = (obj: KubeObject) => boolean;

const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts.map((p) => p.trim());
}

function parseLabelRequirement(raw: string): LabelRequirement {
  const fail = (why: string) => badRequest(`unable to parse requirement: ${why}`);
  let m = /^!\s*([^\s!=(),]+)$/.exec(raw);
  if (m) return checkKey({ key: m[1], op: '!', values: [] });
  m = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(raw);
  if (m) {
    const values = m[3].split(',').map((v) => v.trim());
    values.forEach(checkValue);
    return checkKey({ key: m[1], op: m[2] as LabelOp, values });
  }
  m = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(raw);
  if (m) {
    checkValue(m[3]);
    return checkKey({ key: m[1], op: m[2] === '!=' ? '!=' : '=', values: [m[3]] });
  }
  m = /^([^\s!=(),]+)$/.exec(raw);
  if (m) return checkKey({ key: m[1], op: 'exists', values: [] });
  throw fail(`found '${raw}', expected: !, identifier, or 'end of string'`);

  function checkKey(r: LabelRequirement): LabelRequirement {
    if (!LABEL_KEY.test(r.key)) {
      throw fail(`key: Invalid value: "${r.key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
    }
    return r;
  }
  function checkValue(v: string): void {
    if (v.length > 63 || !LABEL_VALUE.test(v)) {
      throw fail(`values[0][${raw}]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
    }
  }
}

export function parseLabelSelector(selector: string | undefined): Matcher {
  if (!selector || !selector.trim()) return () => true;
  const reqs = splitTopLevel(selector).filter((p) => p !== '').map(parseLabelRequirement);
  return (obj) => {
    const labels = (obj.metadata?.labels ?? {}) as Record<string, string>;
    return reqs.every((r) => {
      const has = Object.prototype.hasOwnProperty.call(labels, r.key);
      switch (r.op) {
        case 'exists':
          return has;
        case '!':
          return !has;
        case '=':
          return has && labels[r.key] === r.values[0];
        case '!=':
          return !has || labels[r.key] !== r.values[0];
        case 'in':
          return has && r.values.includes(labels[r.key]);
        case 'notin':
          return !has || !r.values.includes(labels[r.key]);
      }
    });
  };
}

function fieldValue(obj: KubeObject, label: string): string {
  let v: unknown = obj;
  for (const part of label.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  if (v === undefined || v === null) return label === 'spec.unschedulable' ? 'false' : '';
  return String(v);
}

export function parseFieldSelector(selector: string | undefined, r: ServedResource): Matcher {
  if (!selector || !selector.trim()) return () => true;
  const supported = new Set(['metadata.name', ...(r.type.namespaced ? ['metadata.namespace'] : []), ...r.fieldLabels]);
  const reqs = splitTopLevel(selector)
    .filter((p) => p !== '')
    .map((raw) => {
      const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(raw);
      if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${raw}'`);
      const [, label, op, value] = m;
      if (!supported.has(label)) throw badRequest(`field label not supported: ${label}`);
      return { label, negate: op === '!=', value };
    });
  return (obj) => reqs.every((q) => (fieldValue(obj, q.label) === q.value) !== q.negate);
}
