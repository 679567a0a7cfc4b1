// The simulated kube-apiserver: HTTPS with its own CA, client-certificate and bearer-token authentication,
// the REST verbs over the SimObjectStore, discovery, health endpoints, watch streams, injectable faults
// (ApiFaults), availability gating (down = the port refuses connections) and a request log.
import { stablePort } from '../ports';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../../src/cluster/types';
import type { ApiFaults, Identity } from '../store-types';
import { issueClientCert, issueServerCert, sharedCa, writeKubeconfig, type CertificateAuthority } from '../pki';
import { ANONYMOUS, authenticate, authorize, REFUSED, type AccessRule } from './auth';
import { apiGroupDoc, apiGroupList, apiResourceList, apiVersions } from './discovery';
import { openApiV3Document, openApiV3Root } from './openapi';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch';
import { apiVersionOf, openShiftMinor, type ServedResource } from './resources';
import { parseFieldSelector, parseLabelSelector } from './selectors';
import {
  SimApiError,
  badRequest,
  conflict,
  forbidden,
  internalError,
  invalid,
  methodNotAllowed,
  noSuchResource,
  notFound,
  serviceUnavailable,
  statusBody,
  successStatus,
  unauthorized,
  unsupportedMediaType,
} from './status';
import { createStore, type SimObjectStore, type UpdatePath } from './store';
import { serveWatch, type ActiveWatch } from './watch';

export interface ApiServerOptions {
  /** More CAs (PEM) whose client certificates are accepted, beside `ca` (kube-apiserver's client-ca bundle). */
  clientCas?: string[];
  /** The object store; by default a new one (clusterVersion, persistPath). */
  store?: SimObjectStore;
  /** OpenShift version of a new store (default "4.16.0"); with `store`, the store's version is used. */
  clusterVersion?: string;
  /** Persistence file of a new store. */
  persistPath?: string;
  /** /version gitVersion; default derived from the OpenShift minor (4.N ships Kubernetes 1.(N+13)). */
  kubeVersion?: string;
  /** The cluster CA (serving and client certificates); default: one shared per process (sharedCa()). */
  ca?: CertificateAuthority;
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (any free port, then kept across down/up). */
  port?: number;
  /** Extra DNS names / IPs on the serving certificate (localhost, 127.0.0.1 and ::1 are always there). */
  dnsNames?: string[];
  ips?: string[];
  /** Start listening right away (default true). false: connections are refused until setUp(true). */
  up?: boolean;
  /** Interval of BOOKMARK events on watches that allow them (default 1000 ms; the real server: ~1 min). */
  bookmarkIntervalMs?: number;
  /** Longest watch when the client gives no timeoutSeconds (default 1800 s). */
  maxWatchSeconds?: number;
  /** Clock the faults' deadlines compare with (B2 scales time); default Date.now. */
  now?: () => number;
  /** How `faults.slowMs` is waited, in the same time as `now` (a simulated clock's sleep); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Grants beyond the built-in identities (admin, node-bootstrapper, system:node:<name>). */
  accessRules?: AccessRule[];
  faults?: ApiFaults;
}

/** One request as the server saw it. status 0: the connection was reset without an answer. */
export interface RequestRecord {
  time: number;
  method: string;
  path: string;
  query: string;
  contentType?: string;
  user?: string;
  status: number;
  /** A create's object name (a POST names it in its body, not its path). */
  createdName?: string;
}

export interface NamedServingCertificate {
  /** Host names (exact, or a leading "*." wildcard) this certificate answers for via SNI. */
  names: string[];
  certPem: string;
  keyPem: string;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024; // kube-apiserver's request body limit (runtime-libs.md section 1)
const UNAUTHENTICATED_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);
const PATCH_TYPES_CRD = ['application/json-patch+json', 'application/merge-patch+json'];
const PATCH_TYPES_BUILTIN = [...PATCH_TYPES_CRD, 'application/strategic-merge-patch+json'];

