// The one way the agent reads and writes YAML.
//
// Reading: YAML 1.2's core schema whatever a document's %YAML directive says, explicit tags (!!binary, !!set,
// !!timestamp, …) left unresolved, no `<<` merge keys, and a mapping key must be a scalar. That is all its
// inputs need (site-configs, kubeconfigs, the install-config: JSON-like data), and it is what lets the node
// bundle leave out the yaml package's YAML 1.1 types (esbuild.config.mjs, yaml11StandIn): yaml reaches them
// only through schema 'yaml-1.1' (an option, or a %YAML 1.1 directive when no schema is given) or
// resolveKnownTags, and every parse here pins both. A list, mapping or alias as a key is refused here, before
// any conversion: converting it to a plain object is the one place yaml's parse reaches its stringify code
// (nodes/addPairToJSMap.js, stringifyKey), which the node bundle leaves out (esbuild.config.mjs, stringifyStandIn).
//
// Writing: emitYaml, for plain data only (the kubeconfig, nmstate states, the inventory row). Every string is
// a JSON string, which is a YAML double-quoted scalar (YAML 1.2.2, 7.3.1 Double-Quoted Style, and its
// "Relation to JSON"), so no plain-scalar rule (yes/no/on, 0x1F, 1e3, ~, ": ", "#", leading spaces) can change a value
// in any reader: yaml, serde_yaml (nmstatectl), go-yaml (kubectl/oc through sigs.k8s.io/yaml).
// eslint.config.mjs keeps yaml's parse and stringify functions out of the rest of the node code.
import { LineCounter, YAMLParseError, isAlias, isScalar, parseAllDocuments, parseDocument, visit, type Document, type DocumentOptions, type EmptyStream, type ParseOptions, type SchemaOptions } from 'yaml';

/** Last in every options object, so no caller can undo them. logLevel 'error': warnings are the caller's to read. */
// uniqueKeys false: yaml's own check compares each new key with every earlier one (compose/resolve-block-map.js,
// mapIncludes), 4.7 s for a mapping of 20,000 keys and minutes for a 1 MiB file, the agent's event loop blocked
// all along (the third hostile re-test of issue 36: the watchdog killed it); checkKeys below is linear.
export const YAML_CORE = { version: '1.2', schema: 'core', resolveKnownTags: false, merge: false, uniqueKeys: false, logLevel: 'error' } as const;

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/**
 * Adds an error to the document for every key that is a list, mapping or alias (code NON_STRING_KEY), and for every
 * key a mapping already has (code DUPLICATE_KEY, yaml's own code and words: keys equal when their values are, as in
 * yaml's mapIncludes), at the key's start.
 */
function checkKeys(doc: Document.Parsed): Document.Parsed {
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = pair.key as { range?: [number, number, number] } | null;
        const at = key?.range?.[0] ?? 0;
        if (key !== null && !isScalar(key)) {
          doc.errors.push(new YAMLParseError([at, at + 1], 'NON_STRING_KEY', `a mapping key must be a plain string, not ${isAlias(key) ? 'an alias' : 'a list or mapping'}`));
          continue;
        }
        const value = key === null ? null : key.value;
        const id = `${typeof value}\0${String(value)}`;
        if (seen.has(id)) doc.errors.push(new YAMLParseError([at, at + 1], 'DUPLICATE_KEY', 'Map keys must be unique'));
        seen.add(id);
      }
    },
  });
  return doc;
}

/** One document into plain data; throws yaml's error (with its line and column) on a syntax error, a collection key or a key given twice. */
export function parseYamlCore(text: string): unknown {
  const lines = new LineCounter();
  const doc = checkKeys(parseDocument(text, { lineCounter: lines, ...YAML_CORE }));
  const error = doc.errors[0];
  if (error) {
    if (error.code === 'NON_STRING_KEY' || error.code === 'DUPLICATE_KEY') {
      const p = lines.linePos(error.pos[0]);
      error.message += ` at line ${p.line}, column ${p.col}`;
    }
    throw error;
  }
  return doc.toJS();
}

/**
 * Every document of `text`, with the caller's parser options (line counter, strictness) under YAML_CORE; a
 * collection or alias key, or a key its mapping already has, is one more error (NON_STRING_KEY, DUPLICATE_KEY) in its
 * document's errors.
 */
