// The references-and-pins stage: every file a field names (folders of manifests expanded), read inside the
// site-config's directory (or sealed to this node), and checked against its spec.sha256 pin — on a node that
// requires signatures every one must be pinned, so the signature over the site-config covers them too.
import * as path from 'node:path';
import { isInside, listDirectory, readConfinedFile, realPathIfExists, statKind } from '../files';
import { MANIFEST_FILE } from '../manifests';
import { isPlainObject, subPath, type Findings } from '../problems';
import { fileRef, validValue } from '../schema';
import { unreadableNodeKey, describeSealed, openSealedFile, SealedFileError, SEALED_SUFFIX } from '../sealed';
import { sha256Hex } from '../signature';
import { get, type FileValidationContext, type Reference } from './context';

/**
 * Every file a field names, read inside the site-config's directory, and every file `read` already holds (image-based
 * install's mirror sets): each checked against its spec.sha256 pin.
 */
export async function readReferences(f: Findings, ctx: FileValidationContext, spec: unknown, read: readonly Reference[], pinsAt: string): Promise<Reference[]> {
  const baseDir = path.dirname(ctx.filePath);
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
    else if (ctx.nodeKey.unreadable !== undefined) f.error(r.field, `'${sealedRef}' ${unreadableNodeKey(ctx.nodeKey.unreadable)}`);
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
