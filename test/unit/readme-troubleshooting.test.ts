// Every message docs/troubleshooting.md quotes (the README's Troubleshooting until issue 40) is one the program
// can print (issue 20: quoted texts the program never printed sent people the wrong way). A quote is the
// backticked text of the table's first column; its variable parts are written `…` or `<name>`. Each literal
// piece between them must stand in the program's own source — src/ (and the podman launcher it renders) — where
// template expressions count as variable parts too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../support/bundle';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [readFileSync(p, 'utf8')] : [];
  });
}

/** The source as text a message can be found in: template expressions become the variable-part marker. */
function searchable(text: string): string {
  return text.replace(/\$\{(?:[^{}]|\{[^{}]*\})*\}/g, '\u0000').replace(/\\`/g, '`');
}

/** The literal pieces of a quote: split at …, <placeholders> and example values people replace. */
export function literalPieces(quote: string): string[] {
  return quote
    .split(/…|<[^>]+>|\bN\b/)
    .map((p) => p.trim())
    .filter((p) => p.length >= 6);
}

/** The quotes in the first column of the table of messages (the rows under its `| message …` header). */
function troubleshootingQuotes(doc: string): string[] {
  const lines = doc.split('\n');
  const header = lines.findIndex((l) => l.startsWith('| message '));
  const end = lines.findIndex((l, i) => i > header && !l.startsWith('|'));
  const rows = header < 0 ? [] : lines.slice(header + 1, end < 0 ? undefined : end).filter((l) => !l.startsWith('|---'));
  return rows.flatMap((row) => [...(row.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

test('every message quoted in docs/troubleshooting.md is one the program can print', () => {
  const quotes = troubleshootingQuotes(readFileSync(path.join(PROJECT_ROOT, 'docs', 'troubleshooting.md'), 'utf8'));
  assert.ok(quotes.length >= 15, `found ${quotes.length} quoted messages`);
  const src = searchable(sources(path.join(PROJECT_ROOT, 'src')).join('\n'));
  const missing = quotes.flatMap((q) => literalPieces(q).filter((piece) => !src.includes(piece)).map((piece) => `"${piece}" (from \`${q}\`)`));
  assert.deepEqual(missing, [], `quoted in docs/troubleshooting.md but printed nowhere in src/:\n${missing.join('\n')}`);
});

test('the check finds a quote the program never prints', () => {
  const src = searchable('throw new StepError(`the site network did not verify and was rolled back (attempt ${n} of ${max})`, remedy);');
  assert.ok(literalPieces('the site network did not verify and was rolled back (attempt N of 3)').every((p) => src.includes(p)));
  assert.ok(!literalPieces('the site network could not be applied').every((p) => src.includes(p)));
});
