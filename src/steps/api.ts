// Step "api": wait for the kube-apiserver with capped, jittered backoff and a per-request timeout, then
// learn what the rest of the run needs from the cluster (its name, old domain, version) and refuse a
// site-config meant for another cluster before anything in the cluster changes.
import type { V1Node } from '@kubernetes/client-node';
import { ConfigRejectedError, StepError, type Step, type StepContext } from '../engine/step';
import { R } from '../cluster/resources';
import { DEFAULT_KUBECONFIG, STATIC_POD_RESOURCES_DIR } from '../paths';
import type { KubeObject } from '../cluster/types';
import { checkAgainstCluster } from '../siteconfig/cluster-check';
import { readKubeadminState } from './kubeadmin';
import { refuseOtherCoreLoginsEarly } from './ssh-key';
import { refuseChangedMachineConfigs } from './factory-machineconfigs';
import { poolMachineConfigs } from './rollouts';
import { retryOn, type Backoff } from '../util/backoff';

const REQUEST_TIMEOUT_MS = 5_000;
// The API is this node's own (SNO) and the agent its only waiter: a refused connection or a /readyz answer
// costs it next to nothing, while every interval between polls is added to the run (issue #8 measures the
// time from "API up" to the agent noticing). Polls start at 100 ms and settle at 125–250 ms (equal jitter):
// four a second at most, each a refused connection or a /readyz a starting kube-apiserver answers at once.
const READYZ_BACKOFF: Backoff = { initialMs: 100, factor: 2, jitter: 0.5, maxMs: 250 };
const PROGRESS_EVERY_MS = 10_000;
// A 401 is an answer, not "not ready": the credential is refused. The recovery token (src/engine/credentials.ts)
// is authenticated through etcd, so a kube-apiserver that is still starting may refuse it for a moment;
// after this long the refusal is reported as what it is — at once when the only credential left has expired.
const CREDENTIAL_REFUSED_GRACE_MS = 2 * 60_000;

function credentialExpired(server: string, detail: string): StepError {
  return new StepError(
    `the Kubernetes API at ${server} refuses the agent's credential: ${detail.startsWith('credential expired') ? detail : `credential expired (${detail})`}`,
    `No usable localhost-recovery-client token was found under ${STATIC_POD_RESOURCES_DIR}. Copy an admin kubeconfig that still works (the installer's auth/kubeconfig) to ${DEFAULT_KUBECONFIG}, then \`systemctl restart sno-reconfigure\`.`,
  );
}

/** /readyz answered, but not "ok": worth asking again. */
class NotReadyYet extends Error {}

interface ClusterIdentity {
  clusterName: string;
  baseDomain: string;
  version?: string;
}

/** DNS `cluster` spec.baseDomain is "<clusterName>.<baseDomain>" on OpenShift (installer pkg/asset/manifests/dns.go). */
export function splitClusterDomain(clusterDomain: string): { clusterName: string; baseDomain: string } {
  const dot = clusterDomain.indexOf('.');
  return dot < 0 ? { clusterName: clusterDomain, baseDomain: '' } : { clusterName: clusterDomain.slice(0, dot), baseDomain: clusterDomain.slice(dot + 1) };
}

async function readClusterIdentity(ctx: StepContext): Promise<ClusterIdentity> {
  const client = await ctx.cluster();
  const dns = await client.get<KubeObject & { spec?: { baseDomain?: string } }>(R.dnses, 'cluster');
  const clusterDomain = dns?.spec?.baseDomain;
  if (!clusterDomain) throw new StepError('the cluster has no DNS config "cluster" with spec.baseDomain', 'This does not look like an OpenShift cluster; check the kubeconfig the agent uses (--kubeconfig).');
  const cv = await client.get<KubeObject & { status?: { desired?: { version?: string } } }>(R.clusterVersions, 'version');
  return { ...splitClusterDomain(clusterDomain), ...(cv?.status?.desired?.version ? { version: cv.status.desired.version } : {}) };
}

