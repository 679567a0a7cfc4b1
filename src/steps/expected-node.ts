// The node whose CSRs this run approves (csr step) and waits for (settle): one description for both, so
// the two never disagree about which CSRs are this run's.
import type { ExpectedNode } from '../csr/policy';
import type { StepContext } from '../engine/step';

/**
 * kubelet may file a CSR a moment before the run recorded kubelet's start (both clocks are this machine's,
 * but the kubelet step writes the time after systemctl returns).
 */
export const CSR_NOT_BEFORE_SLACK_MS = 60_000;

/**
 * This node as the CSR policy expects it. CSRs filed before this run started kubelet are not this run's;
 * `fallbackStartMs` stands in for kubelet's start when the journal has none (no lower bound without it).
 */
export function expectedNode(ctx: StepContext, addresses: string[], fallbackStartMs?: number): ExpectedNode {
  const started = ctx.facts.kubeletStartedAt ? Date.parse(ctx.facts.kubeletStartedAt) : fallbackStartMs;
  return {
    name: ctx.facts.nodeName ?? '',
    addresses,
    nodeExists: true,
    ...(started !== undefined ? { notBefore: new Date(started - CSR_NOT_BEFORE_SLACK_MS) } : {}),
  };
}
