import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_FILE_BYTES, parseConfigBytes, parseYamlText } from '../../../src/siteconfig/parse-text';

const ok = (text: string | Buffer) => {
  const r = parseConfigBytes(typeof text === 'string' ? Buffer.from(text) : text);
  assert.ok(r.ok, r.ok ? '' : r.messages.join('; '));
  return r.value;
};
const fails = (text: string | Buffer, pattern: RegExp) => {
  const r = parseConfigBytes(typeof text === 'string' ? Buffer.from(text) : text);
  assert.ok(!r.ok, 'expected a failure');
  assert.ok(r.messages.some((m) => pattern.test(m)), r.messages.join('; '));
};

test('YAML 1.2 core schema: MAC addresses, no/yes and octal-looking strings stay as written', () => {
  assert.deepEqual(ok('mac: 52:54:00:12:34:56\nanswer: no\nhex: 0x30\n'), { mac: '52:54:00:12:34:56', answer: 'no', hex: 48 });
});

test('JSON, a UTF-8 byte-order mark and CRLF line ends are accepted', () => {
  assert.deepEqual(ok('{"a": [1, "b"]}'), { a: [1, 'b'] });
  assert.deepEqual(ok(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a: 1\r\nb: 2\r\n')])), { a: 1, b: 2 });
});

test('hostile or ambiguous input is refused with a clear reason', () => {
  fails(Buffer.alloc(MAX_FILE_BYTES + 1, 0x61), /limited to 1 MiB/);
  fails(Buffer.from([0x61, 0x3a, 0x00]), /NUL bytes/);
  fails(Buffer.from([0x61, 0x3a, 0x20, 0xe9]), /not valid UTF-8/);
  fails('a: b\x1bc\n', /control character \(0x1b\) at line 1, column 5/);
  fails('{"a": 1, "a": 2}', /duplicate key '"a"'/);
  fails('a: 1\n---\nb: 2\n', /contains 2 YAML documents/);
  fails('? [a, b]\n: c\n', /mapping key must be a plain string/);
  fails('a: &x 1\n*x : 2\n', /not an alias/);
  fails('a: *nothing\n', /before its anchor/);
  fails('a: !!set {x}\n', /unsupported YAML tag/);
  fails('a: !custom x\n', /unsupported YAML tag !custom/);
  fails('a: .inf\n', /\.inf and \.nan are not allowed/);
  fails('', /is empty/);
  fails('~\n', /is empty/);
  fails(`a: ${'['.repeat(80)}${']'.repeat(80)}\n`, /^line 1: nested too deeply \(limit 64 levels\)$/);
  fails('__proto__: {x: 1}\n', /'__proto__' is not allowed/);
});

test('a few aliases are fine; an exponential expansion is not', () => {
  assert.deepEqual(parseYamlText('base: &b {mtu: 9000}\nx: *b\ny: *b\n'), { ok: true, value: { base: { mtu: 9000 }, x: { mtu: 9000 }, y: { mtu: 9000 } } });
  const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 8; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
  fails(`${levels.join('\n')}\n`, /billion laughs/);
});

test('deep nesting is refused before parsing, in words, however large the file (not a stack overflow)', () => {
  const flow = `a: ${'['.repeat(400_000)}${']'.repeat(400_000)}\n`;
  fails(flow, /^line 1: nested too deeply \(limit 64 levels\)$/);
  const block = Array.from({ length: 200 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n');
  fails(`${block} x\n`, /^line 66: nested too deeply \(limit 64 levels\)$/);
  const items = Array.from({ length: 100 }, (_, i) => `${'  '.repeat(i)}- `).join('\n');
  fails(`${items}x\n`, /nested too deeply \(limit 64 levels\)/);
  // Brackets in quotes and comments are text, and a real nmstate-sized depth is fine.
  assert.deepEqual(ok(`a: "${'['.repeat(100)}" # ${'{'.repeat(100)}\nb:\n  - c:\n      - [d, {e: f}]\n`), { a: '['.repeat(100), b: [{ c: [['d', { e: 'f' }]] }] });
});

test('a file saved as UTF-16 (with or without a byte-order mark) is told to be saved as UTF-8', () => {
  const text = 'apiVersion: sno-reconfigure.io/v1\n';
  for (const bytes of [Buffer.from(`\ufeff${text}`, 'utf16le'), Buffer.from(text, 'utf16le'), Buffer.from(`\ufeff${text}`, 'utf16le').swap16()]) {
    fails(bytes, /^is saved as UTF-16; save it as UTF-8$/);
  }
});
