// The kubelet's (and the hostile requestors') way into the cluster: plain HTTPS with a client
// certificate, against the simulated kube-apiserver's real wire protocol — never the store directly, so
// the authentication, authorization and approval paths are the ones the agent meets.
import { request } from 'node:https';

export interface Credentials {
  server: string;
  caPem: string;
  certPem?: string;
  keyPem?: string;
  /** TLS server name to send and verify (kubeconfig tls-server-name). */
  tlsServerName?: string;
}

export interface HttpAnswer {
  status: number;
  body: unknown;
}

export class KubeHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'KubeHttpError';
  }
}

function tlsOptions(c: Credentials) {
  return { ca: c.caPem, cert: c.certPem, key: c.keyPem, rejectUnauthorized: true, ...(c.tlsServerName ? { servername: c.tlsServerName } : {}) };
}

/** One request; resolves with the status and parsed JSON (or text); rejects only when no answer came. */
export function kubeRequest(c: Credentials, method: string, path: string, body?: unknown, opts: { contentType?: string; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, c.server);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(
      url,
      {
        method,
        ...tlsOptions(c),
        signal: opts.signal,
        headers: {
          Accept: 'application/json',
          ...(payload ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': payload.length } : {}),
        },
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON (e.g. /readyz "ok")
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${opts.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** kubeRequest that throws KubeHttpError on a non-2xx answer and returns the JSON body. */
export async function kubeCall<T>(c: Credentials, method: string, path: string, body?: unknown, opts: { contentType?: string; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
  const ans = await kubeRequest(c, method, path, body, opts);
  if (ans.status < 200 || ans.status >= 300) {
    const msg = (ans.body as { message?: string } | undefined)?.message ?? String(ans.body);
    throw new KubeHttpError(ans.status, `${method} ${path}: ${ans.status} ${msg}`, ans.body);
  }
  return ans.body as T;
}

/**
 * Streams a watch (`?watch=true`): calls onEvent per JSON line until the server ends the stream, the
 * signal aborts or onEvent returns true (done). Resolves with whether onEvent said done.
 */
export function kubeWatch(c: Credentials, path: string, onEvent: (e: { type: string; object: Record<string, unknown> }) => boolean, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, c.server);
    url.searchParams.set('watch', 'true');
    /** An outcome was reached: later lines are not handed to onEvent. */
    let finished = false;
    const req = request(url, { method: 'GET', ...tlsOptions(c), signal, headers: { Accept: 'application/json' } }, (res) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        finished = true;
        reject(new KubeHttpError(res.statusCode ?? 0, `watch ${path}: ${res.statusCode}`));
        return;
      }
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line || finished) continue;
          try {
            if (onEvent(JSON.parse(line) as { type: string; object: Record<string, unknown> })) {
              finished = true;
              req.destroy();
              resolve(true);
              return;
            }
          } catch (e) {
            finished = true;
            req.destroy();
            reject(e as Error);
            return;
          }
        }
      });
      // A promise settles once: whatever ends the stream after an outcome changes nothing.
      res.on('end', () => resolve(false));
      res.on('close', () => resolve(false));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
