// What an endpoint really serves for a name: connect to the node's own API or ingress address with SNI set to
// the new host name, take the certificate chain it presents, and check it covers the name and verifies
// against the CA clients are expected to trust. Success here is what a user's browser or `oc` will see.
import { X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import { coversHost, describeCertificate, sanDnsNames, verifyChain } from '../../certs/verify';
import type { Endpoint } from '../../engine/step';

export interface ServedCheck {
  ok: boolean;
  serverName: string;
  endpoint: string;
  /** What was served and, when not ok, why it is not acceptable. */
  detail: string;
  fingerprint?: string;
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** The chain as sent by the server: leaf first. */
function presentedChain(socket: tls.TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  let peer: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (peer?.raw && !seen.has(peer.fingerprint256)) {
    seen.add(peer.fingerprint256);
    chain.push(new X509Certificate(peer.raw));
    peer = peer.issuerCertificate;
  }
  return chain;
}

function fetchChain(endpoint: Endpoint, serverName: string, timeoutMs: number): Promise<X509Certificate[]> {
  return new Promise((resolve, reject) => {
    // Verification is ours (below), so the handshake must not reject: we want to describe what was served.
    const socket = tls.connect({ host: endpoint.host, port: endpoint.port, servername: serverName, rejectUnauthorized: false });
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS handshake within ${timeoutMs} ms`)), timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      try {
        resolve(presentedChain(socket));
      } catch (e) {
        reject(e as Error);
      } finally {
        socket.destroy();
      }
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export async function checkServedCertificate(endpoint: Endpoint, serverName: string, anchorsPem: string[], opts: { now?: Date; timeoutMs?: number } = {}): Promise<ServedCheck> {
  const where = `${endpoint.host}:${endpoint.port}`;
  let chain: X509Certificate[];
  try {
    chain = await fetchChain(endpoint, serverName, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  } catch (e) {
    return { ok: false, serverName, endpoint: where, detail: `cannot complete a TLS handshake with ${where}: ${(e as Error).message}` };
  }
  const [leaf, ...rest] = chain;
  if (!leaf) return { ok: false, serverName, endpoint: where, detail: `${where} presented no certificate` };
  const served = describeCertificate(leaf);
  const base = { serverName, endpoint: where, fingerprint: leaf.fingerprint256 };
  if (!coversHost(leaf, serverName)) {
    return { ...base, ok: false, detail: `${where} serves a certificate for ${shortList(closestFirst(sanDnsNames(leaf), serverName))}, not ${serverName}` };
  }
  const anchors = anchorsPem.map((p) => new X509Certificate(p));
  const result = verifyChain(leaf, rest, anchors, opts.now ?? new Date());
  if (!result.ok) return { ...base, ok: false, detail: `${where} serves a certificate for ${serverName} that does not verify: ${result.problem} (issuer "${leaf.issuer.replace(/\n/g, ', ')}")` };
  return { ...base, ok: true, detail: served };
}

/** The served names most like the one asked for first (api.<cluster>.<old domain> for api.<cluster>.<new domain>). */
function closestFirst(names: string[], serverName: string): string[] {
  const wanted = serverName.toLowerCase().split('.');
  const likeness = (name: string) => {
    const labels = name.toLowerCase().split('.');
    return (labels[0] === wanted[0] ? 100 : 0) + labels.filter((l, i) => l === wanted[i]).length;
  };
  return [...names].sort((a, b) => likeness(b) - likeness(a));
}

/** "[a, b, c and 4 more]": a blocker line is read every few seconds; the whole list is in the report. */
function shortList(names: string[], max = 3): string {
  return `[${names.slice(0, max).join(', ')}${names.length > max ? ` and ${names.length - max} more` : ''}]`;
}
