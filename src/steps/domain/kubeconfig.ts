// The technician's hand-off (seed 000, open question 1: "How will the end user get the cluster
// credentials?"): an admin kubeconfig for the new API name, with the same credentials as the node-local
// kubeconfig, written to the state directory with mode 0600 (it holds a private key or token).
//
// The CA data is the CA that signs what the new name serves (the load-balancer signer, or the provided
// certificate's chain) plus the node-local kubeconfig's own CA.
import * as path from 'node:path';
import { stringify } from 'yaml';
import { joinPem, splitCertificates } from '../../certs/pem';
import { loadKubeconfig } from '../../cluster/kubeconfig';
import { STATE_FILES } from '../../paths';
import { StepError, type StepContext } from '../../engine/step';

export interface HandoffInput {
  clusterName: string;
  apiHost: string;
  /** PEM CA certificates for the new API name. */
  caPems: string[];
}

/** Node path of the hand-off kubeconfig. */
export function handoffPath(ctx: StepContext): string {
  return path.posix.join(ctx.stateDir, STATE_FILES.kubeconfig);
}

/** The kubeconfig text (deterministic for the same input, so an unchanged one is not rewritten). */
export async function renderHandoffKubeconfig(ctx: StepContext, input: HandoffInput): Promise<string> {
  const source = ctx.kubeconfig;
  let kc;
  try {
    kc = await loadKubeconfig((p) => ctx.host.readFile(p), source);
  } catch (e) {
    throw new StepError(`cannot read the node-local kubeconfig ${source} to build the hand-off kubeconfig: ${(e as Error).message}`, 'Check that the file exists (--kubeconfig).');
  }
  const token = kc.token ?? (kc.tokenFile ? (await ctx.host.readText(kc.tokenFile)).trim() : undefined);
  if (!(kc.clientCert && kc.clientKey) && !token) {
    throw new StepError(`the node-local kubeconfig ${source} has neither a client certificate nor a token`, 'The hand-off kubeconfig needs admin credentials; check --kubeconfig.');
  }
  const seen = new Set<string>();
  const ca = [...input.caPems, ...splitCertificates(kc.ca?.toString('utf8') ?? '')].filter((p) => {
    const k = p.replace(/\s+/g, '');
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const user: Record<string, string> = kc.clientCert && kc.clientKey
    ? { 'client-certificate-data': kc.clientCert.toString('base64'), 'client-key-data': kc.clientKey.toString('base64') }
    : { token: token as string };
  const name = input.clusterName;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: `https://${input.apiHost}:6443`, 'certificate-authority-data': Buffer.from(joinPem(ca)).toString('base64') } }],
    users: [{ name: 'admin', user }],
    contexts: [{ name: 'admin', context: { cluster: name, user: 'admin' } }],
    'current-context': 'admin',
  });
}

/** Writes it when different; returns whether it wrote. */
export async function ensureHandoffKubeconfig(ctx: StepContext, text: string): Promise<boolean> {
  const target = handoffPath(ctx);
  if ((await ctx.host.readTextIfExists(target)) === text) return false;
  await ctx.host.writeFileAtomic(target, text, 0o600);
  return true;
}
