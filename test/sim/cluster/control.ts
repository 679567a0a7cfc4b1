// The control channel for out-of-process stand-ins (a `systemctl` script on PATH, a kubelet.service in the
// systemd end-to-end test, the demo): plain HTTP on 127.0.0.1, JSON in and out. Its URL is written to
// <dir>/control-url.
//   POST /sim/kubelet/start   — `systemctl start kubelet`
//   POST /sim/kubelet/stop    — `systemctl stop kubelet`
//   POST /sim/faults          — {"api": ApiFaults, "apiUnavailableForMs": n, "apiResetForMs": n,
//                                "kubeletFilesNoCsrs": bool, "apiNeverUp": bool,
//                                "hostileCsr": kind, "degrade": {"operator","reason","message"}, "recover": operator}
//   GET  /sim/state           — what the simulated cluster is doing now
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiFaults } from '../store-types';
import type { HostileCsrKind, InjectedCsr } from './hostile';

export interface FaultRequest {
  /** Raw API faults (deadlines in simulated ms since 1970, like the simulator's clock). */
  api?: ApiFaults;
  /** 503 ServiceUnavailable for this many simulated ms from now. */
  apiUnavailableForMs?: number;
  /** Connections reset for this many simulated ms from now. */
  apiResetForMs?: number;
  kubeletFilesNoCsrs?: boolean;
  apiNeverUp?: boolean;
  hostileCsr?: HostileCsrKind;
  degrade?: { operator: string; reason: string; message?: string };
  recover?: string;
}

export interface Controllable {
  startKubelet(): void;
  stopKubelet(): void;
  applyFaults(f: FaultRequest): Promise<{ injected?: InjectedCsr }>;
  snapshot(): unknown;
}

export async function startControlServer(target: Controllable, port = 0): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    handle(target, req, res).catch((e: Error) => send(res, 500, { error: e.message }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(target: Controllable, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  if (req.method === 'POST' && path === '/sim/kubelet/start') {
    target.startKubelet();
    return send(res, 200, { ok: true });
  }
  if (req.method === 'POST' && path === '/sim/kubelet/stop') {
    target.stopKubelet();
    return send(res, 200, { ok: true });
  }
  if (req.method === 'POST' && path === '/sim/faults') {
    if (!body || typeof body !== 'object' || Array.isArray(body)) return send(res, 400, { error: 'body: expected a JSON object of faults' });
    try {
      return send(res, 200, { ok: true, ...(await target.applyFaults(body as FaultRequest)) });
    } catch (e) {
      return send(res, 400, { error: (e as Error).message });
    }
  }
  if (req.method === 'GET' && path === '/sim/state') return send(res, 200, target.snapshot());
  return send(res, 404, { error: `no such control endpoint: ${req.method} ${path}` });
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        resolve(Symbol.for('invalid-json'));
      }
    });
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}
