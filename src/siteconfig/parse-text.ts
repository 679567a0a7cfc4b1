// Turning untrusted bytes (a USB stick found at a site) into a plain JSON-like value, refusing anything
// hostile or ambiguous before it reaches validation: oversized files, binary data, non-UTF-8 text, several
// YAML documents, duplicate keys (yaml `uniqueKeys`), alias bombs (yaml `maxAliasCount`), non-JSON YAML types
// and absurd nesting. Messages name positions, never content: the file may hold a pull secret.
import { LineCounter, isScalar, visit, type Document } from 'yaml';
import { parseAllYamlCore } from '../util/yaml';
import { controlCharIndex, formatPath, type PathSegment } from './problems';

/** Every file the site-config consists of is read only up to this size. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Aliases allowed in one document; yaml's default check ("Excessive alias count") scales with this. */
export const MAX_ALIAS_COUNT = 100;
import { MAX_DEPTH } from './media-names';

export { MAX_DEPTH };

export type ParseOutcome = { ok: true; value: unknown } | { ok: false; messages: string[] };
export type DecodeOutcome = { ok: true; text: string } | { ok: false; messages: string[] };

export function decodeText(bytes: Uint8Array): DecodeOutcome {
  if (bytes.length > MAX_FILE_BYTES) return { ok: false, messages: [`is ${bytes.length} bytes; files on site-config media are limited to 1 MiB`] };
  if (looksUtf16(bytes)) return { ok: false, messages: ['is saved as UTF-16; save it as UTF-8'] };
  if (bytes.includes(0)) return { ok: false, messages: ['contains NUL bytes: it is binary data, not YAML or JSON text'] };
  let text: string;
  try {
    // ignoreBOM false: a leading UTF-8 byte-order mark (Windows editors) is dropped.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, messages: ['is not valid UTF-8 text (binary data, or saved in another encoding such as Latin-1/UTF-16?)'] };
  }
  // YAML 1.2 allows only printable characters plus tab, LF and CR (section 5.1).
  const ctl = controlCharIndex(text, true);
  if (ctl >= 0) {
    const { line, col } = lineCol(text, ctl);
    return { ok: false, messages: [`contains a control character (0x${text.charCodeAt(ctl).toString(16).padStart(2, '0')}) at line ${line}, column ${col}: binary data is not a site-config`] };
  }
  return { ok: true, text };
}

/** A UTF-16 byte-order mark, or text whose every other byte is NUL (UTF-16 without a mark, as Windows saves "Unicode"). */
function looksUtf16(bytes: Uint8Array): boolean {
  if (bytes[0]! + bytes[1]! === 0x1fd && bytes[0]! > 0xfd) return true;
  const sample = bytes.subarray(0, Math.min(bytes.length, 64) & ~1);
  const nulAt = (parity: number) => sample.length > 3 && sample.every((b, i) => (i % 2 === parity) === (b === 0));
  return nulAt(0) || nulAt(1);
}

/**
 * The first line where the text nests deeper than MAX_DEPTH: flow brackets outside quotes, plus block levels
 * read generously from the line's lead (two columns of indentation, or one "- ", per level). Measured before
 * parsing: the parser recurses, and a deep enough file would otherwise end in a stack overflow.
 */
export function tooDeepAt(text: string): number | undefined {
  let flow = 0;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const lead = /^[ -]*/.exec(lines[n]!)![0];
    const rest = lines[n]!.slice(lead.length);
    const block = flow > 0 || rest.startsWith('#') ? 0 : (lead.length + lead.split('-').length - 1) / 2;
    let quote = '';
    for (const ch of rest) {
      if (quote) quote = ch === quote ? '' : quote;
      else if (ch === '"' || ch === "'") quote = ch;
      else if (ch === '#') break;
      else if (ch === '[' || ch === '{') flow++;
      else if ((ch === ']' || ch === '}') && flow > 0) flow--;
      if (flow + block > MAX_DEPTH) return n + 1;
    }
    if (block > MAX_DEPTH) return n + 1;
  }
  return undefined;
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, col: offset - before.lastIndexOf('\n') };
}

/** Parses exactly one YAML 1.2 (or JSON) document into plain data. */
export function parseYamlText(text: string): ParseOutcome {
  const r = parseYamlDocuments(text, false);
  return r.ok ? { ok: true, value: r.values[0] } : r;
}

/**
 * Every YAML document of `text` (`---`-separated, as manifests come) into plain data, empty ones left out;
 * `many` false: exactly one document. The same refusals as a site-config file, per document.
 */
