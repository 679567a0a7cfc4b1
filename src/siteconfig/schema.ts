// The site-config document (DESIGN.md section 4, Contract) as a zod/mini schema: shapes, required fields,
// enums, unknown fields (strict objects) and per-field syntax. Cross-field and file-content rules live in
// semantic.ts, nmstate.ts, pull-secret.ts and certificates.ts; they get only values that pass the schemas
// below (`validValue`), so every problem is reported once.
//
// Extensions to the contract's example (all optional):
// - `spec.sha256`: pins for signed media — a mapping from each referenced file, written exactly as in its
//   field (e.g. `network.yaml`, `certs/api.crt`), to the hex sha256 of its bytes (`sha256sum` output, an
//   optional `sha256:` prefix is accepted). When the node has trusted keys every referenced file must be pinned.
// - `spec.imageTagMirrors`: mirrors for images pulled by tag (an ImageTagMirrorSet, OpenShift >= 4.13), the
//   same entry shape and rules as imageDigestMirrors. Like those entries it takes no mirrorSourcePolicy: the
//   agent keeps the policy another mirror set on the cluster already gives the source.
// - `spec.timeouts`: network, kubelet, apiReady, csr, settle, settleStability as Go durations (30m, 1h30m).
// - `spec.nodeLabels`: labels to set on (`set`) or remove from (`remove`) the node once it is registered.
// - `spec.kubeadminPassword`: `hash` (bcrypt) for a new kubeadmin password, or `remove: true` to delete kubeadmin.
// - `spec.ssh`: public keys for `core` (`authorizedKeys` and/or `authorizedKeysFile`) and what happens to the
//   factory's key (`factoryKeys: replace | keep`, required: the choice is the site's, never a default).
// - `spec.ntp`: the site's time sources for chronyd, `servers` and/or `pools` (host names or IP addresses).
// - `spec.proxy`: the cluster-wide proxy — `httpProxy`, `httpsProxy`, `noProxy` (a list) and `trustedCAFile`,
//   checked the way the network operator checks Proxy/cluster (proxy-urls.ts); `trustedCA` (PEM) or `trustedCAFile`.
// - `spec.extraManifestFiles`: files of Kubernetes objects to add to the cluster (manifests.ts).
// - `metadata.issued`, `metadata.expires`: RFC 3339 date-times; signed media must carry `issued` (trust.ts).
import * as z from 'zod/mini';
import { parseDuration } from './duration';
import { dns1123LabelProblem, dns1123SubdomainProblem, hostnameProblem, ipFamilyWithZone, isMacAddress, repositoryProblem } from './net';
import { placeholderSerial, placeholderUuid } from './placeholders';
import { sshPublicKeyProblem } from './ssh-keys';
import { noProxyEntryProblem, proxyUrlProblem } from './proxy-urls';
import { controlCharIndex, formatPath, listForHumans, type PathSegment } from './problems';
import type { ValidationProblem } from './types';

export const API_VERSION = 'sno-reconfigure.io/v1';
export const KIND = 'SiteConfig';
export const TIMEOUT_KEYS = ['network', 'clock', 'kubelet', 'apiReady', 'csr', 'settle', 'settleStability'] as const;
/** Timeouts beyond this are refused: a deadline that long would leave a stuck node unnoticed for days. */
export const MAX_TIMEOUT_MS = 24 * 3_600_000;

/** A string schema with a rule that explains itself (the message names what is expected). */
function ruled(problem: (s: string) => string | undefined) {
  return z.string().check((ctx) => {
    const p = problem(ctx.value);
    if (p !== undefined) ctx.issues.push({ code: 'custom', message: p, input: ctx.value });
  });
}

export function fileReferenceProblem(ref: string): string | undefined {
  if (ref.trim() === '') return 'must name a file';
  if (ref.startsWith('/')) return 'must be a path relative to the site-config file, not an absolute path';
  if (ref.includes('\\')) return "must use '/' as the path separator";
  if (controlCharIndex(ref) >= 0) return 'must not contain control characters';
  if (ref.length > 1024) return 'is too long';
  return undefined;
}

