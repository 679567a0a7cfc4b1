// The agent's Kubernetes client: ClusterClient (./types) over node:https. @kubernetes/client-node would
// cost ~270 KiB of the 200 KiB MachineConfig budget (reference/runtime-libs.md section 1), so it only
// supplies types here.
import type { Logger } from '../log';
import { VERSION } from '../version';
import { approveCsr } from './approval';
import { apiErrorFrom, Transport, type HttpRequest } from './http';
import type { Kubeconfig } from './kubeconfig';
import { resourcePath } from './resources';
import type { Backoff, Sleep } from '../util/backoff';
import { runWatch } from './watch';
import type {
  ClusterClient, KubeObject, ListOptions, ObjectList, PatchType, RequestOptions, ResourceType, WatchEvent, WatchOptions,
} from './types';

export interface ClusterClientOptions {
  /** Per-request deadline (default 30 s). Watches use an idle timeout instead. */
  timeoutMs?: number;
  userAgent?: string;
  log?: Logger;
  /** Watch reconnect backoff (default DEFAULT_WATCH_BACKOFF in watch.ts) and its sleep; tests shorten them. */
  watchBackoff?: Partial<Backoff>;
  sleep?: Sleep;
  /** Server-side watch duration in seconds (default random 300-600, like client-go's reflector). */
  watchTimeoutSeconds?: number;
  /** Re-read interval of the kubeconfig's tokenFile (default 60 s, as client-go). */
  tokenFileTtlMs?: number;
  /**
   * A watch stream silent for this long is taken for dead and re-opened from its resourceVersion
   * (default 150 s: kube-apiserver's watch cache sends a BOOKMARK about every minute to watches that
   * allow them, so a healthy stream is never that quiet; a peer gone without a RST otherwise goes
   * unnoticed for the kernel's ~11 min of TCP keepalive probes).
   */
  watchIdleTimeoutMs?: number;
}

