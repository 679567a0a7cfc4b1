// The CSR approver against a real HTTPS API (the CSR part of the Kubernetes API in test/unit/cluster/
// csr-api.ts: list/watch with field selectors, bookmarks, 410, the /approval subresource with conflicts)
// and real CSRs from `openssl req`.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClusterClient, type ClosableClusterClient } from '../../src/cluster/client';
import { loadKubeconfig } from '../../src/cluster/kubeconfig';
import { APPROVAL_REASON, startCsrApprover, type CsrApprover, type CsrApproverOptions } from '../../src/csr/approver';
import type { CsrDecision, ExpectedNode } from '../../src/csr/policy';
import { createLogger } from '../../src/log';
import { R } from '../../src/cluster/resources';
import type { KubeObject } from '../../src/cluster/types';
import { HOSTILE_CSR_KINDS, startSimulator, type InjectedCsr, type Simulator } from '../sim/index';
import { CsrApi } from '../unit/cluster/csr-api';
import { makePki, type Pki } from '../unit/cluster/pki';
import { clientFor, startTestServer, type TestServer } from '../unit/cluster/test-server';
import { waitFor } from '../unit/cluster/wait';
import { BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, CLIENT, SERVING, cleanupCsrFiles, opensslCsr } from '../unit/csr/make-csr';
import { readFile } from 'node:fs/promises';

const NODE: ExpectedNode = { name: 'sno1', addresses: ['192.168.42.10', 'fd00::10'], notBefore: new Date(Date.now() - 60_000), nodeExists: true };

function clientRequest(api: CsrApi, name: string, cn = 'system:node:sno1') {
  const pem = opensslCsr({ subject: `/O=system:nodes/CN=${cn}` });
  return api.add({ metadata: { name }, spec: { signerName: CLIENT, request: Buffer.from(pem).toString('base64'), username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages: ['digital signature', 'client auth'] } });
}

function servingRequest(api: CsrApi, name: string, sans = ['DNS:sno1', 'IP:192.168.42.10', 'IP:fd00::10']) {
  const pem = opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1', sans });
  return api.add({ metadata: { name }, spec: { signerName: SERVING, request: Buffer.from(pem).toString('base64'), username: 'system:node:sno1', groups: ['system:nodes', 'system:authenticated'], usages: ['digital signature', 'server auth'] } });
}

