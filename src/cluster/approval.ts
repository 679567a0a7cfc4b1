// Approving a CSR: PUT .../certificatesigningrequests/<name>/approval with the whole object as last read
// plus an Approved condition (kubernetes/api certificates/v1/types.go; client-go UpdateApproval; the
// reference is anchor-ztpfw-domain.md section 3.5). The object's resourceVersion makes the PUT
// conditional, so a concurrent writer yields 409: re-read and try again, with backoff, a bounded number of times.
// Conditions can never be removed, so an Approved CSR needs nothing and a Denied one cannot be approved.
import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import type { HttpRequest } from './http';
import { R, resourcePath } from './resources';
import type { Sleep } from '../util/backoff';
import { retryOnConflict } from './retry';
import type { KubeObject, RequestOptions, ResourceType } from './types';
import { ApiError } from './types';

export interface ApprovalDeps {
  get<T extends KubeObject>(type: ResourceType, name: string, namespace?: string, opts?: RequestOptions): Promise<T | undefined>;
  call<T>(req: HttpRequest): Promise<T>;
  sleep?: Sleep;
}

export const APPROVAL_CONFLICT_ATTEMPTS = 5;

export class CsrDeniedError extends Error {
  constructor(readonly csrName: string, detail: string) {
    super(`CSR ${csrName} was denied and can no longer be approved${detail ? ` (${detail})` : ''}`);
    this.name = 'CsrDeniedError';
  }
}

type CsrObject = V1CertificateSigningRequest & KubeObject;

export async function approveCsr(deps: ApprovalDeps, name: string, reason: string, message: string): Promise<void> {
  await retryOnConflict(async () => {
    const csr = await deps.get<CsrObject>(R.csrs, name);
    if (!csr) throw new ApiError(404, 'NotFound', `certificatesigningrequests "${name}" not found`);
    const conditions = csr.status?.conditions ?? [];
    const denied = conditions.find((c) => c.type === 'Denied');
    if (denied) throw new CsrDeniedError(name, [denied.reason, denied.message].filter(Boolean).join(': '));
    if (conditions.some((c) => c.type === 'Approved')) return;
    // metav1.Time is RFC 3339 with second precision.
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body = {
      ...csr,
      status: { ...(csr.status ?? {}), conditions: [...conditions, { type: 'Approved', status: 'True', reason, message, lastUpdateTime: now }] },
    };
    await deps.call<KubeObject>({ method: 'PUT', path: `${resourcePath(R.csrs, undefined, name)}/approval`, body });
    // Short backoff: the approver retries a failed approval later anyway (src/csr/approver.ts).
  }, { attempts: APPROVAL_CONFLICT_ATTEMPTS, initialDelayMs: 50, ...(deps.sleep ? { sleep: deps.sleep } : {}) });
}
