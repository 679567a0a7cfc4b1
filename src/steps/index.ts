// The steps of a run, in order (DESIGN.md section 1). Each module's header says what it does on retry.
// The cluster steps (domain … trust) only apply and record which rollouts they started; settle then waits
// for all of them at once, so the total is close to the longest rollout, not the sum. The master pool is paused
// around the steps that write its inputs (pool-hold … pool-release), so the node takes them in one update.
import type { Step } from '../engine/step';
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
import { poolHoldStep, poolReleaseStep } from './pool-hold';
import { settleStep } from './settle';
import { finishStep } from './finish';

export const STEPS: readonly Step[] = [sshEarlyStep, networkStep, clockStep, kubeletStep, apiStep, csrStep, domainStep, poolHoldStep, pullSecretStep, mirrorsStep, trustStep, proxyStep, sshKeyStep, chronyStep, nodeLabelsStep, kubeadminStep, manifestsStep, poolReleaseStep, settleStep, finishStep];