describe('CSR approver', () => {
  let pki: Pki;
  let server: TestServer;
  let client: ClosableClusterClient;
  let api: CsrApi;
  let lines: string[];
  let approver: CsrApprover | undefined;
  let decisions: { name: string; d: CsrDecision }[];
  const controllers: AbortController[] = [];

  before(async () => {
    pki = makePki();
    server = await startTestServer(pki);
    client = await clientFor(server, pki, {
      watchBackoff: { initialMs: 5, maxMs: 40 },
      watchTimeoutSeconds: 60,
    });
  });
  after(async () => {
    for (const c of controllers) c.abort();
    await approver?.stop();
    client.close();
    await server.close();
    pki.cleanup();
    cleanupCsrFiles();
  });

  const start = (overrides: Partial<CsrApproverOptions> = {}) => {
    api = new CsrApi();
    server.setHandler(api.handler);
    lines = [];
    decisions = [];
    const ac = new AbortController();
    controllers.push(ac);
    return (prepare: (api: CsrApi) => void = () => undefined) => {
      prepare(api);
      approver = startCsrApprover({
        client,
        expected: () => NODE,
        log: createLogger({ format: 'json', level: 'debug', journal: false, write: (l) => { lines.push(l); } }),
        signal: ac.signal,
        onDecision: (name, d) => decisions.push({ name, d }),
        retry: { initialDelayMs: 2, maxDelayMs: 10 },
        watchRestartDelayMs: 10,
        ...overrides,
      });
      return approver;
    };
  };
  const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const conditionsOf = (name: string) => api.get(name)?.status?.conditions ?? [];

  test("approves the node's client then serving CSR and reports both certificates issued", async () => {
    const a = start()();
    await waitFor(() => api.openWatches() === 2, 'two watches (one per kubelet signer)');
    const watchSelectors = server.requests.filter((r) => r.query.get('watch')).map((r) => r.query.get('fieldSelector')).sort();
    assert.deepEqual(watchSelectors, [`spec.signerName=${CLIENT}`, `spec.signerName=${SERVING}`]);

    clientRequest(api, 'csr-client');
    await waitFor(() => conditionsOf('csr-client').length > 0, 'client CSR approved');
    assert.deepEqual(a.issued(), { client: false, serving: false });
    api.issue('csr-client');
    await waitFor(() => a.issued().client, 'client certificate seen as issued');

    servingRequest(api, 'csr-serving');
    await waitFor(() => conditionsOf('csr-serving').length > 0, 'serving CSR approved');
    api.issue('csr-serving');
    assert.equal(await a.whenIssued(), true);
    assert.deepEqual(a.issued(), { client: true, serving: true });
    assert.deepEqual(a.approvedNames(), ['csr-client', 'csr-serving']);
    for (const name of ['csr-client', 'csr-serving']) {
      const [c] = conditionsOf(name);
      assert.equal(c?.type, 'Approved');
      assert.equal(c?.reason, APPROVAL_REASON);
      assert.match(String(c?.message), /^Approved by sno-reconfigure: /);
    }
    const approvedLogs = logged().filter((l) => /^approved CSR \S+ \((client|serving)\): /.test(String(l.msg)));
    assert.equal(approvedLogs.length, 2);
    assert.equal(approvedLogs[0]?.level, 'info');
    assert.match(String(approvedLogs[0]?.reason), /client CSR for node sno1 by the node-bootstrapper/);
    const all = lines.join('\n');
    assert.ok(!all.includes('CERTIFICATE REQUEST'), 'no PEM in the log');
    assert.ok(!all.includes(String(api.get('csr-client')?.spec.request).slice(0, 40)), 'no base64 request in the log');
    await a.stop();
    await waitFor(() => api.openWatches() === 0, 'watches closed after stop');
  });

  test('hostile CSRs are left pending (never denied), each evaluated once per resourceVersion, across watch restarts and 410', async () => {
    const a = start()();
    await waitFor(() => api.openWatches() === 2, 'watches');
    clientRequest(api, 'other-node', 'system:node:sno2');
    servingRequest(api, 'extra-ip', ['DNS:sno1', 'IP:10.0.0.9']);
    await waitFor(() => a.pending().length === 2, 'two CSRs left pending');
    const pending = Object.fromEntries(a.pending().map((p) => [p.name, p.reason]));
    assert.match(String(pending['other-node']), /CN is "system:node:sno2", expected "system:node:sno1"/);
    assert.equal(pending['extra-ip'], 'serving CSR has IP SAN 10.0.0.9 not among the node addresses [192.168.42.10, fd00::10]');
    const warns = logged().filter((l) => /^left CSR \S+ pending /.test(String(l.msg)));
    assert.equal(warns.length, 2);
    assert.ok(warns.every((w) => w.level === 'warn' && typeof w.reason === 'string'));

    // the stream ends (server timeout) and later the history is compacted (410 → relist)
    api.closeWatches();
    await waitFor(() => api.openWatches() === 2, 'watches resumed');
    api.bookmark();
    api.compact();
    api.closeWatches();
    await waitFor(() => api.openWatches() === 2, 'watches after the relist');
    clientRequest(api, 'legit-after-410');
    await waitFor(() => a.approvedNames().includes('legit-after-410'), 'a legit CSR is still approved after the relist');

    const perName = (n: string) => decisions.filter((d) => d.name === n).length;
    assert.equal(perName('other-node'), 1, 'not re-evaluated for the same resourceVersion');
    assert.equal(perName('extra-ip'), 1);
    for (const name of ['other-node', 'extra-ip']) assert.deepEqual(conditionsOf(name), [], `${name} neither approved nor denied`);
    assert.deepEqual(api.approvals.map((x) => x.name), ['legit-after-410']);
    await a.stop();
  });

  test('approval conflicts and 503s are retried', async () => {
    const a = start()();
    await waitFor(() => api.openWatches() === 2, 'watches');
    api.approvalConflicts = 2;
    clientRequest(api, 'c1');
    await waitFor(() => conditionsOf('c1').length > 0, 'approved despite conflicts');
    api.unavailable = 2;
    servingRequest(api, 's1');
    await waitFor(() => a.approvedNames().length === 2, 'approved despite 503s');
    assert.deepEqual(a.approvedNames(), ['c1', 's1']);
    assert.equal(conditionsOf('s1')[0]?.type, 'Approved');
    assert.equal(conditionsOf('c1').length, 1, 'approved exactly once');
    await a.stop();
  });

  test('an approval that failed beyond its own retries is tried again on the periodic recheck, without a new event', async () => {
    const a = start({ retry: { attempts: 2, initialDelayMs: 2, maxDelayMs: 10 }, recheckIntervalMs: 10 })();
    await waitFor(() => api.openWatches() === 2, 'watches');
    // Both attempts of the first approval meet a 503; the CSR sees no further event afterwards.
    api.unavailable = 2;
    clientRequest(api, 'c-retry');
    await waitFor(() => logged().some((l) => l.msg === 'approving CSR c-retry failed' && l.retryInMs !== undefined), 'first approval failed');
    await waitFor(() => a.approvedNames().includes('c-retry'), 'approved on a later recheck');
    assert.equal(conditionsOf('c-retry').filter((c) => c.type === 'Approved').length, 1);
    assert.deepEqual(a.pending(), []);
    await a.stop();
  });

  test('a CSR left pending is approved once expected() learns the missing address', async () => {
    let addresses = ['192.168.42.10'];
    const a = start({ expected: () => ({ ...NODE, addresses }), recheckIntervalMs: 10 })();
    await waitFor(() => api.openWatches() === 2, 'watches');
    servingRequest(api, 'new-ip', ['DNS:sno1', 'IP:192.168.50.10']);
    await waitFor(() => a.pending().length === 1, 'left pending at first');
    assert.deepEqual(conditionsOf('new-ip'), []);
    addresses = ['192.168.42.10', '192.168.50.10'];
    await waitFor(() => a.approvedNames().includes('new-ip'), 'approved after the re-evaluation');
    assert.equal(conditionsOf('new-ip')[0]?.type, 'Approved');
    assert.deepEqual(a.pending(), []);
    await a.stop();
  });


  test('reevaluate() looks at a pending CSR at once, without waiting for the periodic recheck', async () => {
    let addresses = ['192.168.42.10'];
    // A recheck interval far beyond the test's timeout: only reevaluate() can get the CSR approved.
    const a = start({ expected: () => ({ ...NODE, addresses }), recheckIntervalMs: 3_600_000 })();
    await waitFor(() => api.openWatches() === 2, 'watches');
    servingRequest(api, 'late-ip', ['DNS:sno1', 'IP:192.168.60.10']);
    await waitFor(() => a.pending().length === 1, 'left pending at first');
    addresses = ['192.168.42.10', '192.168.60.10'];
    a.reevaluate();
    await waitFor(() => a.approvedNames().includes('late-ip'), 'approved after reevaluate()');
    assert.equal(conditionsOf('late-ip')[0]?.type, 'Approved');
    await a.stop();
  });

  test('subscribe(): listeners hear every approval and every newly issued certificate, until they unsubscribe', async () => {
    const a = start()();
    const heard: string[] = [];
    const unsubscribe = a.subscribe(() => heard.push(`approved=${a.approvedNames().length} issued=${JSON.stringify(a.issued())}`));
    await waitFor(() => api.openWatches() === 2, 'watches');
    clientRequest(api, 'sub-client');
    await waitFor(() => heard.length === 1, 'the client approval heard');
    api.issue('sub-client');
    await waitFor(() => heard.length === 2, 'the client certificate heard');
    unsubscribe();
    servingRequest(api, 'sub-serving');
    api.issue('sub-serving');
    assert.equal(await a.whenIssued(), true);
    assert.deepEqual(heard, ['approved=1 issued={"client":false,"serving":false}', 'approved=1 issued={"client":true,"serving":false}']);
    await a.stop();
  });
  test('certificates already issued before the approver started count (a resumed run)', async () => {
    const a = start()((api) => {
      clientRequest(api, 'old-client');
      servingRequest(api, 'old-serving');
      for (const n of ['old-client', 'old-serving']) {
        api.approveDirectly(n);
        api.issue(n);
      }
    });
    assert.equal(await a.whenIssued(), true);
    assert.deepEqual(a.issued(), { client: true, serving: true });
    assert.deepEqual(a.approvedNames(), [], 'nothing needed approving');
    assert.deepEqual(a.pending(), []);
    assert.equal(logged().filter((l) => /^left CSR \S+ pending /.test(String(l.msg))).length, 0, 'decided CSRs are not reported as left pending');
    await a.stop();
  });

  test('flood guard: no more approvals than maxApprovals', async () => {
    const a = start({ maxApprovals: 1 })();
    await waitFor(() => api.openWatches() === 2, 'watches');
    clientRequest(api, 'first');
    await waitFor(() => conditionsOf('first').length > 0, 'first approved');
    clientRequest(api, 'second');
    await waitFor(() => a.pending().length === 1, 'second left pending');
    assert.match(String(a.pending()[0]?.reason), /flood guard/);
    assert.deepEqual(conditionsOf('second'), []);
    await a.stop();
  });

  test('stop() before the certificates are issued: whenIssued resolves false, watches close; aborting the signal stops too', async () => {
    const a = start()();
    await waitFor(() => api.openWatches() === 2, 'watches');
    await a.stop();
    assert.equal(await a.whenIssued(), false);
    await waitFor(() => api.openWatches() === 0, 'watches closed');

    const ac = new AbortController();
    const b = startCsrApprover({ client, expected: () => NODE, log: createLogger({ format: 'json', level: 'silent', journal: false, write: () => undefined }), signal: ac.signal });
    await waitFor(() => api.openWatches() === 2, 'second approver watching');
    ac.abort();
    assert.equal(await b.whenIssued(), false);
    await waitFor(() => api.openWatches() === 0, 'closed after abort');
  });
});

