// Every relative link in README.md and docs/*.md leads somewhere (issue 40): the file or folder exists, and an
// anchor names a heading of the file it points into, as GitHub renders heading anchors — lowercase, punctuation
// dropped, each space a hyphen, a repeated heading -1, -2 … (github-slugger, which github.com and most renderers
// use; test/support/markdown.ts). The guides moved out of the README into docs/; a link left pointing at the old
// place fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../support/bundle';
import { anchors, brokenLinks, slug, type Tree } from '../../support/markdown';

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
      'Broken: [gone](docs/gone.md), [no such heading](docs/guide.md#notes-2), [outside](../elsewhere/notes.md),',
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
    'README.md:5: ../elsewhere/notes.md leads outside the repository',
    'README.md:6: #usage: README.md has no heading with the anchor #usage',
  ]);
  assert.deepEqual(check('docs/guide.md'), []);
});
