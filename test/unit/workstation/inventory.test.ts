// The inventory of `media build`: CSV (RFC 4180 quoting) or YAML rows, each with the line it starts on; the
// nodes' rows from `prepare` joined by serial number; nodePublicKey as PEM text or a file; and the template's
// ${column} filling. Every problem names its row and line, and all of them are collected in one pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { parse } from 'yaml';
import { BuildError, fillTemplate } from '../../../src/workstation/media-build';
import { ANY_TYPES } from '../../../src/workstation/template';
import { joinNodes, nodeKeyOf, parseInventory, rowName } from '../../../src/workstation/inventory';

test('CSV: a header, one row per site, each with its line; quoted fields keep commas and quotes, and may span lines (a PEM); CRLF and blank lines are fine', () => {
  const parsed = parseInventory('name,serial,note,nodePublicKey\r\nstore-0001,SER1,"a, b",\r\n\r\nstore-0002,SER2,"say ""hi""","-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"\nstore-0003,SER3,x,\n', 'sites.csv');
  assert.deepEqual(parsed.rows, [
    { row: 1, line: 2, values: { name: 'store-0001', serial: 'SER1', note: 'a, b', nodePublicKey: '' } },
    { row: 2, line: 4, values: { name: 'store-0002', serial: 'SER2', note: 'say "hi"', nodePublicKey: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' } },
    { row: 3, line: 7, values: { name: 'store-0003', serial: 'SER3', note: 'x', nodePublicKey: '' } },
  ]);
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(parseInventory('name,serial\nstore-0001\nstore-0002,SER2\nstore-0003,a,b\n', 'sites.csv').problems, [
    'sites.csv: row 1 (line 2): 1 columns, but the header has 2',
    'sites.csv: row 3 (line 4): 3 columns, but the header has 2',
  ]);
  assert.throws(() => parseInventory('', 'sites.csv'), (e: Error) => e instanceof BuildError && /sites\.csv is empty/.test(e.message));
});

test('YAML: "sites:" or a bare list of maps, with lines; numbers become text; every nested value is a problem of its row', () => {
  assert.deepEqual(parseInventory('sites:\n  - {name: store-0001, vlan: 42}\n', 'sites.yaml').rows, [{ row: 1, line: 2, values: { name: 'store-0001', vlan: '42' } }]);
  assert.deepEqual(parseInventory('- name: a\n  x: 1\n- name: b\n', 'nodes.yml').rows.map((r) => r.line), [1, 3]);
  assert.deepEqual(parseInventory('sites:\n  - {name: a, dns: [1.1.1.1]}\n  - {name: b, x: {y: 1}}\n', 'sites.yaml').problems, [
    'sites.yaml: row 1 (line 2), dns: a value must be a string or a number, not a list',
    'sites.yaml: row 2 (line 3), x: a value must be a string or a number, not a map',
  ]);
  assert.throws(() => parseInventory('name: a\n', 'sites.yaml'), /expected a list of rows/);
});

test('CSV cells with a line break, a control character or a leading =, +, - or @ are refused with their row and column (issue 36, finding 5)', () => {
  const parsed = parseInventory('name,domain,gateway\nstore-0001,"store1.example.com\n  ssh:\n    authorizedKeys: [ssh-ed25519 AAAA x]",10.0.0.1\nstore-0002,=HYPERLINK(1),@SUM(1)\nstore-0003,store3.example.com,"10.0.0.1\u0007"\nstore-0004,+1,-1\nstore-0005,ok.example.com,10.0.0.5\n', 'sites.csv');
  assert.deepEqual(parsed.rows.map((r) => r.values.name), ['store-0005']);
  assert.deepEqual(parsed.problems, [
    'sites.csv: row 1 (line 2), column 2 (domain): holds a line break or control character: a value is one line of text',
    "sites.csv: row 2 (line 5), column 2 (domain): starts with '=', which a spreadsheet runs as a formula: write the value without it",
    "sites.csv: row 2 (line 5), column 3 (gateway): starts with '@', which a spreadsheet runs as a formula: write the value without it",
    'sites.csv: row 3 (line 6), column 3 (gateway): holds a line break or control character: a value is one line of text',
    "sites.csv: row 4 (line 7), column 2 (domain): starts with '+', which a spreadsheet runs as a formula: write the value without it",
    "sites.csv: row 4 (line 7), column 3 (gateway): starts with '-', which a spreadsheet runs as a formula: write the value without it",
  ]);
  assert.deepEqual(parseInventory('- {name: a, domain: "x\\ny"}\n', 'sites.yaml').problems, ['sites.yaml: row 1 (line 1), domain: holds a line break or control character: a value is one line of text']);
});

// The hostile re-test of issue 36: with a second `domain` column the later one won unseen, and the build signed it.
test('a CSV header naming a column twice is refused with both column numbers, before any row is used', () => {
  assert.throws(
    () => parseInventory('name,serialNumber,domain,domain\nstore-0001,SER1,store1.example.com,evil.example.com\n', 'sites.csv'),
    (e: Error) => e instanceof BuildError && e.message === 'sites.csv: the header names domain (columns 3 and 4) twice: give each column once',
  );
});

// Both serial columns: joinNodes took serialNumber's value and never looked at serial's, so a row could name two nodes.
test('a CSV header with both serialNumber and serial is refused, naming the file and both columns, before any row is used', () => {
  assert.throws(
    () => parseInventory('name,serial,domain,serialNumber\nstore-0001,SER1,store1.example.com,SER2\n', 'sites.csv'),
    (e: Error) => e instanceof BuildError && e.message === 'sites.csv: the header names both serialNumber (column 4) and serial (column 2), two columns for the one serial number: keep one',
  );
  assert.deepEqual(parseInventory('name,serial\nstore-0001,SER1\n', 'sites.csv').problems, []);
});

test("each value goes in as a YAML scalar of its field's type: it can never add a key, whatever it holds (issue 36, finding 5)", () => {
  const hostile = { row: 1, line: 2, values: { name: 'store-0001', domain: 'x.example.com\n  ssh: {authorizedKeys: [k], factoryKeys: keep}', serial: '12345', prefix: '24', gw: '10.0.0.1', flag: 'true' } };
  const filled = parse(fillTemplate('# ${name} in a comment stays a placeholder\nmetadata: {name: ${name}}\nspec:\n  match: {serialNumber: ${serial}}\n  baseDomain: ${domain}\n  network:\n    verify: {ping: [${gw}]}\n', hostile)) as unknown;
  assert.deepEqual(filled, { metadata: { name: 'store-0001' }, spec: { match: { serialNumber: '12345' }, baseDomain: 'x.example.com\n  ssh: {authorizedKeys: [k], factoryKeys: keep}', network: { verify: { ping: ['10.0.0.1'] } } } });
  assert.match(fillTemplate('# ${name} here\na: ${name}\n', hostile), /^# \$\{name\} here\na: store-0001\n$/);
  // nmstate files and manifests: a plain placeholder takes a number or boolean when the value is one; a quoted one stays a string.
  assert.deepEqual(parse(fillTemplate('prefix-length: ${prefix}\ndhcp: ${flag}\nname: "${prefix}"\nip: ${gw}/${prefix}\n', hostile, ANY_TYPES)) as unknown, { 'prefix-length': 24, dhcp: true, name: '24', ip: '10.0.0.1/24' });
});

test('the template takes every ${column}; what a row lacks is named', () => {
  const row = { row: 3, line: 4, values: { name: 'store-0003', domain: 'store3.example.com', empty: '' } };
  assert.equal(rowName(row), 'row 3 (line 4), store-0003');
  assert.equal(fillTemplate('name: ${name}\nbaseDomain: ${domain}\n', row), 'name: store-0003\nbaseDomain: store3.example.com\n');
  assert.throws(() => fillTemplate('${name} ${gateway} ${empty} ${gateway}', row), (e: Error) => e.message === 'the template needs ${gateway}, ${empty}, which this row does not give');
});

test('node rows join the site rows by serial number; a site may not rename its node', () => {
  const nodes = parseInventory('- {serialNumber: S1, clusterName: sno1, hostname: n1}\n- {serialNumber: S2, clusterName: sno1, hostname: n2}\n- {serialNumber: S1}\n- {hostname: x}\n', 'nodes.yaml').rows;
  const sites = parseInventory('name,serial,clusterName\na,S1,\nb,S2,sno\nc,S9,\nd,,\n', 'sites.csv').rows;
  const joined = joinNodes(sites, nodes, 'nodes.yaml');
  assert.deepEqual(joined.rows.map((r) => [r.values.name, r.values.clusterName, r.values.hostname]), [['a', 'sno1', 'n1'], ['b', 'sno', 'n2']]);
  assert.deepEqual(joined.problems.map((p) => p.replace(/: run prepare.*/, '')), [
    'nodes.yaml: row 3 (line 3): serial number S1 is also in row 1',
    'nodes.yaml: row 4 (line 4) has no serialNumber to join it to a site by',
    'row 2 (line 3), b: clusterName sno, but the node with serial number S2 was installed with clusterName sno1, which cannot change',
    'row 3 (line 4), c: serial number S9 is in no row of nodes.yaml',
    'row 4 (line 5), d: gives no serialNumber (or serial) column',
  ]);
});

test('nodePublicKey: PEM text or a file; anything else is a sentence, not ENOENT', async () => {
  const pem = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const files: Record<string, string> = { 'node.pub.pem': pem, 'junk.txt': 'hello' };
  const read = (f: string) => Promise.resolve(files[f]);
  assert.deepEqual(await nodeKeyOf(pem, read), { pem });
  assert.deepEqual(await nodeKeyOf('node.pub.pem', read), { pem });
  assert.match((await nodeKeyOf('missing.pem', read) as { problem: string }).problem, /^nodePublicKey 'missing\.pem' is neither PEM text .* nor a file beside the inventory/);
  assert.match((await nodeKeyOf('junk.txt', read) as { problem: string }).problem, /holds no PEM public key/);
  const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  assert.match((await nodeKeyOf(ed, read) as { problem: string }).problem, /the PEM text given is a ed25519 key, not the node's X25519 key/);
});
