// CSRs an approver must NOT approve (and one it must), filed on demand. Each is a real PKCS#10 request
// created in the cluster with the requestor identity the API server would record (spec.username/groups),
// exactly as if that identity had POSTed it. They are the cases from DESIGN.md section 5 and the
// ZTPFW escalation in reference/anchor-ztpfw-domain.md §1.7 (a generic kube-apiserver-client request
// for system:masters slipping through a grep).
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import type { Identity } from '../store-types';
import type { SimContext } from './context';
import { buildCsr, type CsrSubject } from './csr-builder';
import { SIGNER_CLIENT, SIGNER_CLIENT_KUBELET, SIGNER_KUBELET_SERVING } from './csr-signer';
import { BOOTSTRAP_GROUPS, BOOTSTRAP_USER } from './kubelet';

export const HOSTILE_CSR_KINDS = [
  'other-node',
  'system-masters',
  'client-with-san',
  'extra-dns-san',
  'extra-ip-san',
  'serving-other-node',
  'generic-client-signer',
  'wrong-usages',
  'unexpected-requestor',
  'bootstrap-extra-group',
  'node-renewal',
  'malformed-pem',
] as const;

export type HostileCsrKind = (typeof HOSTILE_CSR_KINDS)[number];

export interface InjectedCsr {
  kind: HostileCsrKind;
  /** The CSR's name; absent when the API server refused it (see `rejected`). */
  name?: string;
  signerName: string;
  requestor: Identity;
  /** Whether a correct approver approves it (only a renewal by the node itself). */
  legitimate: boolean;
  /** The API server's refusal, for requests a real kube-apiserver does not even store (malformed PEM). */
  rejected?: string;
  /** The requestor's private key (to show what an approved request would give it). */
  keyPem?: string;
}

interface Recipe {
  subject?: CsrSubject;
  rawRequestPem?: string;
  signerName: string;
  usages: string[];
  requestor: Identity;
  legitimate: boolean;
}