/** A ClusterClient that can also release its keep-alive sockets. */
export interface ClosableClusterClient extends ClusterClient {
  close(): void;
}

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export function createClusterClient(kc: Kubeconfig, opts: ClusterClientOptions = {}): ClosableClusterClient {
  const transport = new Transport(kc, {
    timeoutMs: opts.timeoutMs ?? 30_000,
    userAgent: opts.userAgent ?? `sno-reconfigure/${VERSION}`,
    log: opts.log,
    tokenFileTtlMs: opts.tokenFileTtlMs,
  });

  /** Sends and decodes JSON; non-2xx → ApiError. */
  const call = async <R>(req: HttpRequest): Promise<R> => {
    const res = await transport.request(req);
    if (res.statusCode < 200 || res.statusCode >= 300) throw apiErrorFrom(res.statusCode, res.headers, res.body, req.method, req.path);
    return decodeJson<R>(res.body, req);
  };

  const objectPath = (type: ResourceType, name: string, namespace?: string) => {
    if (!name) throw new TypeError(`${type.kind}: a name is required`);
    if (type.namespaced && !namespace) throw new TypeError(`${type.kind} ${name}: a namespace is required`);
    return resourcePath(type, namespace, name);
  };

  const list = async <T extends KubeObject>(type: ResourceType, o: ListOptions & RequestOptions = {}): Promise<ObjectList<T>> => {
    const path = resourcePath(type, o.namespace) + query({ labelSelector: o.labelSelector, fieldSelector: o.fieldSelector });
    const body = await call<{ items?: T[]; metadata?: { resourceVersion?: string } }>({ method: 'GET', path, timeoutMs: o.timeoutMs });
    const kind = type.kind;
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    // List items come without kind/apiVersion; fill them in so the objects can be written back as-is.
    const items = (body.items ?? []).map((item) => ({ ...item, kind: item.kind ?? kind, apiVersion: item.apiVersion ?? apiVersion }));
    return { items, resourceVersion: body.metadata?.resourceVersion ?? '' };
  };

  const client: ClosableClusterClient = {
    server: kc.server,

    async readyz(o?: RequestOptions) {
      try {
        const res = await transport.request({ method: 'GET', path: '/readyz', timeoutMs: o?.timeoutMs ?? Math.min(10_000, opts.timeoutMs ?? 10_000) });
        const text = res.body.toString('utf8').trim();
        if (res.statusCode === 200 && text === 'ok') return { ready: true, detail: 'ok' };
        const failed = text.split('\n').filter((l) => l.startsWith('[-]')).map((l) => l.slice(3).trim());
        const detail = failed.length ? failed.join('; ') : text.slice(0, 300) || 'no detail';
        return { ready: false, detail: `HTTP ${res.statusCode}: ${detail}`, ...(res.statusCode === 401 ? { unauthorized: true } : {}) };
      } catch (err) {
        return { ready: false, detail: err instanceof Error ? err.message : String(err) };
      }
    },

    async get<T extends KubeObject>(type: ResourceType, name: string, namespace?: string, o?: RequestOptions) {
      const path = objectPath(type, name, namespace);
      const res = await transport.request({ method: 'GET', path, timeoutMs: o?.timeoutMs });
      if (res.statusCode === 404) return undefined;
      if (res.statusCode < 200 || res.statusCode >= 300) throw apiErrorFrom(res.statusCode, res.headers, res.body, 'GET', path);
      return decodeJson<T>(res.body, { method: 'GET', path });
    },

    list,

    async create<T extends KubeObject>(type: ResourceType, obj: T, o?: RequestOptions) {
      const path = resourcePath(type, type.namespaced ? namespaceOf(type, obj) : undefined);
      return call<T>({ method: 'POST', path, body: withTypeMeta(type, obj), timeoutMs: o?.timeoutMs });
    },

    async update<T extends KubeObject>(type: ResourceType, obj: T, o?: RequestOptions) {
      const path = objectPath(type, nameOf(type, obj), type.namespaced ? namespaceOf(type, obj) : undefined);
      return call<T>({ method: 'PUT', path, body: withTypeMeta(type, obj), timeoutMs: o?.timeoutMs });
    },

    async patch<T extends KubeObject>(type: ResourceType, name: string, patch: unknown, patchType: PatchType, namespace?: string, o?: RequestOptions) {
      const contentType = PATCH_CONTENT_TYPES[patchType];
      if (!contentType) throw new TypeError(`unknown patch type ${String(patchType)}`);
      return call<T>({ method: 'PATCH', path: objectPath(type, name, namespace), body: patch, contentType, timeoutMs: o?.timeoutMs });
    },

    async delete(type: ResourceType, name: string, namespace?: string, o?: RequestOptions) {
      const path = objectPath(type, name, namespace);
      const res = await transport.request({ method: 'DELETE', path, timeoutMs: o?.timeoutMs });
      if (res.statusCode === 404) return false;
      if (res.statusCode < 200 || res.statusCode >= 300) throw apiErrorFrom(res.statusCode, res.headers, res.body, 'DELETE', path);
      return true;
    },

    async watch<T extends KubeObject>(type: ResourceType, o: WatchOptions & { resourceVersion?: string }, onEvent: (event: WatchEvent<T>) => void | Promise<void>) {
      const selectors = { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector };
      const basePath = resourcePath(type, o.namespace);
      const what = `${type.plural}${o.namespace ? ` in ${o.namespace}` : ''}${o.fieldSelector ? ` (${o.fieldSelector})` : ''}`;
      const fixedTimeout = opts.watchTimeoutSeconds;
      await runWatch<T>(
        {
          what,
          log: opts.log,
          sleep: opts.sleep,
          backoff: opts.watchBackoff,
          timeoutSeconds: fixedTimeout !== undefined ? () => fixedTimeout : undefined,
          list: () => list<KubeObject>(type, { namespace: o.namespace, ...selectors }),
          open: (resourceVersion, timeoutSeconds) => {
            const path = basePath + query({ watch: '1', resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds), ...selectors });
            return transport.stream(path, o.signal, opts.watchIdleTimeoutMs ?? Math.min(timeoutSeconds + 60, 150) * 1000);
          },
        },
        o.resourceVersion,
        o.signal,
        onEvent,
      );
    },

    async resourceTypes(apiVersion: string, o?: RequestOptions) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const res = await transport.request({ method: 'GET', path, timeoutMs: o?.timeoutMs });
      if (res.statusCode === 404) return undefined;
      if (res.statusCode < 200 || res.statusCode >= 300) throw apiErrorFrom(res.statusCode, res.headers, res.body, 'GET', path);
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') as [string, string] : ['', apiVersion];
      const list = decodeJson<{ resources?: { name: string; kind: string; namespaced: boolean }[] }>(res.body, { method: 'GET', path });
      // Subresources (pods/log) are listed with a '/' in their name.
      return (list.resources ?? []).filter((r) => !r.name.includes('/')).map((r) => ({ group, version, plural: r.name, kind: r.kind, namespaced: r.namespaced }));
    },

    async approveCsr(name: string, reason: string, message: string) {
      await approveCsr({ get: client.get, call, ...(opts.sleep ? { sleep: opts.sleep } : {}) }, name, reason, message);
    },

    close() {
      transport.close();
    },
  };
  return client;
}

function decodeJson<R>(body: Buffer, req: Pick<HttpRequest, 'method' | 'path'>): R {
  if (body.length === 0) return {} as R;
  try {
    return JSON.parse(body.toString('utf8')) as R;
  } catch (e) {
    throw new SyntaxError(`${req.method} ${req.path.split('?')[0]}: the server answered with a body that is not JSON`, { cause: e });
  }
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

function nameOf(type: ResourceType, obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`${type.kind}: metadata.name is required`);
  return name;
}

function namespaceOf(type: ResourceType, obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  if (!ns) throw new TypeError(`${type.kind} ${obj.metadata?.name ?? obj.metadata?.generateName ?? ''}: metadata.namespace is required`);
  return ns;
}

function withTypeMeta<T extends KubeObject>(type: ResourceType, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? (type.group ? `${type.group}/${type.version}` : type.version), kind: obj.kind ?? type.kind };
}
