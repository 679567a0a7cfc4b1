// src/util/yaml.ts: YAML 1.2 core whatever the document asks, explicit tags left as the text they tag, and no
// caller can loosen that (the node bundle has no YAML 1.1 types to fall back on: esbuild.config.mjs); a list,
// mapping or alias as a key refused before conversion (the node bundle has no yaml stringify either); and
// emitYaml, the node code's one YAML writer, whose output every reader decodes to the data it was given.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import { emitYaml, parseAllYamlCore, parseYamlCore } from '../../../src/util/yaml';

describe('parseYamlCore / parseAllYamlCore', () => {
  test('a %YAML 1.1 document is read as YAML 1.2 core: yes, on and 0777 are what they say in 1.2', () => {
    assert.deepEqual(parseYamlCore('%YAML 1.1\n---\na: yes\nb: on\nc: 0777\nd: true\ne: 0o17\n'), { a: 'yes', b: 'on', c: 777, d: true, e: 15 });
  });

  test('explicit YAML 1.1 tags stay the text they tag, and nothing is printed', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', "import('./src/util/yaml.ts').then((m) => process.stdout.write(JSON.stringify(m.parseYamlCore('a: !!binary aGk=\\nb: !!timestamp 2001-12-14\\nc: !!set {x, y}\\n'))))"], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { a: 'aGk=', b: '2001-12-14', c: { x: null, y: null } });
    assert.equal(run.stderr, '', 'no yaml warning on stderr');
  });

  test('<< is an ordinary key', () => {
    assert.deepEqual(parseYamlCore('a: &x {k: 1}\nb:\n  <<: *x\n'), { a: { k: 1 }, b: { '<<': { k: 1 } } });
  });

  test("the caller's options cannot bring the YAML 1.1 schema back", () => {
    const docs = parseAllYamlCore('%YAML 1.1\n---\na: yes\n', { schema: 'yaml-1.1', version: '1.1' } as unknown as Parameters<typeof parseAllYamlCore>[1]);
    assert.ok(Array.isArray(docs));
    assert.deepEqual(docs.map((d) => d.toJS() as unknown), [{ a: 'yes' }]);
  });
});

describe('parseYamlCore / parseAllYamlCore: a key must be a scalar', () => {
  // Converting such a key to a plain object is where yaml's parse reaches its stringify code (addPairToJSMap.js),
  // which the node bundle does not have: the refusal comes first, with where it is.
  for (const [text, what, line, col] of [
    ['a: 1\n? [x, y]\n: c\n', 'a list or mapping', 2, 3],
    ['a: {[x]: 1}\n', 'a list or mapping', 1, 5],
    ['a: 1\n? {k: v}\n: c\n', 'a list or mapping', 2, 3],
    ['a: &s [x]\n*s : c\n', 'an alias', 2, 1],
  ] as const) {
    test(`${JSON.stringify(text)}: ${what}, at line ${line}`, () => {
      assert.throws(() => parseYamlCore(text), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'NON_STRING_KEY');
        assert.equal(e.message, `a mapping key must be a plain string, not ${what} at line ${line}, column ${col}`);
        return true;
      });
      const docs = parseAllYamlCore(text, {});
      assert.ok(Array.isArray(docs));
      assert.deepEqual(docs[0]!.errors.map((e) => [e.code, e.message]), [['NON_STRING_KEY', `a mapping key must be a plain string, not ${what}`]]);
    });
  }

  test('scalar keys of every kind still read as before', () => {
    assert.deepEqual(parseYamlCore('1: a\ntrue: b\n"q": c\n? plain\n: d\n'), { 1: 'a', true: 'b', q: 'c', plain: 'd' });
  });
});

/** Strings that any YAML writer can get wrong when it writes them plain. */
const NASTY = ['yes', 'no', 'on', 'off', 'y', 'N', 'True', 'null', 'Null', '~', '', ' ', '1e3', '0x1F', '0o17', '017', '1_000', '12:30', '.inf', '-.inf', '.nan', '-', '- x', ': ', 'a: b', '#', 'a #b', '? x', '[a]', '{a}', '*x', '&x', '!x', '%x', '@x', '`x', '|', '>', "'", '"', '\\', '\\"', '  leading', 'trailing  ', 'line\nbreak', 'tab\there', 'cr\rlf', '\n', 'é ü 😀 中文', '\u00a0nbsp', '\u0085 \u2028 \u2029', '\ufeffbom', '\x7f\x9f', '\x00\x01\x08\x1b', '\ud800 lone', '---', '...', '<<', '=', '2001-12-14'];