export const apiStep: Step = {
  name: 'api',
  title: 'Wait for the Kubernetes API',

  async plan() {
    return [];
  },

  async check(ctx) {
    return (await (await ctx.cluster()).readyz({ timeoutMs: REQUEST_TIMEOUT_MS })).ready;
  },

  async apply(ctx) {
    const client = await ctx.cluster();
    const deadline = ctx.deadline('API', ctx.site.resolved.timeouts.apiReady);
    ctx.progress.extendTimeout(deadline.totalMs);
    let lastProgressAt = -Infinity;
    let refusedSince: number | undefined;
    let refused = false;
    const askReadyz = async () => {
      const { ready, detail, unauthorized, refusedForGood } = await client.readyz({ timeoutMs: REQUEST_TIMEOUT_MS });
      if (ready) return;
      refused = unauthorized === true;
      refusedSince = refused ? (refusedSince ?? ctx.clock.now()) : undefined;
      if (refusedForGood || (refusedSince !== undefined && ctx.clock.now() - refusedSince >= CREDENTIAL_REFUSED_GRACE_MS)) throw credentialExpired(client.server, detail);
      throw new NotReadyYet(detail);
    };
    const reportProgress = (e: unknown) => {
      if (ctx.clock.now() - lastProgressAt < PROGRESS_EVERY_MS) return;
      lastProgressAt = ctx.clock.now();
      ctx.progress.status(refused ? `the API answers but refuses the agent's credential (credential expired), ${deadline.progress()}` : `waiting for the API, ${deadline.progress()} (${(e as Error).message})`);
    };
    try {
      await retryOn(READYZ_BACKOFF, (e) => e instanceof NotReadyYet, askReadyz, { timer: ctx.clock, signal: ctx.signal, deadline, onRetry: reportProgress });
    } catch (e) {
      if (!(e instanceof NotReadyYet)) throw e;
      ctx.signal.throwIfAborted();
      throw new StepError(
        `the Kubernetes API at ${client.server} did not become ready within ${deadline.progress().split(' of ')[1]} (last answer: ${e.message})`,
        'Check that kubelet runs (`systemctl status kubelet`, `journalctl -u kubelet -b`) and that the static pods start (`crictl ps -a`); the agent retries after a restart.',
      );
    }
  },

  async verify(ctx) {
    const identity = await readClusterIdentity(ctx);
    ctx.facts.clusterName = identity.clusterName;
    ctx.facts.oldBaseDomain = identity.baseDomain;
    if (identity.version) ctx.facts.clusterVersion = identity.version;
    const kubeadmin = await readKubeadminState(ctx);
    const problems = checkAgainstCluster(ctx.site.resolved, { clusterName: identity.clusterName, nodeName: ctx.facts.nodeName ?? '', ...(kubeadmin ? { kubeadmin } : {}) });
    if (problems.length > 0) {
      const onlyKubeadmin = problems.every((p) => /kubeadmin/i.test(p.path));
      throw new ConfigRejectedError(
        `the site-config does not fit this cluster: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
        onlyKubeadmin
          ? 'Provide a site-config without a kubeadmin password hash (removing kubeadmin still works); nothing in the cluster was changed.'
          : 'Provide a site-config written for this cluster (its clusterName and hostname must match; renaming is not supported by OpenShift).',
      );
    }
    // Found here, not at step ssh-key once the domain has moved (the eighteenth hostile re-test of issue 36); and a
    // MachineConfig added after prepare re-armed the node (the nineteenth).
    const mcs = await poolMachineConfigs(await ctx.cluster());
    await refuseOtherCoreLoginsEarly(ctx, mcs);
    // The machine-config operator's own kind only: another group's MachineConfig is no MachineConfig of the pool (the
    // twenty-first re-test, F2).
    await refuseChangedMachineConfigs(ctx.host, ctx.stateDir, mcs, (ctx.site.resolved.extraManifests ?? []).filter((m) => m.object.kind === 'MachineConfig' && m.object.apiVersion.startsWith(`${R.machineConfigs.group}/`)).map((m) => m.object.metadata.name));
    const node = await (await ctx.cluster()).get<V1Node & KubeObject>(R.nodes, ctx.facts.nodeName ?? '');
    if (!node) ctx.warn(`the cluster has no Node named "${ctx.facts.nodeName}" yet; kubelet will register it`);
  },

  // After a power cut past this step the API is coming back with the node: wait for it again (bounded
  // as before) so the later steps do not meet a refused connection.
  async resume(ctx) {
    if (!(await apiStep.check(ctx))) await apiStep.apply(ctx);
  },
};
