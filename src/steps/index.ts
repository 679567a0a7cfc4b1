// The steps of a run, in order (DESIGN.md section 1). Each module's header says what it does on retry.
import type { Report } from '../engine/report';
import type { Step } from '../engine/step';
import { networkStep } from './network';
import { kubeletStep } from './kubelet';
import { apiStep } from './api';
import { csrStep } from './csr';
import { createFinishStep } from './finish';

export function buildSteps(report: () => Report): Step[] {
  return [networkStep, kubeletStep, apiStep, csrStep, createFinishStep(report)];
}
