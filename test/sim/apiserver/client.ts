// A raw HTTPS client for tests of the simulated API server: exact status codes, headers and bodies, no
// client-library behaviour in between. Authenticates with a client certificate (CN/O from the identity),
// a bearer token, or nothing (anonymous).
import { request as httpsRequest, Agent } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { Identity } from '../store-types';
import { issueClientCert, type KeyAndCert } from '../pki';
import type { ApiServer } from './server';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Parsed JSON body, when the body is JSON. */
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** Default application/json for POST/PUT, application/merge-patch+json for PATCH. */
  contentType?: string | null;
  query?: Record<string, string>;
}

export interface WatchEventLine {
  type: string;
  object: Record<string, unknown> & { metadata?: { name?: string; resourceVersion?: string } };
}

export interface WatchHandle {
  events: WatchEventLine[];
  /** Resolves with the next event (waits when none is buffered). Rejects when the stream ends first. */
  next(timeoutMs?: number): Promise<WatchEventLine>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export type Credentials = { identity: Identity } | { token: string } | { anonymous: true } | { certPem: string; keyPem: string };

const certCache = new WeakMap<ApiServer, Map<string, KeyAndCert>>();

function clientCert(server: ApiServer, id: Identity): KeyAndCert {
  let perServer = certCache.get(server);
  if (!perServer) {
    perServer = new Map();
    certCache.set(server, perServer);
  }
  const key = `${id.user}|${id.groups.join(',')}`;
  let kc = perServer.get(key);
  if (!kc) {
    kc = issueClientCert(server.ca, { user: id.user, groups: id.groups.filter((g) => g !== 'system:authenticated') });
    perServer.set(key, kc);
  }
  return kc;
}

export class SimClient {
  private readonly agent: Agent;
  private readonly headers: Record<string, string> = {};

  constructor(
    readonly server: ApiServer,
    creds: Credentials,
  ) {
    let tls: { cert?: string; key?: string } = {};
    if ('identity' in creds) {
      const kc = clientCert(server, creds.identity);
      tls = { cert: kc.certPem, key: kc.keyPem };
    } else if ('certPem' in creds) {
      tls = { cert: creds.certPem, key: creds.keyPem };
    } else if ('token' in creds) {
      this.headers.authorization = `Bearer ${creds.token}`;
    }
    this.agent = new Agent({ ca: server.caPem, ...tls, keepAlive: false });
  }

  request(method: string, path: string, opts: RequestOptions = {}): Promise<RawResponse> {
    const url = new URL(path, this.server.url);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { ...this.headers, accept: 'application/json' };
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      const ct = opts.contentType === undefined ? (method === 'PATCH' ? 'application/merge-patch+json' : 'application/json') : opts.contentType;
      if (ct !== null) headers['content-type'] = ct;
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(path: string, query?: Record<string, string>): Promise<RawResponse> {
    return this.request('GET', path, { query });
  }

  /** Opens a watch (adds watch=true) and collects its JSON lines. */
  watch(path: string, query: Record<string, string> = {}): Promise<WatchHandle> {
    const url = new URL(path, this.server.url);
    for (const [k, v] of Object.entries({ watch: 'true', ...query })) url.searchParams.set(k, v);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method: 'GET', headers: { ...this.headers }, agent: this.agent }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`watch ${path}: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        const events: WatchEventLine[] = [];
        const waiters: { resolve: (e: WatchEventLine) => void; reject: (e: Error) => void }[] = [];
        let buffer = '';
        let consumed = 0;
        let done = false;
        const flush = () => {
          while (waiters.length > 0 && consumed < events.length) waiters.shift()?.resolve(events[consumed++]);
          if (done) while (waiters.length > 0) waiters.shift()?.reject(new Error('watch stream ended'));
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl = buffer.indexOf('\n');
          while (nl >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line) events.push(JSON.parse(line) as WatchEventLine);
            nl = buffer.indexOf('\n');
          }
          flush();
        });
        const ended = new Promise<void>((res2) => {
          const finish = () => {
            done = true;
            flush();
            res2();
          };
          res.on('end', finish);
          res.on('close', finish);
          res.on('error', finish);
        });
        resolve({
          events,
          ended,
          next: (timeoutMs = 5000) =>
            new Promise<WatchEventLine>((res3, rej3) => {
              const timer = setTimeout(() => rej3(new Error(`no watch event within ${timeoutMs} ms`)), timeoutMs);
              waiters.push({
                resolve: (e) => {
                  clearTimeout(timer);
                  res3(e);
                },
                reject: (e) => {
                  clearTimeout(timer);
                  rej3(e);
                },
              });
              flush();
            }),
          close: () => {
            req.destroy();
          },
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
