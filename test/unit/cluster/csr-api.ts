// The CertificateSigningRequest part of the Kubernetes API, in memory, served through TestServer:
// list (with the spec.signerName field selector), get, watch (newline-delimited JSON, bookmarks,
// resume from a resourceVersion, 410 when the version left the retained window), and the /approval
// subresource with resourceVersion conflicts. Faults can be injected: approval conflicts, 503s, an
// expired watch window.
import type { ServerResponse } from 'node:http';
import type { Handler, RecordedRequest } from './test-server';
import { sendJson, status } from './test-server';

type Obj = { metadata: { name: string; resourceVersion?: string; creationTimestamp?: string; uid?: string }; spec: Record<string, unknown>; status?: { conditions?: Record<string, unknown>[]; certificate?: string }; [k: string]: unknown };

interface HistoryEvent { rv: number; type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: Obj }

const BASE = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

export class CsrApi {
  private rv = 100;
  private readonly objects = new Map<string, Obj>();
  private history: HistoryEvent[] = [];
  /** Events at or below this version are gone: a watch from an older version gets 410. */
  private compactedBelow = 0;
  private readonly watchers = new Set<{ res: ServerResponse; signer?: string; since: number }>();
  /** The next N approval PUTs answer 409 (as if someone else wrote in between). */
  approvalConflicts = 0;
  /** The next N requests of any kind answer 503. */
  unavailable = 0;
  /** Approvals received, in order. */
  readonly approvals: { name: string; body: Obj }[] = [];

  add(obj: Omit<Obj, 'metadata'> & { metadata: { name: string; creationTimestamp?: string } }): Obj {
    const stored = structuredClone(obj) as Obj;
    stored.metadata.uid = `uid-${stored.metadata.name}`;
    stored.metadata.creationTimestamp ??= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    stored.apiVersion = 'certificates.k8s.io/v1';
    stored.kind = 'CertificateSigningRequest';
    this.write('ADDED', stored);
    return stored;
  }

  get(name: string): Obj | undefined {
    const o = this.objects.get(name);
    return o ? structuredClone(o) : undefined;
  }

  /** The signer's work: fills status.certificate (base64 PEM, as in JSON). */
  issue(name: string, certPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'): void {
    const o = this.mustGet(name);
    o.status = { ...(o.status ?? {}), certificate: Buffer.from(certPem).toString('base64') };
    this.write('MODIFIED', o);
  }

  /** An approval made by someone else (an earlier run, kube-controller-manager). */
  approveDirectly(name: string, reason = 'EarlierRun'): void {
    const o = this.mustGet(name);
    o.status = { ...(o.status ?? {}), conditions: [...(o.status?.conditions ?? []), { type: 'Approved', status: 'True', reason, message: 'approved earlier' }] };
    this.write('MODIFIED', o);
  }

  deny(name: string): void {
    const o = this.mustGet(name);
    o.status = { ...(o.status ?? {}), conditions: [...(o.status?.conditions ?? []), { type: 'Denied', status: 'True', reason: 'Test', message: 'denied in test' }] };
    this.write('MODIFIED', o);
  }

  delete(name: string): void {
    const o = this.mustGet(name);
    this.objects.delete(name);
    this.rv++;
    o.metadata.resourceVersion = String(this.rv);
    this.record('DELETED', o);
  }

  /** Drops the event history: watches from any earlier version get 410 Gone (an ERROR event). */
  compact(): void {
    this.compactedBelow = this.rv;
    this.history = [];
  }

