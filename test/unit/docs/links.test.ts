// Every relative link in README.md and docs/*.md leads somewhere (issue 40): the file or folder exists, and an
// anchor names a heading of the file it points into, as GitHub renders heading anchors — lowercase, punctuation
// dropped, each space a hyphen, a repeated heading -1, -2 … (github-slugger, which github.com and most renderers
// use). The guides moved out of the README into docs/; a link left pointing at the old place fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../support/bundle';

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

/** Every anchor a markdown text offers: its headings' slugs (repeats numbered as GitHub does) and HTML ids. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slug(headingText(heading));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]!);
  }
  return found;
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

const DOCS = path.join(PROJECT_ROOT, 'docs');
const FILES = ['README.md', ...readdirSync(DOCS).filter((n) => n.endsWith('.md')).sort().map((n) => `docs/${n}`)];

const PROJECT: Tree = {
  exists: (rel) => existsSync(path.join(PROJECT_ROOT, rel)),
  read: (rel) => {
    const p = path.join(PROJECT_ROOT, rel);
    return existsSync(p) && statSync(p).isFile() ? readFileSync(p, 'utf8') : undefined;
  },
};

test('every relative link and anchor in README.md and docs/*.md resolves', () => {
  assert.ok(FILES.length > 5, `checked ${FILES.join(', ')}`);
  const broken = FILES.flatMap((f) => brokenLinks(PROJECT, f));
  assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
});

test('anchors are made as GitHub makes them', () => {
  assert.equal(slug('Measured (npm run bench, ~5 min, 2-core VM)'), 'measured-npm-run-bench-5-min-2-core-vm');
  assert.equal(slug('What unsigned media can and cannot do, and why'), 'what-unsigned-media-can-and-cannot-do-and-why');
  assert.equal(slug('4. What the agent does (src/network/, src/steps/network.ts)'), '4-what-the-agent-does-srcnetwork-srcstepsnetworkts');
  assert.equal(slug('Tests — what runs where'), 'tests--what-runs-where');
  assert.equal(slug('spec_ok Größe'), 'spec_ok-größe');
  const doc = ['# Guide', '## `spec.match`', '## Notes', '```', '## Notes', '```', '## Notes', '### *Why* [this](x.md)'].join('\n');
  assert.deepEqual([...anchors(doc)], ['guide', 'specmatch', 'notes', 'notes-1', 'why-this']);
});

test('the check finds a missing file, a missing anchor and a link that leaves the repository, and passes good links', () => {
  const files: Record<string, string> = {
    'README.md': [
      '# Project',
      '',
      'Read [the guide](docs/guide.md), [its notes](docs/guide.md#notes), [the second notes](docs/guide.md#notes-1),',
      '[the top](#project), [the examples](examples/) and [the web](https://example.com/x.md#nothing).',
      'Broken: [gone](docs/gone.md), [no such heading](docs/guide.md#notes-2), [outside](../shared/DESIGN.md),',
      '[no anchor here](#usage), and not a link: `[code](docs/missing.md)`.',
      '```',
      '[in a code block](docs/missing-too.md)',
      '```',
    ].join('\n'),
    'docs/guide.md': '# Guide\n\n## Notes\n\n## Notes\n\nBack to [the README](../README.md#project).\n',
  };
  const tree: Tree = { exists: (rel) => rel in files || rel === 'examples', read: (rel) => files[rel] };
  const check = (file: string): string[] => brokenLinks(tree, file);
  assert.deepEqual(check('README.md'), [
    'README.md:5: docs/gone.md: no such file or folder docs/gone.md',
    'README.md:5: docs/guide.md#notes-2: docs/guide.md has no heading with the anchor #notes-2',
    'README.md:5: ../shared/DESIGN.md leads outside the repository',
    'README.md:6: #usage: README.md has no heading with the anchor #usage',
  ]);
  assert.deepEqual(check('docs/guide.md'), []);
});
