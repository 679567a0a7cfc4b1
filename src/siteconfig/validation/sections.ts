// The per-section stage: the cross-field rules of the document (names, inline-or-file pairs, mirrors,
// timeouts; they need no file, so they run before the references are read) and the content of every section
// once its files are read (nmstate, pull secret, CA bundles, certificates, SSH keys, extra manifests).
import { validateCertificatePair, validateTrustBundle, type CertificateRole } from '../certificates';
import { formatDuration, parseDuration } from '../duration';
import { agentObjectProblem } from '../agent-objects';
import { MAX_MANIFEST_OBJECTS, objectLabel, parseManifestFile, type ManifestObject } from '../manifests';
import { CLUSTER_NAME_PLACEHOLDER, checkComposedNames } from '../names';
import { nmstateHostname, validateNmstate } from '../nmstate';
import { unsignedNmstateProblems } from '../nmstate-unsigned';
import { decodeText, parseConfigBytes } from '../parse-text';
import { isPlainObject, subPath, type Findings } from '../problems';
import { validatePullSecret } from '../pull-secret';
import { baseDomainSchema, clusterNameSchema, fileRef, hostnameSchema, mirrorSchema, TIMEOUT_KEYS, timeoutsSchema, validValue } from '../schema';
import { distinctKeys, keysOfFile } from '../ssh-keys';
import { DEFAULT_TIMEOUTS, type CertificatePair, type MirrorRule, type PullSecret, type Timeouts } from '../types';
import { checkVerifyTargets } from '../verify-checks';
import { get, noteFor, pemText, utf8, validateInto, type BytesOf, type CheckedFields, type Contents, type Reference } from './context';

/** Names, inline-or-file pairs, mirrors and timeouts: the rules that span more than one field. */
export function checkFields(f: Findings, spec: unknown): CheckedFields {
  const clusterName = validValue(clusterNameSchema, get(spec, 'clusterName'));
  const baseDomain = validValue(baseDomainSchema, get(spec, 'baseDomain'));
  const hostname = validValue(hostnameSchema, get(spec, 'hostname'));
  if (baseDomain !== undefined) {
    f.addAll(checkComposedNames(clusterName ?? CLUSTER_NAME_PLACEHOLDER, baseDomain, clusterName === undefined));
    if (clusterName === undefined && get(spec, 'clusterName') === undefined) {
      f.warn('spec.clusterName', 'not given: the cluster keeps its own name; name length limits were checked with a 1-character placeholder and are checked again against the real name when the agent starts');
    }
  }
  exactlyOne(f, spec, 'spec', 'pullSecret', 'pullSecretFile', false);
  exactlyOne(f, spec, 'spec', 'additionalTrustBundle', 'additionalTrustBundleFile', false);
  exactlyOne(f, get(spec, 'proxy'), 'spec.proxy', 'trustedCA', 'trustedCAFile', false);
  const network = get(spec, 'network');
  if (isPlainObject(network)) exactlyOne(f, network, 'spec.network', 'nmstate', 'nmstateFile', true);
  if (get(spec, 'pullSecretMode') !== undefined && get(spec, 'pullSecret') === undefined && get(spec, 'pullSecretFile') === undefined) {
    f.warn('spec.pullSecretMode', 'has no effect without pullSecret or pullSecretFile');
  }
  return {
    clusterName,
    baseDomain,
    hostname,
    mirrors: checkMirrors(f, get(spec, 'imageDigestMirrors'), 'spec.imageDigestMirrors'),
    tagMirrors: checkMirrors(f, get(spec, 'imageTagMirrors'), 'spec.imageTagMirrors'),
    timeouts: checkTimeouts(f, get(spec, 'timeouts')),
  };
}

