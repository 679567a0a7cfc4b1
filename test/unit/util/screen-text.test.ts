// The one escaping rule for text a person reads (src/util/screen-text.ts, issue 27).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenJson, screenLine, terminalText } from '../../../src/util/screen-text';

test('control characters are shown as escapes: C0, DEL, C1, line/paragraph separators, bidi marks', () => {
  assert.equal(screenLine('a\nb\r\tc\x1b[2J\x07\x7f\x85\x9b'), 'a\\nb\\r\\tc\\x1b[2J\\x07\\x7f\\x85\\x9b');
  assert.equal(screenLine('x\u2028y\u2029z\u202eA\u2066B\u200fC\u061cD'), 'x\\u2028y\\u2029z\\u202eA\\u2066B\\u200fC\\u061cD');
  assert.equal(screenLine('the stick /dev/sdb1 (SITE-CONFIG) — ünïcödé, 日本, 👍'), 'the stick /dev/sdb1 (SITE-CONFIG) — ünïcödé, 日本, 👍');
});

// The seventh hostile re-test of issue 36: two sticks whose site names differed only by characters that show nothing
// were named alike on every screen ("store-0042" and "store-0042"), so the technician could not tell which to pull.
test('characters that show nothing are shown as escapes: zero-width, word joiner, invisible operators, BOM, soft hyphen', () => {
  const invisible = '\u200b\u200c\u200d\u2060\u2064\u206a\ufeff\u180e\u00ad\ufff9';
  assert.equal(screenLine(`store-0042${invisible}`), 'store-0042\\u200b\\u200c\\u200d\\u2060\\u2064\\u206a\\ufeff\\u180e\\xad\\ufff9');
  assert.equal(terminalText(`store-0042${invisible}\n`), 'store-0042\\u200b\\u200c\\u200d\\u2060\\u2064\\u206a\\ufeff\\u180e\\u00ad\\ufff9\n');
  const json = JSON.stringify({ site: `store-0042${invisible}` });
  assert.equal(JSON.parse(screenJson(json)).site, `store-0042${invisible}`, 'the same value');
  assert.doesNotMatch(screenJson(json), /[\u200b\u2060\ufeff]/);
});

test('a line is bounded with an ellipsis, never cutting a character in two', () => {
  assert.equal(screenLine('x'.repeat(20), 10), `${'x'.repeat(9)}…`);
  assert.equal(screenLine('x'.repeat(10), 10), 'x'.repeat(10));
  const cut = screenLine(`${'x'.repeat(8)}👍👍`, 10);
  assert.equal(cut, `${'x'.repeat(8)}…`);
  // The escape counts: a name of newlines cannot hide past the bound either.
  assert.equal(screenLine('\n'.repeat(10), 9), `${'\\n'.repeat(4)}…`);
});

test('terminal text keeps its own lines and tabs, and escapes the rest', () => {
  assert.equal(terminalText('Phase: x\n\tname\x1b]0;t\x07\n'), 'Phase: x\n\tname\\x1b]0;t\\x07\n');
  // validate --json prints what JSON.stringify leaves raw (C1, DEL): the escape must keep it valid JSON.
  const json = JSON.stringify({ message: "label 'next\x85line'\x7f" }, null, 2);
  assert.deepEqual(JSON.parse(terminalText(json)), { message: "label 'next\x85line'\x7f" });
});

test('JSON stays the same value, as valid JSON without a raw control character', () => {
  const value = { name: 'a\n\x1b\x7f\x9b\u2028\u202e' };
  const shown = screenJson(JSON.stringify(value, null, 2));
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  assert.doesNotMatch(shown.replace(/\n/g, ''), /[\u0000-\u001f\u007f-\u009f\u2028\u202e]/);
  assert.deepEqual(JSON.parse(shown), value);
});
