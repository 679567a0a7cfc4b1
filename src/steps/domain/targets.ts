// Where the domain is going, read from the site-config and the cluster: the names, the installed apps domain
// (Ingress spec.domain, immutable), and whether the agent manages anything at all.
import { R } from '../../cluster/resources';
import type { ClusterClient, KubeObject } from '../../cluster/types';
import { StepError, type StepContext } from '../../engine/step';
import { domainNames, type DomainNames } from './names';
import { readIngressConfig } from './ingress';

interface Infrastructure extends KubeObject {
  status?: { apiServerURL?: string };
}

export interface DomainTargets {
  names: DomainNames;
  /** Ingress spec.domain: the apps domain the cluster was installed with. */
  installedAppsDomain: string;
  /** Ingress spec.appsDomain right now (may already be ours from an earlier run). */
  currentAppsDomain?: string;
  /**
   * managed: the agent serves the new names with its own certificates (the domain differs from the
   * installed one, or the site-config brings certificates). native: the site keeps the installed domain
   * and the cluster's own certificates, so the agent's earlier changes (if any) are removed.
   */
  mode: 'managed' | 'native';
}

/** The cluster name: the run's facts (api step), the site-config, or the first label after "api." of the API URL. */
async function clusterNameOf(ctx: StepContext, client: ClusterClient): Promise<string> {
  const known = ctx.facts.clusterName ?? ctx.site.resolved.clusterName;
  if (known) return known;
  const infra = await client.get<Infrastructure>(R.infrastructures, 'cluster');
  const host = infra?.status?.apiServerURL ? new URL(infra.status.apiServerURL).hostname : '';
  const name = host.startsWith('api.') ? host.split('.')[1] : undefined;
  if (!name) {
    throw new StepError('cannot tell the cluster name: no Infrastructure status.apiServerURL of the form https://api.<cluster>.<domain>:6443', 'Set spec.clusterName in the site-config.');
  }
  return name;
}

export async function domainTargets(ctx: StepContext, client: ClusterClient): Promise<DomainTargets> {
  const names = domainNames(await clusterNameOf(ctx, client), ctx.site.resolved.baseDomain);
  const ingress = await readIngressConfig(client);
  const installedAppsDomain = (ingress.spec?.domain ?? '').toLowerCase();
  const provided = ctx.site.resolved.certificates;
  const mode = names.appsDomain === installedAppsDomain && !provided.api && !provided.ingress ? 'native' : 'managed';
  return {
    names,
    installedAppsDomain,
    ...(ingress.spec?.appsDomain ? { currentAppsDomain: ingress.spec.appsDomain.toLowerCase() } : {}),
    mode,
  };
}