/** What the referenced (or inline) contents give, section by section, when valid; `signed`: the trust decision (trust-decision.ts). */
export function checkContents(f: Findings, spec: unknown, fields: CheckedFields, refs: Reference[], now: Date, signed: boolean): Contents {
  const bytesOf: BytesOf = (field) => refs.find((r) => r.field === field)?.bytes;
  return {
    nmstate: checkNetworkContent(f, spec, fields.hostname, bytesOf, signed),
    pullSecret: checkPullSecretContent(f, spec, bytesOf),
    trustBundle: checkTrustBundleContent(f, spec, bytesOf, now),
    certificates: checkCertificates(f, spec, bytesOf, { clusterName: fields.clusterName, baseDomain: fields.baseDomain, now }),
    sshKeys: checkSshKeys(f, spec, bytesOf),
    manifests: checkManifests(f, refs),
    proxyCa: checkBundle(f, get(spec, 'proxy'), 'spec.proxy', 'trustedCA', bytesOf, now),
  };
}

/**
 * spec.network's nmstate (inline or from its file), that it does not rename the host, and, from unsigned media,
 * that it holds only the uplink (nmstate-unsigned.ts: the file's content is judged once it is read).
 */
function checkNetworkContent(f: Findings, spec: unknown, hostname: string | undefined, bytesOf: BytesOf, signed: boolean): Record<string, unknown> | undefined {
  const network = get(spec, 'network');
  let nmstate: Record<string, unknown> | undefined;
  if (isPlainObject(network)) {
    const fileBytes = bytesOf('spec.network.nmstateFile');
    const ref = validValue(fileRef, network.nmstateFile);
    if (network.nmstate !== undefined && network.nmstateFile === undefined) {
      const nf = validateNmstate(network.nmstate, 'spec.network.nmstate');
      f.addAll(nf);
      if (!signed) for (const p of unsignedNmstateProblems(network.nmstate, 'spec.network.nmstate')) f.error(p.path, p.message);
      if (nf.ok && isPlainObject(network.nmstate)) nmstate = network.nmstate;
    } else if (fileBytes && ref !== undefined) {
      const content = parseConfigBytes(fileBytes);
      if (!content.ok) for (const m of content.messages) f.error('spec.network.nmstateFile', `'${ref}' ${m}`);
      else {
        const nf = validateNmstate(content.value, 'spec.network.nmstate', noteFor(ref));
        f.addAll(nf);
        if (!signed) for (const p of unsignedNmstateProblems(content.value, 'spec.network.nmstate', noteFor(ref))) f.error(p.path, p.message);
        if (nf.ok && isPlainObject(content.value)) nmstate = content.value;
      }
    }
  }
  const nmHost = nmstate ? nmstateHostname(nmstate) : undefined;
  if (isPlainObject(network)) checkVerifyTargets(f, network.verify, nmstate, [hostname, nmHost]);
  if (hostname !== undefined && nmHost !== undefined && nmHost !== hostname) {
    f.error('spec.network.nmstate.hostname.config', `sets the host name '${nmHost}', but spec.hostname is '${hostname}': the node's host name cannot change (unsupported by OpenShift)`);
  }
  return nmstate;
}

function checkPullSecretContent(f: Findings, spec: unknown, bytesOf: BytesOf): PullSecret | undefined {
  const pullSecretFile = validValue(fileRef, get(spec, 'pullSecretFile'));
  if (get(spec, 'pullSecret') !== undefined && pullSecretFile === undefined) {
    const ps = validatePullSecret(get(spec, 'pullSecret'), 'spec.pullSecret');
    f.addAll(ps.findings);
    return ps.secret;
  }
  const fileBytes = bytesOf('spec.pullSecretFile');
  if (pullSecretFile === undefined || !fileBytes) return undefined;
  const content = parseConfigBytes(fileBytes);
  if (!content.ok) {
    for (const m of content.messages) f.error('spec.pullSecretFile', `'${pullSecretFile}' ${m}`);
    return undefined;
  }
  const ps = validatePullSecret(content.value, 'spec.pullSecret', noteFor(pullSecretFile));
  f.addAll(ps.findings);
  return ps.secret;
}

function checkTrustBundleContent(f: Findings, spec: unknown, bytesOf: BytesOf, now: Date): string | undefined {
  return checkBundle(f, spec, 'spec', 'additionalTrustBundle', bytesOf, now);
}