export const fileRef = ruled(fileReferenceProblem);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const clusterNameSchema = ruled((s) => dns1123LabelProblem(s));
export const baseDomainSchema = ruled((s) => dns1123SubdomainProblem(s));
export const hostnameSchema = ruled((s) => {
  const p = dns1123SubdomainProblem(s);
  if (p !== undefined) return p;
  if (s === 'localhost' || s.startsWith('localhost.')) return "must not be 'localhost': it must be the node's own name";
  return undefined;
});

export const durationSchema = ruled((s) => {
  let ms: number;
  try {
    ms = parseDuration(s);
  } catch (e) {
    return (e as Error).message;
  }
  if (ms < 1000) return `'${s}' is too short: a timeout must be at least 1s`;
  if (ms > MAX_TIMEOUT_MS) return `'${s}' is too long: a timeout must be at most 24h`;
  return undefined;
});

const PLACEHOLDER = 'is a firmware default, not a machine\'s own: every machine shipped with it would match; bind the config with another field (systemUUID, serialNumber or macAddress) that names this machine alone';
const matchFieldsSchema = z.strictObject({
  systemUUID: z.optional(ruled((s) => (!UUID.test(s.trim()) ? 'must be a UUID like 4c4c4544-0042-3510-8052-b4c04f333231 (/sys/class/dmi/id/product_uuid)' : placeholderUuid(s) ? `'${s.trim()}' ${PLACEHOLDER}` : undefined))),
  serialNumber: z.optional(ruled((s) => (s.trim() === '' ? 'must not be empty' : s.length > 255 ? 'is too long' : placeholderSerial(s) ? `'${s.trim()}' ${PLACEHOLDER}` : undefined))),
  macAddress: z.optional(ruled((s) => (isMacAddress(s.trim()) ? undefined : "must be a MAC address like '52:54:00:12:34:56'"))),
});

export const matchSchema = matchFieldsSchema.check((ctx) => {
  if (Object.keys(ctx.value).length === 0) ctx.issues.push({ code: 'custom', message: 'must name at least one of systemUUID, serialNumber, macAddress (or remove match)', input: ctx.value });
});

export const verifySchema = z.strictObject({
  ping: z.optional(z.array(ruled((s) => (ipFamilyWithZone(s) !== undefined ? undefined : `'${s}' is not an IP address (ping targets are addresses, so no DNS is needed to check them)`)))),
  resolve: z.optional(z.array(ruled((s) => { const p = hostnameProblem(s); return p === undefined ? undefined : `'${s.length > 60 ? `${s.slice(0, 60)}…` : s}' ${p}`; }))),
});

const networkSchema = z.strictObject({
  nmstate: z.optional(z.unknown()),
  nmstateFile: z.optional(fileRef),
  verify: z.optional(verifySchema),
});

/** One entry of imageDigestMirrors or imageTagMirrors: the IDMS and ITMS CRDs declare the same patterns. */
export const mirrorSchema = z.strictObject({
  source: ruled((s) => repositoryProblem(s, { allowWildcard: true })),
  mirrors: z.array(ruled((s) => repositoryProblem(s, { allowWildcard: false }))).check(z.minLength(1)),
});

const certPairSchema = z.strictObject({ certFile: fileRef, keyFile: fileRef });

const SHA256_HEX = /^(?:sha256:)?[0-9a-fA-F]{64}$/;

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/**
 * Label prefixes the site-config may not touch on the node: kubelet and Kubernetes own *.kubernetes.io and
 * *.k8s.io (node-role.kubernetes.io/master selects the machine-config pool, kubernetes.io/hostname the node), and
 * OpenShift's operators own *.openshift.io (node.openshift.io/os_id …). Changing them breaks scheduling or the pool.
 */
export const RESERVED_LABEL_SUFFIXES = ['kubernetes.io', 'k8s.io', 'openshift.io'];

