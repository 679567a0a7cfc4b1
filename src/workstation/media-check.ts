// `media check --manifest DIR/manifest.json` (issue 30): a whole build checked in one command before it ships —
// each image's sha256 against the manifest, its content judged as the node judges it (the site, the machine it
// is for, the site-config digest the node will report), and its signature verified with the trusted key given —
// one line per image. Workstation code (dist/sno-reconfigure-workstation.cjs): the node never reads a manifest.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { Host } from '../host/host';
import { extractImage, readImageKind } from '../siteconfig/image';
import { validateEveryCandidate, type CandidateReport } from '../siteconfig/load';
import type { TrustedKeys } from '../siteconfig/signature';
import type { MachineMatch } from '../siteconfig/types';
import type { Manifest, ManifestEntry, ManifestImage } from './media-build';

export interface ImageCheck {
  file: string;
  ok: boolean;
  /** What was found wrong, one sentence each. */
  problems: string[];
  /** The sites on the image (one, or every site of a volume for several nodes). */
  sites: string[];
  /** "verified with key SHA256:…" for every site-config on the image, when it is. */
  signature?: string;
  /** Neither wrong nor risky: which node key the secrets are sealed for. */
  notes: string[];
  /** What binds each signed site-config (DESIGN.md section 4): the machine, when it was issued, until when. */
  bound: string[];
}

const sameMatch = (a: MachineMatch | undefined, b: MachineMatch) => JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b).sort());

/** The manifest as JSON, or why it is not one `media build` wrote. */
export function parseManifest(text: string, file: string): Manifest {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON: give the manifest.json that media build wrote beside the images`);
  }
  const sites = (m as { sites?: unknown } | null)?.sites;
  if (!Array.isArray(sites) || !sites.every((s: ManifestEntry) => typeof s?.site === 'string' && Array.isArray(s.images) && s.images.every((i) => typeof i?.file === 'string' && typeof i.sha256 === 'string' && !i.file.includes('/')))) {
    throw new Error(`${file} is not a manifest of media build: it needs "sites", each with "site" and "images" (file, sha256)`);
  }
  return m as Manifest;
}

/** One image: its bytes against the manifest, then the node's judgement of what it holds. */
export async function checkImage(host: Host, dir: string, image: ManifestImage, entries: readonly ManifestEntry[], trusted: TrustedKeys | undefined): Promise<ImageCheck> {
  const check: ImageCheck = { file: image.file, ok: false, problems: [], sites: entries.map((e) => e.site), notes: [], bound: [] };
  const file = path.join(dir, image.file);
  let bytes: Buffer;
  try {
    bytes = await host.readFile(file);
  } catch {
    check.problems.push('is missing from the folder of the manifest');
    return check;
  }
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (sha !== image.sha256) {
    check.problems.push(`sha256 is ${sha}, but the manifest says ${image.sha256}: the image was changed or damaged after the build; build it again`);
    return check;
  }
  const kind = await readImageKind(file).catch(() => undefined);
  if (!kind) {
    check.problems.push('is neither a FAT nor an ISO 9660 image');
    return check;
  }
  const copy = await extractImage(host, file, kind.kind, kind.size);
  let reports: CandidateReport[];
  try {
    reports = await validateEveryCandidate(copy.dir, { host, ...(trusted ? { trusted } : {}) });
  } finally {
    await copy.remove();
  }
  const verified = new Set<string>();
  for (const entry of entries) {
    const report = entries.length === 1 && reports.length === 1 ? reports[0] : reports.find((r) => r.display === `site-configs/${entry.site}.yaml`);
    if (!report) {
      check.problems.push(`holds no site-config for ${entry.site}`);
      continue;
    }
    if (!report.valid || !report.site) {
      check.problems.push(`${entry.site}: ${report.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
      continue;
    }
    if (report.site.resolved.name !== entry.site) check.problems.push(`holds site "${report.site.resolved.name}", but the manifest lists ${entry.site}`);
    if (!sameMatch(report.match, entry.match)) check.problems.push(`${entry.site}: spec.match is not the one in the manifest`);
    // Sealed files are opened on the node only: there the digest covers their content, which is not readable here.
    if (!entry.sealedFor && entry.siteConfigDigest && report.site.digest !== entry.siteConfigDigest) check.problems.push(`${entry.site}: site-config digest ${report.site.digest} is not the manifest's ${entry.siteConfigDigest}`);
    const by = report.notes.map((n) => /^signature verified with key (SHA256:\S+)/.exec(n.message)?.[1]).find(Boolean);
    if (by) verified.add(by);
    if (trusted && entry.signedBy !== 'unsigned' && by !== entry.signedBy) check.problems.push(`${entry.site}: the signature verified with ${by ?? 'no key'}, but the manifest says it was signed with ${entry.signedBy}`);
    if (entry.sealedFor) check.notes.push(`${entry.site}: secrets sealed for node key ${entry.sealedFor}`);
    const { issued, expires } = report.site.resolved;
    if (issued !== undefined) check.bound.push(`for ${Object.entries(report.match ?? {}).map(([k, v]) => `${k} ${String(v)}`).join(' and ') || 'any machine'}, issued ${issued}, ${expires !== undefined ? `expires ${expires}` : 'never expires'}`);
  }
  if (verified.size === 1 && check.problems.length === 0) check.signature = `verified with key ${[...verified][0]!}`;
  check.ok = check.problems.length === 0;
  return check;
}

/** The line a person reads for one image. */
export function checkLine(c: ImageCheck, trusted: boolean): string {
  if (!c.ok) return `${c.file}: FAILED — ${c.problems.join('; ')}`;
  const what = c.sites.length === 1 ? `site "${c.sites[0]!}"` : `${c.sites.length} site-configs, each for its machine`;
  const signature = c.signature ? `signature ${c.signature}` : trusted ? 'unsigned' : 'signature not checked (no trusted key given)';
  const bound = c.bound.length === 1 ? ` (${c.bound[0]!})` : c.bound.length > 1 ? ' (each bound to its machine and issue date)' : '';
  return `${c.file}: ok — sha256 as in the manifest, ${what}, ${signature}${bound}${c.notes.length === 1 ? `; ${c.notes[0]!.replace(/^[^:]+: /, '')}` : c.notes.length > 1 ? `; secrets of ${c.notes.length} sites sealed to their nodes` : ''}`;
}
