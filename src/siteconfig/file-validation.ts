// Validation of one site-config file and everything it references, as a pipeline of named stages, in the order
// that keeps untrusted data away from the parsers (each stage is a module of src/siteconfig/validation/):
//   read and confine (read.ts) → signature over the raw bytes, when the node requires one (trust-decision.ts) →
//   parse, image-based manifest.json translated (parse.ts) → schema (document.ts) → trust: what unsigned media may
//   carry, what binds signed media (trust-decision.ts, on src/siteconfig/trust.ts) → the cross-field rules
//   (sections.ts; they need no file) → references, confined and pinned (references.ts) → each section's content
//   (sections.ts) → the resolved form and its digest (resolved.ts).
// Every problem found is reported, not just the first.
import { SEED_BINDING_FIELD } from './seed-reconfiguration';
import { sameIssueProblem } from './trust';
import { Findings, listed } from './problems';
import type { LoadedSiteConfig, ValidationProblem } from './types';
import type { FileValidation, FileValidationContext } from './validation/context';
import { checkDocument } from './validation/document';
import { parseSiteConfig } from './validation/parse';
import { readSiteConfigBytes } from './validation/read';
import { readReferences } from './validation/references';
import { resolvedForm, siteDigest } from './validation/resolved';
import { checkContents, checkFields } from './validation/sections';
import { judgeTrust, verifySignature } from './validation/trust-decision';

export type { FileValidation, FileValidationContext } from './validation/context';
export { pinProblem } from './validation/references';
export { siteDigest } from './validation/resolved';

export async function validateSiteConfigFile(ctx: FileValidationContext): Promise<FileValidation> {
  const f = new Findings();
  let named = (ps: ValidationProblem[]): ValidationProblem[] => ps;
  const result = (extra: Partial<FileValidation> = {}): FileValidation => ({ errors: listed(named(f.errors)), warnings: listed(named(f.warnings)), notes: f.notes, matchKnown: false, ...extra });

  const bytes = await readSiteConfigBytes(f, ctx);
  if (!bytes) return result();
  const signature = await verifySignature(f, ctx, bytes);
  if (signature === false) return result();
  const read = await parseSiteConfig(f, ctx, bytes);
  named = read.named;
  if (!read.parsed) return result();
  const { document, imageBased, seedRefs } = read.parsed;
  const { schema, spec, known } = checkDocument(f, document);
  judgeTrust(f, ctx, document, signature.signed);
  const fields = checkFields(f, spec);
  const refs = await readReferences(f, ctx, spec, seedRefs, imageBased ? `${SEED_BINDING_FIELD}.sha256` : 'spec.sha256');
  const contents = checkContents(f, spec, fields, refs, ctx.now, signature.signed);
  if (!f.ok || schema.document === undefined || fields.baseDomain === undefined) return result(known);

  const { issued, expires } = signature.signed ? schema.document.metadata : {};
  const resolved = { ...resolvedForm(schema.document, spec, { ...fields, baseDomain: fields.baseDomain }, contents), ...(imageBased ? { imageBased } : {}), ...(issued !== undefined ? { issued } : {}), ...(expires !== undefined ? { expires } : {}) };
  const site: LoadedSiteConfig = { resolved, sourcePath: ctx.filePath, digest: siteDigest(bytes, refs), warnings: listed(named(f.warnings)) };
  // The last part of signed means bound needs the whole config's digest (trust.ts).
  const replay = signature.signed ? sameIssueProblem(issued, site.digest, ctx.lastIssued !== undefined && 'issued' in ctx.lastIssued ? ctx.lastIssued : undefined) : undefined;
  if (replay) {
    f.error(replay.path, replay.message);
    return result(known);
  }
  return result({ ...known, site });
}
