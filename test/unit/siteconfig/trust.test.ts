// The trust rule's replay and binding checks (src/siteconfig/trust.ts) and the record that carries the last
// issue date across re-arming (src/engine/last-issued.ts), as rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { closeLastIssued, readLastIssued, recordIssued } from '../../../src/engine/last-issued';
import { needsSignedMedia, sameIssueProblem, signedProblems, unsignedProblems } from '../../../src/siteconfig/trust';
import { parseManifestFile } from '../../../src/siteconfig/manifests';
import { specSchema, timestampSchema } from '../../../src/siteconfig/schema';

const NOW = new Date('2026-11-27T09:00:00Z');
const doc = (metadata: Record<string, unknown>, spec: Record<string, unknown> = { match: { serialNumber: 'S1' } }) => ({ metadata: { name: 'x', ...metadata }, spec: { baseDomain: 'd.example.com', ...spec } });

test('signed media: bound to a machine and a date; expired, inverted and replayed configs are refused', () => {
  const rows: Array<[string, unknown, string | undefined, string[]]> = [
    ['bound', doc({ issued: '2026-11-20T09:00:00Z' }), undefined, []],
    ['no match, no issued', doc({}, {}), undefined, ['spec.match', 'metadata.issued']],
    ['expired', doc({ issued: '2026-10-01T00:00:00Z', expires: '2026-11-01T00:00:00Z' }), undefined, ['metadata.expires']],
    ['issued before the last applied', doc({ issued: '2026-10-01T00:00:00Z' }), '2026-11-01T00:00:00Z', ['metadata.issued']],
    ['issued at the same time as the last applied (a resumed run)', doc({ issued: '2026-11-01T01:00:00+01:00' }), '2026-11-01T00:00:00Z', []],
    // The tenth hostile re-test of issue 36 (M6): a typo'd future date, once taken, refused every later config.
    ['issued more than a day after this machine\'s clock', doc({ issued: '2062-11-01T00:00:00Z' }), undefined, ['metadata.issued']],
    ['issued within a day of this machine\'s clock', doc({ issued: new Date(NOW.getTime() + 23 * 3600_000).toISOString() }), undefined, []],
  ];
  for (const [name, d, last, paths] of rows) assert.deepEqual(signedProblems(d, NOW, last).map((p) => p.path), paths, name);
});

test('unsigned media: the allowlist names each field that needs signed media', () => {
  const d = doc({}, { network: {}, ntp: {}, ssh: { authorizedKeys: ['k'], factoryKeys: 'keep' }, kubeadminPassword: { remove: true }, proxy: { httpProxy: 'x' } });
  // spec.ssh whole: factoryKeys comes only with keys (the seventeenth hostile re-test of issue 36, M5: the table allowed it alone).
  assert.deepEqual(unsignedProblems(d).map((p) => p.path), ['spec.ssh.authorizedKeys', 'spec.ssh.factoryKeys', 'spec.proxy.httpProxy']);
});

