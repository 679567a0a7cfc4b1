// `prepare --admin-kubeconfig FILE`: the factory hands over a long-lived admin kubeconfig (the installer's
// auth/kubeconfig, a 10-year certificate from admin-kubeconfig-signer), so the site's hand-off kubeconfig does
// not carry the node's rotating debug certificate (src/steps/domain/kubeconfig.ts). It is stored on the node
// with mode 0600 and never printed: checks and actions name the file and the certificate's dates only.
import { parseKubeconfig, type Kubeconfig } from '../cluster/kubeconfig';
import { clientCertificateNotAfter } from '../certs/pem';
import type { Host } from '../host/host';
import { FACTORY_ADMIN_KUBECONFIG } from '../paths';
import type { Check } from './preflight';

const ID = 'admin-kubeconfig';
const DAY_MS = 86_400_000;

export interface AdminKubeconfigInput {
  /** Where the technician's file is (for messages). */
  source: string;
  bytes: Buffer;
}

/**
 * What prepare says about the admin kubeconfig: the one given now (to be stored), or the one stored by an
 * earlier prepare, or that the hand-off will fall back to the node's own certificate.
 */
export async function checkAdminKubeconfig(host: Host, given: AdminKubeconfigInput | undefined, nowMs: number, minValidityMs: number): Promise<{ check: Check; store?: Buffer }> {
  if (!given) {
    const stored = await host.readTextIfExists(FACTORY_ADMIN_KUBECONFIG);
    if (stored === undefined) {
      return { check: { id: ID, ok: true, detail: 'no factory admin kubeconfig: the site\'s hand-off kubeconfig will carry the node\'s rotating debug certificate; give a long-lived one with --admin-kubeconfig FILE' } };
    }
    const judged = await judge({ source: FACTORY_ADMIN_KUBECONFIG, bytes: Buffer.from(stored) }, nowMs, minValidityMs);
    return { check: { ...judged, detail: `${judged.detail} (stored by an earlier prepare)` } };
  }
  const judged = await judge(given, nowMs, minValidityMs);
  return judged.ok ? { check: { ...judged, detail: `${judged.detail}; it will be stored in ${FACTORY_ADMIN_KUBECONFIG} (mode 0600)` }, store: given.bytes } : { check: judged };
}

async function judge(input: AdminKubeconfigInput, nowMs: number, minValidityMs: number): Promise<Check> {
  const remedy = 'Give the installer\'s auth/kubeconfig (certificates inline) with --admin-kubeconfig FILE.';
  let kc: Kubeconfig;
  try {
    kc = await parseKubeconfig(input.bytes.toString('utf8'), {
      source: input.source,
      baseDir: '/',
      read: (p) => Promise.reject(new Error(`it refers to the file ${p}; the kubeconfig must be self-contained`)),
    });
  } catch (e) {
    return { id: ID, ok: false, detail: `admin kubeconfig ${input.source} cannot be used: ${(e as Error).message}`, remedy };
  }
  if (!(kc.clientCert && kc.clientKey) && !kc.token) return { id: ID, ok: false, detail: `admin kubeconfig ${input.source} has neither a client certificate nor a token`, remedy };
  if (kc.token && !kc.clientCert) {
    return { id: ID, ok: true, detail: `admin kubeconfig ${input.source}: a token (of unknown lifetime)` };
  }
  const notAfter = clientCertificateNotAfter(kc.clientCert);
  if (!notAfter) return { id: ID, ok: false, detail: `admin kubeconfig ${input.source}: its client certificate cannot be read`, remedy };
  const left = Date.parse(notAfter) - nowMs;
  if (left < minValidityMs) {
    return { id: ID, ok: false, detail: `admin kubeconfig ${input.source}: its client certificate expires ${notAfter}, in ${Math.floor(Math.max(0, left) / DAY_MS)} days, less than the shipment needs`, remedy };
  }
  return { id: ID, ok: true, detail: `admin kubeconfig ${input.source}: client certificate valid until ${notAfter}` };
}
