// Reading a site-config and judging it against this node: what the run loop loads only when media appear
// (src/engine/runner.ts loads this module on first use, so a waiting agent never evaluates the site-config code).
import { loadSiteConfig } from '../siteconfig/load';
import { checkAgainstCluster } from '../siteconfig/cluster-check';
import type { ValidationProblem as Problem } from '../siteconfig/types';
import type { Baseline } from './identity';

export { loadSiteConfig };

/**
 * Why a loaded config cannot be used on this node: its own problems, a mismatch with the cluster baseline,
 * or this exact config having been refused here before. Empty when it can be used.
 */
export function problemsOf(result: Awaited<ReturnType<typeof loadSiteConfig>>, id: { baseline: Baseline; nodeName: string; rejectedDigests?: string[]; now?: number }): Problem[] {
  if (result.status === 'invalid') return result.errors;
  if (result.status !== 'valid') return [];
  if (id.rejectedDigests?.includes(result.site.digest)) {
    return [{ path: 'site-config', message: 'this exact site-config was already tried on this node and refused (see the earlier errors); provide a corrected one' }];
  }
  const { baseline } = id;
  return checkAgainstCluster(result.site.resolved, {
    clusterName: baseline.clusterName,
    nodeName: id.nodeName,
    nodeAddresses: [...(baseline.nodeAddresses ?? []), ...(baseline.internalAddresses ?? [])],
    ...(baseline.clusterID ? { clusterID: baseline.clusterID } : {}),
    ...(baseline.kubeadmin && id.now !== undefined ? { kubeadmin: { ...baseline.kubeadmin, now: id.now } } : {}),
  });
}

