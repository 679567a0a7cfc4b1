// The trust decision, in two parts around the parser. Before it: the detached signature over the file's exact bytes
// (nothing unverified reaches a parser on a node that requires signatures), which says whether the file is signed
// media. After the schema: what that allows (src/siteconfig/trust.ts, the rule validate, plan and run share) —
// the allowlist of unsigned media, or the binding of signed media to a machine and a date.
import * as path from 'node:path';
import { readConfinedFile } from '../files';
import type { Findings } from '../problems';
import { keyFingerprint } from '../sealed';
import { decodeSignature, verifyWithTrustedKeys } from '../signature';
import { signedProblems, unsignedProblems } from '../trust';
import type { FileValidationContext } from './context';

/**
 * The detached signature beside the file: required and verified when the node holds trusted keys, noted when
 * it does not. false when validation must stop here (nothing unverified reaches a parser). `signed`: the file
 * is judged as signed media — verified, or, on a workstation without the node's keys (no `nodeKey`), signed
 * at all (the node verifies it; its content is judged as the node will judge it). A node without trusted keys
 * cannot verify anything, so there every file is unsigned media.
 */
export async function verifySignature(f: Findings, ctx: FileValidationContext, bytes: Buffer): Promise<false | { signed: boolean }> {
  const baseDir = path.dirname(ctx.filePath);
  const sigRef = `${path.basename(ctx.filePath)}.sig`;
  const sigDisplay = `${ctx.display}.sig`;
  for (const p of ctx.trusted.problems) f.warn(p.path, `trusted key ${p.message}`);
  const sig = await readConfinedFile(ctx.rootDir, baseDir, sigRef);
  if (!ctx.trusted.required) {
    if (!sig.ok) return { signed: false };
    // Unverifiable here, but never taken on trust as a signature when it cannot even be one (the hostile re-test of
    // issue 36: a .sig holding "AAAA" made unsigned fields pass a workstation's validate).
    const signature = decodeSignature(sig.bytes.toString('latin1'));
    if (typeof signature === 'string' || !plausibleSignatureLength(signature.length)) {
      f.error(sigDisplay, `${typeof signature === 'string' ? signature : `holds ${signature.length} bytes, not a signature`}: expected the base64 of a detached Ed25519 or ECDSA P-256 signature over ${ctx.display}`);
      return false;
    }
    f.warn(sigDisplay, ctx.nodeKey
      ? 'not verified: this node holds no trusted key (/etc/sno-reconfigure/trusted-keys/*.pem), so it takes the file as unsigned media'
      : 'not verified: no trusted key given (--trusted-key), so the file is judged as signed media; a node takes what only signed media may carry only when the signature verifies with a key it trusts');
    return { signed: !ctx.nodeKey };
  }
  // Said first: with no usable key, the refusal is about the node's keys, not the media (the tenth hostile re-test of
  // issue 36: a keys folder that was a file was refused as "the .sig is missing").
  if (ctx.trusted.keys.length === 0) {
    f.error(sigDisplay, 'cannot be verified: none of the node\'s trusted keys is usable (see the warnings)');
    return false;
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
  const by = verifyWithTrustedKeys(bytes, signature, ctx.trusted.keys);
  if (!by) {
    f.error(sigDisplay, `does not verify ${ctx.display} with any of the node's ${ctx.trusted.keys.length} trusted key(s): the file was changed after signing, or signed with another key`);
    return false;
  }
  f.note(sigDisplay, `signature verified with key ${keyFingerprint(by.key)} (${by.file})`);
  return { signed: true };
}

/**
 * The trust rule on the document as written (an image-based manifest.json's fields are named back by their own
 * names, its binding is its sno_reconfigure field), before any referenced file is opened.
 */
export function judgeTrust(f: Findings, ctx: FileValidationContext, document: unknown, signed: boolean): void {
  const last = ctx.lastIssued;
  const problems = !signed ? unsignedProblems(document) : signedProblems(document, ctx.now, last !== undefined && 'issued' in last ? last.issued : undefined);
  for (const p of problems) f.error(p.path, p.message);
  // Issue 36, finding 2: a damaged record once read as "none", and last month's signed media were taken again.
  if (signed && last !== undefined && 'damaged' in last) f.error('metadata.issued', damagedLastIssued(last.damaged));
}

/** A damaged replay record, in words for the technician and the office (docs/troubleshooting.md). */
export const damagedLastIssued = (damaged: string): string =>
  `cannot be checked: this node's record of the last signed config it took (last-issued.json in its state directory) ${damaged}, so the node cannot tell whether these media are older than that config and takes no signed media: call the office; once they confirm these are the newest media issued for this node, the damaged record may be removed at the node (the next signed config taken writes it again)`;

/** An Ed25519 signature is 64 bytes; an ECDSA P-256 one 64 (r and s) or a DER sequence of at most 72. */
function plausibleSignatureLength(bytes: number): boolean {
  return bytes >= 8 && bytes <= 72;
}
