// The HTTP layer of the agent's API client: one keep-alive agent carrying the kubeconfig's TLS trust and
// client certificate, per-request deadlines, and the mapping of failures onto ApiError (the server
// answered) and ConnectionError (it could not be reached). Bodies are never logged: they carry pull
// secrets, keys and tokens.
import * as http from 'node:http';
import * as https from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { V1Status } from '@kubernetes/client-node';
import type { Logger } from '../log';
import type { Kubeconfig } from './kubeconfig';
import { ApiError, ConnectionError } from './types';

export interface TransportOptions {
  timeoutMs: number;
  userAgent: string;
  log?: Logger;
  /** How long a token read from tokenFile is used before the file is read again (default 60 s). */
  tokenFileTtlMs?: number;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the server URL, with its query string. */
  path: string;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
  /** Abort (e.g. the watch's signal): the request fails with a ConnectionError 'aborted'. */
  signal?: AbortSignal;
}

export interface HttpResponse {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Bodies larger than this are refused (a list of every object in a big cluster stays far below). */
const MAX_BODY_BYTES = 256 * 1024 * 1024;
/** client-go re-reads tokenFile at most once a minute (transport/token_source.go, cachingTokenSource). */
const TOKEN_FILE_TTL_MS = 60_000;

/**
 * The kubeconfig's trust and client certificate as one TLS context, built once: given only `ca`, `cert` and `key`,
 * tls.connect builds a new context for every socket (Node's tls docs, `secureContext`: "If a secureContext is not
 * provided, one will be created by passing the entire options object to tls.createSecureContext()"), which parses
 * the key and every CA certificate again at each of a run's connections. Material the context cannot be built from
 * (kubeconfig.ts checks it when loading) is passed as it is, so the connection fails as before, with its reason.
 */
function tlsMaterial(kc: Kubeconfig): { secureContext: SecureContext } | { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const material = { ca: kc.ca, cert: kc.clientCert, key: kc.clientKey };
  try {
    return { secureContext: createSecureContext(material) };
  } catch {
    return material;
  }
}

export class Transport {
  readonly server: URL;
  private readonly agent: http.Agent;
  private readonly isHttps: boolean;
  private token: string | undefined;
  private tokenReadAt = 0;

  constructor(private readonly kc: Kubeconfig, private readonly opts: TransportOptions) {
    this.server = new URL(kc.server);
    this.isHttps = this.server.protocol === 'https:';
    this.token = kc.token;
    this.tokenReadAt = Date.now();
    this.agent = this.isHttps
      ? new https.Agent({
          keepAlive: true,
          maxSockets: 16,
          ...tlsMaterial(kc),
          rejectUnauthorized: !kc.insecureSkipTlsVerify,
          // Node verifies the certificate against `servername` when set (tls.connect: hostname =
          // servername || host), which is what tls-server-name means in client-go.
          ...(kc.tlsServerName ? { servername: kc.tlsServerName } : {}),
        })
      : new http.Agent({ keepAlive: true, maxSockets: 16 });
  }

  close(): void {
    this.agent.destroy();
  }

  /** Buffers the whole response. Non-2xx answers are returned, not thrown (the caller maps them). */
  async request(req: HttpRequest): Promise<HttpResponse> {
    try {
      return await this.once(req);
    } catch (err) {
      // A keep-alive socket the server closed while idle fails the next request with ECONNRESET
      // before anything was processed; Node's docs (http, "request.reusedSocket") advise one retry.
      if (!(err instanceof ReusedSocketReset)) throw err;
      if (req.method === 'POST') throw err.cause;
      // The retry may land on another idle socket the server also closed: never let the marker escape.
      return this.once(req).catch((again: unknown) => {
        throw again instanceof ReusedSocketReset ? again.cause : again;
      });
    }
  }

  /** Opens a streaming GET (watch). Non-2xx answers are read fully and thrown as ApiError. */
  async stream(path: string, signal: AbortSignal, idleTimeoutMs: number): Promise<IncomingMessage> {
    const started = Date.now();
    const { req, res, destroyedBy } = await this.open({ method: 'GET', path, signal }, idleTimeoutMs).catch((err: unknown) => {
      throw err instanceof ReusedSocketReset ? err.cause : err;
    });
    if (res.statusCode && res.statusCode >= 200 && res.statusCode < 300) {
      this.logDone('GET', path, res.statusCode, started);
      return res;
    }
    const body = await readBody(res, req, `GET ${this.server.origin}${path.split('?')[0]}`, destroyedBy);
    this.logDone('GET', path, res.statusCode ?? 0, started);
    throw apiErrorFrom(res.statusCode ?? 0, res.headers, body, 'GET', path);
  }

