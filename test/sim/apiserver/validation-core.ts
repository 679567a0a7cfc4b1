// Validation the API server does beyond the OpenAPI schema: object metadata (names, labels, annotations)
// and the built-in types' own rules (k8s.io/kubernetes pkg/apis/core/validation and
// pkg/apis/certificates/validation), with the real messages. Secret contents never appear in messages
// ("<secret contents redacted>", as the real server words it).
import type { KubeObject } from '../../../src/cluster/types';
import type { FieldError } from '../crd-schema';
import { checkCertificatePem, parseCsr } from '../pki';
import type { ServedResource } from './resources';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const REDACTED = '"<secret contents redacted>"';

const q = (s: string) => JSON.stringify(s);

function invalid(field: string, value: string, detail: string): FieldError {
  return { field, reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${detail}` };
}

function required(field: string, detail?: string): FieldError {
  return { field, reason: 'FieldValueRequired', message: detail ? `Required value: ${detail}` : 'Required value' };
}

function forbiddenField(field: string, detail: string): FieldError {
  return { field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` };
}

function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function qualifiedNameErrors(field: string, key: string): FieldError[] {
  const parts = key.split('/');
  if (parts.length > 2) return [invalid(field, q(key), "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")];
  const name = parts[parts.length - 1];
  const errors: FieldError[] = [];
  if (parts.length === 2 && (!DNS1123_SUBDOMAIN.test(parts[0]) || parts[0].length > 253)) errors.push(invalid(field, q(key), `prefix part ${SUBDOMAIN_MSG}`));
  if (name.length === 0) errors.push(invalid(field, q(key), 'name part must be non-empty'));
  else if (name.length > 63) errors.push(invalid(field, q(key), 'name part must be no more than 63 characters'));
  else if (!QUALIFIED_NAME_PART.test(name)) errors.push(invalid(field, q(key), NAME_PART_MSG));
  return errors;
}

/** ObjectMeta rules (ValidateObjectMeta): name, labels, annotations, finalizers. */
export function validateMetadata(r: ServedResource, obj: KubeObject): FieldError[] {
  const md = obj.metadata ?? {};
  const errors: FieldError[] = [];
  const name = md.name ?? '';
  if (!name) {
    errors.push(required('metadata.name', 'name or generateName is required'));
  } else if (r.type.plural === 'certificatesigningrequests') {
    // "We don't care what you call your certificate requests" (certificates validation): path-segment rules only.
    if (name === '.' || name === '..') errors.push(invalid('metadata.name', q(name), `may not be '${name}'`));
    else if (/[/%]/.test(name)) errors.push(invalid('metadata.name', q(name), `may not contain '${name.includes('/') ? '/' : '%'}'`));
  } else if (r.type.plural === 'namespaces') {
    if (name.length > 63) errors.push(invalid('metadata.name', q(name), 'must be no more than 63 characters'));
    else if (!DNS1123_LABEL.test(name)) errors.push(invalid('metadata.name', q(name), LABEL_MSG));
  } else if (name.length > 253) {
    errors.push(invalid('metadata.name', q(name), 'must be no more than 253 characters'));
  } else if (!DNS1123_SUBDOMAIN.test(name)) {
    errors.push(invalid('metadata.name', q(name), SUBDOMAIN_MSG));
  }
  if (r.type.namespaced && !md.namespace) errors.push(required('metadata.namespace'));
  for (const [key, value] of Object.entries(asRecord(md.labels))) {
    errors.push(...qualifiedNameErrors('metadata.labels', key));
    if (typeof value !== 'string') errors.push(invalid('metadata.labels', q(String(value)), 'label values must be strings'));
    else if (value.length > 63) errors.push(invalid('metadata.labels', q(value), 'must be no more than 63 characters'));
    else if (!LABEL_VALUE.test(value)) errors.push(invalid('metadata.labels', q(value), LABEL_VALUE_MSG));
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(asRecord(md.annotations))) {
    errors.push(...qualifiedNameErrors('metadata.annotations', key.toLowerCase()));
    annotationBytes += key.length + String(value).length;
  }
  if (annotationBytes > 256 * 1024) errors.push({ field: 'metadata.annotations', reason: 'FieldValueTooLong', message: 'Too long: must have at most 262144 bytes' });
  (md.finalizers ?? []).forEach((f, i) => {
    if (typeof f !== 'string' || f.length === 0) errors.push(required(`metadata.finalizers[${i}]`));
  });
  return errors;
}

function dataSize(data: Record<string, unknown>, decode: boolean): number {
  return Object.entries(data).reduce((n, [k, v]) => n + k.length + (decode ? Buffer.from(String(v), 'base64').length : Buffer.byteLength(String(v))), 0);
}

