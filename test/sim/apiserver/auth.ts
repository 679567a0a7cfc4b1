// Who is calling and what they may do. Authentication as the kube-apiserver's x509 and bearer-token
// authenticators do it: a client certificate verified against the cluster CA gives CN = user and
// O = groups; a known bearer token gives its identity; every authenticated identity is in
// system:authenticated. Authorization is a small stand-in for RBAC + the Node authorizer covering the
// identities the agent and the simulated cluster use.
import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, PeerCertificate, TLSSocket } from 'node:tls';
import type { Identity } from '../store-types';

export const ADMIN: Identity = { user: 'system:admin', groups: ['system:masters', 'system:authenticated'] };
export const BOOTSTRAPPER_USER = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
/** The node-bootstrapper service account as the API server sees it (DESIGN.md section 5). */
export const BOOTSTRAPPER: Identity = {
  user: BOOTSTRAPPER_USER,
  groups: ['system:serviceaccounts', 'system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'],
};

export function nodeIdentity(nodeName: string): Identity {
  return { user: `system:node:${nodeName}`, groups: ['system:nodes', 'system:authenticated'] };
}

export interface RequestAttributes {
  verb: string;
  /** '' for the core group. */
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** An extra grant (like an RBAC rule): who (user or group) may do which verbs on which resources. */
export interface AccessRule {
  user?: string;
  group?: string;
  verbs: string[] | '*';
  /** "certificatesigningrequests", "nodes/status", or '*'. */
  resources: string[] | '*';
  /** Restrict to these object names. */
  names?: string[];
}

function withAuthenticated(id: Identity): Identity {
  return id.groups.includes('system:authenticated') ? id : { user: id.user, groups: [...id.groups, 'system:authenticated'] };
}

/** A credential was presented and refused: the request fails with 401 whatever its path. */
export const REFUSED = Symbol('refused');

/**
 * Who a request without any credentials is. OpenShift's kube-apiserver keeps anonymous authentication on, so
 * such a request is authenticated as system:anonymous and then refused by RBAC with 403 (kubernetes/kubernetes
 * release-1.29 pkg/kubeapiserver/authenticator/config.go: union.NewFailOnError(authenticator,
 * anonymous.NewAuthenticator())).
 */
export const ANONYMOUS: Identity = { user: 'system:anonymous', groups: ['system:unauthenticated'] };

/**
 * The identity of a request: ANONYMOUS without credentials, or REFUSED. A client certificate that does not
 * chain to the cluster CA, or is outside its validity at `nowMs` (the simulated clock, so credentials expire
 * in simulated time), and an unknown bearer token are refused rather than treated as anonymous: NewFailOnError
 * "(don't consider a bad bearer token or invalid username/password combination anonymous)", and the x509
 * authenticator's Verify fails on an expired certificate. So an expired credential gets 401 even on /readyz.
 */
export function authenticate(req: IncomingMessage, tokens: ReadonlyMap<string, Identity>, nowMs: number = Date.now()): Identity | typeof REFUSED {
  const socket = req.socket as TLSSocket;
  const cert = peerCertificate(socket);
  if (cert && cert.raw) {
    // Every certificate of the chain, the trusted signer included, must be valid now: Go's x509 Verify (the
    // x509 authenticator) rejects a client certificate whose issuer has expired, however long the leaf has left.
    const inValidity = chainOf(cert).every((c) => Date.parse(c.valid_from) <= nowMs && nowMs <= Date.parse(c.valid_to));
    const chains = socket.authorized || socket.authorizationError?.toString() === 'CERT_HAS_EXPIRED';
    if (!chains || !inValidity) return REFUSED;
    const subject = cert.subject as unknown as Record<string, string | string[]> | undefined;
    const cn = subject?.CN;
    if (typeof cn === 'string' && cn) {
      const o = subject?.O;
      const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
      return withAuthenticated({ user: cn, groups });
    }
  }
  const header = req.headers.authorization;
  const m = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  if (m) {
    const id = tokens.get(m[1]);
    return id ? withAuthenticated(id) : REFUSED;
  }
  const presentedCertificate = Object.keys(cert ?? {}).length > 0;
  return header === undefined && !presentedCertificate ? ANONYMOUS : REFUSED;
}

/**
 * A connection's client certificate, read once: it is presented at the handshake and the simulator never renegotiates, and
 * building it (with its issuers) at every request was 4 % of a scenario's CPU (a CPU profile of run-ntp, 2026-11-27).
 */
const peerCertificates = new WeakMap<TLSSocket, DetailedPeerCertificate | undefined>();
function peerCertificate(socket: TLSSocket): DetailedPeerCertificate | undefined {
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  if (!peerCertificates.has(socket)) peerCertificates.set(socket, socket.getPeerCertificate(true));
  return peerCertificates.get(socket);
}

/** The peer certificate and its issuers, as far as the TLS layer resolved them (a self-signed root ends it). */
function chainOf(cert: DetailedPeerCertificate): PeerCertificate[] {
  const chain: PeerCertificate[] = [cert];
  let current = cert;
  while (current.issuerCertificate && current.issuerCertificate !== current && current.issuerCertificate.raw && chain.length < 8) {
    current = current.issuerCertificate;
    chain.push(current);
  }
  return chain;
}

const READ = ['get', 'list', 'watch'];

/** True when `id` may perform `attrs`. */
export function authorize(id: Identity, attrs: RequestAttributes, extra: readonly AccessRule[] = []): boolean {
  if (id.groups.includes('system:masters') || id.user === 'system:admin') return true;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;

  for (const rule of extra) {
    if (rule.user !== undefined && rule.user !== id.user) continue;
    if (rule.group !== undefined && !id.groups.includes(rule.group)) continue;
    if (rule.user === undefined && rule.group === undefined) continue;
    const verbOk = rule.verbs === '*' || rule.verbs.includes(attrs.verb);
    const resOk = rule.resources === '*' || rule.resources.includes(resource);
    const nameOk = !rule.names || (attrs.name !== undefined && rule.names.includes(attrs.name));
    if (verbOk && resOk && nameOk) return true;
  }

  const isCsrs = attrs.group === 'certificates.k8s.io' && attrs.resource === 'certificatesigningrequests' && !attrs.subresource;
  // system:node-bootstrapper ClusterRole: create/get/list/watch CSRs, nothing else.
  if (id.user === BOOTSTRAPPER_USER) return isCsrs && ['create', ...READ].includes(attrs.verb);

  const node = /^system:node:(.+)$/.exec(id.user);
  if (node && id.groups.includes('system:nodes')) {
    // Node authorizer + NodeRestriction, reduced: its own CSRs, its own Node object and status.
    if (isCsrs) return ['create', ...READ].includes(attrs.verb);
    if (attrs.group === '' && attrs.resource === 'nodes') {
      const own = attrs.name === node[1];
      if (attrs.verb === 'create' && !attrs.subresource) return own;
      if (!attrs.subresource) return own && ['get', 'update', 'patch'].includes(attrs.verb);
      if (attrs.subresource === 'status') return own && ['get', 'update', 'patch'].includes(attrs.verb);
    }
    return false;
  }
  return false;
}
