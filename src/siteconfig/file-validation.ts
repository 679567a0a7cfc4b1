// Validation of one site-config file and everything it references, in the order that keeps untrusted data
// away from the parsers: signature (when the node requires one) over the raw bytes first, then parsing, the
// document schema, the cross-field rules, the referenced files (confined, pinned) and finally their contents.
// Every problem found is reported, not just the first.
import * as path from 'node:path';
import { validateCertificatePair, validateTrustBundle, type CertificateRole } from './certificates';
import { parseDuration, formatDuration } from './duration';
import { isInside, listDirectory, readConfinedFile, readRegularFile, realPathIfExists, statKind } from './files';
import { describeSealed, keyFingerprint, openSealedFile, SealedFileError, SEALED_SUFFIX } from './sealed';
import { CLUSTER_NAME_PLACEHOLDER, checkComposedNames } from './names';
import { nmstateHostname, validateNmstate } from './nmstate';
import { decodeText, parseConfigBytes } from './parse-text';
import { fromSeedReconfiguration, isSeedReconfiguration, isSeedReconfigurationFile, seedPathOf, SEED_BINDING_FIELD, SEED_EXTRA_MANIFESTS_DIR, SEED_MANIFESTS_DIR } from './seed-reconfiguration';
import { MANIFEST_FILE, MAX_MANIFEST_OBJECTS, objectLabel, parseManifestFile, type ManifestObject } from './manifests';
import { agentObjectProblem } from './agent-objects';
import { checkVerifyTargets } from './verify-checks';
import { signedProblems, unsignedProblems } from './trust';
import { Findings, describeType, isPlainObject, subPath } from './problems';
import { validatePullSecret } from './pull-secret';
import { distinctKeys, keysOfFile } from './ssh-keys';
import {
  TIMEOUT_KEYS,
  baseDomainSchema,
  checkSchema,
  clusterNameSchema,
  hostnameSchema,
  matchSchema,
  mirrorSchema,
  timeoutsSchema,
  validValue,
  verifySchema,
  fileRef,
  type SiteConfigDocument,
} from './schema';
import { decodeSignature, sha256Hex, verifyWithTrustedKeys, type TrustedKeys } from './signature';
import { unknownFieldMessage } from './suggest';
import {
  DEFAULT_TIMEOUTS,
  type CertificatePair,
  type LoadedSiteConfig,
  type MachineMatch,
  type MirrorRule,
  type PullSecret,
  type ResolvedSiteConfig,
  type Timeouts,
  type ValidationProblem,
} from './types';

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
  nodeKey?: { privateKeyPem?: string; plaintextOf?: (ref: string) => Buffer | undefined };
  /** metadata.issued of the config this node applied last (run and plan): an older signed config is refused. */
  lastIssued?: string;
}

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
interface Reference {
  field: string;
  ref: string;
  bytes?: Buffer;
}