const MAX_DATA_BYTES = 1024 * 1024;

function validateSecret(obj: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const data = asRecord(obj.data);
  for (const key of Object.keys(data)) if (!CONFIG_KEY.test(key)) errors.push(invalid(`data[${key}]`, q(key), CONFIG_KEY_MSG));
  if (dataSize(data, true) > MAX_DATA_BYTES) errors.push({ field: 'data', reason: 'FieldValueTooLong', message: `Too long: must have at most ${MAX_DATA_BYTES} bytes` });
  const decoded = (key: string) => Buffer.from(String(data[key]), 'base64').toString('utf8');
  switch (obj.type) {
    case 'kubernetes.io/dockerconfigjson': {
      if (!('.dockerconfigjson' in data)) {
        errors.push(required('data[.dockerconfigjson]'));
        break;
      }
      try {
        JSON.parse(decoded('.dockerconfigjson'));
      } catch (e) {
        // The JSON error names a position, never the contents.
        errors.push(invalid('data[.dockerconfigjson]', REDACTED, jsonErrorWithoutContents(e as Error)));
      }
      break;
    }
    case 'kubernetes.io/dockercfg':
      if (!('.dockercfg' in data)) errors.push(required('data[.dockercfg]'));
      break;
    case 'kubernetes.io/tls':
      if (!('tls.crt' in data)) errors.push(required('data[tls.crt]'));
      if (!('tls.key' in data)) errors.push(required('data[tls.key]'));
      break;
    case 'kubernetes.io/basic-auth':
      if (!('username' in data) && !('password' in data)) errors.push(required('data[username]'));
      break;
    case 'kubernetes.io/ssh-auth':
      if (!('ssh-privatekey' in data)) errors.push(required('data[ssh-privatekey]'));
      break;
    default:
      break;
  }
  return errors;
}

function jsonErrorWithoutContents(e: Error): string {
  const pos = /position (\d+)/.exec(e.message);
  return pos ? `invalid JSON at offset ${pos[1]}` : 'invalid JSON';
}

function validateConfigMap(obj: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const data = asRecord(obj.data);
  const binary = asRecord(obj.binaryData);
  for (const key of Object.keys(data)) if (!CONFIG_KEY.test(key)) errors.push(invalid(`data[${key}]`, q(key), CONFIG_KEY_MSG));
  for (const key of Object.keys(binary)) {
    if (!CONFIG_KEY.test(key)) errors.push(invalid(`binaryData[${key}]`, q(key), CONFIG_KEY_MSG));
    if (key in data) errors.push(invalid(`binaryData[${key}]`, q(key), 'duplicate of key present in data'));
  }
  if (dataSize(data, false) + dataSize(binary, true) > MAX_DATA_BYTES) errors.push({ field: '', reason: 'FieldValueTooLong', message: `Too long: must have at most ${MAX_DATA_BYTES} bytes` });
  return errors;
}

const CSR_USAGES = [
  'any', 'cert sign', 'client auth', 'code signing', 'content commitment', 'crl sign', 'data encipherment', 'decipher only',
  'digital signature', 'email protection', 'encipher only', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'key agreement',
  'key encipherment', 'microsoft sgc', 'netscape sgc', 'ocsp signing', 's/mime', 'server auth', 'signing', 'timestamping',
];
const TRUE_ONLY_CONDITIONS = new Set(['Approved', 'Denied', 'Failed']);

