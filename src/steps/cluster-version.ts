// The cluster's OpenShift version, for the steps whose objects differ between minors.
import { R } from '../cluster/resources';
import type { ClusterClient, KubeObject } from '../cluster/types';
import { StepError, type StepContext } from '../engine/step';

/** "4.14.12" (the api step's fact, else ClusterVersion's desired or last completed version). */
export async function clusterVersion(ctx: StepContext, client: ClusterClient): Promise<string> {
  if (ctx.facts.clusterVersion) return ctx.facts.clusterVersion;
  const cv = await client.get<KubeObject & { status?: { desired?: { version?: string }; history?: { version?: string; state?: string }[] } }>(R.clusterVersions, 'version');
  const version = cv?.status?.desired?.version ?? cv?.status?.history?.find((h) => h.state === 'Completed')?.version;
  if (!version) throw new StepError('cannot tell the OpenShift version: ClusterVersion "version" has no status.desired.version', 'Check `oc get clusterversion`; the agent retries after a restart.');
  return version;
}

/** The 4.x minor of "4.14.12" (14); 0 when the text is no 4.x version. */
export function minorOf(version: string): number {
  const m = /^4\.(\d+)/.exec(version);
  return m ? Number(m[1]) : 0;
}