function get(obj: unknown, ...keys: string[]): unknown {
  let cur = obj;
  for (const k of keys) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function noteFor(ref: string): string {
  return ` (in ${ref})`;
}

export async function validateSiteConfigFile(ctx: FileValidationContext): Promise<FileValidation> {
  const f = new Findings();
  // manifest.json's problems name the fields the person wrote there, not the site-config fields they became.
  let named = (ps: ValidationProblem[]): ValidationProblem[] => ps;
  const result = (extra: Partial<FileValidation> = {}): FileValidation => ({ errors: named(f.errors), warnings: named(f.warnings), notes: f.notes, matchKnown: false, ...extra });
  const read = await readRegularFile(ctx.filePath, '');
  if (!read.ok) {
    f.error(ctx.display, read.message);
    return result();
  }
  const bytes = read.bytes;
  const baseDir = path.dirname(ctx.filePath);

  // 1. Signature, over the exact bytes, before any parser sees them.
  const signature = await checkSignature(f, ctx, baseDir, bytes);
  if (signature === false) return result();

  // 2. Parse.
  const parsed = parseConfigBytes(bytes);
  if (!parsed.ok) {
    for (const m of parsed.messages) f.error(ctx.display, m);
    return result();
  }

  // 2b. Image-based install's manifest.json: translated into the site-config it amounts to.
  let document = parsed.value;
  let imageBased: ResolvedSiteConfig['imageBased'];
  // Image-based install's mirror sets (cluster-configuration/manifests/): read before the translation needs them,
  // pinned with the other referenced files.
  let seedRefs: (Reference & { text?: string })[] = [];
  if (isSeedReconfigurationFile(ctx.filePath) && !isPlainObject(document)) {
    f.error(ctx.display, `is not a JSON object (got ${describeType(document)}): image-based install writes its SeedReconfiguration here`);
    return result();
  }
  if (isSeedReconfiguration(document, ctx.filePath)) {
    // openshift-install puts extra-manifests/ on every config ISO, empty when the site has none
    // (openshift/installer pkg/asset/imagebased/configimage/configiso.go): only one with files is mapped.
    const hasExtraManifests = (await manifestFilesIn(ctx, baseDir, SEED_EXTRA_MANIFESTS_DIR)).length > 0;
    seedRefs = await seedManifests(f, ctx, baseDir);
    const texts = Object.fromEntries(seedRefs.flatMap((r) => (r.text === undefined ? [] : [[r.ref.slice(SEED_MANIFESTS_DIR.length), r.text]])));
    const t = fromSeedReconfiguration(document, texts, hasExtraManifests);
    // Several site-config fields may come from one manifest.json field (proxy): each problem is named once.
    named = (ps) => [...new Map(ps.map((p) => ({ ...p, path: seedPathOf(t.origins, p.path) })).map((p) => [`${p.path}\0${p.message}`, p])).values()];
    for (const p of t.problems) f.error(p.path, p.message);
    for (const w of t.warnings) f.warn(w.path, w.message);
    // A manifest.json of another version (or none) is not judged field by field: its fields may mean other things.
    if (t.problems.some((p) => p.path === 'api_version')) return result();
    document = t.document;
    imageBased = t.identity;
  }

  // 3. Document schema. Whether spec.match is usable is decided on the schema's findings alone.
  const schema = checkSchema(document, unknownFieldMessage);
  for (const p of schema.problems) f.error(p.path, p.message);
  const spec = get(document, 'spec');
  const matchKnown = !f.errors.some((e) => e.path === 'spec' || e.path.startsWith('spec.match') || e.path === '(document)');
  const match = matchKnown ? validValue(matchSchema, get(spec, 'match')) : undefined;
  const known = { ...(match ? { match } : {}), matchKnown };

  // 3b. Trust (trust.ts): what unsigned media may carry, and what binds signed media to a machine and a date.
  // Judged on the document as written (an image-based manifest.json's fields are named back by their own
  // names, its binding is its sno_reconfigure field), before any referenced file is opened.
  const trustProblems = !signature.signed ? unsignedProblems(document) : signedProblems(document, ctx.now, ctx.lastIssued);
  for (const p of trustProblems) f.error(p.path, p.message);

  // 4. Cross-field rules.
  const fields = checkFields(f, spec);

  // 5. Referenced files: confined, read, pinned.
  const refs = await readReferences(f, ctx, baseDir, spec, seedRefs, imageBased ? `${SEED_BINDING_FIELD}.sha256` : 'spec.sha256');
  const bytesOf = (field: string) => refs.find((r) => r.field === field)?.bytes;

  // 6. Contents.
  const contents: Contents = {
    nmstate: checkNetworkContent(f, spec, fields.hostname, bytesOf),
    pullSecret: checkPullSecretContent(f, spec, bytesOf),
    trustBundle: checkTrustBundleContent(f, spec, bytesOf, ctx.now),
    certificates: checkCertificates(f, spec, bytesOf, { clusterName: fields.clusterName, baseDomain: fields.baseDomain, now: ctx.now }),
    sshKeys: checkSshKeys(f, spec, bytesOf),
    manifests: checkManifests(f, refs),
    proxyCa: checkBundle(f, get(spec, 'proxy'), 'spec.proxy', 'trustedCA', bytesOf, ctx.now),
  };
  if (!f.ok || schema.document === undefined || fields.baseDomain === undefined) return result(known);

  // 7. Resolved form.
  const { issued, expires } = signature.signed ? schema.document.metadata : {};
  const resolved = { ...resolvedForm(schema.document, spec, { ...fields, baseDomain: fields.baseDomain }, contents), ...(imageBased ? { imageBased } : {}), ...(issued !== undefined ? { issued } : {}), ...(expires !== undefined ? { expires } : {}) };
  const site: LoadedSiteConfig = { resolved, sourcePath: ctx.filePath, digest: siteDigest(bytes, refs), warnings: named(f.warnings) };
  return result({ ...known, site });
}

/** The values of the fields the rest of the validation needs, when valid; undefined otherwise. */
interface CheckedFields {
  clusterName: string | undefined;
  baseDomain: string | undefined;
  hostname: string | undefined;
  mirrors: MirrorRule[];
  tagMirrors: MirrorRule[];
  timeouts: Timeouts;
}

/** What the referenced (or inline) contents gave, when valid. */
interface Contents {
  nmstate: Record<string, unknown> | undefined;
  pullSecret: PullSecret | undefined;
  trustBundle: string | undefined;
  certificates: { api?: CertificatePair; ingress?: CertificatePair };
  sshKeys: string[] | undefined;
  proxyCa: string | undefined;
  manifests: { file: string; object: ManifestObject }[];
}

type BytesOf = (field: string) => Buffer | undefined;

/**
 * The detached signature beside the file: required and verified when the node holds trusted keys, noted when
 * it does not. false when validation must stop here (nothing unverified reaches a parser). `signed`: the file
 * is judged as signed media — verified, or, on a workstation without the node's keys (no `nodeKey`), signed
 * at all (the node verifies it; its content is judged as the node will judge it). A node without trusted keys
 * cannot verify anything, so there every file is unsigned media.
 */
async function checkSignature(f: Findings, ctx: FileValidationContext, baseDir: string, bytes: Buffer): Promise<false | { signed: boolean }> {
  const sigRef = `${path.basename(ctx.filePath)}.sig`;
  const sigDisplay = `${ctx.display}.sig`;
  for (const p of ctx.trusted.problems) f.warn(p.path, `trusted key ${p.message}`);
  const sig = await readConfinedFile(ctx.rootDir, baseDir, sigRef);
  if (!ctx.trusted.required) {
    if (sig.ok) f.warn(sigDisplay, 'not verified: no trusted key given (--trusted-key on a workstation, /etc/sno-reconfigure/trusted-keys/*.pem on a node), so the signature is optional');
    return { signed: sig.ok && !ctx.nodeKey };
  }
  if (!sig.ok) {
    f.error(sigDisplay, sig.message.includes('does not exist')
      ? `this node holds trusted keys, so the site-config must be signed: ${sigDisplay} (base64 detached Ed25519 or ECDSA P-256 signature) is missing`
      : sig.message);
    return false;
  }
  const signature = decodeSignature(sig.bytes.toString('latin1'));
  if (typeof signature === 'string') {
    f.error(sigDisplay, `${signature}: expected the base64 of a detached Ed25519 or ECDSA P-256 signature over ${ctx.display}`);
    return false;
  }
  if (ctx.trusted.keys.length === 0) {
    f.error(sigDisplay, 'cannot be verified: none of the node\'s trusted keys is usable (see the warnings)');
    return false;
  }
  const by = verifyWithTrustedKeys(bytes, signature, ctx.trusted.keys);
  if (!by) {
    f.error(sigDisplay, `does not verify ${ctx.display} with any of the node's ${ctx.trusted.keys.length} trusted key(s): the file was changed after signing, or signed with another key`);
    return false;
  }
  f.note(sigDisplay, `signature verified with key ${keyFingerprint(by.key)} (${by.file})`);
  return { signed: true };
}

/** Names, inline-or-file pairs, mirrors and timeouts: the rules that span more than one field. */
function checkFields(f: Findings, spec: unknown): CheckedFields {
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

async function expandFolders(f: Findings, ctx: FileValidationContext, baseDir: string, refs: Reference[]): Promise<Reference[]> {
  const out: Reference[] = [];
  for (const r of refs) {
    if (!r.ref.endsWith('/')) {
      out.push(r);
      continue;
    }
    const dir = await realPathIfExists(path.resolve(baseDir, r.ref));
    if (!dir || !isInside(ctx.rootDir, dir) || (await statKind(dir)) !== 'directory') {
      f.error(r.field, `'${r.ref}' is not a folder next to or below the site-config`);
      continue;
    }
    const names = [...new Set((await listDirectory(dir)).filter((n) => MANIFEST_FILE.test(n)).map((n) => n.replace(/\.sealed$/i, '')))];
    if (names.length === 0) f.error(r.field, `'${r.ref}' holds no .yaml, .yml or .json file`);
    for (const n of names) out.push({ field: r.field, ref: `${r.ref}${n}` });
  }
  return out;
}

async function confinedKind(ctx: FileValidationContext, baseDir: string, rel: string): Promise<'file' | 'directory' | 'other' | 'missing'> {
  const real = await realPathIfExists(path.resolve(baseDir, rel));
  return real && isInside(ctx.rootDir, real) ? statKind(real) : 'missing';
}

/** The manifest files (.yaml, .yml, .json) of a folder inside the site-config's directory; none when it is not one. */
async function manifestFilesIn(ctx: FileValidationContext, baseDir: string, rel: string): Promise<string[]> {
  if ((await confinedKind(ctx, baseDir, rel)) !== 'directory') return [];
  return (await listDirectory(path.resolve(baseDir, rel))).filter((x) => MANIFEST_FILE.test(x));
}

/**
 * The files of cluster-configuration/manifests/, image-based install's generated mirror sets: references named by
 * their own path (`manifests/NAME` relative to manifest.json, as sno_reconfigure.sha256 pins them), with their bytes
 * and, when they are text, their text.
 */
async function seedManifests(f: Findings, ctx: FileValidationContext, baseDir: string): Promise<(Reference & { text?: string })[]> {
  const out: (Reference & { text?: string })[] = [];
  for (const n of await manifestFilesIn(ctx, baseDir, SEED_MANIFESTS_DIR)) {
    const where = `cluster-configuration/${SEED_MANIFESTS_DIR}${n}`;
    const got = await readConfinedFile(ctx.rootDir, baseDir, `${SEED_MANIFESTS_DIR}${n}`);
    // A file that cannot be read would silently drop the site's mirrors.
    if (!got.ok) {
      f.error(where, got.message);
      continue;
    }
    const decoded = decodeText(got.bytes);
    if (!decoded.ok) for (const m of decoded.messages) f.error(where, m);
    out.push({ field: where, ref: `${SEED_MANIFESTS_DIR}${n}`, bytes: got.bytes, ...(decoded.ok ? { text: decoded.text } : {}) });
  }
  return out;
}

/**
 * Every file a field names, read inside the site-config's directory, and every file `read` already holds (image-based
 * install's mirror sets): each checked against its spec.sha256 pin.
 */
async function readReferences(f: Findings, ctx: FileValidationContext, baseDir: string, spec: unknown, read: readonly Reference[], pinsAt: string): Promise<Reference[]> {
  const refs = [...read.map(({ field, ref, bytes }) => ({ field, ref, ...(bytes ? { bytes } : {}) })), ...(await expandFolders(f, ctx, baseDir, collectReferences(f, spec)))];
  const pins = readPins(f, get(spec, 'sha256'), refs);
  for (const r of refs) {
    if (r.bytes) {
      const problem = pinProblem(r.ref, sha256Hex(r.bytes), pins.get(path.posix.normalize(r.ref)), ctx.trusted.required, pinsAt);
      if (problem !== undefined) f.error(r.field, problem);
      continue;
    }
    const sealedRef = `${r.ref}${SEALED_SUFFIX}`;
    const sealed = (await statKind(path.resolve(baseDir, sealedRef))) === 'missing' ? undefined : await readConfinedFile(ctx.rootDir, baseDir, sealedRef);
    if (sealed && (await statKind(path.resolve(baseDir, r.ref))) !== 'missing') {
      f.error(r.field, `both '${r.ref}' and '${sealedRef}' are on the media: keep only one of them`);
      continue;
    }
    const got = sealed ?? (await readConfinedFile(ctx.rootDir, baseDir, r.ref));
    if (!got.ok) {
      f.error(r.field, got.message);
      continue;
    }
    // A pin covers the bytes on the media: for a sealed file, the sealed container.
    const problem = pinProblem(r.ref, sha256Hex(got.bytes), pins.get(path.posix.normalize(r.ref)), ctx.trusted.required, pinsAt);
    if (problem !== undefined) f.error(r.field, problem);
    if (sealed) openSealed(f, ctx, r, sealedRef, got.bytes);
    else r.bytes = got.bytes;
  }
  return refs;
}

/** r.bytes from X.sealed on the node; on a workstation, who it is for (its content is judged on that node). */
function openSealed(f: Findings, ctx: FileValidationContext, r: Reference, sealedRef: string, bytes: Buffer): void {
  try {
    const { recipient, label } = describeSealed(bytes);
    const forWhom = `node ${recipient}${label ? ` (${label})` : ''}`;
    if (ctx.nodeKey?.plaintextOf) r.bytes = ctx.nodeKey.plaintextOf(r.ref);
    else if (!ctx.nodeKey) f.note(r.field, `'${sealedRef}' is encrypted for ${forWhom}; its content is checked on that node`);
    else if (!ctx.nodeKey.privateKeyPem) f.error(r.field, `'${sealedRef}' is encrypted for ${forWhom}, and this node has no key of its own: run sno-reconfigure prepare at the factory, and seal the file to the key it prints`);
    else r.bytes = openSealedFile(bytes, r.ref, ctx.nodeKey.privateKeyPem);
  } catch (e) {
    if (!(e instanceof SealedFileError)) throw e;
    f.error(r.field, `'${sealedRef}' ${e.message}`);
  }
}

/**
 * Whether a referenced file's digest is acceptable: it must match its pin when pinned, and be pinned at all
 * when the node requires signed media (the signature covers the site-config, the pins what it references).
 */
export function pinProblem(ref: string, digest: string, pin: string | undefined, signedMediaRequired: boolean, pins = 'spec.sha256'): string | undefined {
  if (pin !== undefined && pin !== digest) return `sha256 of '${ref}' is ${digest}, but ${pins} pins ${pin}: the file was changed after the site-config was written`;
  if (pin === undefined && signedMediaRequired) return `this node requires signed media, so '${ref}' must be pinned in ${pins} (its sha256 is ${digest})`;
  return undefined;
}

/** spec.network's nmstate (inline or from its file), and that it does not rename the host. */
function checkNetworkContent(f: Findings, spec: unknown, hostname: string | undefined, bytesOf: BytesOf): Record<string, unknown> | undefined {
  const network = get(spec, 'network');
  let nmstate: Record<string, unknown> | undefined;
  if (isPlainObject(network)) {
    const fileBytes = bytesOf('spec.network.nmstateFile');
    const ref = validValue(fileRef, network.nmstateFile);
    if (network.nmstate !== undefined && network.nmstateFile === undefined) {
      const nf = validateNmstate(network.nmstate, 'spec.network.nmstate');
      f.addAll(nf);
      if (nf.ok && isPlainObject(network.nmstate)) nmstate = network.nmstate;
    } else if (fileBytes && ref !== undefined) {
      const content = parseConfigBytes(fileBytes);
      if (!content.ok) for (const m of content.messages) f.error('spec.network.nmstateFile', `'${ref}' ${m}`);
      else {
        const nf = validateNmstate(content.value, 'spec.network.nmstate', noteFor(ref));
        f.addAll(nf);
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

/** The site-config as the steps use it, once every check passed. */
function resolvedForm(doc: SiteConfigDocument, spec: unknown, fields: CheckedFields & { baseDomain: string }, contents: Contents): ResolvedSiteConfig {
  const network = get(spec, 'network');
  const verify = validValue(verifySchema, network !== undefined ? get(network, 'verify') : undefined);
  return {
    name: doc.metadata.name,
    ...(doc.spec.match ? { match: doc.spec.match } : {}),
    ...(fields.clusterName !== undefined ? { clusterName: fields.clusterName } : {}),
    ...(fields.hostname !== undefined ? { hostname: fields.hostname } : {}),
    baseDomain: fields.baseDomain,
    ...(contents.nmstate ? { network: { nmstate: contents.nmstate, verify: { ping: verify?.ping ?? [], resolve: verify?.resolve ?? [] } } } : {}),
    ...(contents.pullSecret ? { pullSecret: contents.pullSecret } : {}),
    pullSecretMode: doc.spec.pullSecretMode ?? 'merge',
    imageDigestMirrors: fields.mirrors,
    ...(fields.tagMirrors.length > 0 ? { imageTagMirrors: fields.tagMirrors } : {}),
    ...(contents.trustBundle !== undefined ? { additionalTrustBundle: contents.trustBundle } : {}),
    certificates: contents.certificates,
    ...(doc.spec.certificateRenewal ? { certificateRenewal: doc.spec.certificateRenewal } : {}),
    ...(doc.spec.nodeLabels ? { nodeLabels: { set: doc.spec.nodeLabels.set ?? {}, remove: doc.spec.nodeLabels.remove ?? [] } } : {}),
    ...(doc.spec.ssh && contents.sshKeys ? { ssh: { authorizedKeys: contents.sshKeys, factoryKeys: doc.spec.ssh.factoryKeys } } : {}),
    ...(doc.spec.proxy
      ? {
          proxy: {
            ...(doc.spec.proxy.httpProxy ? { httpProxy: doc.spec.proxy.httpProxy } : {}),
            ...(doc.spec.proxy.httpsProxy ? { httpsProxy: doc.spec.proxy.httpsProxy } : {}),
            noProxy: doc.spec.proxy.noProxy ?? [],
            ...(contents.proxyCa !== undefined ? { trustedCA: contents.proxyCa } : {}),
          },
        }
      : {}),
    ...(contents.manifests.length ? { extraManifests: contents.manifests } : {}),
    ...(doc.spec.ntp ? { ntp: { servers: doc.spec.ntp.servers ?? [], pools: doc.spec.ntp.pools ?? [] } } : {}),
    ...(doc.spec.kubeadminPassword ? { kubeadminPassword: doc.spec.kubeadminPassword.hash !== undefined ? { hash: doc.spec.kubeadminPassword.hash } : { remove: true as const } } : {}),
    timeouts: fields.timeouts,
  };
}

function validateInto(f: Findings, found: Findings): boolean {
  f.addAll(found);
  return found.ok;
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

function collectReferences(f: Findings, spec: unknown): Reference[] {
  const fields: Array<[string, string[]]> = [
    ['spec.network.nmstateFile', ['network', 'nmstateFile']],
    ['spec.pullSecretFile', ['pullSecretFile']],
    ['spec.additionalTrustBundleFile', ['additionalTrustBundleFile']],
    ['spec.certificates.api.certFile', ['certificates', 'api', 'certFile']],
    ['spec.certificates.api.keyFile', ['certificates', 'api', 'keyFile']],
    ['spec.certificates.ingress.certFile', ['certificates', 'ingress', 'certFile']],
    ['spec.certificates.ingress.keyFile', ['certificates', 'ingress', 'keyFile']],
    ['spec.ssh.authorizedKeysFile', ['ssh', 'authorizedKeysFile']],
    ['spec.proxy.trustedCAFile', ['proxy', 'trustedCAFile']],
  ];
  const refs: Reference[] = [];
  for (const [field, keys] of fields) {
    const ref = validValue(fileRef, get(spec, ...keys));
    if (ref !== undefined) refs.push({ field, ref });
  }
  const manifests = get(spec, 'extraManifestFiles');
  if (Array.isArray(manifests)) {
    // A file or folder listed again is read once and named once: thousands of copies must not mean thousands of reads.
    const listed = new Map<string, { first: number; again: number }>();
    manifests.forEach((m, i) => {
      const ref = validValue(fileRef, m);
      if (ref === undefined) return;
      const seen = listed.get(ref);
      if (seen) seen.again += 1;
      else {
        listed.set(ref, { first: i, again: 0 });
        refs.push({ field: `spec.extraManifestFiles[${i}]`, ref });
      }
    });
    for (const [ref, { first, again }] of listed) {
      if (again > 0) f.error(`spec.extraManifestFiles[${first}]`, `'${ref.slice(0, 200)}' is listed ${again + 1} times: list each file or folder once`);
    }
  }
  return refs;
}

/** spec.sha256 as normalized path → lower-case hex; a pin for a file no field references is an error (a typo). */
function readPins(f: Findings, value: unknown, refs: Reference[]): Map<string, string> {
  const pins = new Map<string, string>();
  if (!isPlainObject(value)) return pins;
  const referenced = new Set(refs.map((r) => path.posix.normalize(r.ref)));
  for (const [file, digest] of Object.entries(value)) {
    if (typeof digest !== 'string' || !/^(?:sha256:)?[0-9a-fA-F]{64}$/.test(digest)) continue;
    const key = path.posix.normalize(file);
    if (!referenced.has(key)) {
      const near = [...referenced].sort((a, b) => a.length - b.length);
      f.error(subPath('spec.sha256', file), `pins '${file}', which no field of the site-config references${near.length > 0 ? ` (referenced: ${near.join(', ')})` : ''}`);
      continue;
    }
    pins.set(key, digest.replace(/^sha256:/, '').toLowerCase());
  }
  return pins;
}

function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function pemText(f: Findings, bytes: Buffer, field: string, ref: string): string | undefined {
  if (bytes.includes(0)) {
    f.error(field, `'${ref}' is binary (DER?): PEM text is expected (convert: openssl x509 -inform der -in FILE -out FILE.pem)`);
    return undefined;
  }
  const text = utf8(bytes);
  if (text === undefined) f.error(field, `'${ref}' is not text: PEM is expected`);
  return text;
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

/**
 * sha256 over the site-config and every referenced file, each framed by its field and length so that moving
 * bytes between files changes the digest: a changed config is a new run.
 */
export function siteDigest(main: Uint8Array, refs: ReadonlyArray<{ field: string; bytes?: Uint8Array }>): string {
  const parts: Uint8Array[] = [Buffer.from(`site-config\0${main.length}\0`), main];
  for (const r of refs) {
    if (!r.bytes) continue;
    parts.push(Buffer.from(`\0${r.field}\0${r.bytes.length}\0`), r.bytes);
  }
  return sha256Hex(Buffer.concat(parts));
}
