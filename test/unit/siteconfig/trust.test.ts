// The trust rule's replay and binding checks (src/siteconfig/trust.ts) and the record that carries the last
// issue date across re-arming (src/engine/last-issued.ts), as rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { readLastIssued, recordIssued } from '../../../src/engine/last-issued';
import { needsSignedMedia, signedProblems, unsignedProblems } from '../../../src/siteconfig/trust';
import { parseManifestFile } from '../../../src/siteconfig/manifests';
import { specSchema } from '../../../src/siteconfig/schema';

const NOW = new Date('2026-11-27T09:00:00Z');
const doc = (metadata: Record<string, unknown>, spec: Record<string, unknown> = { match: { serialNumber: 'S1' } }) => ({ metadata: { name: 'x', ...metadata }, spec: { baseDomain: 'd.example.com', ...spec } });

test('signed media: bound to a machine and a date; expired, inverted and replayed configs are refused', () => {
  const rows: Array<[string, unknown, string | undefined, string[]]> = [
    ['bound', doc({ issued: '2026-11-20T09:00:00Z' }), undefined, []],
    ['no match, no issued', doc({}, {}), undefined, ['spec.match', 'metadata.issued']],
    ['expired', doc({ issued: '2026-10-01T00:00:00Z', expires: '2026-11-01T00:00:00Z' }), undefined, ['metadata.expires']],
    ['issued before the last applied', doc({ issued: '2026-10-01T00:00:00Z' }), '2026-11-01T00:00:00Z', ['metadata.issued']],
    ['issued at the same time as the last applied (a resumed run)', doc({ issued: '2026-11-01T01:00:00+01:00' }), '2026-11-01T00:00:00Z', []],
  ];
  for (const [name, d, last, paths] of rows) assert.deepEqual(signedProblems(d, NOW, last).map((p) => p.path), paths, name);
});

test('unsigned media: the allowlist names each field that needs signed media', () => {
  const d = doc({}, { network: {}, ntp: {}, ssh: { authorizedKeys: ['k'], factoryKeys: 'keep' }, kubeadminPassword: { remove: true }, proxy: { httpProxy: 'x' } });
  assert.deepEqual(unsignedProblems(d).map((p) => p.path), ['spec.ssh.authorizedKeys', 'spec.proxy.httpProxy']);
});

test('the last issue date is kept, only ever moving forward; a damaged record is damaged, not none', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-last-issued-'));
  try {
    const host = new LocalHost({ root });
    assert.equal(await readLastIssued(host, '/state'), undefined);
    await recordIssued(host, '/state', '2026-11-01T00:00:00Z', 'a');
    await recordIssued(host, '/state', '2026-10-01T00:00:00Z', 'older');
    assert.equal(await readLastIssued(host, '/state'), '2026-11-01T00:00:00Z');
    // Issue 36, finding 2: a damaged record read as "none" turned replay protection off.
    await host.writeFileAtomic('/state/last-issued.json', '{"issued": "2026-11-01T00:00:00Z"');
    assert.deepEqual(await readLastIssued(host, '/state'), { damaged: 'is damaged (it is not complete JSON)' });
    await host.writeFileAtomic('/state/last-issued.json', '{"issued": "last week"}');
    assert.deepEqual(await readLastIssued(host, '/state'), { damaged: 'is damaged (it holds no issue date)' });
    await host.remove('/state/last-issued.json');
    await host.mkdirp('/state/last-issued.json');
    assert.deepEqual(await readLastIssued(host, '/state'), { damaged: 'is a folder, not a file' });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// Issue 36, C7: keys named after JavaScript built-ins were looked up through the prototype ("needs signed media:
// function Object() { [native code] }", a manifest of kind `constructor` refused with the same, a label both set
// and removed that was only removed).
test('keys named after JavaScript built-ins are only unknown keys, never read through the prototype', () => {
  const builtins = ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'];
  const spec: Record<string, unknown> = { match: { serialNumber: 'S1' } };
  for (const k of builtins) Object.defineProperty(spec, k, { value: 'x', enumerable: true });
  assert.deepEqual(unsignedProblems(doc({}, spec)), [], 'an unknown field is the schema\'s error, not a trust refusal');
  for (const k of builtins) assert.doesNotMatch(needsSignedMedia(k), /native code|function/, k);
  const manifests = parseManifestFile(builtins.map((k) => `apiVersion: v1\nkind: ${k}\nmetadata: {name: ${k}, namespace: x}\n`).join('---\n'));
  assert.deepEqual(manifests.problems.filter((p) => /native code|function|is not applied/.test(p)), []);
  const labels = specSchema.shape.nodeLabels.safeParse({ set: {}, remove: ['constructor', 'toString'] });
  assert.ok(labels.success, JSON.stringify(labels.error?.issues));
});

// The hostile re-test of issue 36: a List inside a List passed validate and plan, then failed at the API mid-run,
// after the network, domain, pull secret and mirrors had changed.
test('a List inside a List, or a List without items, is refused when the manifest is read, never sent to the API', () => {
  const nested = parseManifestFile('apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: x}\n- apiVersion: v1\n  kind: List\n  metadata: {name: inner}\n  items: []\n');
  assert.deepEqual(nested.objects.map((o) => o.metadata.name), ['a']);
  assert.deepEqual(nested.problems, ['the document, item 2: a List inside a list: the agent applies the objects a list holds one level deep, so put them in the outer list or in documents of their own']);
  const empty = parseManifestFile('apiVersion: v1\nkind: ConfigMapList\nmetadata: {name: l}\n');
  assert.deepEqual(empty.problems, ['the document: a ConfigMapList without a list of items: the agent applies the objects a list holds one level deep, so put them in the outer list or in documents of their own']);
});