  /** Ends every open watch stream (as the server does at timeoutSeconds or on restart). */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Sends a BOOKMARK at the current version to every open watch. */
  bookmark(): void {
    for (const w of this.watchers) {
      w.res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'CertificateSigningRequest', apiVersion: 'certificates.k8s.io/v1', metadata: { resourceVersion: String(this.rv) } } })}\n`);
    }
  }

  openWatches(): number {
    return this.watchers.size;
  }

  readonly handler: Handler = (req, res) => {
    if (this.unavailable > 0) {
      this.unavailable--;
      sendJson(res, 503, status(503, 'ServiceUnavailable', 'apiserver is shutting down'));
      return;
    }
    if (!req.path.startsWith(BASE)) { sendJson(res, 404, status(404, 'NotFound', 'the server could not find the requested resource')); return; }
    const rest = req.path.slice(BASE.length).split('/').filter(Boolean);
    if (req.method === 'GET' && rest.length === 0) return req.query.get('watch') ? this.watch(req, res) : this.list(req, res);
    const name = decodeURIComponent(rest[0] ?? '');
    if (req.method === 'GET' && rest.length === 1) {
      const o = this.objects.get(name);
      if (!o) { sendJson(res, 404, status(404, 'NotFound', `certificatesigningrequests.certificates.k8s.io "${name}" not found`)); return; }
      sendJson(res, 200, o);
      return;
    }
    if (req.method === 'PUT' && rest.length === 2 && rest[1] === 'approval') return this.approve(name, req, res);
    sendJson(res, 405, status(405, 'MethodNotAllowed', 'not supported here'));
  };

  private list(req: RecordedRequest, res: ServerResponse): void {
    const signer = signerSelector(req);
    const items = [...this.objects.values()].filter((o) => !signer || o.spec.signerName === signer);
    sendJson(res, 200, { kind: 'CertificateSigningRequestList', apiVersion: 'certificates.k8s.io/v1', metadata: { resourceVersion: String(this.rv) }, items });
  }

  private watch(req: RecordedRequest, res: ServerResponse): void {
    const since = Number(req.query.get('resourceVersion') ?? '0');
    const signer = signerSelector(req);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    if (since < this.compactedBelow) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${since} (${this.compactedBelow})`) })}\n`);
      return;
    }
    const watcher = { res, signer, since };
    for (const e of this.history) if (e.rv > since) this.send(watcher, e);
    this.watchers.add(watcher);
    res.on('close', () => this.watchers.delete(watcher));
  }

  private approve(name: string, req: RecordedRequest, res: ServerResponse): void {
    const current = this.objects.get(name);
    if (!current) { sendJson(res, 404, status(404, 'NotFound', `certificatesigningrequests.certificates.k8s.io "${name}" not found`)); return; }
    const body = JSON.parse(req.body) as Obj;
    this.approvals.push({ name, body });
    if (this.approvalConflicts > 0 || body.metadata.resourceVersion !== current.metadata.resourceVersion) {
      if (this.approvalConflicts > 0) {
        this.approvalConflicts--;
        // someone else wrote meanwhile: the stored version moves on
        this.write('MODIFIED', current);
      }
      sendJson(res, 409, status(409, 'Conflict', `Operation cannot be fulfilled on certificatesigningrequests.certificates.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`));
      return;
    }
    // The approval subresource only takes status.conditions (registry/certificates strategy).
    current.status = { ...(current.status ?? {}), conditions: body.status?.conditions ?? [] };
    this.write('MODIFIED', current);
    sendJson(res, 200, current);
  }

  private mustGet(name: string): Obj {
    const o = this.objects.get(name);
    if (!o) throw new Error(`no CSR ${name}`);
    return o;
  }

  private write(type: 'ADDED' | 'MODIFIED', o: Obj): void {
    this.rv++;
    o.metadata.resourceVersion = String(this.rv);
    this.objects.set(o.metadata.name, o);
    this.record(type, o);
  }

  private record(type: HistoryEvent['type'], o: Obj): void {
    const e: HistoryEvent = { rv: this.rv, type, object: structuredClone(o) };
    this.history.push(e);
    for (const w of this.watchers) this.send(w, e);
  }

  private send(w: { res: ServerResponse; signer?: string }, e: HistoryEvent): void {
    if (w.signer && e.object.spec.signerName !== w.signer) return;
    w.res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
  }
}

function signerSelector(req: RecordedRequest): string | undefined {
  const fs = req.query.get('fieldSelector');
  if (!fs) return undefined;
  const m = /^spec\.signerName=(.+)$/.exec(fs);
  if (!m) throw new Error(`unsupported field selector ${fs}`);
  return m[1];
}