/** A node label key (Kubernetes qualified name, an optional DNS-subdomain prefix), not a reserved one. */
export function nodeLabelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (prefix !== undefined && dns1123SubdomainProblem(prefix) !== undefined) return `'${key}' has the prefix '${prefix}', which ${dns1123SubdomainProblem(prefix)}`;
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) return `'${key}' is not a label key: its name part must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  const reserved = prefix && RESERVED_LABEL_SUFFIXES.find((r) => prefix === r || prefix.endsWith(`.${r}`));
  if (reserved) return `'${key}' is a label ${reserved === 'openshift.io' ? 'OpenShift' : 'Kubernetes'} manages on the node (prefix ${prefix}): the site-config may not set or remove it`;
  return undefined;
}

/** A bcrypt hash as OpenShift keeps the kubeadmin password (`$2a$`/`$2b$`/`$2y$`, cost 10–31, 53 characters). */
const BCRYPT = /^\$2[aby]\$(1\d|2\d|3[01])\$[./A-Za-z0-9]{53}$/;

const kubeadminSchema = z
  .strictObject({
    hash: z.optional(ruled((s) => (BCRYPT.test(s) ? undefined : 'must be a bcrypt hash ($2a$, $2b$ or $2y$, cost 10 to 31, as `htpasswd -nbBC 10 "" PASSWORD` prints after the colon); a clear-text password is never accepted'))),
    remove: z.optional(z.literal(true)),
  })
  .check((ctx) => {
    if ((ctx.value.hash === undefined) === (ctx.value.remove === undefined)) ctx.issues.push({ code: 'custom', message: 'give exactly one of hash (a new password) or remove: true (no kubeadmin login at all)', input: ctx.value });
  });

const sshSchema = z
  .strictObject({
    authorizedKeys: z.optional(z.array(ruled(sshPublicKeyProblem)).check(z.minLength(1))),
    authorizedKeysFile: z.optional(fileRef),
    factoryKeys: z.enum(['replace', 'keep']),
  })
  .check((ctx) => {
    if (ctx.value.authorizedKeys === undefined && ctx.value.authorizedKeysFile === undefined) ctx.issues.push({ code: 'custom', message: 'needs authorizedKeys (key lines) or authorizedKeysFile (a .pub file beside the site-config), or both', input: ctx.value });
  });

/** A time source as chrony.conf's `server`/`pool` directives take it: a DNS name or an IP address, nothing else on the line. */
const ntpSourceSchema = ruled((s) => {
  if (ipFamilyWithZone(s) !== undefined) return undefined;
  const p = hostnameProblem(s);
  return p === undefined ? undefined : `'${s.slice(0, 60)}' is not a host name or IP address of an NTP server (${p}); chrony options are not accepted here`;
});

const ntpSchema = z
  .strictObject({
    servers: z.optional(z.array(ntpSourceSchema).check(z.minLength(1))),
    pools: z.optional(z.array(ntpSourceSchema).check(z.minLength(1))),
  })
  .check((ctx) => {
    const all = [...(ctx.value.servers ?? []), ...(ctx.value.pools ?? [])].map((s) => s.toLowerCase());
    if (all.length === 0) ctx.issues.push({ code: 'custom', message: 'needs servers (single NTP servers) or pools (names that resolve to several), or both', input: ctx.value });
    const twice = [...new Set(all.filter((s, i) => all.indexOf(s) !== i))];
    if (twice.length > 0) ctx.issues.push({ code: 'custom', message: `${listForHumans(twice, 'and')} ${twice.length > 1 ? 'are' : 'is'} listed more than once (servers and pools together): give each time source once`, input: ctx.value });
  });

const proxySchema = z
  .strictObject({
    httpProxy: z.optional(ruled((s) => proxyUrlProblem(s, ['http']))),
    httpsProxy: z.optional(ruled((s) => proxyUrlProblem(s, ['http', 'https']))),
    noProxy: z.optional(z.array(ruled(noProxyEntryProblem)).check(z.minLength(1))),
    trustedCA: z.optional(z.string()),
    trustedCAFile: z.optional(fileRef),
  })
  .check((ctx) => {
    if (ctx.value.httpProxy === undefined && ctx.value.httpsProxy === undefined) ctx.issues.push({ code: 'custom', message: 'needs httpProxy or httpsProxy (or both): the network operator refuses a proxy without either', input: ctx.value });
    const list = ctx.value.noProxy ?? [];
    if (list.includes('*') && list.length > 1) ctx.issues.push({ code: 'custom', message: "'*' (no proxy for anything) must be the only entry", input: ctx.value, path: ['noProxy'] });
  });

const nodeLabelsSchema = z.strictObject({
  set: z.optional(z.record(ruled(nodeLabelKeyProblem), ruled((v) => (v === '' || (v.length <= 63 && LABEL_NAME.test(v)) ? undefined : `'${v.slice(0, 70)}' is not a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)`)))),
  remove: z.optional(z.array(ruled(nodeLabelKeyProblem))),
}).check((ctx) => {
  const both = (ctx.value.remove ?? []).filter((k) => ctx.value.set && Object.hasOwn(ctx.value.set, k));
  if (both.length > 0) ctx.issues.push({ code: 'custom', message: `${both.map((k) => `'${k}'`).join(', ')} is both set and removed: keep one`, input: ctx.value, path: ['remove'] });
});

export const timeoutsSchema = z.strictObject(
  Object.fromEntries(TIMEOUT_KEYS.map((k) => [k, z.optional(durationSchema)])) as Record<(typeof TIMEOUT_KEYS)[number], z.ZodMiniOptional<typeof durationSchema>>,
);

export const specSchema = z.strictObject({
  match: z.optional(matchSchema),
  clusterName: z.optional(clusterNameSchema),
  hostname: z.optional(hostnameSchema),
  baseDomain: baseDomainSchema,
  network: z.optional(networkSchema),
  pullSecret: z.optional(z.unknown()),
  pullSecretFile: z.optional(fileRef),
  pullSecretMode: z.optional(z.enum(['merge', 'replace'])),
  imageDigestMirrors: z.optional(z.array(mirrorSchema)),
  imageTagMirrors: z.optional(z.array(mirrorSchema)),
  additionalTrustBundle: z.optional(z.string()),
  additionalTrustBundleFile: z.optional(fileRef),
  certificates: z.optional(z.strictObject({ api: z.optional(certPairSchema), ingress: z.optional(certPairSchema) })),
  certificateRenewal: z.optional(z.enum(['manual', 'timer'])),
  nodeLabels: z.optional(nodeLabelsSchema),
  kubeadminPassword: z.optional(kubeadminSchema),
  ssh: z.optional(sshSchema),
  ntp: z.optional(ntpSchema),
  proxy: z.optional(proxySchema),
  extraManifestFiles: z.optional(z.array(fileRef).check(z.minLength(1))),
  timeouts: z.optional(timeoutsSchema),
  sha256: z.optional(z.record(z.string(), ruled((s) => (SHA256_HEX.test(s) ? undefined : 'must be a sha256 digest: 64 hex characters (sha256sum output), optionally prefixed with sha256:')))),
});

/** An RFC 3339 date-time with its offset (2026-11-27T09:00:00Z, 2026-11-27T10:00:00+01:00), as `date -Is` prints it. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;
/**
 * A date the calendar has (RFC 3339 section 5.7: day within its month, hour 00–23, offsets within a day). JavaScript
 * reads 2026-02-31 as 3 March without a word (the seventh hostile re-test of issue 36), so it is checked here. A leap
 * second (:60) is not taken: the node's clock never shows one, so no config was issued at one.
 */
function existingDate(m: RegExpExecArray): boolean {
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetOk;
}
export const timestampSchema = ruled((s) => {
  const m = RFC3339.exec(s);
  if (m === null || Number.isNaN(Date.parse(s))) return `'${s.slice(0, 40)}' is not an RFC 3339 date and time with its offset, like 2026-11-27T09:00:00Z (date -u +%Y-%m-%dT%H:%M:%SZ prints one)`;
  return existingDate(m) ? undefined : `'${s.slice(0, 40)}' is not a date and time that exists (its day, hour, minute or second is out of range), like 2026-11-27T09:00:00Z`;
});

export const metadataSchema = z.strictObject({
  name: ruled((s) => {
    if (s.trim() === '') return 'must not be empty';
    if (s.length > 253) return `is ${s.length} characters long; at most 253`;
    if (controlCharIndex(s) >= 0) return 'must not contain control characters';
    return undefined;
  }),
  // Signed media (trust.ts): when the config was issued (no replay of older media) and until when it holds.
  issued: z.optional(timestampSchema),
  expires: z.optional(timestampSchema),
});

export const siteConfigSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND),
  metadata: metadataSchema,
  spec: specSchema,
});

export type SiteConfigDocument = z.infer<typeof siteConfigSchema>;
export type SpecDocument = z.infer<typeof specSchema>;

/** The value when it passes `schema`, else undefined (its problems are reported by the document schema). */
export function validValue<T>(schema: z.ZodMiniType<T>, value: unknown): T | undefined {
  const r = schema.safeParse(value, { error: () => '' });
  return r.success ? r.data : undefined;
}

const KNOWN_KEYS_MARK = '\u0000known:';

const EXPECTED_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

function receivedName(input: unknown): string {
  if (input === null) return 'an empty value';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  return `a ${typeof input}`;
}

// Messages for the issues the schemas above can raise. Inputs are described by type only: a value may be a secret.
function issueMessage(iss: z.core.$ZodRawIssue): string {
  switch (iss.code) {
    case 'invalid_type': {
      if (iss.input === undefined) return 'is required';
      const expected = EXPECTED_NAMES[iss.expected] ?? iss.expected;
      if (iss.input === null) return `has no value: expected ${expected} (give a value or remove the key)`;
      const hint = iss.expected === 'string' && (typeof iss.input === 'number' || typeof iss.input === 'boolean') ? ' (YAML read it as a number or boolean: put it in quotes)' : '';
      return `expected ${expected}, got ${receivedName(iss.input)}${hint}`;
    }
    case 'invalid_value':
      if (iss.input === undefined) return `is required: ${listForHumans(iss.values.map(String))}`;
      return iss.values.length === 1 ? `must be '${String(iss.values[0])}'` : `must be one of ${listForHumans(iss.values.map(String))}`;
    case 'too_small':
      return iss.origin === 'array' ? `must have at least ${String(iss.minimum)} ${Number(iss.minimum) === 1 ? 'entry' : 'entries'}` : 'is too short';
    case 'unrecognized_keys': {
      const shape = (iss.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
      return `${KNOWN_KEYS_MARK}${JSON.stringify(Object.keys(shape ?? {}))}`;
    }
    case 'invalid_key':
      // A record's key failed its own rule (e.g. a reserved node label): that rule's message says why.
      return iss.issues[0]?.message ?? 'is not a valid key';
    default:
      return 'is invalid';
  }
}

export interface SchemaOutcome {
  problems: ValidationProblem[];
  document?: SiteConfigDocument;
}

/** Checks `raw` against the document schema; every problem has its field path. */
export function checkSchema(raw: unknown, unknownFieldMessage: (field: string, known: string[]) => string): SchemaOutcome {
  const r = siteConfigSchema.safeParse(raw, { error: issueMessage });
  if (r.success) return { problems: [], document: r.data };
  const problems: ValidationProblem[] = [];
  for (const issue of r.error.issues) {
    const path = issue.path as PathSegment[];
    if (issue.code === 'unrecognized_keys' && issue.message.startsWith(KNOWN_KEYS_MARK)) {
      const known = JSON.parse(issue.message.slice(KNOWN_KEYS_MARK.length)) as string[];
      for (const key of issue.keys) problems.push({ path: formatPath([...path, key]), message: unknownFieldMessage(key, known) });
      continue;
    }
    problems.push({ path: formatPath(path) || '(document)', message: issue.message });
  }
  return { problems };
}
