// Step names and titles in run order, for `status` (which must not load the steps' code paths).
import type { StepName } from '../engine/step';

export const STEP_TITLES: { name: StepName; title: string }[] = [
  { name: 'network', title: 'Apply the site network' },
  { name: 'kubelet', title: 'Start kubelet' },
  { name: 'api', title: 'Wait for the Kubernetes API' },
  { name: 'csr', title: "Approve the node's certificate requests" },
  { name: 'domain', title: 'Move the cluster to the new domain' },
  { name: 'pull-secret', title: 'Update the pull secret' },
  { name: 'mirrors', title: 'Configure the image mirrors' },
  { name: 'trust', title: 'Trust the site registry CA' },
  { name: 'settle', title: 'Wait for the cluster to settle' },
  { name: 'finish', title: 'Write the report and disable the service' },
];

export function titleOf(name: StepName): string {
  return STEP_TITLES.find((s) => s.name === name)!.title;
}
