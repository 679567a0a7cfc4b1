// Real PKCS#10 requests made by `openssl req` at test time, and CertificateSigningRequest objects around
// them shaped like the API serves them (spec.request = base64 of the PEM). Keys are generated once per
// process and reused: an RSA-2048 keygen costs far more than a request.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { V1CertificateSigningRequest, V1CertificateSigningRequestCondition } from '@kubernetes/client-node';

export type KeyKind = 'ec' | 'rsa' | 'rsa1024' | 'p384';

let dir: string | undefined;
const keys = new Map<KeyKind, string>();

function workDir(): string {
  dir ??= mkdtempSync(path.join(tmpdir(), 'sno-csr-'));
  return dir;
}

export function cleanupCsrFiles(): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
  keys.clear();
}

function keyFile(kind: KeyKind): string {
  const existing = keys.get(kind);
  if (existing) return existing;
  const file = path.join(workDir(), `${kind}.key`);
  const args = kind === 'ec' ? ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']
    : kind === 'p384' ? ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384']
    : ['-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${kind === 'rsa1024' ? 1024 : 2048}`];
  execFileSync('openssl', ['genpkey', ...args, '-out', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  keys.set(kind, file);
  return file;
}

let counter = 0;

/** A PEM CSR. `subject` like '/O=system:nodes/CN=system:node:sno1'; `sans` like ['DNS:sno1', 'IP:10.0.0.1']. */
export function opensslCsr(opts: { subject: string; sans?: string[]; key?: KeyKind; addext?: string[]; digest?: string }): string {
  const out = path.join(workDir(), `req-${++counter}.csr`);
  const args = ['req', '-new', '-utf8', '-key', keyFile(opts.key ?? 'ec'), '-subj', opts.subject, '-out', out, `-${opts.digest ?? 'sha256'}`];
  if (opts.sans?.length) args.push('-addext', `subjectAltName=${opts.sans.join(',')}`);
  for (const ext of opts.addext ?? []) args.push('-addext', ext);
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  return readFileSync(out, 'utf8');
}

/** DER of a PEM CSR and back, to tamper with bytes. */
export function pemToDer(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
}
export function derToPem(der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE REQUEST-----\n${b64}\n-----END CERTIFICATE REQUEST-----\n`;
}

export const BOOTSTRAPPER = 'system:serviceaccount:openshift-machine-config-operator:node-bootstrapper';
export const BOOTSTRAPPER_GROUPS = ['system:serviceaccounts:openshift-machine-config-operator', 'system:serviceaccounts', 'system:authenticated'];
export const CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING = 'kubernetes.io/kubelet-serving';

export interface CsrObjectOptions {
  name?: string;
  signerName: string;
  username: string;
  groups: string[];
  usages: string[];
  /** As the API serves it: RFC 3339 text. */
  created?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  certificate?: string;
}

export function csrObject(pem: string, o: CsrObjectOptions): V1CertificateSigningRequest {
  // The JSON the API serves carries timestamps as strings; client-node's types call them Date.
  const created = (o.created ?? '2025-01-01T10:05:00Z') as unknown as Date;
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: o.name ?? 'csr-test', creationTimestamp: created, resourceVersion: '1' },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName: o.signerName,
      username: o.username,
      groups: o.groups,
      usages: o.usages,
    },
    status: { conditions: o.conditions as V1CertificateSigningRequestCondition[] | undefined, certificate: o.certificate },
  };
}