function validateSignerName(name: unknown): FieldError[] {
  if (typeof name !== 'string' || name === '') return [required('spec.signerName')];
  const [domain, ...rest] = name.split('/');
  const pathPart = rest.join('/');
  if (rest.length === 0 || !pathPart || !DNS1123_SUBDOMAIN.test(domain) || !domain.includes('.')) {
    return [invalid('spec.signerName', q(name), "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  }
  return [];
}

interface CsrShape {
  spec: { request?: string; signerName?: string; usages?: string[]; expirationSeconds?: number };
  status: { conditions?: { type?: string; status?: string }[]; certificate?: string };
}

function csrParts(obj: KubeObject): CsrShape {
  return { spec: asRecord(obj.spec) as CsrShape['spec'], status: asRecord(obj.status) as CsrShape['status'] };
}

function validateCsr(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const { spec, status } = csrParts(obj);
  try {
    parseCsr(Buffer.from(spec.request ?? '', 'base64').toString('utf8'));
  } catch (e) {
    errors.push(invalid('spec.request', '[]byte{...}', (e as Error).message));
  }
  const usages = spec.usages ?? [];
  if (usages.length === 0) errors.push(required('spec.usages'));
  usages.forEach((u, i) => {
    if (!CSR_USAGES.includes(u)) errors.push({ field: `spec.usages[${i}]`, reason: 'FieldValueNotSupported', message: `Unsupported value: ${q(u)}: supported values: ${CSR_USAGES.map(q).join(', ')}` });
    if (usages.indexOf(u) !== i) errors.push({ field: `spec.usages[${i}]`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${q(u)}` });
  });
  if (spec.signerName === 'kubernetes.io/legacy-unknown') errors.push(invalid('spec.signerName', q(spec.signerName), 'the legacy signerName is not allowed via this API version'));
  else errors.push(...validateSignerName(spec.signerName));
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds < 600) {
    errors.push(invalid('spec.expirationSeconds', String(spec.expirationSeconds), 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  (status.conditions ?? []).forEach((c, i) => {
    const f = `status.conditions[${i}]`;
    if (!c.type) errors.push(required(`${f}.type`));
    const allowed = TRUE_ONLY_CONDITIONS.has(c.type ?? '') ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errors.push(required(`${f}.status`));
    else if (!allowed.includes(c.status)) errors.push({ field: `${f}.status`, reason: 'FieldValueNotSupported', message: `Unsupported value: ${q(c.status)}: supported values: ${allowed.map(q).join(', ')}` });
    if (c.type === 'Approved') {
      approved = true;
      if (denied) errors.push(invalid(`${f}.type`, q(c.type), 'Approved and Denied conditions are mutually exclusive'));
    } else if (c.type === 'Denied') {
      denied = true;
      if (approved) errors.push(invalid(`${f}.type`, q(c.type), 'Approved and Denied conditions are mutually exclusive'));
    }
    if (c.type && seen.has(c.type)) errors.push({ field: `${f}.type`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${q(c.type)}` });
    if (c.type) seen.add(c.type);
  });
  const oldCert = old ? csrParts(old).status.certificate : undefined;
  if (status.certificate && status.certificate !== oldCert) {
    const problem = checkCertificatePem(Buffer.from(status.certificate, 'base64').toString('utf8'));
    if (problem) errors.push(invalid('status.certificate', '"<certificate data>"', problem));
  }
  return errors;
}

export type CsrUpdateMode = 'main' | 'status' | 'approval';

/** validateCertificateSigningRequestUpdate: which condition and certificate changes each path may make. */
export function validateCsrUpdate(obj: KubeObject, old: KubeObject, mode: CsrUpdateMode): FieldError[] {
  const errors = validateCsr(obj, old);
  const nowConds = csrParts(obj).status.conditions ?? [];
  const oldConds = csrParts(old).status.conditions ?? [];
  const ofType = (list: { type?: string }[], t: string) => list.filter((c) => c.type === t);
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (ofType(nowConds, t).length < ofType(oldConds, t).length) errors.push(forbiddenField('status.conditions', `updates may not remove a condition of type "${t}"`));
  }
  if (mode !== 'approval') {
    for (const t of ['Approved', 'Denied']) {
      const a = ofType(oldConds, t);
      const b = ofType(nowConds, t);
      if (b.length > a.length) errors.push(forbiddenField('status.conditions', `updates may not add a condition of type "${t}"`));
      else if (b.length === a.length && JSON.stringify(a) !== JSON.stringify(b)) errors.push(forbiddenField('status.conditions', `updates may not modify a condition of type "${t}"`));
    }
  }
  const newCert = csrParts(obj).status.certificate ?? '';
  const oldCert = csrParts(old).status.certificate ?? '';
  if (newCert !== oldCert) {
    if (mode !== 'status') errors.push(forbiddenField('status.certificate', 'updates may not set certificate content'));
    else if (oldCert) errors.push(forbiddenField('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errors;
}

/** Type-specific rules on create, and on update (with the stored object) for the main resource. */
export function validateTypeRules(r: ServedResource, obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  switch (r.type.plural) {
    case 'secrets': {
      const errors = validateSecret(obj);
      if (old) {
        if ((old.type ?? 'Opaque') !== (obj.type ?? 'Opaque')) errors.push(invalid('type', q(String(obj.type)), 'field is immutable'));
        errors.push(...immutableDataErrors(obj, old, ['data']));
      }
      return errors;
    }
    case 'configmaps': {
      const errors = validateConfigMap(obj);
      if (old) errors.push(...immutableDataErrors(obj, old, ['data', 'binaryData']));
      return errors;
    }
    case 'certificatesigningrequests':
      return old ? validateCsrUpdate(obj, old, 'main') : validateCsr(obj, undefined);
    default:
      return [];
  }
}

function immutableDataErrors(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errors: FieldError[] = [];
  if (obj.immutable !== true) errors.push(forbiddenField('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) errors.push(forbiddenField(f, 'field is immutable when `immutable` is set'));
  }
  return errors;
}
