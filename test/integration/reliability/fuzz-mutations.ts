// Deterministic mutations of the valid site-config corpus (test/fixtures/site-configs/valid) for the fuzz
// tests: structural ones on the parsed document (type changes, deletions, unknown keys, huge strings, odd
// Unicode, path traversal in file references, deep nesting, odd numbers and durations) and textual ones on
// its bytes (truncation, binary, encodings, YAML tags, anchors, duplicate keys, several documents), plus
// damage to the files a site-config references. The same seed always gives the same mutations.
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/** mulberry32: a small, fast, seedable PRNG (public domain); good enough to pick mutations. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(rnd: Rng, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const int = (rnd: Rng, lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];

/** A case of the valid corpus as files (relative path → bytes); `mains` are its site-config documents. */
export interface CaseFiles {
  name: string;
  mains: string[];
  files: Map<string, Buffer>;
}

export interface Mutant {
  /** e.g. "v02-full#17 type-change spec.pullSecretMode := 3" */
  description: string;
  operator: string;
  files: Map<string, Buffer>;
  /** The mutation may have moved a secret into a field whose invalid value is echoed back. */
  movesValues: boolean;
}

/** Keys whose value names another file on the media (DESIGN.md section 4). */
export const FILE_REFERENCE_KEYS = ['nmstateFile', 'pullSecretFile', 'additionalTrustBundleFile', 'certFile', 'keyFile'];

export const TRAVERSAL_PATHS = [
  '../../../../../../etc/shadow',
  '../../etc/passwd',
  '/etc/passwd',
  '/proc/self/environ',
  '/dev/zero',
  '/dev/stdin',
  'a/../../../outside.yaml',
  'network/../../../x',
  '..\\..\\windows\\system32\\config\\sam',
  '%2e%2e/%2e%2e/etc/passwd',
  'file:///etc/passwd',
  '~/.ssh/id_rsa',
  '.',
  '..',
  '',
  ' ',
  'a\u0000b.yaml',
  'network.yaml\u0000.pem',
  `${'../'.repeat(300)}etc/hosts`,
  `${'a/'.repeat(2000)}x`,
  'network.yaml/',
  './/.//network.yaml',
  'C:\\site\\network.yaml',
  'site-config.yaml',
];

export const ODD_STRINGS = [
  '\u202eevil.com',
  'store\u200b42.example.com',
  '\ufeffstore42.example.com',
  'e\u0301xample.com',
  'nul\u0000byte',
  'line\u2028separator',
  'next\u0085line',
  'del\u007fchar',
  'ｓｔｏｒｅ４２.example.com',
  'ѕtore42.example.com',
  'İstanbul.example.com',
  'straße.example.com',
  '😀.example.com',
  'xn--nxasmq6b.example.com',
  '\ud800lone-surrogate',
  '\udfffreverse',
  '\t\n\r',
  '   ',
  '-----BEGIN CERTIFICATE-----',
  '${HOME}',
  '$(reboot)',
  '`reboot`',
  '; rm -rf /',
  '{{ .Values }}',
  '%s%s%s%n',
  '<script>alert(1)</script>',
  "'; DROP TABLE sites; --",
  'a'.repeat(254) + '.com',
  `${'label.'.repeat(60)}com`,
  '..',
  '.example.com',
  'example.com.',
  '*',
  '*.example.com',
  '0',
  '-1',
  'null',
  'true',
  '~',
  'NaN',
  '1e999',
  '0x1F',
  '٣m',
  '1h1h',
  '-5m',
  '9999999999999999999h',
  '1.5.5s',
  '5 m',
  '5M',
  '192.168.42.300',
  '192.168.042.1',
  'fe80::1%eno1',
  '::ffff:192.168.0.1',
  '0.0.0.0/0',
  '52:54:00:12:34',
  '52-54-00-12-34-56',
];

const ODD_VALUES: Json[] = [0, -1, -0, 1.5, 2 ** 53 + 1, 1e308, true, false, null, [], {}, '', 'x', [null], [[]], [{}], { '': '' }, { '<<': 'merge' }];

/** How deep a value nests (iteratively: a deep-nesting mutant must not overflow the measurement either). */
function nestingDepth(v: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    deepest = Math.max(deepest, d);
    if (x !== null && typeof x === 'object') for (const child of Object.values(x)) stack.push([child, d + 1]);
  }
  return deepest;
}

/** Values deeper than this are not copied (structuredClone recurses and overflows the stack on them). */
const MAX_CLONE_DEPTH = 1_000;