describe('emitYaml', () => {
  test('writes block style, two spaces, list items indented under their key, every string a JSON string', () => {
    const text = emitYaml({ interfaces: [{ name: 'eth0', state: 'up', ipv4: { enabled: true, address: [{ ip: '192.0.2.10', 'prefix-length': 24 }] } }], 'dns-resolver': { config: { server: ['192.0.2.1'] } }, empty: [], none: {}, gone: undefined, nothing: null });
    assert.equal(
      text,
      [
        'interfaces:',
        '  - name: "eth0"',
        '    state: "up"',
        '    ipv4:',
        '      enabled: true',
        '      address:',
        '        - ip: "192.0.2.10"',
        '          prefix-length: 24',
        'dns-resolver:',
        '  config:',
        '    server:',
        '      - "192.0.2.1"',
        'empty: []',
        'none: {}',
        'nothing: null',
        '',
      ].join('\n'),
    );
  });

  test('every nasty string reads back as itself, as a value, a key and a list item, with YAML 1.2 and with YAML 1.1 rules', () => {
    for (const s of NASTY) {
      const data = { value: s, [s]: 'key', list: [s, [s, [s]]], nested: { [s]: { [s]: s } } };
      const text = emitYaml(data);
      assert.deepStrictEqual(parseYamlCore(text), data, `YAML 1.2 core: ${JSON.stringify(s)} in\n${text}`);
      // go-yaml v2 (kubectl, oc) and yaml's own 1.1 schema read y/n/on/off and sexagesimals differently.
      assert.deepStrictEqual(parse(text, { version: '1.1' }), data, `YAML 1.1: ${JSON.stringify(s)} in\n${text}`);
      const line = text.split('\n').find((l) => l.startsWith('value: '))!;
      assert.equal(JSON.parse(line.slice('value: '.length)), s, 'a value is a JSON string');
      // Only escapes every reader knows (rmsd-yaml has no \\" or \\b), and no raw character a reader changes
      // (nmstatectl turns a no-break space into a space) or may take for a line break (U+0085, U+2028, U+2029).
      // eslint-disable-next-line no-control-regex -- the control characters are what must not appear raw
      assert.match(line, /^value: "(?:[^"\\\x00-\x1f\x7f-\xa0\u2028\u2029\ufeff\ufffe\uffff]|\\[\\nrtf]|\\u[0-9a-f]{4})*"$/, JSON.stringify(s));
    }
  });

  test('a key is written plain only when it is a word no YAML reader takes for anything else', () => {
    const keys = (data: Record<string, unknown>) => emitYaml(data).split('\n').filter(Boolean).map((l) => l.slice(0, l.lastIndexOf(':')));
    assert.deepEqual(keys({ name: 1, 'prefix-length': 1, 'node-role.kubernetes.io/master': 1, _x: 1, current_context: 1 }), ['name', 'prefix-length', 'node-role.kubernetes.io/master', '_x', 'current_context']);
    assert.deepEqual(keys({ yes: 1, ON: 1, n: 1, null: 1, True: 1, '1': 1, '': 1, 'a b': 1, '-x': 1, '.inf': 1 }), ['"1"', '"yes"', '"ON"', '"n"', '"null"', '"True"', '""', '"a b"', '"-x"', '".inf"']);
  });

  test('numbers, booleans and null read back exactly (-0, large and tiny numbers, .inf, .nan)', () => {
    const data = [0, -0, 1, -1, 1.5, 1e21, 1e-7, 2 ** 53, Number.MAX_VALUE, Infinity, -Infinity, NaN, true, false, null];
    assert.deepStrictEqual(parseYamlCore(emitYaml(data)), data);
    assert.deepStrictEqual(parseYamlCore(emitYaml({ data })), { data });
  });

  test('empty and nested collections: [], {}, lists of lists, lists of maps, a scalar document', () => {
    for (const data of [[], {}, [[]], [{}], [[[1], []], [{ a: [] }]], { a: [[{ b: [[]] }]] }, 'text', 42, null, [[['deep']]], [{ a: 1, b: [{ c: {} }] }]]) {
      assert.deepStrictEqual(parseYamlCore(emitYaml(data)), data, JSON.stringify(data));
    }
    assert.deepStrictEqual(parseYamlCore(emitYaml([undefined, 1])), [null, 1], 'undefined in a list is null, as JSON has it');
  });

  test('refuses what is not plain data, in words', () => {
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    for (const value of [new Date(0), new Map(), () => 1, Symbol('s'), 1n, undefined, { a: new Uint8Array(1) }, loop]) {
      assert.throws(() => emitYaml(value), TypeError, String(typeof value));
    }
  });
});

// The key check is the agent's own (linear; yaml's compared every key with every earlier one: minutes for a 1 MiB
// file, the third hostile re-test of issue 36): keys are equal when their values are, as in yaml's mapIncludes.
test('a key given twice is refused at its second place, keys compared by value as yaml does; 90,000 distinct keys are read', () => {
  const twice = (text: string) => assert.throws(() => parseYamlCore(text), (e: Error) => /^Map keys must be unique at line \d+, column \d+$/.test(e.message), text);
  twice('a: 1\nb: 2\na: 3\n');
  twice('1: a\n1.0: b\n');
  twice('? \n: a\n? \n: b\n');
  twice('x: {k: 1, k: 2}\n');
  twice('x:\n  - {a: 1}\n  - {b: 1, b: 2}\n');
  assert.throws(() => parseYamlCore('a: 1\nb: 2\na: 3\n'), /at line 3, column 1$/);
  assert.deepEqual(parseYamlCore("1: a\n'1': b\ntrue: c\n'true': d\n"), { 1: 'b', true: 'd' }, 'a number and a string are two keys to yaml (in plain data the later one wins, as in JSON)');
  const many = Array.from({ length: 90_000 }, (_, i) => `k${i}: ${i}`).join('\n');
  assert.equal(Object.keys(parseYamlCore(many) as object).length, 90_000);
});
