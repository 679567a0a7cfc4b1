// Markdown as GitHub renders it, for the tests that hold README.md and docs/ together (issue 40): the links of a
// text, the anchors its headings get (github-slugger, which github.com and most renderers use: lowercase,
// punctuation dropped, each space a hyphen, a repeated heading -1, -2 …) and what is wrong with a file's links.
import * as path from 'node:path';

/** The text outside fenced code blocks, line by line; a fenced line is blanked so line numbers stay. */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const opener = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) {
      if (opener === undefined) return line;
      fence = opener;
      return '';
    }
    if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length && line.trim() === opener) fence = undefined;
    return '';
  });
}

/** A heading's text as a reader sees it: inline code, links, emphasis and HTML reduced to their text. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__|\*|_)(\S(?:.*?\S)?)\1/g, '$2');
}

/** GitHub's anchor for a heading text (github-slugger: lowercase, drop all but letters, marks, digits, `_`, `-` and spaces, spaces to `-`). */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

export interface Heading {
  level: number;
  anchor: string;
}

/** The headings of a markdown text (outside code blocks) with their anchors, repeats numbered as GitHub does. */
export function headings(markdown: string): Heading[] {
  const seen = new Map<string, number>();
  return proseLines(markdown).flatMap((line) => {
    const m = /^ {0,3}(#{1,6})\s+(.*)$/.exec(line);
    if (m === null) return [];
    const base = slug(headingText(m[2]!));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return [{ level: m[1]!.length, anchor: n === 0 ? base : `${base}-${n}` }];
  });
}

/** Every anchor a markdown text offers: its headings' and its HTML anchors' (`<a id="…">`). */
export function anchors(markdown: string): Set<string> {
  const ids = proseLines(markdown).flatMap((line) => [...line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)].map((m) => m[1]!));
  return new Set([...headings(markdown).map((h) => h.anchor), ...ids]);
}

export interface Link {
  line: number;
  target: string;
}

/** The inline links and images of a markdown text, outside code blocks and code spans; link text may wrap. */
export function links(markdown: string): Link[] {
  const prose = proseLines(markdown).join('\n').replace(/`[^`]*`/g, (span) => span.replace(/[^\n]/g, ' '));
  return [...prose.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({
    line: prose.slice(0, m.index).split('\n').length + (m[0].slice(0, m[0].lastIndexOf('](')).split('\n').length - 1),
    target: m[1]!,
  }));
}

/** A tree of files by their paths relative to its root: whether a file or folder exists, and a file's text. */
export interface Tree {
  exists(rel: string): boolean;
  read(rel: string): string | undefined;
}

/** What is wrong with each relative link of `file` (a path in `tree`). */
export function brokenLinks(tree: Tree, file: string): string[] {
  const read = (rel: string): string | undefined => tree.read(rel);
  const text = read(file);
  if (text === undefined) return [`${file}: cannot be read`];
  return links(text).flatMap(({ line, target }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return []; // https:, mailto: … — not this test's business
    const hash = target.indexOf('#');
    const filePart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const where = `${file}:${line}: ${target}`;
    const rel = filePart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), filePart)).replace(/(.)\/$/, '$1');
    if (rel.startsWith('../') || rel === '..') return [`${where} leads outside the repository`];
    if (filePart !== '' && !tree.exists(rel)) return [`${where}: no such file or folder ${rel}`];
    if (anchor === undefined || anchor === '') return [];
    if (!rel.endsWith('.md')) return [`${where}: an anchor into ${rel}, which is not markdown`];
    const targetText = read(rel);
    if (targetText === undefined) return [`${where}: ${rel} cannot be read`];
    return anchors(targetText).has(anchor) ? [] : [`${where}: ${rel} has no heading with the anchor #${anchor}`];
  });
}
