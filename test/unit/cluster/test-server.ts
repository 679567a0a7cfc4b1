// A real node:https server for the client tests: TLS with the test PKI, the client certificate requested
// (and recorded) like kube-apiserver does, bearer tokens recorded, every request kept for assertions.
// Routes are plain handler functions set per test.
import * as https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { makePki, type Pki } from './pki';
import { createClusterClient, type ClosableClusterClient, type ClusterClientOptions } from '../../../src/cluster/client';
import { parseKubeconfig } from '../../../src/cluster/kubeconfig';
import { readFile } from 'node:fs/promises';

export interface RecordedRequest {
  method: string;
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** CN of the verified client certificate, when one was presented. */
  clientCN?: string;
  /** The client's source port: equal for requests that shared a keep-alive connection. */
  remotePort?: number;
}

export type Handler = (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface TestServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  setHandler(h: Handler): void;
  close(): Promise<void>;
}

export async function startTestServer(pki: Pki, opts: { cert?: 'localhost' | 'internal'; handler?: Handler } = {}): Promise<TestServer> {
  let handler: Handler = opts.handler ?? ((_req, res) => sendJson(res, 404, status(404, 'NotFound', 'no handler')));
  const requests: RecordedRequest[] = [];
  const internal = opts.cert === 'internal';
  const server = https.createServer({
    key: internal ? pki.internalServerKey : pki.serverKey,
    cert: internal ? pki.internalServerCert : pki.serverCert,
    ca: pki.caCert,
    requestCert: true,
    rejectUnauthorized: false,
  }, (raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.on('end', () => {
      const socket = raw.socket as TLSSocket;
      const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
      const url = new URL(raw.url ?? '/', 'https://x');
      const rec: RecordedRequest = {
        method: raw.method ?? 'GET',
        url: raw.url ?? '/',
        path: url.pathname,
        query: url.searchParams,
        headers: raw.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientCN: peer && peer.subject ? String(peer.subject.CN) : undefined,
        remotePort: socket.remotePort,
      };
      requests.push(rec);
      Promise.resolve(handler(rec, res, raw)).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, status(500, 'InternalError', String(err)));
      });
    });
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('secureConnection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    setHandler: (h) => { handler = h; },
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

export function status(code: number, reason: string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details ? { details } : {}) };
}

export function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A kubeconfig YAML pointing at `url`, with the test PKI embedded as *-data fields unless overridden. */
export function kubeconfigYaml(url: string, pki: Pki, opts: { user?: Record<string, string>; cluster?: Record<string, string | boolean> } = {}): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const cluster = opts.cluster ?? { 'certificate-authority-data': b64(pki.caCert) };
  const user = opts.user ?? { 'client-certificate-data': b64(pki.clientCert), 'client-key-data': b64(pki.clientKey) };
  const indent = (o: Record<string, unknown>) => Object.entries(o).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`).join('\n');
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: test',
    'clusters:',
    '  - name: test-cluster',
    '    cluster:',
    `      server: ${url}`,
    indent(cluster),
    'users:',
    '  - name: test-user',
    '    user:',
    Object.keys(user).length ? indent(user) : '      {}',
    'contexts:',
    '  - name: test',
    '    context: {cluster: test-cluster, user: test-user}',
    '',
  ].join('\n');
}

/** The agent's cluster client, authenticated with the test PKI's client certificate, for `server`. */
export async function clientFor(server: TestServer, pki: Pki, opts: ClusterClientOptions = {}): Promise<ClosableClusterClient> {
  return createClusterClient(await parseKubeconfig(kubeconfigYaml(server.url, pki), { source: 'test', baseDir: pki.dir, read: (p) => readFile(p) }), opts);
}

/** A test server, its PKI and a client of it for the enclosing suite (made before its tests, closed after). */
export function testServerPerSuite(use: (t: { pki: Pki; server: TestServer; client: ClosableClusterClient }) => void, clientOpts: ClusterClientOptions = {}): void {
  let made: { pki: Pki; server: TestServer; client: ClosableClusterClient } | undefined;
  before(async () => {
    const pki = makePki();
    const server = await startTestServer(pki);
    made = { pki, server, client: await clientFor(server, pki, clientOpts) };
    use(made);
  });
  after(async () => {
    made?.client.close();
    await made?.server.close();
    made?.pki.cleanup();
  });
}
