// Problem collection and the field-path notation of the site-config contract (DESIGN.md section 3):
// `spec.network.nmstate.interfaces[0].ipv4.address[0].ip`; keys that are not plain identifiers are quoted,
// e.g. `spec.pullSecret.auths["quay.io"].auth`.
import type { ValidationProblem } from './types';

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_KEY.test(seg) && seg.length <= 100) out += out === '' ? seg : `.${seg}`;
    // A hostile file's megabyte-long key must not become a megabyte-long path.
    else out += `[${JSON.stringify(seg.length > 100 ? `${seg.slice(0, 100)}…` : seg)}]`;
  }
  return out;
}

/** Appends segments to an already formatted path. */
export function subPath(base: string, ...segments: PathSegment[]): string {
  const tail = formatPath(segments);
  if (base === '') return tail;
  if (tail === '') return base;
  return tail.startsWith('[') ? `${base}${tail}` : `${base}.${tail}`;
}

/** Errors and warnings found while validating, in the order they were found. */
export class Findings {
  readonly errors: ValidationProblem[] = [];
  readonly warnings: ValidationProblem[] = [];
  /** What a person checking media wants to know that is neither wrong nor risky (who a sealed file is for, which key signed). */
  readonly notes: ValidationProblem[] = [];

  error(path: string, message: string): void {
    this.errors.push({ path, message });
  }

  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  note(path: string, message: string): void {
    this.notes.push({ path, message });
  }

  addAll(other: { errors: readonly ValidationProblem[]; warnings: readonly ValidationProblem[] }): void {
    this.errors.push(...other.errors);
    this.warnings.push(...other.warnings);
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }
}

/**
 * At most this many problems of one kind are listed for a file, and one more line says how many are not: a hostile
 * site-config's 36,000 unknown keys were 36,000 lines, 8 MB of journal, for one stick (issue 36, third re-test).
 */
const LISTED = 100;

export function listed(problems: ValidationProblem[]): ValidationProblem[] {
  if (problems.length <= LISTED) return problems;
  return [...problems.slice(0, LISTED), { path: problems[LISTED]!.path, message: `and ${problems.length - LISTED} more from here on are not listed: correct the ones above and check the file again` }];
}

/** `"a", "b" or "c"` for messages. */
export function listForHumans(items: readonly string[], conjunction = 'or'): string {
  const quoted = items.map((i) => `'${i}'`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} ${conjunction} ${quoted[quoted.length - 1]}`;
}

/** What a JSON/YAML value is, for "expected X, got Y" messages (never the value itself: it may be a secret). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Index of the first C0 control character or DEL in `text` (tab, LF and CR allowed when `allowWhitespace`), or -1.
 * A loop rather than a regular expression: lint forbids control characters in patterns (no-control-regex).
 */
export function controlCharIndex(text: string, allowWhitespace = false): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 || c === 0x7f) && !(allowWhitespace && (c === 0x09 || c === 0x0a || c === 0x0d))) return i;
  }
  return -1;
}
