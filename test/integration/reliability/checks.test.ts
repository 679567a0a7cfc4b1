// The reliability matrix's own checks must be able to fail: the network-commit rule, the duplicate and
// inventory comparisons, the deterministic mutator, and the bench's critical-path split, on hand-made inputs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyse, type Timeline } from '../../bench/timeline';
import { requestKey } from '../../bench/latency';
import { stateChangingCalls } from './fuzz-support';
import { mutate, prng, type CaseFiles } from './fuzz-mutations';
import { inventoryDiff, networkProblems } from './support';

describe('network: committed exactly once, every uncommitted attempt undone', () => {
  test('accepts the clean histories', () => {
    assert.deepEqual(networkProblems(['apply --no-commit', 'commit']), []);
    assert.deepEqual(networkProblems(['apply --no-commit', 'rollback', 'apply --no-commit', 'commit']), []);
    assert.deepEqual(networkProblems(['apply --no-commit', 'apply', 'apply --no-commit', 'commit']), [], 'the saved state re-applied');
  });
  test('refuses two commits, none, and an attempt left in place', () => {
    assert.match(networkProblems(['apply --no-commit', 'commit', 'apply --no-commit', 'commit'])[0]!, /2 nmstate commits/);
    assert.match(networkProblems(['apply --no-commit', 'rollback'])[0]!, /0 nmstate commits/);
    assert.match(networkProblems(['apply --no-commit', 'apply --no-commit', 'commit'])[0]!, /followed by apply --no-commit/);
  });
});

test('inventory differences name the kind, namespace and both counts', () => {
  assert.deepEqual(inventoryDiff({ 'Route openshift-console': 3, 'Secret openshift-config': 2 }, { 'Route openshift-console': 2, 'Secret openshift-config': 2 }), ['Route openshift-console: 3 (uninterrupted run: 2)']);
  assert.deepEqual(inventoryDiff({}, { 'ImageDigestMirrorSet (cluster)': 1 }), ['ImageDigestMirrorSet (cluster): 0 (uninterrupted run: 1)']);
});

test('dry-run: only nmstatectl show and systemctl queries are harmless', () => {
  const call = (tool: string, ...args: string[]) => ({ tool, args, time: 0, env: {} });
  const bad = stateChangingCalls([call('nmstatectl', 'show'), call('nmstatectl', 'apply', '--no-commit', 'x'), call('systemctl', 'is-enabled', 'kubelet.service'), call('systemctl', 'start', 'kubelet.service'), call('systemctl', 'unmask', 'kubelet.service'), call('lsblk')]);
  assert.deepEqual(bad.map((c) => `${c.tool} ${c.args[0]}`), ['nmstatectl apply', 'systemctl start', 'systemctl unmask']);
});

describe('mutator', () => {
  const c: CaseFiles = {
    name: 'case',
    mains: ['site-config.yaml'],
    files: new Map([
      ['site-config.yaml', Buffer.from('apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata:\n  name: x\nspec:\n  baseDomain: store42.example.com\n  network:\n    nmstateFile: net.yaml\n')],
      ['net.yaml', Buffer.from('interfaces: []\n')],
    ]),
  };
  test('is deterministic per (seed, index) and changes the case', () => {
    for (let i = 0; i < 200; i++) {
      const a = mutate(c, 42, i);
      const b = mutate(c, 42, i);
      assert.equal(a.description, b.description);
      assert.deepEqual([...a.files], [...b.files]);
    }
    const changed = Array.from({ length: 200 }, (_, i) => mutate(c, 42, i)).filter((m) => [...m.files].some(([k, v]) => !c.files.get(k)!.equals(v)));
    assert.ok(changed.length >= 190, `${changed.length} of 200 mutants differ from the case`);
  });
  test('the PRNG is uniform enough to reach every choice', () => {
    const rnd = prng(7);
    const buckets = new Array(10).fill(0) as number[];
    for (let i = 0; i < 10_000; i++) buckets[Math.floor(rnd() * 10)]! += 1;
    assert.ok(buckets.every((n) => n > 850 && n < 1150), JSON.stringify(buckets));
  });
});

describe('bench: critical path and API request keys', () => {
  const t: Timeline = {
    kubeletStarted: 1000,
    apiUp: 2000,
    csrs: [
      { name: 'c1', kind: 'client', filed: 2100, approved: 2600, issued: 2700 },
      { name: 's1', kind: 'serving', filed: 3000, approved: 3100, issued: 3200 },
    ],
    rollouts: [
      { operator: 'kube-apiserver', phase: 'start', at: 4000 },
      { operator: 'machine-config', phase: 'start', at: 4500 },
      { operator: 'kube-apiserver', phase: 'done', at: 8000 },
      { operator: 'machine-config', phase: 'done', at: 7000 },
    ],
    reboots: [],
  };
  test('splits the run into the cluster\'s stretches and the driver\'s reactions', () => {
    const a = analyse(t, 9000);
    // cluster: 2100-1000 + 3000-2600 + 3200-3100 + 8000-4000 = 1100 + 400 + 100 + 4000
    assert.equal(a.criticalPathMs, 5600);
    assert.equal(a.clusterPhaseMs, 8000);
    assert.equal(a.addedMs, 2400);
    assert.deepEqual(a.segments.filter((s) => s.holder === 'driver').map((s) => s.ms), [500, 100, 800, 1000]);
    assert.equal(a.rolloutSumMs, 4000 + 2500);
    assert.equal(a.rolloutSpanMs, 4000);
  });
  test('a CSR the kubelet had to file again counts as the driver\'s time, from the first filing', () => {
    const refiled: Timeline = { ...t, csrs: [{ name: 'c0', kind: 'client', filed: 2100 }, { name: 'c1', kind: 'client', filed: 2400, approved: 2600, issued: 2700 }, t.csrs[1]!] };
    const a = analyse(refiled, 9000);
    const segment = a.segments.find((s) => s.name === 'client CSR filed → approved')!;
    assert.equal(segment.ms, 500);
    assert.equal(segment.detail, 'the kubelet filed again');
  });
  test('refuses a timeline without the node\'s certificates', () => {
    assert.throws(() => analyse({ ...t, csrs: [] }, 9000), /no approved and issued serving CSR/);
  });
  test('names requests by verb and resource', () => {
    assert.equal(requestKey({ method: 'GET', path: '/api/v1/namespaces/openshift-config/secrets/pull-secret', query: '' }), 'get secrets');
    assert.equal(requestKey({ method: 'GET', path: '/apis/config.openshift.io/v1/clusteroperators', query: 'watch=true&resourceVersion=5' }), 'watch clusteroperators');
    assert.equal(requestKey({ method: 'PUT', path: '/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-1/approval', query: '' }), 'update certificatesigningrequests/approval');
    assert.equal(requestKey({ method: 'GET', path: '/readyz', query: '' }), 'get /readyz');
  });
});
