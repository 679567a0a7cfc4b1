// The poll-based baseline the agent is measured against: the waits of openshift/installer's bootstrap-in-place
// post-reboot script (reference/anchor-installer.md section 1), against the same simulator timeline:
//   wait_for_api  — `oc get csr` every 5 s until it answers;
//   approve_csr   — every 10 s, approve every CSR that has no status, until the node is Ready;
//   wait_for_cvo  — every 20 s, until ClusterVersion is Available;
// one wait after another. Two changes make it reach the agent's end state, so the two are comparable:
// the CSR loop also waits for the serving certificate (the simulated kubelet files its serving CSR only
// once the node is Ready, which BIP's loop would leave pending), and the last wait checks what the agent's
// settle step checks (ClusterVersion Available and not Progressing, no ClusterOperator Progressing or
// Degraded, the master pool updated, the node Ready) — BIP looks at ClusterVersion Available only, which the
// simulator keeps True. The cluster changes in between are the agent's own steps (domain, pull secret,
// mirrors, trust), run in-process, so both make the same writes and trigger the same rollouts.
import { R } from '../../src/cluster/resources';
import type { ClusterClient, KubeObject } from '../../src/cluster/types';
import type { StepName } from '../../src/engine/step';
import type { ResolvedSiteConfig } from '../../src/siteconfig/types';
import { STEPS } from '../../src/steps/index';
import type { Simulator } from '../sim/index';
import { createHarness } from '../integration/steps/harness';

export const BIP_POLL = { apiMs: 5_000, csrMs: 10_000, clusterVersionMs: 20_000 } as const;

/** Steps that only wait (replaced by the polls) or act on the node (not part of BIP's job). */
const NOT_CLUSTER_WRITES: StepName[] = ['network', 'kubelet', 'api', 'csr', 'settle', 'finish'];

interface Condition {
  type: string;
  status: string;
}
type WithConditions = KubeObject & { status?: { conditions?: Condition[] } };
const cond = (o: WithConditions | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type)?.status;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BaselineResult {
  /** Real ms since the baseline started (it starts kubelet at 0). */
  endMs: number;
  polls: { api: number; csr: number; clusterVersion: number };
  approved: string[];
  wrote: StepName[];
}

async function settled(client: ClusterClient, nodeName: string): Promise<boolean> {
  const cv = await client.get<WithConditions>(R.clusterVersions, 'version');
  if (cond(cv, 'Available') !== 'True' || cond(cv, 'Progressing') === 'True') return false;
  const cos = await client.list<WithConditions>(R.clusterOperators);
  if (cos.items.some((co) => cond(co, 'Available') !== 'True' || cond(co, 'Progressing') === 'True' || cond(co, 'Degraded') === 'True')) return false;
  const pool = await client.get<KubeObject & { spec?: { configuration?: { name?: string } }; status?: { configuration?: { name?: string }; conditions?: Condition[] } }>(R.machineConfigPools, 'master');
  if (pool && (pool.spec?.configuration?.name !== pool.status?.configuration?.name || cond(pool, 'Updated') === 'False')) return false;
  const node = await client.get<WithConditions>(R.nodes, nodeName);
  return cond(node, 'Ready') === 'True';
}

/** Runs the baseline against `sim` (kubelet not yet started); `site` is the resolved site-config the agent got. */
export async function runBaseline(sim: Simulator, site: ResolvedSiteConfig): Promise<BaselineResult> {
  const h = await createHarness(sim, { site });
  const t0 = Date.now();
  const polls = { api: 0, csr: 0, clusterVersion: 0 };
  const approved: string[] = [];
  const wrote: StepName[] = [];
  try {
    const client = h.client;
    sim.startKubelet();
    // wait_for_api
    for (;;) {
      polls.api += 1;
      try {
        await client.list(R.csrs);
        break;
      } catch {
        await sleep(BIP_POLL.apiMs);
      }
    }
    // approve_csr (until the node is Ready and its serving certificate issued)
    for (;;) {
      polls.csr += 1;
      try {
        const csrs = await client.list<KubeObject & { status?: { conditions?: Condition[]; certificate?: string }; spec?: { signerName?: string } }>(R.csrs);
        for (const c of csrs.items.filter((x) => !x.status?.conditions?.length)) {
          await client.approveCsr(c.metadata!.name!, 'BootstrapInPlaceApprove', 'approved by the baseline poller');
          approved.push(c.metadata!.name!);
        }
        const node = await client.get<WithConditions>(R.nodes, sim.options.nodeName);
        const servingIssued = csrs.items.some((x) => x.spec?.signerName === 'kubernetes.io/kubelet-serving' && x.status?.certificate);
        if (cond(node, 'Ready') === 'True' && servingIssued) break;
      } catch {
        // `oc` errors go to /dev/null in the script: try again on the next pass
      }
      await sleep(BIP_POLL.csrMs);
    }
    // The cluster changes: the agent's own cluster steps, in its order.
    for (const step of STEPS) {
      if (NOT_CLUSTER_WRITES.includes(step.name)) continue;
      await h.run(step);
      wrote.push(step.name);
    }
    // wait_for_cvo (with the agent's settled conditions)
    for (;;) {
      polls.clusterVersion += 1;
      try {
        if (await settled(client, sim.options.nodeName)) break;
      } catch {
        // the API restarts during the kube-apiserver rollout: next pass
      }
      await sleep(BIP_POLL.clusterVersionMs);
    }
    return { endMs: Date.now() - t0, polls, approved, wrote };
  } finally {
    await h.cleanup();
  }
}
