// src/util/yaml.ts: YAML 1.2 core whatever the document asks, explicit tags left as the text they tag, and no
// caller can loosen that (the node bundle has no YAML 1.1 types to fall back on: esbuild.config.mjs).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseAllYamlCore, parseYamlCore } from '../../../src/util/yaml';

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
