// The default router admits every route (the default IngressController has no route or namespace
// selector): it records status.ingress[] with its name, the canonical hostname router-default.<domain> and
// an Admitted condition for the route's current host. Operators and the agent read this to know a route is
// live (library-go routeapihelpers.IngressURI looks for the Admitted ingress of the host).
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import type { StoreEvent } from '../store-types';
import type { SimContext } from './context';
import { clusterNames } from './options';

interface RouteIngress {
  host?: string;
  routerName?: string;
  routerCanonicalHostname?: string;
  wildcardPolicy?: string;
  conditions?: { type: string; status: string; lastTransitionTime?: string }[];
}

export class Router {
  constructor(private readonly ctx: SimContext) {}

  init(): void {
    for (const r of this.ctx.store.list(R.routes)) this.admit(r);
  }

  handle(e: StoreEvent): void {
    if (e.resource.plural !== R.routes.plural || e.resource.group !== R.routes.group || e.type === 'DELETED') return;
    try {
      this.admit(e.object);
    } catch (err) {
      this.ctx.log(`router: admitting ${e.object.metadata?.namespace}/${e.object.metadata?.name} failed: ${(err as Error).message}`);
    }
  }

  private canonicalHostname(): string {
    const ic = this.ctx.store.get(R.ingressControllers, 'default', 'openshift-ingress-operator');
    const domain = (ic?.status as { domain?: string } | undefined)?.domain ?? clusterNames(this.ctx.opts).apps;
    return `router-default.${domain}`;
  }

  private admit(route: KubeObject): void {
    const host = (route.spec as { host?: string } | undefined)?.host;
    if (!host) return;
    const ingress = ((route.status as { ingress?: RouteIngress[] } | undefined)?.ingress ?? []).filter((i) => i.routerName !== 'default');
    const current = ((route.status as { ingress?: RouteIngress[] } | undefined)?.ingress ?? []).find((i) => i.routerName === 'default');
    if (current?.host === host && current.conditions?.some((c) => c.type === 'Admitted' && c.status === 'True')) return;
    const fresh = this.ctx.store.get(R.routes, route.metadata!.name!, route.metadata!.namespace);
    if (!fresh) return;
    fresh.status = {
      ...((fresh.status as Record<string, unknown>) ?? {}),
      ingress: [
        ...ingress,
        {
          host,
          routerName: 'default',
          routerCanonicalHostname: this.canonicalHostname(),
          wildcardPolicy: (fresh.spec as { wildcardPolicy?: string } | undefined)?.wildcardPolicy ?? 'None',
          conditions: [{ type: 'Admitted', status: 'True', lastTransitionTime: this.ctx.clock.iso() }],
        },
      ],
    };
    this.ctx.store.updateStatus(R.routes, fresh);
  }

  /** The route serving `host`, if any (exact host match, as HAProxy's host map). */
  routeFor(host: string): KubeObject | undefined {
    const h = host.toLowerCase();
    return this.ctx.store.list(R.routes).find((r) => ((r.spec as { host?: string } | undefined)?.host ?? '').toLowerCase() === h);
  }
}
