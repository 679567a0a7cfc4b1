// The technician's hand-off (seed 000, open question 1: "How will the end user get the cluster
// credentials?"): an admin kubeconfig for the new API name, written to the state directory with mode 0600
// (it holds a private key or token). Its credentials are those of the admin kubeconfig the factory stored
// with `prepare --admin-kubeconfig` when there is one (the installer's auth/kubeconfig lasts 10 years),
// otherwise the node-local kubeconfig's: the `node-system-admin-client` certificate, "placed on each master
// to allow communication to kube-apiserver for debugging", valid 120 days on 4.12-4.15 and 2 years on 4.16
// and rotated by the kube-apiserver operator (cluster-kube-apiserver-operator
// pkg/operator/certrotationcontroller/certrotationcontroller.go). Either way its NotAfter is stated in the
// file, the report and the banner, so nobody learns it from a 401.
//
// A client certificate stops working when its signer expires, even before its own NotAfter: node-system-admin-
// signer lives 365 days and is rotated at 292 while its clients live 120 days (2 years on 4.16), unclamped
// (cluster-kube-apiserver-operator release-4.12..4.16 certrotationcontroller.go). So the stated expiry is the
// earlier of the two, the signer found in kube-apiserver's client CA bundle (openshift-kube-apiserver/client-ca,
// targetconfigcontroller.go ManageClientCABundle). A hand-off that no longer works (a node stored longer than
// its debug certificate lives, without `prepare --admin-kubeconfig`) is a warning saying how to log in instead.
//
// The CA data is the CA that signs what the new name serves (the load-balancer signer, or the provided
// certificate's chain) plus the node-local kubeconfig's own CA.
import * as path from 'node:path';
import { joinPem, splitCertificates } from '../../certs/pem';
import { loadKubeconfig } from '../../cluster/kubeconfig';
import { clientCredentialExpiry } from '../../certs/pem';
import { R } from '../../cluster/resources';
import { isTransient } from '../../cluster/retry';
import type { KubeObject } from '../../cluster/types';
import { FACTORY_ADMIN_KUBECONFIG, STATE_FILES } from '../../paths';
import { StepError, type StepContext } from '../../engine/step';
import { emitYaml } from '../../util/yaml';

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

/** The factory's admin kubeconfig when prepare stored one, else the node-local kubeconfig. */
async function handoffSource(ctx: StepContext): Promise<{ path: string; factory: boolean }> {
  if (await ctx.host.exists(FACTORY_ADMIN_KUBECONFIG)) return { path: FACTORY_ADMIN_KUBECONFIG, factory: true };
  return { path: ctx.kubeconfig, factory: false };
}

/** What the hand-off kubeconfig's opening comment says about its credential's lifetime. */
function credentialComment(factory: boolean, expiry: { notAfter: string; signer?: string } | undefined): string[] {
  const from = factory ? 'the admin kubeconfig stored at the factory (sno-reconfigure prepare --admin-kubeconfig)' : 'the node-local kubeconfig: the node\'s rotating debug certificate';
  if (!expiry) return [`# Credentials: a token from ${from}.`];
  const when = expiry.signer ? `# Its client certificate works until ${expiry.notAfter}, when its signer ${expiry.signer} expires.` : `# Its client certificate expires ${expiry.notAfter}.`;
  return [`# Credentials: from ${from}.`, when, '# After that, log in through the OAuth route (oc login) with kubeadmin or a cluster user.'];
}

const CLIENT_CA = { namespace: 'openshift-kube-apiserver', name: 'client-ca' } as const;

/**
 * kube-apiserver's client CA bundle, or undefined when it cannot be read (the leaf's own NotAfter then counts).
 * An API that is only briefly away (a revision rollout restarting kube-apiserver right after the domain's writes)
 * is not "cannot be read": that error goes to the step's retry, or the kubeconfig rendered in verify would differ
 * from the one written (its expiry comment) and the step fail as "not in place" (seen beside a CPU hog).
 */
async function clientCaBundle(ctx: StepContext): Promise<string | undefined> {
  try {
    const cm = await (await ctx.cluster()).get<KubeObject & { data?: Record<string, string> }>(R.configMaps, CLIENT_CA.name, CLIENT_CA.namespace);
    return cm?.data?.['ca-bundle.crt'];
  } catch (e) {
    if (isTransient(e)) throw e;
    return undefined;
  }
}

/** The kubeconfig text (deterministic for the same input, so an unchanged one is not rewritten). */
export async function renderHandoffKubeconfig(ctx: StepContext, input: HandoffInput): Promise<string> {
  const { path: source, factory } = await handoffSource(ctx);
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
  const expiry = user.token || !kc.clientCert ? undefined : clientCredentialExpiry(kc.clientCert, await clientCaBundle(ctx));
  const comment = [`# Admin kubeconfig for https://${input.apiHost}:6443, written by sno-reconfigure.`, ...credentialComment(factory, expiry)];
  return `${comment.join('\n')}\n${emitYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: `https://${input.apiHost}:6443`, 'certificate-authority-data': Buffer.from(joinPem(ca)).toString('base64') } }],
    users: [{ name: 'admin', user }],
    contexts: [{ name: 'admin', context: { cluster: name, user: 'admin' } }],
    'current-context': 'admin',
  })}`;
}

/**
 * Records where the hand-off kubeconfig is and until when its credential works, for the report and the
 * banner (read back from the file written, so a resumed run reports what is on disk).
 */
export async function recordHandoff(ctx: StepContext): Promise<void> {
  const target = handoffPath(ctx);
  ctx.facts.newApiKubeconfig = target;
  ctx.data.kubeconfig = target;
  const text = await ctx.host.readTextIfExists(target);
  // The value is a JSON string since emitYaml (src/util/yaml.ts), plain before: both read.
  const data = text && /client-certificate-data:\s*"?([A-Za-z0-9+/=]+)/.exec(text)?.[1];
  const expiry = data ? clientCredentialExpiry(Buffer.from(data, 'base64'), await clientCaBundle(ctx)) : undefined;
  if (!expiry) {
    delete ctx.facts.newApiKubeconfigExpires;
    return;
  }
  ctx.facts.newApiKubeconfigExpires = expiry.notAfter;
  if (Date.parse(expiry.notAfter) > ctx.clock.now()) return;
  const server = /server:\s*"?([^\s"]+)/.exec(text ?? '')?.[1] ?? 'the new API';
  const day = expiry.notAfter.slice(0, 10);
  const why = expiry.signer ? `its client certificate stopped working on ${day}, when its signer ${expiry.signer} expired` : `its client certificate expired on ${day}`;
  ctx.warn(
    `the hand-off kubeconfig ${target} does not work: ${why} (the node was stored longer than the node's debug certificate lives, and prepare was not given --admin-kubeconfig). ` +
      `Log in through the OAuth route instead: oc login ${server} as kubeadmin or a cluster user, or use the installer's auth/kubeconfig with its server set to ${server}.`,
  );
}

/** Writes it when different; returns whether it wrote. */
export async function ensureHandoffKubeconfig(ctx: StepContext, text: string): Promise<boolean> {
  const target = handoffPath(ctx);
  if ((await ctx.host.readTextIfExists(target)) === text) return false;
  await ctx.host.writeFileAtomic(target, text, 0o600);
  return true;
}
