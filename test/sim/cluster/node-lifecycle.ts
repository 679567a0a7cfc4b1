// The kube-controller-manager's node lifecycle controller, for the one node: when the kubelet stops
// posting status the node goes Unknown after node-monitor-grace-period and gets the unreachable taints;
// when it reports Ready again the taints go (taint-based eviction keys node.kubernetes.io/unreachable and
// node.kubernetes.io/not-ready).
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import type { StoreEvent } from '../store-types';
import type { SimContext } from './context';

const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';

interface Taint {
  key: string;
  effect: string;
  value?: string;
  timeAdded?: string;
}

export class NodeLifecycle {
  private cancelGrace: (() => void) | undefined;

  constructor(private readonly ctx: SimContext) {}

  handle(e: StoreEvent): void {
    if (e.resource.plural !== 'nodes' || e.resource.group !== '' || e.type === 'DELETED') return;
    if (e.object.metadata?.name !== this.ctx.opts.nodeName) return;
    if (readyStatus(e.object) === 'True' && taints(e.object).some((t) => t.key === UNREACHABLE || t.key === NOT_READY)) {
      setImmediate(() => {
        try {
          this.untaint();
        } catch (err) {
          this.ctx.log(`node-lifecycle: untaint failed: ${(err as Error).message}`);
        }
      });
    }
  }

  /** The kubelet stopped posting status (stopped, or the node went down). */
  kubeletStopped(): void {
    this.cancelGrace?.();
    this.cancelGrace = this.ctx.clock.after(this.ctx.opts.durations.nodeMonitorGrace, () => {
      try {
        this.markUnknown();
      } catch (err) {
        this.ctx.log(`node-lifecycle: marking the node Unknown failed: ${(err as Error).message}`);
      }
    });
  }

  /** The kubelet runs again: nothing to mark (it will report Ready itself). */
  kubeletStarted(): void {
    this.cancelGrace?.();
    this.cancelGrace = undefined;
  }

  private markUnknown(): void {
    this.cancelGrace = undefined;
    const node = this.ctx.store.get(R.nodes, this.ctx.opts.nodeName);
    if (!node) return;
    const now = this.ctx.clock.iso();
    const status = (node.status ?? {}) as { conditions?: { type: string; status: string; [k: string]: unknown }[] };
    status.conditions = (status.conditions ?? []).map((c) =>
      c.status === 'Unknown' ? c : { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: now },
    );
    node.status = status;
    const updated = this.ctx.store.updateStatus(R.nodes, node);
    const t = taints(updated);
    if (!t.some((x) => x.key === UNREACHABLE)) {
      updated.spec = { ...((updated.spec as object) ?? {}), taints: [...t, { key: UNREACHABLE, effect: 'NoSchedule', timeAdded: now }, { key: UNREACHABLE, effect: 'NoExecute', timeAdded: now }] };
      this.ctx.store.update(R.nodes, updated);
    }
    this.ctx.log('node-lifecycle: node stopped posting status: Unknown, tainted unreachable');
  }

  private untaint(): void {
    const node = this.ctx.store.get(R.nodes, this.ctx.opts.nodeName);
    if (!node || readyStatus(node) !== 'True') return;
    const t = taints(node);
    const kept = t.filter((x) => x.key !== UNREACHABLE && x.key !== NOT_READY);
    if (kept.length === t.length) return;
    const spec = { ...((node.spec as Record<string, unknown>) ?? {}) };
    if (kept.length > 0) spec.taints = kept;
    else delete spec.taints;
    node.spec = spec;
    this.ctx.store.update(R.nodes, node);
  }
}

function readyStatus(node: KubeObject): string | undefined {
  return ((node.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready')?.status;
}

function taints(node: KubeObject): Taint[] {
  return ((node.spec as { taints?: Taint[] } | undefined)?.taints ?? []).map((t) => ({ ...t }));
}