function clone<T>(v: T): T {
  if (nestingDepth(v) > MAX_CLONE_DEPTH) throw new TooDeepToClone();
  return structuredClone(v);
}

/** A mutation that would copy a deep-nesting mutant's subtree is skipped, not crashed on. */
class TooDeepToClone extends Error {}

/** Mutations pick targets no deeper than this (a deep-nesting mutant must not overflow the mutator). */
const MAX_TARGET_DEPTH = 40;

/** Every path to a value in the document (the root excluded). */
function paths(doc: Json, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (prefix.length >= MAX_TARGET_DEPTH) return out;
  if (Array.isArray(doc)) doc.forEach((v, i) => out.push([...prefix, i], ...paths(v, [...prefix, i])));
  else if (doc && typeof doc === 'object') for (const [k, v] of Object.entries(doc)) out.push([...prefix, k], ...paths(v, [...prefix, k]));
  return out;
}

function containers(doc: Json, prefix: Path = []): { path: Path; value: Json[] | { [k: string]: Json } }[] {
  const out: { path: Path; value: Json[] | { [k: string]: Json } }[] = [];
  if (doc && typeof doc === 'object' && prefix.length < MAX_TARGET_DEPTH) {
    out.push({ path: prefix, value: doc });
    if (Array.isArray(doc)) doc.forEach((v, i) => out.push(...containers(v, [...prefix, i])));
    else for (const [k, v] of Object.entries(doc)) out.push(...containers(v, [...prefix, k]));
  }
  return out;
}

function get(doc: Json, p: Path): Json {
  let cur: Json = doc;
  for (const k of p) cur = (cur as Record<string | number, Json>)[k]!;
  return cur;
}

function set(doc: Json, p: Path, value: Json): void {
  const parent = get(doc, p.slice(0, -1)) as Record<string | number, Json>;
  parent[p[p.length - 1]!] = value;
}

function remove(doc: Json, p: Path): void {
  const parent = get(doc, p.slice(0, -1));
  const last = p[p.length - 1]!;
  if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete (parent as Record<string, Json>)[last as string];
}

