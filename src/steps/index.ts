// The steps of a run, in order (DESIGN.md section 1). Each module's header says what it does on retry.
// The cluster steps (domain … trust) only apply and record which rollouts they started; settle then waits
// for all of them at once, so the total is close to the longest rollout, not the sum. The master pool is paused
// around the steps that write its inputs (pool-hold … pool-release), so the node takes them in one update.
import type { Step, StepName } from '../engine/step';
import type { ResolvedSiteConfig } from '../siteconfig/types';
import { sshEarlyStep } from './ssh-early';
import { networkStep } from './network';
import { clockStep } from './clock';
import { kubeletStep } from './kubelet';
import { apiStep } from './api';
import { csrStep } from './csr';
import { domainStep } from './domain/index';
import { pullSecretStep } from './pull-secret';
import { mirrorsStep } from './mirrors';
import { trustStep } from './trust';
import { proxyStep } from './proxy';
import { sshKeyStep } from './ssh-key';
import { chronyStep } from './chrony';
import { nodeLabelsStep } from './node-labels';
import { kubeadminStep } from './kubeadmin';
import { manifestsStep } from './manifests';
import { poolHoldStep, poolReleaseStep, writesPoolInputs } from './pool-hold';
import { settleStep } from './settle';
import { finishStep } from './finish';

/** The steps that only act when the site-config asks (by the field that asks): otherwise "not requested". */
const REQUESTED_BY: Partial<Record<StepName, (site: ResolvedSiteConfig) => boolean>> = {
  'ssh-early': (s) => s.ssh !== undefined,
  network: (s) => s.network !== undefined,
  'pull-secret': (s) => s.pullSecret !== undefined,
  mirrors: (s) => s.imageDigestMirrors.length + (s.imageTagMirrors?.length ?? 0) > 0,
  trust: (s) => s.additionalTrustBundle !== undefined,
  proxy: (s) => s.proxy !== undefined,
  'ssh-key': (s) => s.ssh !== undefined,
  chrony: (s) => s.ntp !== undefined,
  'node-labels': (s) => s.nodeLabels !== undefined,
  kubeadmin: (s) => s.kubeadminPassword !== undefined,
  manifests: (s) => (s.extraManifests?.length ?? 0) > 0,
  'pool-hold': writesPoolInputs,
};

export const STEPS: readonly Step[] = [sshEarlyStep, networkStep, clockStep, kubeletStep, apiStep, csrStep, domainStep, poolHoldStep, pullSecretStep, mirrorsStep, trustStep, proxyStep, sshKeyStep, chronyStep, nodeLabelsStep, kubeadminStep, manifestsStep, poolReleaseStep, settleStep, finishStep].map((step) => {
  const requested = REQUESTED_BY[step.name];
  return requested ? { ...step, requested } : step;
});
