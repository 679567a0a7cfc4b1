// Step "csr": approve the node's own kubelet CSRs — strictly, by identity (src/csr/policy.ts, DESIGN.md
// section 5) — and keep approving in the background until the run ends. cluster-machine-approver does run
// on a single node, but it approves a bootstrap client CSR only for a Machine it can match, and a relocated
// SNO on platform none has none ("No target machine for node": openshift/cluster-machine-approver
// pkg/controller/csr_check.go). Nothing else may be approved blindly.
//
// Done when the node is Ready and kubelet holds a client and a serving certificate: either issued in this
// run through an approved CSR, or still valid on disk from the factory (kubelet then files no CSR at all).
// The wait wakes on the approver's progress and on a watch of this node (issue #8: a 3 s poll added up to
// 3 s to every run); the periodic look stays for what no event reports (certificates on disk, a lost watch).
import { X509Certificate } from 'node:crypto';
import type { V1Node } from '@kubernetes/client-node';
import { R } from '../cluster/resources';
import { isTransient } from '../cluster/retry';
import type { ClusterClient, KubeObject } from '../cluster/types';
import { startCsrApprover, type CsrApprover } from '../csr/approver';
import type { ExpectedNode } from '../csr/policy';
import { currentAddresses } from '../host/netcheck';
import { Wakeup } from '../engine/wakeup';
import { expectedNode } from './expected-node';
import { addressesFromNmstate } from '../siteconfig/nmstate';
import { StepError, type Step, type StepContext } from '../engine/step';

const APPROVER = 'csr-approver';
/** The look without an event: certificates kubelet still holds from the factory, a watch that was lost. */
const POLL_MS = 3_000;
const ADDRESS_REFRESH_MS = 30_000;
/** kubelet's certificate files (kubelet --rotate-certificates, /var/lib/kubelet/pki on RHCOS). */
export const KUBELET_CERTS = {
  client: '/var/lib/kubelet/pki/kubelet-client-current.pem',
  serving: '/var/lib/kubelet/pki/kubelet-server-current.pem',
} as const;

/** Every address the node has had during this run; addresses are only added (DHCP may renew mid-run). */
function knownAddresses(ctx: StepContext, current: string[] = []): string[] {
  const fromSite = addressesFromNmstate(ctx.site.resolved.network?.nmstate);
  const internal = ctx.facts.internalAddresses ?? [];
  ctx.facts.nodeAddresses = [...new Set([...(ctx.facts.nodeAddresses ?? []), ...fromSite, ...current, ...internal])];
  return ctx.facts.nodeAddresses;
}

async function ensureApprover(ctx: StepContext): Promise<CsrApprover> {
  const running = ctx.background.get<CsrApprover>(APPROVER);
  if (running) return running;
  // Starts with the addresses known without I/O (the site network's, the internal IP, earlier runs'): the
  // client CSR — kubelet's first, filed the moment the API is up — carries no address, and reading the
  // interfaces must not delay its approval. The current addresses follow at once and then every
  // ADDRESS_REFRESH_MS, each time with a re-evaluation of what was left pending.
  let expected: ExpectedNode = expectedNode(ctx, knownAddresses(ctx), ctx.clock.now());
  const approver = startCsrApprover({ client: await ctx.cluster(), expected: () => expected, log: ctx.log.child({ component: 'csr' }), signal: ctx.signal });
  const refresh = () =>
    currentAddresses(ctx.host).then(
      (current) => {
        expected = { ...expected, addresses: knownAddresses(ctx, current) };
        approver.reevaluate();
      },
      (e: unknown) => ctx.log.debug({ err: (e as Error).message }, 'could not read the current addresses'),
    );
  void refresh();
  const timer = setInterval(() => void refresh(), ADDRESS_REFRESH_MS);
  timer.unref();
  ctx.background.add('csr-addresses', { stop: async () => clearInterval(timer) });
  return ctx.background.add(APPROVER, approver);
}

/** Wakes `wakeup` when this node's object changes (Ready), until `signal` aborts; a failed watch only logs. */
function watchNode(ctx: StepContext, client: ClusterClient, wakeup: Wakeup, signal: AbortSignal): Promise<void> {
  const name = ctx.facts.nodeName ?? '';
  return client
    .watch<V1Node & KubeObject>(R.nodes, { fieldSelector: `metadata.name=${name}`, signal }, () => wakeup.wake())
    .catch((e: unknown) => {
      if (!signal.aborted) ctx.log.debug({ err: (e as Error).message }, 'node watch ended; looking every few seconds');
    });
}