const show = (p: Path) => p.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('').replace(/^\./, '') || '<root>';
const brief = (v: Json) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}…(${s.length})` : s;
};

function nested(depth: number, kind: 'array' | 'object'): Json {
  let v: Json = 'bottom';
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { n: v };
  return v;
}

interface Structural {
  name: string;
  movesValues?: boolean;
  apply(doc: Json, rnd: Rng): string | undefined;
}

const STRUCTURAL: Structural[] = [
  {
    name: 'delete',
    apply(doc, rnd) {
      const all = paths(doc);
      if (all.length === 0) return undefined;
      const p = pick(rnd, all);
      remove(doc, p);
      return `delete ${show(p)}`;
    },
  },
  {
    name: 'type-change',
    apply(doc, rnd) {
      const p = pick(rnd, paths(doc));
      if (!p) return undefined;
      const old = get(doc, p);
      const candidates = ODD_VALUES.filter((v) => typeof v !== typeof old || Array.isArray(v) !== Array.isArray(old));
      const v = clone(pick(rnd, candidates.length ? candidates : ODD_VALUES));
      set(doc, p, v);
      return `type-change ${show(p)} := ${brief(v)}`;
    },
  },
  {
    name: 'wrap',
    apply(doc, rnd) {
      const p = pick(rnd, paths(doc));
      if (!p) return undefined;
      const old = get(doc, p);
      const v: Json = rnd() < 0.5 ? [old] : { value: old };
      set(doc, p, v);
      return `wrap ${show(p)}`;
    },
  },
  {
    name: 'huge-string',
    apply(doc, rnd) {
      const p = pick(rnd, paths(doc));
      if (!p) return undefined;
      const size = pick(rnd, [4096, 65_536, 300_000, 1_100_000]);
      const unit = pick(rnd, ['a', 'é', '😀', 'a.', '../', '\u200b']);
      const v = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
      set(doc, p, v);
      return `huge-string ${show(p)} := ${JSON.stringify(unit)}×${size}`;
    },
  },
  {
    name: 'odd-unicode',
    apply(doc, rnd) {
      const strings = paths(doc).filter((p) => typeof get(doc, p) === 'string');
      const p = pick(rnd, strings.length ? strings : paths(doc));
      if (!p) return undefined;
      const odd = pick(rnd, ODD_STRINGS);
      const old = get(doc, p);
      const mode = typeof old === 'string' ? pick(rnd, ['replace', 'prefix', 'suffix', 'middle']) : 'replace';
      const s = typeof old === 'string' ? old : '';
      const mid = Math.floor(s.length / 2);
      const v = mode === 'replace' ? odd : mode === 'prefix' ? odd + s : mode === 'suffix' ? s + odd : s.slice(0, mid) + odd + s.slice(mid);
      set(doc, p, v);
      return `odd-unicode(${mode}) ${show(p)} := ${JSON.stringify(odd).slice(0, 40)}`;
    },
  },
  {
    name: 'path-traversal',
    apply(doc, rnd) {
      const refs = paths(doc).filter((p) => FILE_REFERENCE_KEYS.includes(String(p[p.length - 1])));
      const bad = pick(rnd, TRAVERSAL_PATHS);
      if (refs.length > 0) {
        const p = pick(rnd, refs);
        set(doc, p, bad);
        return `path-traversal ${show(p)} := ${JSON.stringify(bad).slice(0, 50)}`;
      }
      // No reference in this case: add one where the schema allows it.
      const spec = (doc as { spec?: Record<string, Json> }).spec;
      if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
      const where = pick(rnd, ['pullSecretFile', 'additionalTrustBundleFile', 'network.nmstateFile', 'certificates.api'] as const);
      if (where === 'network.nmstateFile') spec.network = { nmstateFile: bad };
      else if (where === 'certificates.api') spec.certificates = { api: { certFile: bad, keyFile: pick(rnd, TRAVERSAL_PATHS) } };
      else spec[where] = bad;
      return `path-traversal spec.${where} := ${JSON.stringify(bad).slice(0, 50)}`;
    },
  },
  {
    name: 'unknown-key',
    apply(doc, rnd) {
      const maps = containers(doc).filter((c) => !Array.isArray(c.value));
      if (maps.length === 0) return undefined;
      const c = pick(rnd, maps);
      const key = pick(rnd, ['extra', 'basedomain', 'BaseDomain', 'spec', '__proto__', 'constructor', 'prototype', '', ' ', 'nmstate ', 'x'.repeat(5000), '😀', '$ref']);
      const value = clone(pick(rnd, ODD_VALUES));
      Object.defineProperty(c.value, key, { value, enumerable: true, configurable: true, writable: true });
      return `unknown-key ${show(c.path)}.${JSON.stringify(key).slice(0, 30)} := ${brief(value)}`;
    },
  },
  {
    name: 'rename-key',
    apply(doc, rnd) {
      const keyed = paths(doc).filter((p) => typeof p[p.length - 1] === 'string');
      if (keyed.length === 0) return undefined;
      const p = pick(rnd, keyed);
      const old = String(p[p.length - 1]);
      const renamed = pick(rnd, [old.toLowerCase(), old.toUpperCase(), `${old}s`, old.slice(0, -1), `${old} `, old.replace(/[A-Z]/, (c) => `_${c.toLowerCase()}`)]);
      if (renamed === old) return undefined;
      const value = get(doc, p);
      remove(doc, p);
      set(doc, [...p.slice(0, -1), renamed], value);
      return `rename-key ${show(p)} → ${JSON.stringify(renamed)}`;
    },
  },
  {
    name: 'array-games',
    apply(doc, rnd) {
      const arrays = containers(doc).filter((c) => Array.isArray(c.value)) as { path: Path; value: Json[] }[];
      if (arrays.length === 0) return undefined;
      const c = pick(rnd, arrays);
      const mode = pick(rnd, ['empty', 'duplicate', 'many', 'null-entry', 'reverse']);
      if (mode === 'empty') c.value.length = 0;
      else if (mode === 'duplicate' && c.value.length) c.value.push(clone(c.value[0]!));
      else if (mode === 'many' && c.value.length) for (let i = 0; i < 2000; i++) c.value.push(clone(c.value[i % c.value.length]!));
      else if (mode === 'null-entry') c.value.splice(int(rnd, 0, c.value.length), 0, null);
      else c.value.reverse();
      return `array-${mode} ${show(c.path)}`;
    },
  },
  {
    name: 'deep-nesting',
    apply(doc, rnd) {
      const p = pick(rnd, paths(doc));
      if (!p) return undefined;
      const depth = pick(rnd, [65, 500, 3000]);
      set(doc, p, nested(depth, rnd() < 0.5 ? 'array' : 'object'));
      return `deep-nesting ${show(p)} depth ${depth}`;
    },
  },
  {
    name: 'swap',
    movesValues: true,
    apply(doc, rnd) {
      const all = paths(doc);
      if (all.length < 2) return undefined;
      const a = pick(rnd, all);
      const b = pick(rnd, all);
      if (show(a).startsWith(show(b)) || show(b).startsWith(show(a))) return undefined;
      const va = clone(get(doc, a));
      set(doc, a, clone(get(doc, b)));
      set(doc, b, va);
      return `swap ${show(a)} ↔ ${show(b)}`;
    },
  },
  {
    name: 'replace-root',
    apply(doc, rnd) {
      const top = pick(rnd, ['apiVersion', 'kind', 'metadata', 'spec']);
      const v = clone(pick(rnd, ODD_VALUES));
      (doc as Record<string, Json>)[top] = v;
      return `replace-root ${top} := ${brief(v)}`;
    },
  },
];

interface Textual {
  name: string;
  apply(text: Buffer, rnd: Rng): { bytes: Buffer; what: string };
}

const TEXTUAL: Textual[] = [
  { name: 'truncate', apply: (t, rnd) => { const at = int(rnd, 0, t.length); return { bytes: t.subarray(0, at), what: `truncate at ${at}/${t.length}` }; } },
  {
    name: 'random-bytes',
    apply(t, rnd) {
      const n = int(rnd, 1, 16);
      const at = int(rnd, 0, t.length);
      const junk = Buffer.from(Array.from({ length: n }, () => int(rnd, 0, 255)));
      return { bytes: Buffer.concat([t.subarray(0, at), junk, t.subarray(at)]), what: `insert ${n} random bytes at ${at}` };
    },
  },
  {
    name: 'flip-bytes',
    apply(t, rnd) {
      const out = Buffer.from(t);
      const n = int(rnd, 1, 8);
      for (let i = 0; i < n && out.length; i++) out[int(rnd, 0, out.length - 1)] ^= 1 << int(rnd, 0, 7);
      return { bytes: out, what: `flip ${n} bits` };
    },
  },
  { name: 'binary', apply: (_t, rnd) => ({ bytes: Buffer.from(Array.from({ length: int(rnd, 1, 4096) }, () => int(rnd, 0, 255))), what: 'replace with binary' }) },
  { name: 'empty', apply: () => ({ bytes: Buffer.alloc(0), what: 'empty file' }) },
  { name: 'bom', apply: (t) => ({ bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), t]), what: 'UTF-8 BOM' }) },
  { name: 'utf16', apply: (t) => ({ bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t.toString('utf8'), 'utf16le')]), what: 'UTF-16LE with BOM' }) },
  { name: 'latin1', apply: (t) => ({ bytes: Buffer.from(`${t.toString('utf8')}\n# caf\u00e9\n`, 'latin1'), what: 'latin1 bytes' }) },
  { name: 'crlf', apply: (t) => ({ bytes: Buffer.from(t.toString('utf8').replace(/\n/g, '\r\n')), what: 'CRLF line ends' }) },
  { name: 'tabs', apply: (t) => ({ bytes: Buffer.from(t.toString('utf8').replace(/^( {2})+/gm, (m) => '\t'.repeat(m.length / 2))), what: 'tab indentation' }) },
  { name: 'nul', apply: (t, rnd) => { const at = int(rnd, 0, t.length); return { bytes: Buffer.concat([t.subarray(0, at), Buffer.from([0]), t.subarray(at)]), what: `NUL at ${at}` }; } },
  {
    name: 'yaml-tag',
    apply(t, rnd) {
      const tag = pick(rnd, ['!!js/function "function(){return 1}"', '!!python/object/apply:os.system ["reboot"]', '!!binary aGVsbG8=', '!!set {a, b}', '!!timestamp 2001-12-14', '!!float .nan', '!!int 0x7fffffffffffffff', '!<tag:yaml.org,2002:str> x', '!custom value']);
      return { bytes: Buffer.from(`${t.toString('utf8')}\nextraTagged: ${tag}\n`), what: `YAML tag ${tag.slice(0, 30)}` };
    },
  },
  {
    name: 'alias-bomb',
    apply: (t) => {
      const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
      for (let i = 1; i < 9; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
      return { bytes: Buffer.from(`${lines.join('\n')}\n${t.toString('utf8')}`), what: 'billion laughs aliases' };
    },
  },
  { name: 'merge-key', apply: (t) => ({ bytes: Buffer.from(`base: &b {baseDomain: evil.example.com}\n${t.toString('utf8').replace(/^spec:\s*$/m, 'spec:\n  <<: *b')}`), what: 'YAML merge key into spec' }) },
  {
    name: 'duplicate-key',
    apply(t) {
      const s = t.toString('utf8');
      const m = /^( +)(\w+):.*$/m.exec(s);
      return { bytes: Buffer.from(m ? s.replace(m[0], `${m[0]}\n${m[1]}${m[2]}: duplicated`) : `${s}\nkind: SiteConfig\nkind: Other\n`), what: 'duplicate key' };
    },
  },
  { name: 'multi-doc', apply: (t) => ({ bytes: Buffer.from(`${t.toString('utf8')}\n---\n${t.toString('utf8')}`), what: 'two YAML documents' }) },
  { name: 'flow-garbage', apply: (t) => ({ bytes: Buffer.from(`${t.toString('utf8')}\n{[}]: ][\n`), what: 'unbalanced flow collections' }) },
  { name: 'long-line', apply: (t) => ({ bytes: Buffer.from(`# ${'#'.repeat(900_000)}\n${t.toString('utf8')}`), what: '900 KB comment line' }) },
  { name: 'oversize', apply: (t) => ({ bytes: Buffer.concat([t, Buffer.from(`\n# ${'x'.repeat(1024 * 1024 + 10)}\n`)]), what: 'over 1 MiB' }) },
];

