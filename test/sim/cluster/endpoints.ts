// TLS endpoints that serve what the cluster currently serves, chosen by SNI like the real ones:
// - "api" (api.<cluster>.<domain>:6443) is the simulated kube-apiserver itself: like the real one it picks
//   a named certificate whose names match the server name (APIServer spec.servingCerts.namedCertificates,
//   once that revision rolled out), else the operator's load-balancer serving certificates
//   (external-loadbalancer-serving-certkey for api.<cluster>.<domain>, internal for api-int), else its
//   default (localhost) certificate. Named certificates listed first win, as in the kube-apiserver.
// - "ingress" (*.apps:443): the router serves a component route's custom certificate for its hostname once
//   the owning operator rolled it out, a route's own edge/reencrypt certificate, else the IngressController
//   default certificate (router-certs-default until spec.defaultCertificate rolled out).
import { createHash } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { R } from '../../../src/cluster/resources';
import type { ApiServer, NamedServingCertificate } from '../apiserver';
import { describeCertificate } from '../pki';
import type { SimContext } from './context';
import type { AuthenticationOperator } from './operators/authentication';
import type { ConsoleOperator } from './operators/console';
import type { IngressOperator } from './operators/ingress';
import type { KubeApiserverOperator } from './operators/kube-apiserver';
import type { Router } from './router';
import { secretTlsPair, type TlsPair } from './x509';

export interface Endpoint {
  host: string;
  port: number;
}

export interface EndpointDeps {
  ctx: SimContext;
  api: ApiServer;
  kubeApiserver: KubeApiserverOperator;
  authentication: AuthenticationOperator;
  console: ConsoleOperator;
  ingress: IngressOperator;
  router: Router;
}

class ContextCache {
  private readonly contexts = new Map<string, SecureContext>();

  get(pair: TlsPair): SecureContext {
    const key = createHash('sha256').update(pair.certPem).update(pair.keyPem).digest('hex');
    let c = this.contexts.get(key);
    if (!c) {
      c = createSecureContext({ cert: pair.certPem, key: pair.keyPem });
      this.contexts.set(key, c);
    }
    return c;
  }
}

export class Endpoints {
  private ingressServer: Server | undefined;
  private readonly contexts = new ContextCache();
  private readonly sockets = new Set<Socket>();
  ingressEndpoint: Endpoint | undefined;

  constructor(private readonly deps: EndpointDeps) {}

  get apiEndpoint(): Endpoint {
    return { host: this.deps.api.host, port: this.deps.api.port };
  }

  async start(ports: { ingress?: number } = {}): Promise<void> {
    this.syncApiCertificates();
    const defaultIngress = this.defaultIngressPair();
    const server = createHttpsServer(
      { cert: defaultIngress.certPem, key: defaultIngress.keyPem, SNICallback: (servername, cb) => cb(null, this.contexts.get(this.ingressPairFor(servername))) },
      (req, res) => this.route(req, res),
    );
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      // Down like the real thing: no router runs there, the connection is reset.
      if (!this.ingressUp()) socket.resetAndDestroy();
    });
    server.on('tlsClientError', () => undefined);
    this.ingressServer = server;
    this.deps.ctx.events.on('rollout', this.onRollout);
    this.ingressEndpoint = await new Promise<Endpoint>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports.ingress ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
      });
    });
  }

  async stop(): Promise<void> {
    this.deps.ctx.events.off('rollout', this.onRollout);
    for (const s of this.sockets) s.destroy();
    const server = this.ingressServer;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  /** The node went down: open connections to the router break. */
  dropIngressConnections(): void {
    for (const s of this.sockets) s.destroy();
  }

  private readonly onRollout = (e: { operator: string; phase: string }) => {
    if (e.phase !== 'done') return;
    if (e.operator === 'kube-apiserver') this.syncApiCertificates();
    if (e.operator === 'ingress' && this.ingressServer) {
      // Connections without SNI get the server's default: follow the router's default certificate.
      const pair = this.defaultIngressPair();
      this.ingressServer.setSecureContext({ cert: pair.certPem, key: pair.keyPem });
    }
  };

  /** The router runs on the node: down while the node is down or not started; up across a kube-apiserver restart. */
  private ingressUp(): boolean {
    return this.deps.ctx.availability.downReasons().every((r) => r === 'kube-apiserver-restart');
  }

  /** Tells the kube-apiserver which certificates to present by SNI (the rolled-out revision). */
  syncApiCertificates(): void {
    const named: NamedServingCertificate[] = this.deps.kubeApiserver.servedNamedCertificates().map((nc) => ({
      // A named certificate without names serves the names in its certificate (config/v1 types_apiserver.go).
      names: nc.names.length > 0 ? nc.names : describeCertificate(nc.certPem).sans.dnsNames,
      certPem: nc.certPem,
      keyPem: nc.keyPem,
    }));
    for (const secret of ['external-loadbalancer-serving-certkey', 'internal-loadbalancer-serving-certkey']) {
      const pair = secretTlsPair(this.deps.ctx.store.get(R.secrets, secret, 'openshift-kube-apiserver'));
      if (pair.certPem && pair.keyPem) named.push({ names: describeCertificate(pair.certPem).sans.dnsNames, certPem: pair.certPem, keyPem: pair.keyPem });
    }
    this.deps.api.setServingCertificates(named);
  }

  private defaultIngressPair(): TlsPair {
    const served = this.deps.ingress.servedDefault();
    if (served) return { certPem: served.certPem, keyPem: served.keyPem };
    const pair = secretTlsPair(this.deps.ctx.store.get(R.secrets, 'router-certs-default', 'openshift-ingress'));
    if (!pair.certPem || !pair.keyPem) throw new Error('openshift-ingress/router-certs-default is missing: the cluster was not seeded');
    return pair as TlsPair;
  }

  /** The pair the router presents for this SNI name. */
  ingressPairFor(servername: string | undefined): TlsPair {
    if (servername) {
      const h = servername.toLowerCase();
      for (const s of [...this.deps.authentication.servedCertificates(), ...this.deps.console.servedCertificates()]) {
        if (s.hostname.toLowerCase() === h) return { certPem: s.certPem, keyPem: s.keyPem };
      }
      const route = this.deps.router.routeFor(h);
      const tls = (route?.spec as { tls?: { termination?: string; certificate?: string; key?: string } } | undefined)?.tls;
      if (tls?.certificate && tls.key && tls.termination !== 'passthrough') return { certPem: tls.certificate, keyPem: tls.key };
    }
    return this.defaultIngressPair();
  }

  /** The router: a route for the Host answers, anything else gets HAProxy's 503 page. */
  private route(req: IncomingMessage, res: ServerResponse): void {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const route = this.deps.router.routeFor(host);
    if (!route) {
      res.writeHead(503, { 'Content-Type': 'text/html', 'Cache-Control': 'private' });
      res.end('<html><body><h1>Application is not available</h1><p>The application is currently not serving requests at this endpoint. It may not have been started or is still starting.</p></body></html>\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(`route ${route.metadata?.namespace}/${route.metadata?.name}\n`);
  }
}
