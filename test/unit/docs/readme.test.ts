// The README is what a newcomer reads first (issue 40): short, the two commands on its first screen, and a
// "you are… read…" table from which every guide that moved to docs/ is one click away — each page, and each of
// its sections (## and ###), by its anchor. A section added to one of those pages without a row in the table fails
// here, as does a README that grows back into the guides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../support/bundle';
import { anchors, headings, links } from '../../support/markdown';

/** The pages the README's guides moved to; each is one click from the table, and so is each of its sections. */
const GUIDES = ['factory', 'writing-site-configs', 'site', 'technician-card', 'fleet', 'troubleshooting', 'development'].map((n) => `docs/${n}.md`);

const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
const lines = readme.split('\n');

/** The README's "you are… read…" table: the section after its heading, up to the next heading. */
export function readersTable(text: string): string {
  const section = text.split(/^## You are… read…$/m)[1];
  return section?.split(/^#{1,2} /m)[0] ?? '';
}

/** What a guide page lacks in the table: the page itself or a section's anchor. */
export function unreachable(table: string, page: string, markdown: string): string[] {
  const targets = new Set(links(table).map((l) => l.target));
  const wanted = [page, ...headings(markdown).filter((h) => h.level === 2 || h.level === 3).map((h) => `${page}#${h.anchor}`)];
  return wanted.filter((t) => !targets.has(t) && !(t === page && [...targets].some((x) => x.startsWith(`${page}#`))));
}

test('the README fits on a few screens, with the two commands and the supported releases on its first', () => {
  assert.ok(lines.length <= 300, `README.md has ${lines.length} lines; at most 300`);
  for (const command of ['npm run demo', 'npm test']) {
    const at = lines.findIndex((l) => l.includes(command));
    assert.ok(at >= 0 && at < 40, `"${command}" is on line ${at + 1}; it belongs in the first 40`);
  }
  const releases = lines.findIndex((l) => /4\.14 to 4\.22/.test(l));
  assert.ok(releases >= 0 && releases < 60, `the supported releases are on line ${releases + 1}; they belong on the first screen`);
  const table = lines.findIndex((l) => l === '## You are… read…');
  assert.ok(table >= 0 && table < 60, 'the "you are… read…" table starts on the first screen');
});

test('every guide that moved to docs/, and each of its sections, is one click from the README\'s table', () => {
  const table = readersTable(readme);
  for (const reader of ['platform engineer', 'technician', 'developer']) assert.ok(table.includes(`**${reader}**`), `the table has a row for the ${reader}`);
  const missing = GUIDES.flatMap((page) => unreachable(table, page, readFileSync(path.join(PROJECT_ROOT, page), 'utf8')));
  assert.deepEqual(missing, [], `not linked from the README's "You are… read…" table:\n${missing.join('\n')}`);
});

test('the README keeps what is untested here and why each dependency was added', () => {
  const own = anchors(readme);
  for (const section of ['what-is-not-tested-here', 'dependencies-and-why']) {
    assert.ok(own.has(section), `README.md has the section #${section}`);
    assert.ok(links(readersTable(readme)).some((l) => l.target === `#${section}`), `the table links #${section}`);
  }
});

test('the check names a page or a section the table does not reach', () => {
  const page = '# Guide\n\n## First\n\ntext\n\n### Detail\n\n```\n## not a heading\n```\n\n## First\n';
  assert.deepEqual(unreachable('| you | [guide](docs/g.md#first), [detail](docs/g.md#detail) |', 'docs/g.md', page), ['docs/g.md#first-1']);
  assert.deepEqual(unreachable('| you | [guide](docs/other.md) |', 'docs/g.md', page), ['docs/g.md', 'docs/g.md#first', 'docs/g.md#detail', 'docs/g.md#first-1']);
  assert.deepEqual(unreachable('| you | [card](docs/card.md) |', 'docs/card.md', '# Card\n\ntext\n'), []);
});