/** Damage to a referenced (non-main) file. */
const REFERENCED: Textual[] = [
  TEXTUAL.find((t) => t.name === 'truncate')!,
  TEXTUAL.find((t) => t.name === 'binary')!,
  TEXTUAL.find((t) => t.name === 'empty')!,
  TEXTUAL.find((t) => t.name === 'flip-bytes')!,
  TEXTUAL.find((t) => t.name === 'oversize')!,
  { name: 'swap-pem', apply: (t) => ({ bytes: Buffer.from(t.toString('utf8').replace(/CERTIFICATE/g, 'PRIVATE KEY')), what: 'PEM labels swapped' }) },
];

function serialize(main: string, doc: Json): Buffer {
  // JSON.stringify keeps lone surrogates as escapes; YAML as literal text — both are worth feeding.
  if (main.endsWith('.json')) return Buffer.from(JSON.stringify(doc, null, 2));
  try {
    return Buffer.from(stringifyYaml(doc, { lineWidth: 0 }));
  } catch {
    // yaml's stringify recurses per level (a deep-nesting mutant overflows it); JSON is YAML 1.2 flow style.
    return Buffer.from(JSON.stringify(doc));
  }
}

function parseMain(main: string, bytes: Buffer): Json {
  const text = bytes.toString('utf8');
  return (main.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as Json;
}

/** The `index`-th mutant of a case: structural (≈60%), textual on the main file (≈30%), or a referenced file (≈10%). */
export function mutate(c: CaseFiles, seed: number, index: number): Mutant {
  const rnd = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const files = new Map(c.files);
  const main = pick(rnd, c.mains);
  const original = c.files.get(main)!;
  const roll = rnd();
  const others = [...c.files.keys()].filter((f) => !c.mains.includes(f) && !f.endsWith('.sig'));
  if (roll < 0.1 && others.length > 0) {
    const f = pick(rnd, others);
    const op = pick(rnd, REFERENCED);
    const { bytes, what } = op.apply(c.files.get(f)!, rnd);
    files.set(f, bytes);
    return { description: `${c.name}#${index} referenced ${f}: ${what}`, operator: `referenced-${op.name}`, files, movesValues: false };
  }
  if (roll < 0.4) {
    const op = pick(rnd, TEXTUAL);
    const { bytes, what } = op.apply(original, rnd);
    files.set(main, bytes);
    return { description: `${c.name}#${index} ${main}: ${what}`, operator: op.name, files, movesValues: false };
  }
  const doc = parseMain(main, original);
  const steps: string[] = [];
  let movesValues = false;
  const count = rnd() < 0.75 ? 1 : int(rnd, 2, 4);
  const operators: string[] = [];
  for (let i = 0, tries = 0; i < count && tries < 20; tries++) {
    const op = pick(rnd, STRUCTURAL);
    let what: string | undefined;
    try {
      what = op.apply(doc, rnd);
    } catch (e) {
      if (!(e instanceof TooDeepToClone)) throw e;
    }
    if (what === undefined) continue;
    steps.push(what);
    operators.push(op.name);
    movesValues ||= op.movesValues === true;
    i++;
  }
  files.set(main, serialize(main, doc));
  return { description: `${c.name}#${index} ${main}: ${steps.join('; ')}`, operator: operators[0] ?? 'none', files, movesValues };
}
