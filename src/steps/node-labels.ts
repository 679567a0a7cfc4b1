// Step "node-labels": the site's labels on the node (spec.nodeLabels: `set`, `remove`), once kubelet has
// registered it, as image-based install's post-pivot does (lifecycle-agent lca-cli/postpivot, set_node_labels).
// One JSON merge patch of metadata.labels: a label set to null is removed, the others kept. They stay: kubelet
// re-applies only its default labels (hostname, os, arch, topology, instance type) when it registers again
// (kubernetes/kubernetes master, pkg/kubelet/kubelet_node_status.go updateDefaultLabels), and reserved prefixes
// are refused by validation (src/siteconfig/schema.ts RESERVED_LABEL_SUFFIXES). Re-running reads the node and
// patches only what differs.
import { R } from '../cluster/resources';
import type { KubeObject } from '../cluster/types';
import { StepError, type Change, type Step, type StepContext } from '../engine/step';
import { notInPlace } from './not-in-place';
import { resilient } from './resilient';

/** The merge patch that brings `current` to the site's labels, or undefined when they are in place. Pure. */
export function labelPatch(current: Record<string, string> | undefined, wanted: { set: Record<string, string>; remove: string[] }): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(wanted.set)) if (current?.[k] !== v) patch[k] = v;
  for (const k of wanted.remove) if (current?.[k] !== undefined) patch[k] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function changesOf(node: string, patch: Record<string, string | null> | undefined): Change[] {
  if (!patch) return [];
  const words = Object.entries(patch).map(([k, v]) => (v === null ? `remove ${k}` : `${k}=${v}`));
  return [{ kind: 'Node', target: node, action: 'update', detail: `labels: ${words.join(', ')}` }];
}

async function assess(ctx: StepContext): Promise<{ node: string; patch?: Record<string, string | null> }> {
  const wanted = ctx.site.resolved.nodeLabels;
  const node = ctx.facts.nodeName ?? '';
  if (!wanted) return { node };
  const obj = await (await ctx.cluster()).get<KubeObject>(R.nodes, node);
  if (!obj) throw new StepError(`the node ${node} is not registered`, 'kubelet registers it before this step; check `systemctl status kubelet` and retry with a restart of the service.');
  const patch = labelPatch(obj.metadata?.labels, wanted);
  return patch ? { node, patch } : { node };
}

export const nodeLabelsStep: Step = resilient({
  name: 'node-labels',
  title: 'Label the node',

  async plan(ctx) {
    const wanted = ctx.site.resolved.nodeLabels;
    if (!wanted) return [];
    // plan may run before kubelet registered the node: say what would be set.
    const node = ctx.facts.nodeName ?? 'the node';
    const obj = await (await ctx.cluster()).get<KubeObject>(R.nodes, node).catch(() => undefined);
    return changesOf(node, labelPatch(obj?.metadata?.labels, wanted));
  },

  async check(ctx) {
    return (await assess(ctx)).patch === undefined;
  },

  async apply(ctx) {
    const { node, patch } = await assess(ctx);
    if (!patch) return;
    await (await ctx.cluster()).patch(R.nodes, node, { metadata: { labels: patch } }, 'merge');
    for (const c of changesOf(node, patch)) ctx.changed(c);
    ctx.log.info(`labels of node ${node}: ${changesOf(node, patch)[0]!.detail!.replace(/^labels: /, '')}`);
  },

  async verify(ctx) {
    const { node, patch } = await assess(ctx);
    if (patch) throw notInPlace(`the labels of node ${node} are not as the site-config gives them: ${Object.keys(patch).join(', ')}`, 'the node\'s labels');
  },
});