describe('CSR approver against the cluster simulator (a real kubelet bootstrap, hostile CSRs)', () => {
  let sim: Simulator;
  let client: ClosableClusterClient;
  let approver: CsrApprover | undefined;
  const ac = new AbortController();
  before(async () => {
    sim = await startSimulator({ timeScale: 0.001, kubelet: 'masked' });
    client = createClusterClient(await loadKubeconfig((p) => readFile(p), sim.kubeconfigs.localhost), { watchBackoff: { initialMs: 5, maxMs: 50 }, watchTimeoutSeconds: 60 });
  });
  after(async () => {
    ac.abort();
    await approver?.stop();
    client?.close();
    await sim?.stop();
  });

  test('started before the API is up, it approves exactly the kubelet\'s CSRs and leaves every hostile one pending', async () => {
    const decisions = new Map<string, CsrDecision>();
    const node = (): ExpectedNode => ({ name: sim.options.nodeName, addresses: sim.options.kubeletIPs, notBefore: new Date(Date.now() - 5_000), nodeExists: true });
    // The agent starts watching while the API is still down (kubelet masked): the watches must keep retrying.
    approver = startCsrApprover({
      client,
      expected: node,
      log: createLogger({ format: 'json', level: 'silent', journal: false, write: () => undefined }),
      signal: ac.signal,
      onDecision: (name, d) => decisions.set(name, d),
      retry: { initialDelayMs: 2, maxDelayMs: 10 },
    });
    assert.equal(sim.apiUp(), false);
    sim.startKubelet();
    assert.equal(await approver.whenIssued(), true);
    const filed = sim.kubelet.filed.map((f) => f.name);
    assert.deepEqual(approver.approvedNames(), filed, 'approved what the kubelet filed, nothing else');

    const injected: InjectedCsr[] = [];
    for (const kind of HOSTILE_CSR_KINDS) injected.push(await sim.injectHostileCsr(kind));
    const stored = injected.filter((i) => i.name);
    const seenByApprover = stored.filter((i) => i.signerName === 'kubernetes.io/kube-apiserver-client-kubelet' || i.signerName === 'kubernetes.io/kubelet-serving');
    await waitFor(() => seenByApprover.every((i) => decisions.has(i.name as string)), 'a decision on every kubelet-signer CSR');
    const legit = seenByApprover.filter((i) => i.legitimate).map((i) => i.name);
    await waitFor(() => legit.every((n) => approver?.approvedNames().includes(n as string)), 'the node renewal approved');
    for (const i of seenByApprover) {
      assert.equal(decisions.get(i.name as string)?.approve, i.legitimate, `${i.kind}: ${decisions.get(i.name as string)?.reason}`);
    }
    // The generic-signer request is not even read (field selectors), and nothing is ever denied.
    const generic = stored.find((i) => i.kind === 'generic-client-signer');
    assert.ok(generic?.name && !decisions.has(generic.name));
    for (const csr of (await client.list<KubeObject>(R.csrs)).items) {
      const conditions = (csr.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
      assert.ok(!conditions.some((c) => c.type === 'Denied'), `${csr.metadata?.name} was denied`);
      const approvedIt = conditions.some((c) => c.type === 'Approved');
      assert.equal(approvedIt, approver.approvedNames().includes(csr.metadata?.name ?? ''), `${csr.metadata?.name}: approved=${approvedIt}`);
    }
    assert.equal(new Set(approver.pending().map((p) => p.name)).size, seenByApprover.length - legit.length);
  });
});