test('the last issue date is kept, only ever moving forward; a damaged record is damaged, not none', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-last-issued-'));
  try {
    const host = new LocalHost({ root });
    assert.equal(await readLastIssued(host, '/state'), undefined);
    const [a, b] = ['a'.repeat(64), 'b'.repeat(64)];
    await recordIssued(host, '/state', '2026-11-01T00:00:00Z', 'a', a);
    await recordIssued(host, '/state', '2026-10-01T00:00:00Z', 'older', b);
    assert.deepEqual(await readLastIssued(host, '/state'), { issued: '2026-11-01T00:00:00Z', digest: a });
    // A record written before 2026-11-28 has no digest: the config of its date taken again gets its digest.
    await host.writeFileAtomic('/state/last-issued.json', '{"issued": "2026-11-01T00:00:00Z", "config": "a"}');
    assert.deepEqual(await readLastIssued(host, '/state'), { issued: '2026-11-01T00:00:00Z' });
    await recordIssued(host, '/state', '2026-11-01T00:00:00Z', 'a', a);
    assert.deepEqual(await readLastIssued(host, '/state'), { issued: '2026-11-01T00:00:00Z', digest: a });
    await host.writeFileAtomic('/state/last-issued.json', '{"issued": "2026-11-01T00:00:00Z", "digest": 7}');
    assert.deepEqual(await readLastIssued(host, '/state'), { damaged: 'is damaged (its config digest is not a sha256)' });
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

// The tenth hostile re-test of issue 36: after a relocation finished and the node was re-armed, the same signed
// stick was taken again (the same moment and digest passed as "a restart resuming its own config").
test('a finished relocation closes its moment: the same media are refused after it, taken before it (a resumed run)', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-last-issued-'));
  try {
    const host = new LocalHost({ root });
    const [a, b] = ['a'.repeat(64), 'b'.repeat(64)];
    assert.equal(await closeLastIssued(host, '/state'), false, 'nothing recorded, nothing to close');
    await recordIssued(host, '/state', '2026-11-01T00:00:00Z', 'a', a);
    const last = (await readLastIssued(host, '/state')) as { issued: string; digest?: string; finished?: true };
    assert.equal(sameIssueProblem('2026-11-01T00:00:00Z', a, last), undefined, 'the run resuming its own config');
    assert.equal(await closeLastIssued(host, '/state'), true);
    const closed = (await readLastIssued(host, '/state')) as { issued: string; digest?: string; finished?: true };
    assert.deepEqual(closed, { issued: '2026-11-01T00:00:00Z', digest: a, finished: true });
    assert.equal(await closeLastIssued(host, '/state'), false, 'closed once');
    assert.deepEqual(sameIssueProblem('2026-11-01T01:00:00+01:00', a, closed), { path: 'metadata.issued', message: '2026-11-01T01:00:00+01:00 is when the config this node applied last was issued, and that relocation is finished: media are never applied twice (the office must issue new media with a later metadata.issued)' });
    assert.equal(sameIssueProblem('2026-11-01T00:00:01Z', a, closed), undefined, 'a later moment is new media');
    // A new config recorded opens a new moment.
    await recordIssued(host, '/state', '2026-11-02T00:00:00Z', 'b', b);
    assert.deepEqual(await readLastIssued(host, '/state'), { issued: '2026-11-02T00:00:00Z', digest: b });
    await host.writeFileAtomic('/state/last-issued.json', '{"issued": "2026-11-01T00:00:00Z", "finished": "yes"}');
    assert.deepEqual(await readLastIssued(host, '/state'), { damaged: 'is damaged (its finished mark is not true)' });
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

test('signed media: an expiry not after the issue date is refused as such; a later one holds until this machine\'s clock reaches it', () => {
  const rows: Array<[string, unknown, string[]]> = [
    ['expires before issued', doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-19T09:00:00Z' }), ['metadata.expires']],
    ['expires when issued', doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-20T09:00:00Z' }), ['metadata.expires']],
    ['expires in the future', doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-12-01T00:00:00Z' }), []],
    ['expires now', doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-27T09:00:00Z' }), ['metadata.expires']],
    ['expires a second from now', doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-27T09:00:01Z' }), []],
    ['an expiry that is no timestamp (the schema\'s error)', doc({ issued: '2026-11-20T09:00:00Z', expires: 5 }), []],
    ['an issue date that is no timestamp (the schema\'s error)', doc({ issued: 20261120 }), []],
    ['no metadata, no spec', { metadata: 'x', spec: [] }, ['spec.match', 'metadata.issued']],
    ['not a document', 'text', ['spec.match', 'metadata.issued']],
  ];
  for (const [name, d, paths] of rows) assert.deepEqual(signedProblems(d, NOW, undefined).map((p) => p.path), paths, name);
  assert.deepEqual(signedProblems(doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-19T09:00:00Z' }), NOW).map((p) => p.message), ['(2026-11-19T09:00:00Z) is not after metadata.issued (2026-11-20T09:00:00Z)']);
  assert.deepEqual(signedProblems(doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-20T09:00:00Z' }), NOW).map((p) => p.message), ['(2026-11-20T09:00:00Z) is not after metadata.issued (2026-11-20T09:00:00Z)']);
  assert.deepEqual(signedProblems(doc({ issued: '2026-11-20T09:00:00Z', expires: '2026-11-21T09:00:00Z' }), new Date('2026-11-27T09:00:00.250Z')).map((p) => p.message), [
    'the config expired at 2026-11-21T09:00:00Z (this machine\'s clock says 2026-11-27T09:00:00Z): the office must issue new media',
  ]);
  assert.deepEqual(signedProblems(doc({ issued: '2026-10-01T00:00:00Z' }), NOW, '2026-11-01T00:00:00Z').map((p) => p.message), [
    '2026-10-01T00:00:00Z is before 2026-11-01T00:00:00Z, when the config this node applied last was issued: older media are never applied again (the office must issue new media)',
  ]);
  assert.deepEqual(signedProblems(doc({ issued: '2026-10-01T00:00:00Z' }), NOW, 'not a date'), [], 'a last issue date that is no timestamp compares with nothing');
});

test('unsigned media: a signed-only field is refused whole when it holds no keys of its own, an empty ssh too (only kubeadminPassword.remove may come alone), with the reason it needs a signature', () => {
  const d = doc({}, { extraManifestFiles: ['operators.yaml'], proxy: {}, ssh: {}, kubeadminPassword: { remove: true, hash: 'x' } });
  assert.deepEqual(unsignedProblems(d), [
    { path: 'spec.extraManifestFiles', message: needsSignedMedia('extraManifestFiles') },
    { path: 'spec.proxy', message: needsSignedMedia('proxy') },
    { path: 'spec.ssh', message: needsSignedMedia('ssh') },
    { path: 'spec.kubeadminPassword.hash', message: needsSignedMedia('kubeadminPassword') },
  ]);
  assert.equal(needsSignedMedia('proxy'), 'needs signed media: a proxy sees, and with its CA may change, the cluster\'s outbound traffic. This node takes from unsigned media only the network, names, pull secret, digest mirrors, NTP and timeouts; the office must send signed media, or media without this field');
  assert.match(needsSignedMedia('nodeLabelz'), /^needs signed media: it is not one of the fields unsigned media may carry/);
  for (const notADocument of [undefined, 'text', [], { spec: 'x' }, { spec: [] }]) assert.deepEqual(unsignedProblems(notADocument), []);
  assert.deepEqual(unsignedProblems(doc({}, { pullSecret: {}, imageDigestMirrors: [], timeouts: {}, sha256: {}, hostname: 'h', clusterName: 'c', pullSecretMode: 'merge', pullSecretFile: 'p', ntp: {} })), [], 'what unsigned media may carry');
});

// Mutation testing (issue 41): each field's reason and the binding sentences were not pinned, nor a document that is
// null (an empty YAML document) or missing.
test('each signed-only field says why it needs a signature; signed media say what binds them', () => {
  const fields = ['extraManifestFiles', 'ssh', 'kubeadminPassword', 'certificates', 'certificateRenewal', 'additionalTrustBundle', 'additionalTrustBundleFile', 'imageTagMirrors', 'proxy', 'nodeLabels'];
  const reasons = fields.map((f) => /^needs signed media: (.*)\. This node takes from unsigned media only/.exec(needsSignedMedia(f))?.[1] ?? '');
  for (const [i, reason] of reasons.entries()) {
    assert.ok(reason.length > 20, `${fields[i]}: ${needsSignedMedia(fields[i]!)}`);
    assert.doesNotMatch(reason, /not one of the fields unsigned media may carry/, fields[i]);
  }
  assert.equal(new Set(reasons.filter((_, i) => !fields[i]!.startsWith('additionalTrustBundle'))).size, fields.length - 2, 'a reason of its own for each, the trust bundle\'s two forms alike');
  assert.deepEqual(signedProblems(doc({}, {}), NOW).map((p) => p.message), [
    'is required on signed media: name the machine the config is for (systemUUID, serialNumber or macAddress), or the same signed file would be taken by any other node',
    'is required on signed media: when the config was issued (RFC 3339, like 2026-11-27T09:00:00Z), so that a node never goes back to older media',
  ]);
  for (const nothing of [null, undefined]) assert.deepEqual(signedProblems(nothing, NOW).map((p) => p.path), ['spec.match', 'metadata.issued']);
});

// The seventh hostile re-test of issue 36: metadata.issued 2026-02-31 was read as 3 March without a word, the
// instant the replay and expiry rules then used.
test('metadata.issued and expires are dates that exist: a 31 February, an hour 24 or a leap second are refused by name', () => {
  const problem = (s: string) => {
    const r = timestampSchema.safeParse(s);
    return r.success ? undefined : r.error.issues[0]?.message;
  };
  for (const ok of ['2026-11-27T09:00:00Z', '2028-02-29T23:59:59.999999999+14:00', '2026-12-31t23:59:59z', '2026-06-30T00:00:00-00:00']) assert.equal(problem(ok), undefined, ok);
  for (const bad of ['2026-02-31T09:00:00Z', '2026-02-29T09:00:00Z', '2026-04-31T09:00:00Z', '2026-11-27T24:00:00Z', '2026-12-31T23:59:60Z', '2026-13-01T00:00:00Z', '2026-11-27T09:00:00+24:00']) {
    assert.match(problem(bad) ?? '', /is not (a date and time that exists|an RFC 3339 date and time)/, bad);
  }
  assert.equal(problem('2026-02-31T09:00:00Z'), "'2026-02-31T09:00:00Z' is not a date and time that exists (its day, hour, minute or second is out of range), like 2026-11-27T09:00:00Z");
});