function recipe(kind: HostileCsrKind, ctx: SimContext): Recipe {
  const node = ctx.opts.nodeName;
  const nodeCn = `system:node:${node}`;
  const bootstrap: Identity = { user: BOOTSTRAP_USER, groups: [...BOOTSTRAP_GROUPS] };
  const self: Identity = { user: nodeCn, groups: ['system:nodes', 'system:authenticated'] };
  const clientUsages = ['digital signature', 'client auth'];
  const servingUsages = ['digital signature', 'server auth'];
  const serving = (extra: Partial<CsrSubject> = {}): CsrSubject => ({
    commonName: nodeCn,
    organizations: ['system:nodes'],
    dnsNames: [node],
    ipAddresses: [...ctx.opts.kubeletIPs],
    ...extra,
  });
  switch (kind) {
    case 'other-node':
      return { subject: { commonName: 'system:node:intruder-node', organizations: ['system:nodes'] }, signerName: SIGNER_CLIENT_KUBELET, usages: clientUsages, requestor: bootstrap, legitimate: false };
    case 'system-masters':
      return { subject: { commonName: nodeCn, organizations: ['system:nodes', 'system:masters'] }, signerName: SIGNER_CLIENT_KUBELET, usages: clientUsages, requestor: bootstrap, legitimate: false };
    case 'client-with-san':
      return { subject: { commonName: nodeCn, organizations: ['system:nodes'], dnsNames: [node] }, signerName: SIGNER_CLIENT_KUBELET, usages: clientUsages, requestor: bootstrap, legitimate: false };
    case 'extra-dns-san':
      return {
        subject: serving({ dnsNames: [node, `api.${ctx.opts.clusterName}.${ctx.opts.baseDomain}`] }),
        signerName: SIGNER_KUBELET_SERVING,
        usages: servingUsages,
        requestor: self,
        legitimate: false,
      };
    case 'extra-ip-san':
      return { subject: serving({ ipAddresses: [...ctx.opts.kubeletIPs, '10.66.66.66'] }), signerName: SIGNER_KUBELET_SERVING, usages: servingUsages, requestor: self, legitimate: false };
    case 'serving-other-node':
      return {
        subject: { commonName: 'system:node:intruder-node', organizations: ['system:nodes'], dnsNames: ['intruder-node'], ipAddresses: ['10.66.66.67'] },
        signerName: SIGNER_KUBELET_SERVING,
        usages: servingUsages,
        requestor: { user: 'system:node:intruder-node', groups: ['system:nodes', 'system:authenticated'] },
        legitimate: false,
      };
    case 'generic-client-signer':
      return { subject: { commonName: 'system:admin', organizations: ['system:masters'] }, signerName: SIGNER_CLIENT, usages: clientUsages, requestor: bootstrap, legitimate: false };
    case 'wrong-usages':
      return {
        subject: { commonName: nodeCn, organizations: ['system:nodes'] },
        signerName: SIGNER_CLIENT_KUBELET,
        usages: ['digital signature', 'key encipherment', 'client auth', 'server auth'],
        requestor: bootstrap,
        legitimate: false,
      };
    case 'unexpected-requestor':
      return {
        subject: { commonName: nodeCn, organizations: ['system:nodes'] },
        signerName: SIGNER_CLIENT_KUBELET,
        usages: clientUsages,
        requestor: { user: 'system:serviceaccount:shop:deployer', groups: ['system:serviceaccounts', 'system:serviceaccounts:shop', 'system:authenticated'] },
        legitimate: false,
      };
    case 'bootstrap-extra-group':
      return {
        subject: { commonName: nodeCn, organizations: ['system:nodes'] },
        signerName: SIGNER_CLIENT_KUBELET,
        usages: clientUsages,
        requestor: { user: BOOTSTRAP_USER, groups: [...BOOTSTRAP_GROUPS, 'system:cluster-admins'] },
        legitimate: false,
      };
    case 'node-renewal':
      return { subject: { commonName: nodeCn, organizations: ['system:nodes'] }, signerName: SIGNER_CLIENT_KUBELET, usages: clientUsages, requestor: self, legitimate: true };
    case 'malformed-pem':
      return {
        rawRequestPem: '-----BEGIN CERTIFICATE REQUEST-----\nTUlJQ2dqQ0NBV29DQVFBd1BURVZNQk1HQTFVRUNoTU1jM2x6ZEdWdE9tNXZaR1Z6\n!!not base64!!\n-----END CERTIFICATE REQUEST-----\n',
        signerName: SIGNER_CLIENT_KUBELET,
        usages: clientUsages,
        requestor: bootstrap,
        legitimate: false,
      };
  }
}

/** Files a CSR of the given kind as its requestor would. */
export async function injectHostileCsr(ctx: SimContext, kind: HostileCsrKind): Promise<InjectedCsr> {
  if (!HOSTILE_CSR_KINDS.includes(kind)) throw new Error(`hostile CSR kind: expected one of ${HOSTILE_CSR_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  const r = recipe(kind, ctx);
  const built = r.rawRequestPem ? undefined : await buildCsr(r.subject!);
  const pem = r.rawRequestPem ?? built!.csrPem;
  const obj: KubeObject = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'csr-' },
    spec: { request: Buffer.from(pem).toString('base64'), signerName: r.signerName, usages: r.usages },
  };
  const base = { kind, signerName: r.signerName, requestor: r.requestor, legitimate: r.legitimate, keyPem: built?.keyPem };
  try {
    const created = ctx.store.create(R.csrs, obj, r.requestor);
    ctx.log(`hostile CSR ${created.metadata?.name} (${kind}) filed as ${r.requestor.user}`);
    return { ...base, name: created.metadata?.name };
  } catch (e) {
    return { ...base, rejected: (e as Error).message };
  }
}
