import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ClosableClusterClient } from '../../../src/cluster/client';
import { R } from '../../../src/cluster/resources';
import { ApiError, type KubeObject, type WatchEvent } from '../../../src/cluster/types';
import { CsrApi } from './csr-api';
import { createLogger } from '../../../src/log';
import type { Pki } from './pki';
import { clientFor, sendJson, status, testServerPerSuite, type TestServer } from './test-server';
import { waitFor } from './wait';

describe('watch', () => {
  let pki: Pki;
  let server: TestServer;
  let client: ClosableClusterClient;
  testServerPerSuite((t) => ({ pki, server, client } = t), { timeoutMs: 5000, watchBackoff: { initialMs: 5, maxMs: 40 }, watchTimeoutSeconds: 30 });

  const csr = (name: string, signerName = 'kubernetes.io/kubelet-serving') => ({ metadata: { name }, spec: { signerName, request: 'eA==', usages: ['digital signature', 'server auth'] } });
  const watchRequests = () => server.requests.filter((r) => r.query.get('watch') === '1');
  const names = (events: WatchEvent<KubeObject>[]) => events.map((e) => `${e.type}:${e.object.metadata?.name ?? e.object.metadata?.resourceVersion}`);

  test('events split anywhere across chunks (even inside a UTF-8 character) are reassembled; a stream end resumes from the last version', async () => {
    const obj = (name: string, rv: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, resourceVersion: rv, annotations: { note: 'nœud déjà vu ✓' } } });
    const payload = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: obj('a', '11') })}\n${JSON.stringify({ type: 'MODIFIED', object: obj('a', '12') })}\n\n${JSON.stringify({ type: 'ADDED', object: obj('b', '13') })}\n`);
    // cut points: 1-byte pieces around the multi-byte characters, and lines split mid-JSON
    const firstMultiByte = payload.indexOf(Buffer.from('œ'));
    const cuts = [3, firstMultiByte + 1, firstMultiByte + 2, 60, payload.indexOf('\n') + 1, payload.length - 5].sort((a, b) => a - b);
    let calls = 0;
    const start = server.requests.length;
    server.setHandler(async (req, res) => {
      calls++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (calls > 1) return; // second connection: stay open until aborted
      let prev = 0;
      for (const cut of [...cuts, payload.length]) {
        res.write(payload.subarray(prev, cut));
        prev = cut;
        await new Promise((r) => setTimeout(r, 2));
      }
      res.end();
      void req;
    });
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.nodes, { signal: ac.signal, resourceVersion: '10' }, (e) => { events.push(e); });
    await waitFor(() => calls >= 2, 'the watch to reconnect after the stream ended');
    ac.abort();
    await done;
    assert.deepEqual(names(events), ['ADDED:a', 'MODIFIED:a', 'ADDED:b']);
    assert.equal((events[0]?.object.metadata?.annotations ?? {}).note, 'nœud déjà vu ✓');
    const reqs = server.requests.slice(start);
    assert.equal(reqs[0]?.query.get('resourceVersion'), '10');
    assert.equal(reqs[0]?.query.get('allowWatchBookmarks'), 'true');
    assert.equal(reqs[0]?.query.get('timeoutSeconds'), '30');
    assert.equal(reqs[1]?.query.get('resourceVersion'), '13', 'resumed from the last event seen');
  });

  test('a BOOKMARK moves the resume version forward', async () => {
    let calls = 0;
    const start = server.requests.length;
    server.setHandler((_req, res) => {
      calls++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (calls > 1) return;
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'x', resourceVersion: '21' } } })}\n`);
      res.end(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Node', metadata: { resourceVersion: '35' } } })}\n`);
    });
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.nodes, { signal: ac.signal, resourceVersion: '20' }, (e) => { events.push(e); });
    await waitFor(() => calls >= 2, 'reconnect');
    ac.abort();
    await done;
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'BOOKMARK']);
    assert.equal(server.requests.slice(start)[1]?.query.get('resourceVersion'), '35');
  });

  test('without a resourceVersion: list first (as ADDED), then watch from the list version, with the field selector on both', async () => {
    const api = new CsrApi();
    api.add(csr('serving-1'));
    api.add(csr('client-1', 'kubernetes.io/kube-apiserver-client-kubelet'));
    server.setHandler(api.handler);
    const start = server.requests.length;
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.csrs, { signal: ac.signal, fieldSelector: 'spec.signerName=kubernetes.io/kubelet-serving' }, (e) => { events.push(e); });
    await waitFor(() => api.openWatches() === 1, 'watch open');
    api.add(csr('serving-2'));
    api.add(csr('client-2', 'kubernetes.io/kube-apiserver-client-kubelet'));
    await waitFor(() => events.length >= 2, 'the new CSR event');
    ac.abort();
    await done;
    await waitFor(() => api.openWatches() === 0, 'the stream to be closed after abort');
    assert.deepEqual(names(events), ['ADDED:serving-1', 'ADDED:serving-2']);
    const reqs = server.requests.slice(start);
    assert.equal(reqs[0]?.query.get('watch'), null);
    assert.equal(reqs[0]?.query.get('fieldSelector'), 'spec.signerName=kubernetes.io/kubelet-serving');
    assert.equal(reqs[1]?.query.get('watch'), '1');
    assert.equal(reqs[1]?.query.get('fieldSelector'), 'spec.signerName=kubernetes.io/kubelet-serving');
    assert.equal(reqs[1]?.query.get('resourceVersion'), '102', 'watches from the list resourceVersion');
  });

  test('an ERROR event with 410 Expired re-lists, hands the objects over as ADDED and watches from the new version', async () => {
    const api = new CsrApi();
    api.add(csr('a'));
    api.add(csr('b'));
    api.compact();
    server.setHandler(api.handler);
    const start = server.requests.length;
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.csrs, { signal: ac.signal, resourceVersion: '50' }, (e) => { events.push(e); });
    await waitFor(() => api.openWatches() === 1, 'the watch after the relist');
    api.add(csr('c'));
    await waitFor(() => events.length >= 3, 'three events');
    ac.abort();
    await done;
    assert.deepEqual(names(events), ['ADDED:a', 'ADDED:b', 'ADDED:c']);
    const reqs = server.requests.slice(start).map((r) => `${r.query.get('watch') ? 'watch' : 'list'}@${r.query.get('resourceVersion') ?? ''}`);
    assert.deepEqual(reqs, ['watch@50', 'list@', 'watch@102']);
  });

  test('an HTTP 410 answer to the watch request also re-lists', async () => {
    const api = new CsrApi();
    api.add(csr('a'));
    let gone = true;
    server.setHandler((req, res, raw) => {
      if (gone && req.query.get('watch')) { gone = false; sendJson(res, 410, status(410, 'Gone', 'too old resource version')); return; }
      return api.handler(req, res, raw);
    });
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.csrs, { signal: ac.signal, resourceVersion: '1' }, (e) => { events.push(e); });
    await waitFor(() => api.openWatches() === 1, 'watch after relist');
    ac.abort();
    await done;
    assert.deepEqual(names(events), ['ADDED:a']);
  });

  test('503s and resets back off and retry until the stream works', async () => {
    const api = new CsrApi();
    api.add(csr('a'));
    let failures = 0;
    server.setHandler((req, res, raw) => {
      if (req.query.get('watch') && failures < 4) {
        failures++;
        if (failures % 2) { sendJson(res, 503, status(503, 'ServiceUnavailable', 'etcd leader changed')); return; }
        res.socket?.destroy();
        return;
      }
      return api.handler(req, res, raw);
    });
    const events: WatchEvent<KubeObject>[] = [];
    const ac = new AbortController();
    const done = client.watch<KubeObject>(R.csrs, { signal: ac.signal }, (e) => { events.push(e); });
    await waitFor(() => api.openWatches() === 1, 'a working watch');
    api.add(csr('b'));
    await waitFor(() => events.length >= 2, 'events');
    ac.abort();
    await done;
    assert.equal(failures, 4);
    assert.deepEqual(names(events), ['ADDED:a', 'ADDED:b']);
  });

  test('a stream that stays silent past the idle timeout is taken for dead and re-opened from its version', async () => {
    const quiet = await clientFor(server, pki, {
      watchBackoff: { initialMs: 5, maxMs: 20 },
      watchIdleTimeoutMs: 150,
    });
    try {
      let calls = 0;
      const start = server.requests.length;
      server.setHandler((_req, res) => {
        calls++;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        if (calls === 1) res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'q', resourceVersion: '77' } } })}\n`);
        // then silence: no data, no end, no reset
      });
      const ac = new AbortController();
      const done = quiet.watch(R.nodes, { signal: ac.signal, resourceVersion: '70' }, () => undefined);
      await waitFor(() => calls >= 2, 'a new connection after the silence');
      ac.abort();
      await done;
      assert.equal(server.requests.slice(start)[1]?.query.get('resourceVersion'), '77');
    } finally {
      quiet.close();
    }
  });

  test('a non-transient error (403) ends the watch with an ApiError', async () => {
    server.setHandler((_req, res) => sendJson(res, 403, status(403, 'Forbidden', 'certificatesigningrequests is forbidden: User "system:anonymous" cannot watch resource')));
    const ac = new AbortController();
    await assert.rejects(client.watch(R.csrs, { signal: ac.signal, resourceVersion: '1' }, () => undefined), (err: unknown) => err instanceof ApiError && err.statusCode === 403 && err.reason === 'Forbidden');
  });

  test('aborting while disconnected (in backoff) ends the watch', async () => {
    server.setHandler((_req, res) => sendJson(res, 503, status(503, 'ServiceUnavailable', 'down')));
    const ac = new AbortController();
    const done = client.watch(R.csrs, { signal: ac.signal, resourceVersion: '1' }, () => undefined);
    await waitFor(() => watchRequests().length > 0, 'a first attempt');
    ac.abort();
    await done;
  });
});

describe('watch interruptions in the journal', () => {
  let pki: Pki;
  let server: TestServer;
  testServerPerSuite((t) => ({ pki, server } = t));

  test('an API restart (a reset stream) is no news at info: it is logged at debug, and the watch goes on', async () => {
    const lines: { level: string; msg: string }[] = [];
    const log = createLogger({ format: 'json', journal: false, level: 'debug', write: (s) => void lines.push(JSON.parse(s) as { level: string; msg: string }) });
    const quietLog = await clientFor(server, pki, { log, watchBackoff: { initialMs: 5, maxMs: 20 } });
    let calls = 0;
    server.setHandler((_req, res) => {
      calls++;
      if (calls === 1) {
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'x', resourceVersion: '21' } } })}\n`);
    });
    const ac = new AbortController();
    const events: WatchEvent<KubeObject>[] = [];
    const done = quietLog.watch<KubeObject>(R.nodes, { signal: ac.signal, resourceVersion: '20' }, (e) => { events.push(e); });
    await waitFor(() => events.length === 1, 'the event after the reconnect');
    ac.abort();
    await done;
    quietLog.close();
    const about = lines.filter((l) => /watch|reconnect/i.test(l.msg));
    assert.ok(about.some((l) => l.level === 'debug' && /watch interrupted \(the API restarts during rollouts\)/.test(l.msg)), JSON.stringify(about));
    assert.deepEqual(about.filter((l) => l.level !== 'debug'), [], 'nothing at info or above for one interruption');
  });
});