/** A kubelet certificate on disk that is valid now for this node. */
async function validCertOnDisk(ctx: StepContext, nodePath: string): Promise<boolean> {
  const pem = await ctx.host.readTextIfExists(nodePath).catch(() => undefined);
  if (!pem) return false;
  try {
    const cert = new X509Certificate(pem);
    const now = ctx.clock.now();
    return Date.parse(cert.validFrom) <= now && now < Date.parse(cert.validTo) && cert.subject.split('\n').includes(`CN=system:node:${ctx.facts.nodeName}`);
  } catch {
    return false;
  }
}

async function nodeReady(ctx: StepContext): Promise<boolean> {
  const node = await (await ctx.cluster()).get<V1Node & KubeObject>(R.nodes, ctx.facts.nodeName ?? '');
  return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function progressOf(ctx: StepContext, approver: CsrApprover): Promise<{ ready: boolean; client: boolean; serving: boolean }> {
  const issued = approver.issued();
  return {
    ready: await nodeReady(ctx),
    client: issued.client || (await validCertOnDisk(ctx, KUBELET_CERTS.client)),
    serving: issued.serving || (await validCertOnDisk(ctx, KUBELET_CERTS.serving)),
  };
}

export const csrStep: Step = {
  name: 'csr',
  title: "Approve the node's certificate requests",

  async plan(ctx) {
    return [{ kind: 'CertificateSigningRequest', target: `system:node:${ctx.facts.nodeName ?? '<node>'}`, action: 'approve', detail: 'client and serving CSRs of this node only, checked by identity' }];
  },

  async check() {
    // Always run: the approver must be up for this run, and apply returns at once when all is in place.
    return false;
  },

  async apply(ctx) {
    const approver = await ensureApprover(ctx);
    const wakeup = new Wakeup();
    const unsubscribe = approver.subscribe(() => wakeup.wake());
    const stopWatch = new AbortController();
    const nodeWatch = watchNode(ctx, await ctx.cluster(), wakeup, AbortSignal.any([ctx.signal, stopWatch.signal]));
    try {
      await waitForNode(ctx, approver, wakeup);
    } finally {
      unsubscribe();
      stopWatch.abort();
      await nodeWatch;
    }
  },

  async verify() {},

  async resume(ctx) {
    await ensureApprover(ctx);
  },
};

async function waitForNode(ctx: StepContext, approver: CsrApprover, wakeup: Wakeup): Promise<void> {
  const deadline = ctx.deadline('CSR approval', ctx.site.resolved.timeouts.csr);
  ctx.progress.extendTimeout(deadline.totalMs);
  // Set while the API is unreachable/restarting: warned once per outage, and named if the deadline passes.
  let apiTrouble: string | undefined;
  for (;;) {
    let p: { ready: boolean; client: boolean; serving: boolean };
    try {
      p = await progressOf(ctx, approver);
      if (apiTrouble) ctx.log.info('the API answers again; still waiting for the node');
      apiTrouble = undefined;
    } catch (e) {
      // A 503, reset or refused connection while waiting is no reason to fail (the kube-apiserver restarts
      // during bring-up): keep waiting within this step's deadline; the approver's watches retry on their own.
      if (!isTransient(e)) throw e;
      if (!apiTrouble) ctx.log.warn({ err: (e as Error).message }, 'the API is not available; still waiting for the node and its certificates');
      apiTrouble = (e as Error).message;
      p = { ready: false, client: approver.issued().client, serving: approver.issued().serving };
    }
    if (p.ready && p.client && p.serving) {
      for (const name of approver.approvedNames()) ctx.changed({ kind: 'CertificateSigningRequest', target: name, action: 'approve' });
      return;
    }
    const missing = [!p.ready && (apiTrouble ? 'node Ready (the API is not available)' : 'node Ready'), !p.client && 'kubelet client certificate', !p.serving && 'kubelet serving certificate'].filter(Boolean).join(', ');
    if (deadline.expired()) {
      throw new StepError(
        `still waiting for ${missing} after ${deadline.progress()}`,
        'Look at `oc get csr` (pending requests and why they were left pending are in this journal) and `journalctl -u kubelet -b`; the agent retries after a restart.',
      );
    }
    ctx.progress.status(`waiting for ${missing} (${deadline.progress()}; approved so far: ${approver.approvedNames().length})`);
    await wakeup.sleep(ctx.clock, Math.min(POLL_MS, deadline.remainingMs()), ctx.signal);
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('aborted');
  }
}
