import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { createClusterClient, type ClosableClusterClient, type ClusterClientOptions } from '../../../src/cluster/client';
import { parseKubeconfig } from '../../../src/cluster/kubeconfig';
import { R } from '../../../src/cluster/resources';
import { retryAfterMs } from '../../../src/cluster/retry';
import { ApiError, ConnectionError, type KubeObject } from '../../../src/cluster/types';
import { createLogger } from '../../../src/log';
import { INTERNAL_API_NAME, makePki, type Pki } from './pki';
import { kubeconfigYaml, sendJson, startTestServer, status, type TestServer } from './test-server';
import { readFile } from 'node:fs/promises';

describe('cluster client over real HTTPS', () => {
  let pki: Pki;
  let server: TestServer;
  const clients: ClosableClusterClient[] = [];
  before(async () => {
    pki = makePki();
    server = await startTestServer(pki);
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
    pki.cleanup();
  });

  const connect = async (yaml: string, opts: ClusterClientOptions = {}) => {
    const client = createClusterClient(await parseKubeconfig(yaml, { source: 'test', baseDir: pki.dir, read: (p) => readFile(p) }), { timeoutMs: 5000, ...opts });
    clients.push(client);
    return client;
  };
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'sno1', resourceVersion: '7' } };

  test('TLS with CA data and client-certificate authentication', async () => {
    server.setHandler((req, res) => sendJson(res, 200, { ...node, seenBy: req.clientCN ?? null }));
    const client = await connect(kubeconfigYaml(server.url, pki));
    const got = await client.get<KubeObject>(R.nodes, 'sno1');
    assert.equal(got?.metadata?.name, 'sno1');
    const last = server.requests.at(-1);
    assert.equal(last?.path, '/api/v1/nodes/sno1');
    assert.equal(last?.clientCN, 'system:admin', 'the client certificate was presented and verified by the server');
    assert.equal(last?.headers.authorization, undefined);
    assert.match(String(last?.headers['user-agent']), /^sno-reconfigure\//);
    assert.equal(last?.headers.accept, 'application/json');
  });

  test('bearer token authentication', async () => {
    server.setHandler((_req, res) => sendJson(res, 200, node));
    const client = await connect(kubeconfigYaml(server.url, pki, { cluster: { 'certificate-authority-data': b64(pki.caCert) }, user: { token: 'sha256~secret-token' } }));
    await client.get(R.nodes, 'sno1');
    const last = server.requests.at(-1);
    assert.equal(last?.headers.authorization, 'Bearer sha256~secret-token');
    assert.equal(last?.clientCN, undefined);
  });

  test('tokenFile: the token is re-read when it rotates', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const tokenPath = join(pki.dir, 'token');
    writeFileSync(tokenPath, 'first-token\n');
    server.setHandler((_req, res) => sendJson(res, 200, node));
    const client = await connect(kubeconfigYaml(server.url, pki, { cluster: { 'certificate-authority-data': b64(pki.caCert) }, user: { tokenFile: tokenPath } }), { tokenFileTtlMs: 0 });
    await client.get(R.nodes, 'sno1');
    assert.equal(server.requests.at(-1)?.headers.authorization, 'Bearer first-token');
    writeFileSync(tokenPath, 'rotated-token\n');
    await client.get(R.nodes, 'sno1');
    assert.equal(server.requests.at(-1)?.headers.authorization, 'Bearer rotated-token');
  });

  test('a server certificate from another CA is a ConnectionError explaining the TLS failure', async () => {
    server.setHandler((_req, res) => sendJson(res, 200, node));
    const client = await connect(kubeconfigYaml(server.url, pki, { cluster: { 'certificate-authority-data': b64(pki.otherCaCert) } }));
    await assert.rejects(client.get(R.nodes, 'sno1'), (err: unknown) => {
      assert.ok(err instanceof ConnectionError);
      assert.match(err.message, /TLS failure/);
      assert.match(err.message, /GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/nodes\/sno1/);
      return true;
    });
  });

  test('tls-server-name: the certificate is verified against that name instead of the URL host', async () => {
    const internal = await startTestServer(pki, { cert: 'internal', handler: (_req, res) => sendJson(res, 200, node) });
    try {
      const without = await connect(kubeconfigYaml(internal.url, pki));
      await assert.rejects(without.get(R.nodes, 'sno1'), (err: unknown) => err instanceof ConnectionError && /TLS failure/.test(err.message) && err.code === 'ERR_TLS_CERT_ALTNAME_INVALID');
      const withName = await connect(kubeconfigYaml(internal.url, pki, { cluster: { 'certificate-authority-data': b64(pki.caCert), 'tls-server-name': INTERNAL_API_NAME } }));
      assert.equal((await withName.get<KubeObject>(R.nodes, 'sno1'))?.metadata?.name, 'sno1');
    } finally {
      await internal.close();
    }
  });

  test('404 → undefined for get, false for delete; 200 → true for delete', async () => {
    server.setHandler((req, res) => {
      if (req.path.endsWith('/gone')) sendJson(res, 404, status(404, 'NotFound', 'secrets "gone" not found'));
      else sendJson(res, 200, status(200, 'Success', ''));
    });
    const client = await connect(kubeconfigYaml(server.url, pki));
    assert.equal(await client.get(R.secrets, 'gone', 'openshift-config'), undefined);
    assert.equal(server.requests.at(-1)?.path, '/api/v1/namespaces/openshift-config/secrets/gone');
    assert.equal(await client.delete(R.secrets, 'gone', 'openshift-config'), false);
    assert.equal(await client.delete(R.secrets, 'here', 'openshift-config'), true);
    assert.equal(server.requests.at(-1)?.method, 'DELETE');
  });

  test('409, 422 and 503 become ApiError with the Status reason and message; Retry-After is kept', async () => {
    const answers: Record<string, [number, Record<string, unknown>, Record<string, string>?]> = {
      conflict: [409, status(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again')],
      invalid: [422, status(422, 'Invalid', 'Ingress.config.openshift.io "cluster" is invalid: spec.appsDomain: Invalid value')],
      busy: [503, status(503, 'ServiceUnavailable', 'apiserver is shutting down'), { 'Retry-After': '7' }],
    };
    server.setHandler((req, res) => {
      const [code, body, headers] = answers[req.path.split('/').at(-1) ?? ''] ?? [500, status(500, 'InternalError', 'x')];
      sendJson(res, code, body, headers);
    });
    const client = await connect(kubeconfigYaml(server.url, pki));
    const check = async (name: string, code: number, reason: string, message: RegExp) => {
      await assert.rejects(client.update(R.ingresses, { metadata: { name, resourceVersion: '1' }, spec: {} }), (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.equal(err.statusCode, code);
        assert.equal(err.reason, reason);
        assert.match(err.message, message);
        return true;
      });
    };
    await check('conflict', 409, 'Conflict', /PUT \/apis\/config\.openshift\.io\/v1\/ingresses\/conflict: 409 Conflict: the object has been modified/);
    await check('invalid', 422, 'Invalid', /spec\.appsDomain: Invalid value/);
    await check('busy', 503, 'ServiceUnavailable', /apiserver is shutting down/);
    const err = await client.get(R.ingresses, 'busy').catch((e: unknown) => e);
    assert.equal(retryAfterMs(err), 7000);
    const body = JSON.parse(server.requests.find((r) => r.method === 'PUT')?.body ?? '{}') as KubeObject;
    assert.equal(body.apiVersion, 'config.openshift.io/v1', 'type meta is filled in');
    assert.equal(body.kind, 'Ingress');
  });

  test('an error without a Status object still gets a reason from the HTTP code', async () => {
    server.setHandler((_req, res) => { res.writeHead(502, { 'Content-Type': 'text/plain' }); res.end('bad gateway from proxy'); });
    const client = await connect(kubeconfigYaml(server.url, pki));
    await assert.rejects(client.list(R.nodes), (err: unknown) => err instanceof ApiError && err.statusCode === 502 && err.reason === 'InternalError' && /bad gateway from proxy/.test(err.message));
  });

  test('a connection reset is a ConnectionError, as is a refused connection', async () => {
    server.setHandler((_req, res) => { res.socket?.destroy(); });
    const client = await connect(kubeconfigYaml(server.url, pki));
    await assert.rejects(client.get(R.nodes, 'sno1'), (err: unknown) => err instanceof ConnectionError && err.code === 'ECONNRESET' && /connection reset/.test(err.message));

    const closed: Server = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await connect(kubeconfigYaml(`https://127.0.0.1:${port}`, pki));
    await assert.rejects(refused.get(R.nodes, 'sno1'), (err: unknown) => err instanceof ConnectionError && err.code === 'ECONNREFUSED' && /not listening yet/.test(err.message));
  });

  test('a server that never answers hits the per-request timeout as a ConnectionError', async () => {
    server.setHandler(() => { /* never answer */ });
    const client = await connect(kubeconfigYaml(server.url, pki), { timeoutMs: 300 });
    await assert.rejects(client.get(R.nodes, 'sno1'), (err: unknown) => err instanceof ConnectionError && err.code === 'ETIMEDOUT' && /timed out/.test(err.message));
    const fast = await connect(kubeconfigYaml(server.url, pki), { timeoutMs: 60_000 });
    await assert.rejects(fast.get(R.nodes, 'sno1', undefined, { timeoutMs: 200 }), (err: unknown) => err instanceof ConnectionError && err.code === 'ETIMEDOUT');
  });

  test('an answer whose body stalls midway also hits the deadline, reported as a timeout', async () => {
    server.setHandler((_req, res) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.write('{"kind":"Node",'); });
    const client = await connect(kubeconfigYaml(server.url, pki), { timeoutMs: 300 });
    await assert.rejects(client.get(R.nodes, 'sno1'), (err: unknown) => err instanceof ConnectionError && err.code === 'ETIMEDOUT' && /GET https:\/\/127\.0\.0\.1:\d+\/api\/v1\/nodes\/sno1: timed out/.test(err.message));
  });

  test('patch types map to their content types; create posts to the namespaced collection', async () => {
    server.setHandler((req, res) => sendJson(res, 200, { metadata: { name: 'x' }, echo: req.headers['content-type'] }));
    const client = await connect(kubeconfigYaml(server.url, pki));
    const seen: string[] = [];
    for (const t of ['merge', 'json', 'strategic'] as const) {
      const out = await client.patch<KubeObject>(R.apiServers, 'cluster', t === 'json' ? [{ op: 'add', path: '/spec/x', value: 1 }] : { spec: { x: 1 } }, t);
      seen.push(String(out.echo));
      assert.equal(server.requests.at(-1)?.method, 'PATCH');
      assert.equal(server.requests.at(-1)?.path, '/apis/config.openshift.io/v1/apiservers/cluster');
    }
    assert.deepEqual(seen, ['application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json']);
    await client.create(R.configMaps, { metadata: { name: 'registry-cas', namespace: 'openshift-config' }, data: { a: 'b' } });
    const post = server.requests.at(-1);
    assert.equal(post?.method, 'POST');
    assert.equal(post?.path, '/api/v1/namespaces/openshift-config/configmaps');
    assert.equal(post?.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(post?.body ?? '{}'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'registry-cas', namespace: 'openshift-config' }, data: { a: 'b' } });
  });

  test('list passes selectors and fills kind/apiVersion of items', async () => {
    server.setHandler((_req, res) => sendJson(res, 200, { kind: 'RouteList', apiVersion: 'route.openshift.io/v1', metadata: { resourceVersion: '42' }, items: [{ metadata: { name: 'console', namespace: 'openshift-console' } }] }));
    const client = await connect(kubeconfigYaml(server.url, pki));
    const list = await client.list(R.routes, { namespace: 'openshift-console', labelSelector: 'app=console', fieldSelector: 'metadata.name=console' });
    assert.equal(list.resourceVersion, '42');
    assert.equal(list.items[0]?.kind, 'Route');
    assert.equal(list.items[0]?.apiVersion, 'route.openshift.io/v1');
    const req = server.requests.at(-1);
    assert.equal(req?.path, '/apis/route.openshift.io/v1/namespaces/openshift-console/routes');
    assert.equal(req?.query.get('labelSelector'), 'app=console');
    assert.equal(req?.query.get('fieldSelector'), 'metadata.name=console');
  });

  test('readyz: ready only on 200 "ok"; failures are described; never throws', async () => {
    server.setHandler((_req, res) => { res.writeHead(200, { 'Content-Type': 'text/plain' }); res.end('ok'); });
    const client = await connect(kubeconfigYaml(server.url, pki));
    assert.deepEqual(await client.readyz(), { ready: true, detail: 'ok' });
    server.setHandler((_req, res) => { res.writeHead(500, { 'Content-Type': 'text/plain' }); res.end('[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n'); });
    const failing = await client.readyz();
    assert.equal(failing.ready, false);
    assert.equal(failing.detail, 'HTTP 500: etcd failed: reason withheld');
    assert.equal(server.requests.at(-1)?.path, '/readyz');
    const refused = await connect(kubeconfigYaml('https://127.0.0.1:1', pki));
    const down = await refused.readyz();
    assert.equal(down.ready, false);
    assert.match(down.detail, /ECONNREFUSED/);
  });

  test('request and response bodies never reach the log, even at debug level', async () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'json', level: 'debug', journal: false, write: (l) => { lines.push(l); } });
    server.setHandler((req, res) => sendJson(res, 200, { metadata: { name: 'pull-secret' }, data: { '.dockerconfigjson': 'c2VjcmV0LWZyb20tc2VydmVy' }, echo: req.body.length }));
    const client = await connect(kubeconfigYaml(server.url, pki, { cluster: { 'certificate-authority-data': b64(pki.caCert) }, user: { token: 'tok-never-logged' } }), { log });
    await client.update(R.secrets, { metadata: { name: 'pull-secret', namespace: 'openshift-config' }, data: { '.dockerconfigjson': 'c3VwZXJzZWNyZXQ=' } });
    assert.ok(lines.length > 0, 'requests are logged at debug');
    const all = lines.join('\n');
    assert.match(all, /\/api\/v1\/namespaces\/openshift-config\/secrets\/pull-secret/);
    for (const secret of ['c3VwZXJzZWNyZXQ=', 'c2VjcmV0LWZyb20tc2VydmVy', 'tok-never-logged']) assert.ok(!all.includes(secret), `${secret} leaked into the log`);
  });

  test('keep-alive: consecutive requests reuse one connection', async () => {
    server.setHandler((_req, res) => sendJson(res, 200, node));
    const client = await connect(kubeconfigYaml(server.url, pki));
    const before = server.requests.length;
    await client.get(R.nodes, 'sno1');
    await client.get(R.nodes, 'sno1');
    await client.get(R.nodes, 'sno1');
    const mine = server.requests.slice(before);
    assert.equal(mine.length, 3);
    assert.ok(mine.every((r) => r.headers.connection === 'keep-alive'));
    assert.equal(new Set(mine.map((r) => r.remotePort)).size, 1, 'all three went over the same connection');
  });
});
