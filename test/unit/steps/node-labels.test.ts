// spec.nodeLabels (issue 18): what validation refuses (reserved prefixes, bad keys and values, a key both set and
// removed) and the merge patch the step sends (only what differs; null removes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSchema, nodeLabelKeyProblem } from '../../../src/siteconfig/schema';
import { labelPatch } from '../../../src/steps/node-labels';

const doc = (nodeLabels: unknown) => ({ apiVersion: 'sno-reconfigure.io/v1', kind: 'SiteConfig', metadata: { name: 's' }, spec: { baseDomain: 'example.com', nodeLabels } });
const problems = (nodeLabels: unknown) => checkSchema(doc(nodeLabels), (f) => `unknown ${f}`).problems;

test('keys: a qualified name, never under kubernetes.io, k8s.io or openshift.io', () => {
  for (const ok of ['region', 'store.example.com/region', 'a.b_c-d']) assert.equal(nodeLabelKeyProblem(ok), undefined, ok);
  const rows: [string, RegExp][] = [
    ['node-role.kubernetes.io/worker', /a label Kubernetes manages on the node \(prefix node-role\.kubernetes\.io\)/],
    ['kubernetes.io/hostname', /a label Kubernetes manages/],
    ['topology.k8s.io/zone', /a label Kubernetes manages/],
    ['node.openshift.io/os_id', /a label OpenShift manages on the node \(prefix node\.openshift\.io\)/],
    ['Bad_Prefix/x', /has the prefix 'Bad_Prefix'/],
    ['store.example.com/-x', /is not a label key/],
    ['', /is not a label key/],
  ];
  for (const [key, message] of rows) assert.match(nodeLabelKeyProblem(key) ?? '', message, key);
});

test('the schema names the field of each problem', () => {
  assert.deepEqual(problems({ set: { 'store.example.com/region': 'emea' }, remove: ['store.example.com/old'] }), []);
  const bad = problems({ set: { 'node-role.kubernetes.io/master': '' }, remove: ['x'] });
  assert.equal(bad.length, 1);
  assert.match(bad[0]!.path, /^spec\.nodeLabels\.set/);
  assert.match(problems({ set: { a: 'not valid!' } })[0]!.message, /'not valid!' is not a label value/);
  assert.deepEqual(problems({ set: { a: 'x' }, remove: ['a'] }).map((p) => [p.path, p.message]), [['spec.nodeLabels.remove', "'a' is both set and removed: keep one"]]);
  assert.match(problems({ add: {} })[0]!.message, /unknown add/);
});

test('the patch holds only what differs; a removed label that is absent is not sent', () => {
  const wanted = { set: { a: '1', b: '2' }, remove: ['c', 'd'] };
  assert.deepEqual(labelPatch({ a: '1', b: 'old', c: 'x' }, wanted), { b: '2', c: null });
  assert.equal(labelPatch({ a: '1', b: '2', e: 'kept' }, wanted), undefined);
  assert.deepEqual(labelPatch(undefined, wanted), { a: '1', b: '2' });
});

test('kubeadminPassword: exactly one of a bcrypt hash or remove: true; a clear-text password is refused', () => {
  const hash = `$2y$10$${'a'.repeat(53)}`;
  const check = (v: unknown) => checkSchema({ ...doc(undefined), spec: { baseDomain: 'example.com', kubeadminPassword: v } }, (f) => `unknown ${f}`).problems;
  assert.deepEqual(check({ hash }), []);
  assert.deepEqual(check({ remove: true }), []);
  assert.match(check({ hash: 'hunter2' })[0]!.message, /must be a bcrypt hash .* a clear-text password is never accepted/);
  assert.ok(!JSON.stringify(check({ hash: 'hunter2' })).includes('hunter2'), 'the refused value is not repeated');
  assert.match(check({ hash, remove: true })[0]!.message, /give exactly one of hash .* or remove: true/);
  assert.match(check({})[0]!.message, /give exactly one of hash/);
});