/** A CA bundle given inline (`<at>.<key>`) or in a file (`<at>.<key>File`): its PEM when every certificate is usable. */
function checkBundle(f: Findings, obj: unknown, at: string, key: string, bytesOf: BytesOf, now: Date): string | undefined {
  const bundleFile = validValue(fileRef, get(obj, `${key}File`));
  const inline = get(obj, key);
  if (typeof inline === 'string' && bundleFile === undefined) return validateInto(f, validateTrustBundle(inline, `${at}.${key}`, now).findings) ? inline : undefined;
  return checkPemBundleFile(f, bundleFile, `${at}.${key}File`, bytesOf, now);
}

/** A file of CA certificates (`field` names it, `ref` is its value): the PEM text when every certificate is usable. */
function checkPemBundleFile(f: Findings, ref: unknown, field: string, bytesOf: BytesOf, now: Date): string | undefined {
  const bundleFile = validValue(fileRef, ref);
  const fileBytes = bytesOf(field);
  if (bundleFile === undefined || !fileBytes) return undefined;
  const text = pemText(f, fileBytes, field, bundleFile);
  if (text === undefined) return undefined;
  return validateInto(f, validateTrustBundle(text, field, now, noteFor(bundleFile)).findings) ? text : undefined;
}

/**
 * spec.extraManifestFiles (folders expanded): every object of every file, each object once across them. They
 * come only from signed media (trust.ts): the signer answers for what they grant.
 */
function checkManifests(f: Findings, refs: Reference[]): { file: string; object: ManifestObject }[] {
  const out: { file: string; object: ManifestObject }[] = [];
  const seen = new Map<string, string>();
  refs.forEach(({ field, ref, bytes }) => {
    if (!field.startsWith('spec.extraManifestFiles') || !bytes) return;
    const decoded = decodeText(bytes);
    const { objects, problems } = decoded.ok ? parseManifestFile(decoded.text) : { objects: [], problems: decoded.messages };
    for (const p of problems) f.error(field, `'${ref}', ${p}`);
    for (const object of objects) {
      const label = objectLabel(object);
      const first = seen.get(label);
      if (first) f.error(field, `'${ref}' holds ${label}, which '${first}' holds too: give each object once`);
      else seen.set(label, ref);
      const agents = agentObjectProblem(object);
      if (agents !== undefined) f.error(field, `'${ref}' holds ${label}, which ${agents}`);
      out.push({ file: ref, object });
    }
  });
  if (out.length > MAX_MANIFEST_OBJECTS) f.error('spec.extraManifestFiles', `hold ${out.length} objects; at most ${MAX_MANIFEST_OBJECTS} are applied at a site`);
  return out;
}

/** spec.ssh's keys: the inline lines (checked by the schema) and the file's, each key once. */
function checkSshKeys(f: Findings, spec: unknown, bytesOf: BytesOf): string[] | undefined {
  const ssh = get(spec, 'ssh');
  if (!isPlainObject(ssh)) return undefined;
  const inline = Array.isArray(ssh.authorizedKeys) ? ssh.authorizedKeys.filter((k): k is string => typeof k === 'string').map((k) => k.trim()) : [];
  const ref = validValue(fileRef, ssh.authorizedKeysFile);
  const bytes = bytesOf('spec.ssh.authorizedKeysFile');
  let fromFile: string[] = [];
  if (ref !== undefined && bytes) {
    const text = bytes.includes(0) ? undefined : utf8(bytes);
    if (text === undefined) f.error('spec.ssh.authorizedKeysFile', `'${ref}' is not text: public keys are expected, one per line (the .pub file ssh-keygen wrote)`);
    else fromFile = keysOfFile(f, text, 'spec.ssh.authorizedKeysFile', ref);
  }
  return distinctKeys([...inline, ...fromFile]);
}

function checkCertificates(f: Findings, spec: unknown, bytesOf: BytesOf, names: { clusterName: string | undefined; baseDomain: string | undefined; now: Date }): Contents['certificates'] {
  const certificates: Contents['certificates'] = {};
  for (const role of ['api', 'ingress'] as const) {
    const pair = checkPair(f, spec, role, bytesOf, { ...(names.clusterName !== undefined ? { clusterName: names.clusterName } : {}), ...(names.baseDomain !== undefined ? { baseDomain: names.baseDomain } : {}), now: names.now });
    if (pair) certificates[role] = pair;
  }
  return certificates;
}

