// The inventory of `media build`: CSV (RFC 4180 quoting) or YAML rows, and the template's ${column} filling,
// with the row named in every refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BuildError, fillTemplate, parseInventory } from '../../../src/workstation/media-build';

test('CSV: a header, one row per site; quoted fields keep commas, quotes and line breaks; CRLF and blank lines are fine', () => {
  const rows = parseInventory('name,serial,note\r\nstore-0001,SER1,"a, b"\r\n\r\nstore-0002,SER2,"say ""hi""\nthere"\n', 'sites.csv');
  assert.deepEqual(rows, [
    { row: 1, values: { name: 'store-0001', serial: 'SER1', note: 'a, b' } },
    { row: 2, values: { name: 'store-0002', serial: 'SER2', note: 'say "hi"\nthere' } },
  ]);
  assert.throws(() => parseInventory('name,serial\nstore-0001\n', 'sites.csv'), (e: Error) => e instanceof BuildError && e.message === 'row 1: 1 columns, but the header has 2');
  assert.throws(() => parseInventory('', 'sites.csv'), /the CSV inventory is empty/);
});

test('YAML: "sites:" or a bare list of maps; numbers become text; a nested value is refused', () => {
  assert.deepEqual(parseInventory('sites:\n  - {name: store-0001, vlan: 42}\n', 'sites.yaml'), [{ row: 1, values: { name: 'store-0001', vlan: '42' } }]);
  assert.deepEqual(parseInventory('- {name: a}\n', 'sites.yml'), [{ row: 1, values: { name: 'a' } }]);
  assert.throws(() => parseInventory('sites:\n  - {name: a, dns: [1.1.1.1]}\n', 'sites.yaml'), /sites\.yaml: site 1, dns: a value must be a string or a number, not a list/);
  assert.throws(() => parseInventory('name: a\n', 'sites.yaml'), /expected a list of sites/);
});

test('the template takes every ${column}; what a row lacks is named with the row', () => {
  const row = { row: 3, values: { name: 'store-0003', domain: 'store3.example.com', empty: '' } };
  assert.equal(fillTemplate('name: ${name}\nbaseDomain: ${domain}\n', row), 'name: store-0003\nbaseDomain: store3.example.com\n');
  assert.throws(() => fillTemplate('${name} ${gateway} ${empty} ${gateway}', row), (e: Error) => e.message === 'row 3 (store-0003): the template needs ${gateway}, ${empty}, which this row does not give');
});
