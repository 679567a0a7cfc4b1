// What every stage of a site-config's validation shares (src/siteconfig/file-validation.ts runs them in order):
// the file being judged, the files it references as they are read, and the small helpers the stages read values with.
import type { CertificatePair, LoadedSiteConfig, MachineMatch, MirrorRule, PullSecret, Timeouts, ValidationProblem } from '../types';
import type { TrustedKeys } from '../signature';
import type { ManifestObject } from '../manifests';
import { isPlainObject, type Findings } from '../problems';

export interface FileValidationContext {
  /** Real path of the site-config file. */
  filePath: string;
  /** How the file is named in messages (relative to what the user gave). */
  display: string;
  /** Real path of the directory referenced files must stay in. */
  rootDir: string;
  trusted: TrustedKeys;
  now: Date;
  /**
   * How sealed files (X.sealed, src/siteconfig/sealed.ts) are opened. Absent: judged on a workstation — who
   * each is for is reported and its content is checked on that node. Present: on the node, which must open them.
   */
  /** `unreadable`: why the node key file is there but cannot be read (a folder, a named pipe …). */
  nodeKey?: { privateKeyPem?: string; unreadable?: string; plaintextOf?: (ref: string) => Buffer | undefined };
  /** metadata.issued of the config this node applied last (run and plan): an older signed config is refused. */
  lastIssued?: LastIssued;
}

/**
 * The node's record of the last signed config it took: its date and the config's digest (absent in a record written
 * before 2026-11-28), or what is wrong with a damaged record (a phrase after "last-issued.json …"): then no signed
 * config is taken, since none can be told older or not.
 */
/** `finished`: that config's relocation finished (or the node was re-armed since): its moment is never taken again. */
export type LastIssued = { issued: string; digest?: string; finished?: true } | { damaged: string };

export interface FileValidation {
  errors: ValidationProblem[];
  warnings: ValidationProblem[];
  notes?: ValidationProblem[];
  /** spec.match when it could be read and is well-formed (also when other parts are invalid). */
  match?: MachineMatch;
  /** True when the file was read and parsed far enough to know whether it is meant for this machine. */
  matchKnown: boolean;
  site?: LoadedSiteConfig;
}

/** A file a field of the site-config names, in a fixed order (the digest covers them in this order). */
export interface Reference {
  field: string;
  ref: string;
  bytes?: Buffer;
}

export function get(obj: unknown, ...keys: string[]): unknown {
  let cur = obj;
  for (const k of keys) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

export function noteFor(ref: string): string {
  return ` (in ${ref})`;
}

/** The values of the fields the rest of the validation needs, when valid; undefined otherwise. */
export interface CheckedFields {
  clusterName: string | undefined;
  baseDomain: string | undefined;
  hostname: string | undefined;
  mirrors: MirrorRule[];
  tagMirrors: MirrorRule[];
  timeouts: Timeouts;
}

/** What the referenced (or inline) contents gave, when valid. */
export interface Contents {
  nmstate: Record<string, unknown> | undefined;
  pullSecret: PullSecret | undefined;
  trustBundle: string | undefined;
  certificates: { api?: CertificatePair; ingress?: CertificatePair };
  sshKeys: string[] | undefined;
  proxyCa: string | undefined;
  manifests: { file: string; object: ManifestObject }[];
}

export type BytesOf = (field: string) => Buffer | undefined;

export function validateInto(f: Findings, found: Findings): boolean {
  f.addAll(found);
  return found.ok;
}

export function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export function pemText(f: Findings, bytes: Buffer, field: string, ref: string): string | undefined {
  if (bytes.includes(0)) {
    f.error(field, `'${ref}' is binary (DER?): PEM text is expected (convert: openssl x509 -inform der -in FILE -out FILE.pem)`);
    return undefined;
  }
  const text = utf8(bytes);
  if (text === undefined) f.error(field, `'${ref}' is not text: PEM is expected`);
  return text;
}