/** Fields that come in an inline and a file form: at most one (or, with `required`, exactly one). */
function exactlyOne(f: Findings, obj: unknown, at: string, inline: string, file: string, required: boolean): void {
  const hasInline = get(obj, inline) !== undefined;
  const hasFile = get(obj, file) !== undefined;
  if (hasInline && hasFile) f.error(subPath(at, file), `give either ${inline} or ${file}, not both`);
  else if (required && !hasInline && !hasFile) f.error(at, `needs ${inline} (inline) or ${file} (a file next to the site-config)`);
}

/** One mirror list (imageDigestMirrors or imageTagMirrors, named by `at`): each source once, each mirror once. */
function checkMirrors(f: Findings, value: unknown, at: string): MirrorRule[] {
  if (!Array.isArray(value)) return [];
  const rules: MirrorRule[] = [];
  const sources = new Map<string, number>();
  value.forEach((entry, i) => {
    const rule = validValue(mirrorSchema, entry);
    if (!rule) return;
    const key = rule.source.toLowerCase();
    const first = sources.get(key);
    if (first !== undefined) f.error(`${at}[${i}].source`, `'${rule.source}' is already the source of ${at}[${first}]: put all its mirrors in one entry, in order of preference`);
    else sources.set(key, i);
    const seen = new Set<string>();
    rule.mirrors.forEach((m, j) => {
      // The CRD declares mirrors as a set (x-kubernetes-list-type: set): the API server rejects duplicates.
      if (seen.has(m)) f.error(`${at}[${i}].mirrors[${j}]`, `'${m}' is listed twice`);
      seen.add(m);
      if (m === rule.source) f.warn(`${at}[${i}].mirrors[${j}]`, 'is the source itself');
    });
    rules.push({ source: rule.source, mirrors: rule.mirrors });
  });
  return rules;
}

function checkTimeouts(f: Findings, value: unknown): Timeouts {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS };
  const given = validValue(timeoutsSchema, value);
  if (!given) return timeouts;
  for (const key of TIMEOUT_KEYS) {
    const text = given[key];
    if (text !== undefined) timeouts[key] = parseDuration(text);
  }
  if (timeouts.settleStability >= timeouts.settle) {
    f.error(
      given.settleStability !== undefined ? 'spec.timeouts.settleStability' : 'spec.timeouts.settle',
      `settleStability (${formatDuration(timeouts.settleStability)}) must be shorter than settle (${formatDuration(timeouts.settle)}): the cluster could never be seen stable in time`,
    );
  }
  return timeouts;
}

function checkPair(
  f: Findings,
  spec: unknown,
  role: CertificateRole,
  bytesOf: (field: string) => Buffer | undefined,
  names: { clusterName?: string; baseDomain?: string; now: Date },
): CertificatePair | undefined {
  const certRef = validValue(fileRef, get(spec, 'certificates', role, 'certFile'));
  const keyRef = validValue(fileRef, get(spec, 'certificates', role, 'keyFile'));
  const certPath = `spec.certificates.${role}.certFile`;
  const keyPath = `spec.certificates.${role}.keyFile`;
  const certBytes = bytesOf(certPath);
  const keyBytes = bytesOf(keyPath);
  if (certRef === undefined || keyRef === undefined || !certBytes || !keyBytes) return undefined;
  const certPem = pemText(f, certBytes, certPath, certRef);
  const keyPem = pemText(f, keyBytes, keyPath, keyRef);
  if (certPem === undefined || keyPem === undefined) return undefined;
  if (names.clusterName === undefined && names.baseDomain !== undefined) {
    f.warn(certPath, `which names it must cover (${role === 'api' ? 'api' : '*.apps'}.<clusterName>.${names.baseDomain}) is checked when the agent starts: spec.clusterName is not given`);
  }
  const found = validateCertificatePair({
    certPem,
    keyPem,
    certPath,
    keyPath,
    role,
    ...(names.clusterName !== undefined ? { clusterName: names.clusterName } : {}),
    ...(names.baseDomain !== undefined ? { baseDomain: names.baseDomain } : {}),
    now: names.now,
    certNote: noteFor(certRef),
    keyNote: noteFor(keyRef),
  });
  f.addAll(found);
  return found.ok ? { certPem, keyPem } : undefined;
}