interface ResourceRoute {
  served: ServedResource;
  namespace?: string;
  name?: string;
  subresource?: string;
}

function kubeVersionFor(clusterVersion: string): string {
  return `v1.${openShiftMinor(clusterVersion) + 13}.0+sim`;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new SimApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY_BYTES}`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * A boolean query parameter as the server decodes it: present with any value but "0" or "false" is true
 * (kubernetes/kubernetes release-1.29 staging/src/k8s.io/apimachinery/pkg/runtime/conversion.go
 * Convert_Slice_string_To_bool), so `watch=True` and a bare `watch` both watch.
 */
function queryFlag(q: URLSearchParams, name: string): boolean {
  if (!q.has(name)) return false;
  const value = q.get(name) ?? '';
  return value !== '0' && value.toLowerCase() !== 'false';
}

const OPTIONS_KIND: Record<string, string> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' };
const FIELD_VALIDATION_VALUES = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The write options a request carries, validated as the handlers do before anything else (apimachinery
 * pkg/apis/meta/v1/validation/validation.go ValidateDryRun / ValidateFieldValidation: a 422 on
 * CreateOptions.meta.k8s.io ""): dryRun only "All", fieldValidation one of Ignore/Warn/Strict.
 */
function writeOptions(method: string, q: URLSearchParams): { dryRun: boolean; fieldValidation: 'Ignore' | 'Warn' | 'Strict' } {
  const dryRun = q.getAll('dryRun');
  const fieldValidation = q.get('fieldValidation') ?? '';
  const kind = { group: 'meta.k8s.io', version: 'v1', plural: '', kind: OPTIONS_KIND[method] ?? 'CreateOptions', namespaced: false };
  if (dryRun.some((v) => v !== 'All')) {
    throw invalid(kind, '', [{ field: 'dryRun', reason: 'FieldValueNotSupported', message: `Unsupported value: []string{${dryRun.map((v) => JSON.stringify(v)).join(', ')}}: supported values: "All"` }]);
  }
  if (method !== 'DELETE' && !FIELD_VALIDATION_VALUES.includes(fieldValidation)) {
    const supported = FIELD_VALIDATION_VALUES.map((v) => JSON.stringify(v)).join(', ');
    throw invalid(kind, '', [{ field: 'fieldValidation', reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(fieldValidation)}: supported values: ${supported}` }]);
  }
  return { dryRun: dryRun.length > 0, fieldValidation: (fieldValidation || 'Warn') as 'Ignore' | 'Warn' | 'Strict' };
}

