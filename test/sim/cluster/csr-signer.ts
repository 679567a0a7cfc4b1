// The kube-controller-manager's CSR signing controller: it signs APPROVED requests of the signers it owns
// and writes status.certificate; it never approves. Before signing it checks the request fits the signer
// (kubernetes pkg/apis/certificates/helpers.go ValidateKubeletClientCSR / ValidateKubeletServingCSR, run by
// pkg/controller/certificates/signer): a request that does not fit gets a Failed condition with reason
// SignerValidationFailure instead of a certificate. Other signers (custom, legacy-unknown) are left alone.
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { parseCsr, signCsr, type CertificateAuthority } from '../pki';
import type { StoreEvent } from '../store-types';
import type { SimContext } from './context';

export const SIGNER_CLIENT_KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SIGNER_KUBELET_SERVING = 'kubernetes.io/kubelet-serving';
export const SIGNER_CLIENT = 'kubernetes.io/kube-apiserver-client';

/** OpenShift's kube-controller-manager issues 30-day certificates (--cluster-signing-duration=720h). */
const DEFAULT_VALIDITY_SECONDS = 30 * 24 * 3600;

interface CsrSpec {
  request?: string;
  signerName?: string;
  usages?: string[];
  expirationSeconds?: number;
}

interface CsrCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export class CsrSigner {
  private readonly pending = new Set<string>();

  constructor(
    private readonly ctx: SimContext,
    /** Signs client certificates the API server trusts. */
    private readonly clientCa: CertificateAuthority,
    /** Signs kubelet serving certificates (published as openshift-config-managed/csr-controller-ca). */
    private readonly servingCa: CertificateAuthority,
  ) {}

  init(): void {
    for (const csr of this.ctx.store.list(R.csrs)) this.consider(csr);
  }

  handle(e: StoreEvent): void {
    if (e.resource.plural !== R.csrs.plural || e.resource.group !== R.csrs.group || e.type === 'DELETED') return;
    this.consider(e.object);
  }

  private consider(csr: KubeObject): void {
    const name = csr.metadata?.name;
    if (!name || this.pending.has(name)) return;
    const status = (csr.status ?? {}) as { certificate?: string; conditions?: CsrCondition[] };
    const conds = status.conditions ?? [];
    if (status.certificate || !conds.some((c) => c.type === 'Approved' && c.status === 'True')) return;
    if (conds.some((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status === 'True')) return;
    const signer = (csr.spec as CsrSpec | undefined)?.signerName;
    if (signer !== SIGNER_CLIENT_KUBELET && signer !== SIGNER_KUBELET_SERVING && signer !== SIGNER_CLIENT) return;
    this.pending.add(name);
    this.ctx.clock.after(this.ctx.opts.durations.csrSigning, () => {
      this.pending.delete(name);
      try {
        this.sign(name);
      } catch (e) {
        this.ctx.log(`csr-signer: ${name}: ${(e as Error).message}`);
      }
    });
  }

  private sign(name: string): void {
    const csr = this.ctx.store.get(R.csrs, name);
    if (!csr) return;
    const spec = (csr.spec ?? {}) as CsrSpec;
    const status = (csr.status ?? {}) as { certificate?: string; conditions?: CsrCondition[] };
    if (status.certificate) return;
    const usages = spec.usages ?? [];
    const pem = Buffer.from(spec.request ?? '', 'base64').toString('utf8');
    const problem = validateForSigner(spec.signerName ?? '', pem, usages);
    if (problem) {
      const now = this.ctx.clock.iso();
      csr.status = {
        ...status,
        conditions: [...(status.conditions ?? []), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem, lastUpdateTime: now, lastTransitionTime: now }],
      };
      this.ctx.store.updateStatus(R.csrs, csr);
      this.ctx.log(`csr-signer: ${name}: not signed: ${problem}`);
      return;
    }
    const ca = spec.signerName === SIGNER_KUBELET_SERVING ? this.servingCa : this.clientCa;
    const seconds = Math.min(spec.expirationSeconds ?? DEFAULT_VALIDITY_SECONDS, DEFAULT_VALIDITY_SECONDS);
    const certificate = signCsr(ca, pem, { usages, validityDays: seconds / 86400 });
    csr.status = { ...status, certificate: Buffer.from(certificate, 'utf8').toString('base64') };
    this.ctx.store.updateStatus(R.csrs, csr);
    this.ctx.log(`csr-signer: ${name}: signed by ${ca.name} for ${spec.signerName}`);
  }
}

const CLIENT_USAGES = [['digital signature', 'client auth'], ['digital signature', 'key encipherment', 'client auth']];
const SERVING_USAGES = [['digital signature', 'server auth'], ['digital signature', 'key encipherment', 'server auth']];

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

/** Why the signer refuses this request, or undefined when it signs it. */
export function validateForSigner(signer: string, pem: string, usages: string[]): string | undefined {
  let csr;
  try {
    csr = parseCsr(pem);
  } catch (e) {
    return `unable to parse csr: ${(e as Error).message}`;
  }
  const orgs = csr.subject.organizations;
  const cn = csr.subject.commonName ?? '';
  if (signer === SIGNER_CLIENT) {
    if (!usages.includes('client auth')) return 'missing required usages: client auth';
    const allowed = new Set(['digital signature', 'key encipherment', 'client auth']);
    const bad = usages.filter((u) => !allowed.has(u));
    return bad.length > 0 ? `usages not allowed for ${SIGNER_CLIENT}: ${bad.join(', ')}` : undefined;
  }
  if (orgs.length !== 1 || orgs[0] !== 'system:nodes') return `subject organization is not system:nodes`;
  if (!cn.startsWith('system:node:')) return `subject common name does not begin with system:node:`;
  if (signer === SIGNER_CLIENT_KUBELET) {
    if (csr.dnsNames.length + csr.ipAddresses.length + csr.emailAddresses.length + csr.uris.length > 0) return 'DNS, email, IP and URI subjectAltNames are not allowed';
    if (!CLIENT_USAGES.some((u) => sameSet(u, usages))) return `usages did not match ${JSON.stringify(CLIENT_USAGES[0])} or ${JSON.stringify(CLIENT_USAGES[1])}`;
    return undefined;
  }
  if (csr.emailAddresses.length + csr.uris.length > 0) return 'email and URI subjectAltNames are not allowed';
  if (csr.dnsNames.length + csr.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (!SERVING_USAGES.some((u) => sameSet(u, usages))) return `usages did not match ${JSON.stringify(SERVING_USAGES[0])} or ${JSON.stringify(SERVING_USAGES[1])}`;
  return undefined;
}