export function parseAllYamlCore(text: string, options: Omit<Options, keyof typeof YAML_CORE>): Document.Parsed[] | EmptyStream {
  const docs = parseAllDocuments(text, { ...options, ...YAML_CORE });
  if (Array.isArray(docs)) docs.forEach(checkKeys);
  return docs;
}

/**
 * Keys written without quotes: a word no YAML version reads as anything but that string — YAML 1.1's y/n/yes/
 * no/on/off are booleans to go-yaml v2 (kubernetes-sigs/yaml 742f5e6, goyaml.v2/resolve.go), null/true/false
 * in any case to YAML 1.2's core schema.
 */
const PLAIN_KEY = /^(?!(?:y|n|yes|no|on|off|true|false|null)$)[A-Za-z_][\w./-]*$/i;

/**
 * A JSON string that every reader of these files decodes to the same text. Escaped beyond JSON.stringify (which
 * escapes C0 controls and lone surrogates): `"` and backspace as \u0022 and \u0008 (rmsd-yaml, nmstatectl's
 * newest parser, has no \" or \b escape: nispor/rmsd-yaml 1507fad, src/scalar_str.rs read_escaped_char), the
 * no-break space (nmstatectl turns a raw one into a space before parsing: nmstate/nmstate 46e561b,
 * rust/src/cli/state.rs), DEL and C1 controls (not printable: YAML 1.2.2, 5.1 Character Set), U+2028/U+2029 (line
 * breaks to YAML 1.1 readers), U+FEFF and U+FFFE/U+FFFF.
 */
const quote = (s: string) =>
  JSON.stringify(s).replace(/\\(.)|[\x7f-\xa0\u2028\u2029\ufeff\ufffe\uffff]/g, (m, escaped?: string) => {
    const c = escaped === undefined ? m : escaped === '"' ? '"' : escaped === 'b' ? '\b' : undefined;
    return c === undefined ? m : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });

function scalar(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'boolean':
      return String(value);
    case 'number':
      // YAML 1.2.2's core schema (chapter 10) spells the non-finite floats .inf, -.inf and .nan.
      return Number.isNaN(value) ? '.nan' : value === Infinity ? '.inf' : value === -Infinity ? '-.inf' : Object.is(value, -0) ? '-0' : String(value);
    case 'object':
      if (Array.isArray(value)) return value.length === 0 ? '[]' : undefined;
      if (![Object.prototype, null].includes(Object.getPrototypeOf(value))) break;
      return Object.values(value as object).some((v) => v !== undefined) ? undefined : '{}';
  }
  throw new TypeError(`emitYaml writes plain data only, not ${Object.prototype.toString.call(value)}`);
}

/** The lines of a non-empty list or mapping, each indented by `indent`. */
function collectionLines(value: object, indent: string, parents: object[]): string[] {
  if (parents.includes(value)) throw new TypeError('emitYaml: the data refers to itself');
  const inner = [...parents, value];
  if (Array.isArray(value)) {
    return value.flatMap((item: unknown) => {
      const s = scalar(item === undefined ? null : item);
      if (s !== undefined) return [`${indent}- ${s}`];
      // The item's first line shares the dash's line: "- key: value" / "- - item".
      const [first, ...rest] = collectionLines(item as object, `${indent}  `, inner);
      return [`${indent}- ${first!.slice(indent.length + 2)}`, ...rest];
    });
  }
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .flatMap(([k, v]) => {
      const key = `${indent}${PLAIN_KEY.test(k) ? k : quote(k)}:`;
      const s = scalar(v);
      return s === undefined ? [key, ...collectionLines(v as object, `${indent}  `, inner)] : [`${key} ${s}`];
    });
}

/**
 * Plain data (objects, arrays, strings, numbers, booleans, null; undefined members left out as JSON does) as
 * block-style YAML: two-space indentation, list items under their key indented, every string a JSON string.
 * parseYamlCore(emitYaml(x)) deep-equals x.
 */
export function emitYaml(value: unknown): string {
  const s = scalar(value);
  return `${s === undefined ? collectionLines(value as object, '', []).join('\n') : s}\n`;
}
