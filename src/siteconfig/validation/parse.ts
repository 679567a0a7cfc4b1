// The parse stage: the bytes as a YAML or JSON document (src/siteconfig/parse-text.ts refuses what YAML could
// smuggle in), and image-based install's manifest.json translated into the site-config it amounts to, with the
// mirror sets beside it read for the translation (their pins are checked with the other references).
import * as path from 'node:path';
import { readConfinedFile } from '../files';
import { decodeText, parseConfigBytes } from '../parse-text';
import { describeType, isPlainObject, type Findings } from '../problems';
import { fromSeedReconfiguration, isSeedReconfiguration, isSeedReconfigurationFile, seedPathOf, SEED_EXTRA_MANIFESTS_DIR, SEED_MANIFESTS_DIR } from '../seed-reconfiguration';
import type { ResolvedSiteConfig, ValidationProblem } from '../types';
import type { FileValidationContext, Reference } from './context';
import { manifestFilesIn } from './read';

type Named = (ps: ValidationProblem[]) => ValidationProblem[];

export interface ParsedSiteConfig {
  /** The site-config document (an image-based manifest.json's translation), judged by the stages after this one. */
  document: unknown;
  /** What an image-based manifest.json asks that needs recert, checked against the node when the agent starts. */
  imageBased?: ResolvedSiteConfig['imageBased'];
  /** Image-based install's mirror sets, already read: pinned with the other referenced files. */
  seedRefs: Reference[];
}

/**
 * The document, or undefined when validation stops here (the reasons reported). `named` turns the paths of the
 * problems found from here on back into the names the person wrote: manifest.json's own fields, not the site-config
 * fields they became; for a site-config it is the identity.
 */
export async function parseSiteConfig(f: Findings, ctx: FileValidationContext, bytes: Buffer): Promise<{ parsed?: ParsedSiteConfig; named: Named }> {
  const named: Named = (ps) => ps;
  const parsed = parseConfigBytes(bytes);
  if (!parsed.ok) {
    for (const m of parsed.messages) f.error(ctx.display, m);
    return { named };
  }
  const document = parsed.value;
  if (isSeedReconfigurationFile(ctx.filePath) && !isPlainObject(document)) {
    f.error(ctx.display, `is not a JSON object (got ${describeType(document)}): image-based install writes its SeedReconfiguration here`);
    return { named };
  }
  if (!isSeedReconfiguration(document, ctx.filePath)) return { parsed: { document, seedRefs: [] }, named };
  // openshift-install puts extra-manifests/ on every config ISO, empty when the site has none
  // (openshift/installer pkg/asset/imagebased/configimage/configiso.go): only one with files is mapped.
  const hasExtraManifests = (await manifestFilesIn(ctx, SEED_EXTRA_MANIFESTS_DIR)).length > 0;
  const seedRefs = await seedManifests(f, ctx);
  const texts = Object.fromEntries(seedRefs.flatMap((r) => (r.text === undefined ? [] : [[r.ref.slice(SEED_MANIFESTS_DIR.length), r.text]])));
  const t = fromSeedReconfiguration(document, texts, hasExtraManifests);
  // Several site-config fields may come from one manifest.json field (proxy): each problem is named once.
  const seedNamed: Named = (ps) => [...new Map(ps.map((p) => ({ ...p, path: seedPathOf(t.origins, p.path) })).map((p) => [`${p.path}\0${p.message}`, p])).values()];
  for (const p of t.problems) f.error(p.path, p.message);
  for (const w of t.warnings) f.warn(w.path, w.message);
  // A manifest.json of another version (or none) is not judged field by field: its fields may mean other things.
  if (t.problems.some((p) => p.path === 'api_version')) return { named: seedNamed };
  return { parsed: { document: t.document, imageBased: t.identity, seedRefs }, named: seedNamed };
}

/**
 * The files of cluster-configuration/manifests/, image-based install's generated mirror sets: references named by
 * their own path (`manifests/NAME` relative to manifest.json, as sno_reconfigure.sha256 pins them), with their bytes
 * and, when they are text, their text.
 */
async function seedManifests(f: Findings, ctx: FileValidationContext): Promise<(Reference & { text?: string })[]> {
  const out: (Reference & { text?: string })[] = [];
  for (const n of await manifestFilesIn(ctx, SEED_MANIFESTS_DIR)) {
    const where = `cluster-configuration/${SEED_MANIFESTS_DIR}${n}`;
    const got = await readConfinedFile(ctx.rootDir, path.dirname(ctx.filePath), `${SEED_MANIFESTS_DIR}${n}`);
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