export function parseYamlDocuments(text: string, many = true): { ok: true; values: unknown[] } | { ok: false; messages: string[] } {
  const deepAt = tooDeepAt(text);
  if (deepAt !== undefined) return { ok: false, messages: [`line ${deepAt}: nested too deeply (limit ${MAX_DEPTH} levels)`] };
  const lines = new LineCounter();
  let docs: Document.Parsed[];
  try {
    // YAML 1.2 core, and !!binary, !!timestamp, !!set ... (non-JSON values) left unresolved: errors below.
    const parsed = parseAllYamlCore(text, { strict: true, prettyErrors: false, lineCounter: lines });
    docs = Array.isArray(parsed) ? parsed : [];
  } catch (e) {
    return { ok: false, messages: [e instanceof RangeError ? `is nested too deeply (limit ${MAX_DEPTH} levels)` : 'could not be parsed as YAML'] };
  }
  const at = (offset: number | undefined) => {
    if (offset === undefined) return '';
    const p = lines.linePos(offset);
    return `line ${p.line}, column ${p.col}: `;
  };
  if (docs.length === 0) return { ok: false, messages: ['is empty'] };
  if (docs.length > 1 && !many) {
    return { ok: false, messages: [`contains ${docs.length} YAML documents (separated by '---' at ${at(docs[1]!.range[0]).slice(0, -2)}); a site-config file holds exactly one`] };
  }
  const values: unknown[] = [];
  for (const doc of docs) {
    const one = documentValue(doc, text, at);
    if (!one.ok) return one;
    if (one.value !== null && one.value !== undefined) values.push(one.value);
  }
  return values.length === 0 ? { ok: false, messages: ['is empty'] } : { ok: true, values };
}

function documentValue(doc: Document.Parsed, text: string, at: (offset: number | undefined) => string): ParseOutcome {
  const messages: string[] = [];
  for (const err of doc.errors) {
    if (err.code === 'DUPLICATE_KEY') {
      // err.pos marks the start of the key; the key itself is the rest of that line up to its ':'.
      const line = text.slice(err.pos[0], text.indexOf('\n', err.pos[0]) < 0 ? undefined : text.indexOf('\n', err.pos[0]));
      const key = /^("[^"]*"|'[^']*'|[^:#]+?)\s*:/.exec(line)?.[1] ?? '';
      messages.push(`${at(err.pos[0])}duplicate key${key && key.length <= 80 ? ` '${key}'` : ''}: every key may appear only once in a mapping`);
    } else if (err.code === 'NON_STRING_KEY') {
      // A list, mapping or alias as a key: src/util/yaml.ts refuses it, with a message of its own.
      messages.push(`${at(err.pos[0])}${err.message}`);
    } else {
      // The yaml library appends a multi-line excerpt with a caret; every screen shows one line per problem.
      messages.push(`${at(err.pos[0])}syntax error: ${err.message.split('\n')[0]!.trim()}`);
    }
  }
  for (const w of doc.warnings) {
    const tag = /Unresolved tag: (.*)$/.exec(w.message);
    messages.push(tag ? `${at(w.pos[0])}unsupported YAML tag ${tag[1]}: only plain strings, numbers, booleans, lists and mappings are allowed` : `${at(w.pos[0])}${w.message}`);
  }
  if (messages.length > 0) return { ok: false, messages };
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.value === '__proto__') {
        // Would replace the object's prototype when converted to JavaScript data.
        messages.push(`${at(pair.key.range?.[0])}the key '__proto__' is not allowed`);
      }
    },
  });
  if (messages.length > 0) return { ok: false, messages };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    if (e instanceof RangeError) return { ok: false, messages: [`is nested too deeply (limit ${MAX_DEPTH} levels)`] };
    const msg = e instanceof Error ? e.message : '';
    if (/alias count/i.test(msg)) {
      return { ok: false, messages: [`uses YAML aliases that expand excessively (more than ${MAX_ALIAS_COUNT}; the 'billion laughs' resource-exhaustion pattern)`] };
    }
    if (/Unresolved alias/i.test(msg)) return { ok: false, messages: ['uses a YAML alias (*name) before its anchor (&name) is defined'] };
    return { ok: false, messages: ['could not be converted to data'] };
  }
  const shapeProblem = plainDataProblem(value);
  if (shapeProblem) return { ok: false, messages: [shapeProblem] };
  return { ok: true, value };
}

export function parseConfigBytes(bytes: Uint8Array): ParseOutcome {
  const decoded = decodeText(bytes);
  if (!decoded.ok) return decoded;
  return parseYamlText(decoded.text);
}

/** Iterative walk (no recursion: the depth is what is being checked) for depth and non-JSON values. */
function plainDataProblem(root: unknown): string | undefined {
  const stack: Array<{ value: unknown; path: PathSegment[] }> = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (path.length > MAX_DEPTH) return `is nested too deeply (limit ${MAX_DEPTH} levels; at ${formatPath(path.slice(0, 8))}...)`;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return `${formatPath(path) || 'the document'}: .inf and .nan are not allowed`;
      continue;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: [...path, i] }));
      continue;
    }
    if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) stack.push({ value: v, path: [...path, k] });
      continue;
    }
    return `${formatPath(path) || 'the document'}: unsupported value type (only strings, numbers, booleans, null, lists and mappings)`;
  }
  return undefined;
}