  private async once(req: HttpRequest): Promise<HttpResponse> {
    const started = Date.now();
    const timeoutMs = req.timeoutMs ?? this.opts.timeoutMs;
    const { req: creq, res, destroyedBy } = await this.open(req, timeoutMs, timeoutMs);
    const body = await readBody(res, creq, `${req.method} ${this.server.origin}${req.path.split('?')[0]}`, destroyedBy);
    this.logDone(req.method, req.path, res.statusCode ?? 0, started);
    return { statusCode: res.statusCode ?? 0, headers: res.headers, body };
  }

  /**
   * Sends the request and resolves when the response headers arrive. `idleMs` bounds socket inactivity;
   * `totalMs` (when given) bounds the whole exchange including the body.
   */
  private async open(req: HttpRequest, idleMs: number, totalMs?: number): Promise<Opened> {
    const headers: http.OutgoingHttpHeaders = { Accept: 'application/json', 'User-Agent': this.opts.userAgent };
    const token = await this.currentToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    let payload: Buffer | undefined;
    if (req.body !== undefined) {
      payload = Buffer.from(JSON.stringify(req.body));
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const basePath = this.server.pathname.replace(/\/+$/, '');
    const target = `${this.server.origin}${basePath}${req.path}`;
    const where = `${req.method} ${this.server.origin}${req.path.split('?')[0]}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const lib = this.isHttps ? https : http;
      const creq = lib.request(target, { method: req.method, headers, agent: this.agent });
      let destroyReason: Error | undefined;
      const kill = (err: Error) => { destroyReason ??= err; creq.destroy(err); };
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        cleanup();
        const mapped = toConnectionError(err, where, this.kc);
        if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' && creq.reusedSocket) reject(new ReusedSocketReset(mapped));
        else reject(mapped);
      };
      const total = totalMs !== undefined
        ? setTimeout(() => kill(new TimeoutError(`no complete answer within ${totalMs} ms`)), totalMs)
        : undefined;
      const onAbort = () => kill(new AbortedError());
      const cleanup = () => { req.signal?.removeEventListener('abort', onAbort); };
      if (req.signal?.aborted) { onAbort(); } else req.signal?.addEventListener('abort', onAbort, { once: true });
      creq.setTimeout(idleMs, () => kill(new TimeoutError(`no data for ${idleMs} ms`)));
      creq.on('error', (err) => {
        if (total) clearTimeout(total);
        fail(err);
      });
      creq.on('response', (res) => {
        if (settled) { res.resume(); return; }
        settled = true;
        // The total timer keeps running until the body is read; the idle timer keeps guarding the stream.
        res.on('close', () => { if (total) clearTimeout(total); cleanup(); });
        resolve({ req: creq, res, destroyedBy: () => destroyReason });
      });
      creq.end(payload);
    });
  }

  private async currentToken(): Promise<string | undefined> {
    if (this.kc.tokenFile && Date.now() - this.tokenReadAt >= (this.opts.tokenFileTtlMs ?? TOKEN_FILE_TTL_MS)) {
      try {
        this.token = (await this.kc.readFile(this.kc.tokenFile)).toString('utf8').trim();
        this.tokenReadAt = Date.now();
      } catch (e) {
        // Keep the last good token; the server will say 401 if it really expired.
        this.opts.log?.warn({ tokenFile: this.kc.tokenFile, err: (e as Error).message }, 'cannot re-read the kubeconfig token file');
      }
    }
    return this.token;
  }

  private logDone(method: string, path: string, status: number, started: number): void {
    this.opts.log?.debug({ method, path: path.split('?')[0], status, ms: Date.now() - started }, 'api request');
  }
}

interface Opened {
  req: http.ClientRequest;
  res: IncomingMessage;
  /** The error we destroyed the request with (deadline, abort), if we did. */
  destroyedBy: () => Error | undefined;
}

class ReusedSocketReset extends Error {
  constructor(override readonly cause: ConnectionError) {
    super(cause.message);
  }
}

class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

export class AbortedError extends Error {
  readonly code = 'ABORT_ERR';
  constructor() {
    super('aborted');
  }
}

function readBody(res: IncomingMessage, req: http.ClientRequest, where: string, destroyedBy: () => Error | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (err: unknown) => {
      if (done) return;
      done = true;
      // When we destroyed the request (deadline, abort), say so rather than "connection reset".
      reject(toConnectionError(destroyedBy() ?? err, where));
    };
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        fail(new ConnectionError(`${where}: the answer exceeds ${MAX_BODY_BYTES} bytes`, 'E2BIG'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    res.on('end', () => { if (!done) { done = true; resolve(Buffer.concat(chunks)); } });
    res.on('error', fail);
    res.on('aborted', () => fail(Object.assign(new Error('connection closed while reading the answer'), { code: 'ECONNRESET' })));
  });
}

const CONNECTION_HINTS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (the API server is not listening yet)',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed by the server',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable (check the node network)',
  ENETUNREACH: 'network unreachable (check the node network)',
  ENOTFOUND: 'the server name does not resolve (check DNS)',
  EAI_AGAIN: 'DNS lookup failed temporarily',
};

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_OSSL_|HOSTNAME_MISMATCH)/;

/** Maps a socket-level failure to a ConnectionError whose message says what failed and what it means. */
export function toConnectionError(err: unknown, where: string, kc?: Kubeconfig): ConnectionError {
  if (err instanceof ConnectionError) return err;
  const e = err as NodeJS.ErrnoException & { reason?: string };
  const code = e?.code ?? (e instanceof Error && /socket hang up/.test(e.message) ? 'ECONNRESET' : undefined);
  if (err instanceof TimeoutError) return new ConnectionError(`${where}: timed out (${err.message})`, 'ETIMEDOUT', { cause: err });
  if (err instanceof AbortedError) return new ConnectionError(`${where}: aborted`, 'ABORT_ERR', { cause: err });
  if (code && TLS_CODES.test(code)) {
    const name = kc?.tlsServerName ? ` (verified as ${kc.tlsServerName})` : '';
    return new ConnectionError(`${where}: TLS failure${name}: ${e.message} [${code}] — the server certificate is not trusted by the kubeconfig's certificate-authority, or the client certificate was refused`, code, { cause: err });
  }
  if (code && CONNECTION_HINTS[code]) return new ConnectionError(`${where}: ${CONNECTION_HINTS[code]} [${code}]`, code, { cause: err });
  const message = e instanceof Error ? e.message : String(err);
  // OpenSSL alerts (e.g. the server refused our client certificate) come without a Node error code.
  if (/alert|ssl|tls|certificate/i.test(message)) return new ConnectionError(`${where}: TLS failure: ${message}`, code ?? 'ETLS', { cause: err });
  return new ConnectionError(`${where}: ${message}${code ? ` [${code}]` : ''}`, code, { cause: err });
}

/** An ApiError from a non-2xx answer: the Status object when the server sent one (it usually does). */
export function apiErrorFrom(statusCode: number, headers: http.IncomingHttpHeaders, body: Buffer, method: string, path: string): ApiError {
  let status: V1Status | undefined;
  const text = body.toString('utf8');
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && (parsed as { kind?: string }).kind === 'Status') status = parsed as V1Status;
  } catch {
    // not JSON: a proxy or a plain-text error
  }
  const retryAfter = parseRetryAfter(headers['retry-after']);
  if (retryAfter !== undefined) {
    status = status ?? { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: statusCode };
    status.details = { ...(status.details ?? {}), retryAfterSeconds: status.details?.retryAfterSeconds ?? retryAfter };
  }
  const reason = status?.reason || defaultReason(statusCode);
  // A Status message never holds secret values (apiserver validation redacts them); a non-Status body
  // is shortened and only shown when it is plain text.
  const detail = status?.message
    || (/^text\/plain/.test(headers['content-type'] ?? '') ? text.trim().slice(0, 200) : '')
    || http.STATUS_CODES[statusCode] || 'error';
  return new ApiError(statusCode, reason, `${method} ${path.split('?')[0]}: ${statusCode} ${reason}: ${detail}`, status);
}

function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(v);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** metav1.StatusReason names for answers that came without a Status (apimachinery errors.go). */
function defaultReason(code: number): string {
  switch (code) {
    case 400: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 405: return 'MethodNotAllowed';
    case 406: return 'NotAcceptable';
    case 409: return 'Conflict';
    case 410: return 'Expired';
    case 413: return 'RequestEntityTooLarge';
    case 415: return 'UnsupportedMediaType';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    case 500: return 'InternalError';
    case 503: return 'ServiceUnavailable';
    case 504: return 'Timeout';
    default: return code >= 500 ? 'InternalError' : 'Unknown';
  }
}