function stripTypeMeta(obj: KubeObject): KubeObject {
  const rest = { ...obj };
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

export class ApiServer {
  readonly store: SimObjectStore;
  readonly ca: CertificateAuthority;
  readonly caPem: string;
  private readonly clientCas: string[];
  readonly host: string;
  private portNumber = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly watches = new Set<ActiveWatch>();
  private readonly tokens = new Map<string, Identity>();
  private readonly kubeconfigs = new Map<string, string>();
  private readonly namedContexts: { names: string[]; context: SecureContext }[] = [];
  private readonly records: RequestRecord[] = [];
  private readonly tmpDir: string;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly kubeVersion: string;
  private readonly bookmarkIntervalMs: number;
  private readonly maxWatchSeconds: number;
  private readonly accessRules: AccessRule[];
  private faultState: ApiFaults;
  private listening = false;
  private transition: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(opts: ApiServerOptions = {}) {
    this.store = opts.store ?? createStore({ clusterVersion: opts.clusterVersion, persistPath: opts.persistPath, now: opts.now });
    this.ca = opts.ca ?? sharedCa();
    this.caPem = this.ca.certPem;
    this.clientCas = [this.caPem, ...(opts.clientCas ?? [])];
    this.host = opts.host ?? '127.0.0.1';
    this.portNumber = opts.port ?? 0;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.kubeVersion = opts.kubeVersion ?? kubeVersionFor(this.store.clusterVersion);
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? 1000;
    this.maxWatchSeconds = opts.maxWatchSeconds ?? 1800;
    this.accessRules = [...(opts.accessRules ?? [])];
    this.faultState = this.faultsProxy({ ...(opts.faults ?? {}) });
    this.tmpDir = mkdtempSync(path.join(os.tmpdir(), 'sim-apiserver-'));
    const serving = issueServerCert(this.ca, {
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', ...(opts.dnsNames ?? [])],
      ips: ['127.0.0.1', '::1', ...(opts.ips ?? [])],
      commonName: 'kube-apiserver',
      // RSA like the real kube-apiserver's serving certificates (library-go): OpenSSL keeps the default
      // context's EC certificate when an SNI callback supplies an RSA-only context, so with an EC default
      // the named (RSA) certificates would never be served.
      keyType: 'rsa',
    });
    this.server = createServer(
      {
        key: serving.keyPem,
        cert: serving.certPem,
        ca: this.clientCas,
        // Ask for a client certificate but let the request through without one: the API server, not the TLS
        // layer, decides (401 Unauthorized, or a bearer token).
        requestCert: true,
        rejectUnauthorized: false,
        SNICallback: (servername, cb) => cb(null, this.contextFor(servername)),
      },
      (req, res) => {
        this.handle(req, res).catch((e: unknown) => this.fail(res, e instanceof SimApiError ? e : internalError((e as Error).message)));
      },
    );
    this.server.keepAliveTimeout = 5000;
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  get port(): number {
    return this.portNumber;
  }

  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `https://${host}:${this.portNumber}`;
  }

  get isUp(): boolean {
    return this.listening;
  }

  /** Settable: assign a new object or change fields; `neverUp: true` takes the server down at once. */
  get faults(): ApiFaults {
    return this.faultState;
  }

  set faults(f: ApiFaults) {
    this.faultState = this.faultsProxy({ ...f });
    if (f.neverUp) void this.setUp(false);
  }

  /** Every request seen, oldest first. */
  get requests(): readonly RequestRecord[] {
    return this.records;
  }

  clearRequests(): void {
    this.records.length = 0;
  }

  /**
   * Brings the API up (listening) or down (connections refused, open connections and watches cut). Coming up
   * is a kube-apiserver (re)start: the watch history is gone, so watches from an older resourceVersion get 410.
   */
  setUp(up: boolean): Promise<void> {
    this.transition = this.transition.then(() => this.applyUp(up && !this.faultState.neverUp && !this.closed));
    return this.transition;
  }

  /** Drops the watch event history: watches from an older resourceVersion get 410 Expired. */
  compactHistory(): void {
    this.store.compact();
  }

  addToken(token: string, identity: Identity): void {
    this.tokens.set(token, identity);
  }

  /**
   * A kubeconfig file for `identity` (client certificate CN = user, O = groups; or a bearer token with
   * `{ token: true }`), written once into the server's temp dir. Returns its path.
   */
  kubeconfigFor(identity: Identity, opts: { token?: boolean } = {}): string {
    const key = `${opts.token ? 'token' : 'cert'}|${identity.user}|${identity.groups.join(',')}`;
    const existing = this.kubeconfigs.get(key);
    if (existing) return existing;
    const file = path.join(this.tmpDir, `kubeconfig-${this.kubeconfigs.size}-${identity.user.replace(/[^A-Za-z0-9_.-]/g, '_')}`);
    const userName = identity.user;
    if (opts.token) {
      const token = `sha256~${randomBytes(24).toString('base64url')}`;
      this.addToken(token, identity);
      writeKubeconfig(file, { server: this.url, caPem: this.caPem, token, userName });
    } else {
      const cert = issueClientCert(this.ca, { user: identity.user, groups: identity.groups.filter((g) => g !== 'system:authenticated') });
      writeKubeconfig(file, { server: this.url, caPem: this.caPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, userName });
    }
    this.kubeconfigs.set(key, file);
    return file;
  }

  /** Certificates served by SNI name (what APIServer spec.servingCerts.namedCertificates does). */
  setServingCertificates(named: NamedServingCertificate[]): void {
    this.namedContexts.length = 0;
    for (const n of named) this.namedContexts.push({ names: n.names, context: createSecureContext({ key: n.keyPem, cert: n.certPem, ca: this.clientCas }) });
  }

  /** Picks the port now (while down) so the URL and kubeconfigs stay valid when the API comes up later. */
  async reservePort(): Promise<void> {
    if (this.portNumber !== 0) return;
    this.portNumber = await stablePort(this.host);
    if (this.portNumber !== 0) return;
    this.portNumber = await new Promise<number>((resolve, reject) => {
      const probe = createNetServer();
      probe.once('error', reject);
      probe.listen(0, this.host, () => {
        const addr = probe.address();
        probe.close(() => resolve(addr && typeof addr === 'object' ? addr.port : 0));
      });
    });
  }

  addAccessRule(rule: AccessRule): void {
    this.accessRules.push(rule);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.setUp(false);
    rmSync(this.tmpDir, { recursive: true, force: true });
  }

  // ----------------------------------------------------------------------------------------------

  private faultsProxy(target: ApiFaults): ApiFaults {
    return new Proxy(target, {
      set: (t, prop, value) => {
        (t as Record<string | symbol, unknown>)[prop] = value;
        if (prop === 'neverUp' && value) void this.setUp(false);
        return true;
      },
    });
  }

  private async applyUp(up: boolean): Promise<void> {
    if (up === this.listening) return;
    if (up) {
      await new Promise<void>((resolve, reject) => {
        const onError = (e: Error) => reject(e);
        this.server.once('error', onError);
        this.server.listen(this.portNumber, this.host, () => {
          this.server.off('error', onError);
          const addr = this.server.address();
          if (addr && typeof addr === 'object') this.portNumber = addr.port;
          resolve();
        });
      });
      // A kube-apiserver that starts (after a new static-pod revision, a node reboot, or the first boot) builds
      // its watch cache from a fresh LIST of etcd: it can serve watches only from that resourceVersion on, and
      // answers older ones with 410 "too old resource version" (kubernetes/kubernetes release-1.29
      // staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go getAllEventsSinceLocked: oldest =
      // listResourceVersion + 1). Clients must relist, as client-go's reflector does.
      this.store.compact();
      this.listening = true;
      return;
    }
    this.listening = false;
    for (const w of [...this.watches]) w.stop();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private contextFor(servername: string): SecureContext | undefined {
    const host = servername.toLowerCase();
    for (const n of this.namedContexts) {
      if (n.names.some((name) => name.toLowerCase() === host || (name.startsWith('*.') && host.endsWith(name.slice(1).toLowerCase()) && !host.slice(0, -name.length + 1).includes('.')))) return n.context;
    }
    return undefined;
  }

  private isResetting(): boolean {
    return this.faultState.resetUntil !== undefined && this.now() < this.faultState.resetUntil;
  }

  private send(res: ServerResponse, code: number, body: unknown): void {
    const record = (res as ServerResponse & { simRecord?: RequestRecord }).simRecord;
    if (record) record.status = code;
    if (res.headersSent || res.destroyed) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  private fail(res: ServerResponse, err: SimApiError): void {
    if (err.code === 503) res.setHeader('Retry-After', '1');
    this.send(res, err.code, statusBody(err));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sim');
    const record: RequestRecord = { time: this.now(), method: req.method ?? 'GET', path: url.pathname, query: url.search.replace(/^\?/, ''), contentType: req.headers['content-type'], status: 0 };
    this.records.push(record);
    (res as ServerResponse & { simRecord?: RequestRecord }).simRecord = record;

    if (this.isResetting()) {
      const socket = req.socket as Socket & { resetAndDestroy?: () => void };
      try {
        socket.resetAndDestroy?.();
      } catch {
        // TLS sockets cannot always send an RST; a plain destroy still cuts the connection unanswered.
      }
      socket.destroy();
      return;
    }
    if (this.faultState.slowMs) await this.sleep(this.faultState.slowMs);

    const authenticated = authenticate(req, this.tokens, this.now());
    const identity = authenticated === REFUSED ? undefined : authenticated;
    record.user = identity?.user;
    if (this.faultState.unavailableUntil !== undefined && this.now() < this.faultState.unavailableUntil) return this.fail(res, serviceUnavailable());
    if (authenticated === REFUSED) return this.fail(res, unauthorized());

    const p = url.pathname.replace(/\/+$/, '') || '/';
    if (UNAUTHENTICATED_PATHS.has(p) || p.startsWith('/readyz/') || p.startsWith('/livez/') || p.startsWith('/healthz/')) {
      if (p === '/version') return this.send(res, 200, this.versionDoc());
      const verbose = url.searchParams.has('verbose');
      return this.send(res, 200, verbose ? `[+]ping ok\n[+]log ok\n[+]etcd ok\n${p.slice(1)} check passed\n` : 'ok');
    }
    if (!identity) return this.fail(res, unauthorized());
    const segments = p.split('/').filter(Boolean).map(decodeURIComponent);
    const resourcePath = (segments[0] === 'api' && segments.length > 2) || (segments[0] === 'apis' && segments.length > 3);
    if (identity === ANONYMOUS && !resourcePath) {
      // Discovery and the OpenAPI documents are for system:authenticated (system:discovery); anonymous users
      // see only the public-info paths (/healthz, /livez, /readyz, /version).
      return this.fail(res, new SimApiError(403, 'Forbidden', `forbidden: User "${ANONYMOUS.user}" cannot ${(req.method ?? 'GET').toLowerCase()} path "${p}"`, {}));
    }

    if (segments[0] === 'openapi' && segments[1] === 'v3') {
      if (segments.length === 2) return this.send(res, 200, openApiV3Root(this.store.registry, this.kubeVersion));
      const gv = segments[2] === 'api' && segments.length === 4 ? ['', segments[3]] : segments[2] === 'apis' && segments.length === 5 ? [segments[3], segments[4]] : undefined;
      const doc = gv && openApiV3Document(this.store.registry, gv[0], gv[1], this.kubeVersion);
      return doc ? this.send(res, 200, doc) : this.fail(res, noSuchResource());
    }

    // Discovery
    if (p === '/api') return this.send(res, 200, apiVersions(`${this.host}:${this.port}`));
    if (p === '/apis') return this.send(res, 200, apiGroupList(this.store.registry));
    if (segments[0] === 'apis' && segments.length === 2) {
      const doc = apiGroupDoc(this.store.registry, segments[1]);
      return doc ? this.send(res, 200, doc) : this.fail(res, noSuchResource());
    }
    if ((segments[0] === 'api' && segments.length === 2) || (segments[0] === 'apis' && segments.length === 3)) {
      const [group, version] = segments[0] === 'api' ? ['', segments[1]] : [segments[1], segments[2]];
      const doc = apiResourceList(this.store.registry, group, version);
      return doc ? this.send(res, 200, doc) : this.fail(res, noSuchResource());
    }

    const route = this.route(segments);
    if (!route) return this.fail(res, noSuchResource());
    await this.serveResource(req, res, url, route, identity);
  }

  private route(segments: string[]): ResourceRoute | undefined {
    let rest: string[];
    let group: string;
    let version: string;
    if (segments[0] === 'api' && segments[1] === 'v1') [group, version, rest] = ['', 'v1', segments.slice(2)];
    else if (segments[0] === 'apis' && segments.length >= 4) [group, version, rest] = [segments[1], segments[2], segments.slice(3)];
    else return undefined;
    const find = (plural: string) => this.store.registry.find(group, version, plural);
    let namespace: string | undefined;
    const nsResource = find('namespaces');
    // /namespaces/<ns>/<plural>/... (but /namespaces/<name>/status is the namespace's own subresource)
    if (rest[0] === 'namespaces' && rest.length >= 3 && !(nsResource && nsResource.subresources.includes(rest[2] as never))) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const served = find(rest[0]);
    if (!served || rest.length > 3) return undefined;
    if (namespace !== undefined && !served.type.namespaced) return undefined;
    if (namespace === undefined && served.type.namespaced && rest.length > 1) return undefined;
    return { served, namespace, name: rest[1], subresource: rest[2] };
  }

  private versionDoc(): Record<string, string> {
    const m = /^v(\d+)\.(\d+)/.exec(this.kubeVersion);
    return {
      major: m?.[1] ?? '1',
      minor: m?.[2] ?? '0',
      gitVersion: this.kubeVersion,
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2024-01-01T00:00:00Z',
      goVersion: 'go1.21.9 X:strictfipsruntime',
      compiler: 'gc',
      platform: 'linux/amd64',
    };
  }

  private verbOf(method: string, route: ResourceRoute, watch: boolean): string | undefined {
    if (route.subresource) return { GET: 'get', PUT: 'update', PATCH: 'patch' }[method];
    if (route.name) return { GET: watch ? 'watch' : 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' }[method];
    // Creating a namespaced object needs the namespace in the path (POST /api/v1/configmaps is a 405).
    if (method === 'POST' && route.served.type.namespaced && route.namespace === undefined) return undefined;
    return { GET: watch ? 'watch' : 'list', POST: 'create', DELETE: 'deletecollection' }[method];
  }

  private async serveResource(req: IncomingMessage, res: ServerResponse, url: URL, route: ResourceRoute, identity: Identity): Promise<void> {
    const { served } = route;
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    const watch = queryFlag(q, 'watch');
    if (route.subresource && !served.subresources.includes(route.subresource as never)) return this.fail(res, noSuchResource());
    const verb = this.verbOf(method, route, watch);
    if (!verb) return this.fail(res, methodNotAllowed());

    if (method === 'PATCH') {
      const accepted = served.builtIn ? PATCH_TYPES_BUILTIN : PATCH_TYPES_CRD;
      // application/apply-patch+yaml (server-side apply) is not implemented: the agent never applies.
      if (!accepted.includes(mediaType(req))) throw unsupportedMediaType(accepted);
    }
    const body = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? await readBody(req) : Buffer.alloc(0);
    let parsed: unknown;
    if (method === 'PATCH') parsed = this.parseBody(body, 'application/json', true);
    else if (method === 'POST' || method === 'PUT') parsed = this.parseBody(body, mediaType(req), false);
    else if (method === 'DELETE' && body.length > 0) parsed = this.parseBody(body, 'application/json', true);

    const bodyName = method === 'POST' ? (parsed as KubeObject | undefined)?.metadata?.name : undefined;
    const record = (res as ServerResponse & { simRecord?: RequestRecord }).simRecord;
    if (record && typeof bodyName === 'string') record.createdName = bodyName;
    const allowed = authorize(identity, { verb, group: served.type.group, resource: served.type.plural, subresource: route.subresource, namespace: route.namespace, name: route.name ?? bodyName }, this.accessRules);
    if (!allowed) {
      const resource = route.subresource ? `${served.type.plural}/${route.subresource}` : served.type.plural;
      return this.fail(res, forbidden(identity.user, verb, served.type, resource, route.name, route.namespace));
    }

    if (['create', 'update', 'patch'].includes(verb) && this.faultState.conflictsOnNextWrites) {
      this.faultState.conflictsOnNextWrites -= 1;
      return this.fail(res, conflict(served.type, route.name ?? bodyName ?? ''));
    }

    const { dryRun, fieldValidation } = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? writeOptions(method, q) : { dryRun: false, fieldValidation: 'Warn' as const };
    const warnings: string[] = [];
    const sendWritten = (code: number, obj: KubeObject) => {
      // One `Warning: 299 - "<text>"` header per warning (apiserver pkg/endpoints/filters/warning.go).
      if (warnings.length > 0) res.setHeader('Warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`));
      this.send(res, code, obj);
    };
    const store = this.store;
    switch (verb) {
      case 'get': {
        const obj = store.get(served.type, route.name ?? '', route.namespace);
        if (!obj) return this.fail(res, notFound(served.type, route.name ?? ''));
        return this.send(res, 200, obj);
      }
      case 'list':
        return this.send(res, 200, this.listDoc(route, q));
      case 'watch': {
        const asked = Number(q.get('timeoutSeconds') ?? 0);
        const timeout = Number.isFinite(asked) && asked > 0 ? asked : this.maxWatchSeconds;
        const w = serveWatch({
          res,
          store,
          served,
          namespace: route.namespace,
          name: route.name,
          labels: parseLabelSelector(q.get('labelSelector') ?? undefined),
          fields: parseFieldSelector(q.get('fieldSelector') ?? undefined, served),
          resourceVersion: q.get('resourceVersion') ?? undefined,
          allowBookmarks: queryFlag(q, 'allowWatchBookmarks'),
          bookmarkIntervalMs: this.bookmarkIntervalMs,
          timeoutMs: timeout * 1000,
        });
        const record = (res as ServerResponse & { simRecord?: RequestRecord }).simRecord;
        if (record) record.status = 200;
        this.watches.add(w);
        res.on('close', () => this.watches.delete(w));
        return;
      }
      case 'create': {
        const obj = this.checkNamespace(parsed as KubeObject, route);
        const created = store.createObject(served.type, obj, { actor: identity, dryRun, fieldValidation, warnings });
        return sendWritten(201, created);
      }
      case 'update': {
        const obj = this.checkNamespace(parsed as KubeObject, route);
        this.checkName(obj, route);
        this.requireResourceVersion(served, obj, route);
        const updated = store.updateObject(served.type, obj, (route.subresource ?? 'main') as UpdatePath, { actor: identity, dryRun, fieldValidation, warnings });
        return sendWritten(200, updated);
      }
      case 'patch': {
        const current = store.get(served.type, route.name ?? '', route.namespace);
        if (!current) return this.fail(res, notFound(served.type, route.name ?? ''));
        const patched = this.applyPatch(served, current, parsed, mediaType(req)) as KubeObject;
        this.checkName(patched, route);
        const updated = store.updateObject(served.type, patched, (route.subresource ?? 'main') as UpdatePath, { actor: identity, dryRun, fieldValidation, warnings });
        return sendWritten(200, updated);
      }
      case 'delete': {
        const pre = (parsed as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)?.preconditions;
        if (dryRun) {
          const obj = store.get(served.type, route.name ?? '', route.namespace);
          return obj ? this.send(res, 200, successStatus(served.type, route.name ?? '', obj.metadata?.uid)) : this.fail(res, notFound(served.type, route.name ?? ''));
        }
        const deleted = store.deleteObject(served.type, route.name ?? '', route.namespace, pre);
        if (!deleted) return this.fail(res, notFound(served.type, route.name ?? ''));
        // Pending finalizers: the object (with deletionTimestamp) comes back; otherwise a Success Status.
        if (store.getRaw(served, route.name ?? '', route.namespace)) return this.send(res, 200, deleted);
        return this.send(res, 200, successStatus(served.type, route.name ?? '', deleted.metadata?.uid));
      }
      case 'deletecollection': {
        const doc = this.listDoc(route, q) as { items: KubeObject[] };
        for (const item of doc.items) if (!dryRun) store.deleteObject(served.type, item.metadata?.name ?? '', item.metadata?.namespace);
        return this.send(res, 200, doc);
      }
      default:
        return this.fail(res, methodNotAllowed());
    }
  }

  private parseBody(body: Buffer, type: string, lenient: boolean): unknown {
    if (!lenient && type !== 'application/json' && type !== 'application/yaml') {
      throw unsupportedMediaType(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
    }
    const text = body.toString('utf8');
    if (text.trim() === '') throw badRequest('the body of the request was empty');
    try {
      return type === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
    } catch (e) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
  }

  private checkNamespace(obj: KubeObject, route: ResourceRoute): KubeObject {
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw badRequest(`${route.served.type.kind} in version "${route.served.type.version}" cannot be handled as a ${route.served.type.kind}: expected an object`);
    if (!route.served.type.namespaced) return obj;
    const md = { ...(obj.metadata ?? {}) };
    if (md.namespace && md.namespace !== route.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    md.namespace = route.namespace;
    return { ...obj, metadata: md };
  }

  /**
   * A PUT without metadata.resourceVersion to an existing object of a kind that does not allow unconditional
   * updates is refused, naming the resource (not the kind) as the real message does (kubernetes/kubernetes
   * release-1.29 staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go Update: "must be
   * specified for an update", the uint64 0 printed by field.Invalid as 0x0).
   */
  private requireResourceVersion(served: ServedResource, obj: KubeObject, route: ResourceRoute): void {
    if (served.allowsUnconditionalUpdate || obj.metadata?.resourceVersion) return;
    const name = route.name ?? '';
    if (!this.store.get(served.type, name, route.namespace)) return; // the store answers 404
    throw invalid({ ...served.type, kind: served.type.plural }, name, [{ field: 'metadata.resourceVersion', reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update' }]);
  }

  private checkName(obj: KubeObject, route: ResourceRoute): void {
    const name = obj.metadata?.name ?? '';
    if (name !== route.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${route.name})`);
  }

  private applyPatch(served: ServedResource, current: KubeObject, patch: unknown, type: string): unknown {
    switch (type) {
      case 'application/merge-patch+json':
        if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
        return mergePatch(current, patch);
      case 'application/json-patch+json':
        return jsonPatch(current, patch);
      case 'application/strategic-merge-patch+json':
        if (!served.builtIn) throw unsupportedMediaType(PATCH_TYPES_CRD);
        return strategicMergePatch(served.type.plural, current, patch);
      default:
        throw unsupportedMediaType(served.builtIn ? PATCH_TYPES_BUILTIN : PATCH_TYPES_CRD);
    }
  }

  private listDoc(route: ResourceRoute, q: URLSearchParams): Record<string, unknown> {
    const { served } = route;
    const labels = parseLabelSelector(q.get('labelSelector') ?? undefined);
    const fields = parseFieldSelector(q.get('fieldSelector') ?? undefined, served);
    let items = this.store.listRaw(served, route.namespace).filter((o) => labels(o) && fields(o));
    const metadata: Record<string, unknown> = { resourceVersion: this.store.resourceVersion() };
    const cont = q.get('continue');
    if (cont) {
      let start: string;
      try {
        start = (JSON.parse(Buffer.from(cont, 'base64url').toString('utf8')) as { start: string }).start;
      } catch {
        throw badRequest('continue key is not valid: invalid continue token');
      }
      items = items.filter((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}` > start);
    }
    const limit = Number(q.get('limit') ?? 0);
    if (limit > 0 && items.length > limit) {
      const last = items[limit - 1];
      metadata.continue = Buffer.from(JSON.stringify({ start: `${last.metadata?.namespace ?? ''}/${last.metadata?.name}` })).toString('base64url');
      metadata.remainingItemCount = items.length - limit;
      items = items.slice(0, limit);
    }
    return {
      kind: served.listKind,
      apiVersion: apiVersionOf(served.type),
      metadata,
      // Built-in types' list items carry no kind/apiVersion on the wire; custom resources' do.
      items: items.map((o) => (served.builtIn ? stripTypeMeta(o) : o)),
    };
  }
}

/** Starts a simulated API server (listening unless `up: false`). */
export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const server = new ApiServer(opts);
  if (opts.up !== false && !opts.faults?.neverUp) await server.setUp(true);
  else await server.reservePort();
  return server;
}
