// `sno-reconfigure media build` (issue 19): from an inventory of sites and one site-config template to a
// validated, signed (and optionally sealed) site-config per site, written as a FAT image labelled SITE-CONFIG
// for a USB stick (`dd`-able) and/or an ISO 9660 image for BMC virtual media, with a manifest of every image's
// sha256 and the machine it is for.
//
// Workstation code: it lives in dist/sno-reconfigure-workstation.cjs, never in the node bundle (whose every
// KiB rides in a MachineConfig). Every site-config is judged by the node's own validation before anything is
// written; the build happens in a folder beside --out and is renamed into place at the end, so a failed build
// leaves nothing half-written. Every row is judged before any image is made, and every invalid row is reported
// in one pass (issue 30). The images are reproducible: every timestamp is SOURCE_DATE_EPOCH (mtools and xorriso
// honour it; file times are set with touch), entries are copied in sorted order, and the FAT volume serial and
// the ISO's UUID are derived from the content — the same inputs give byte-identical images, and two different
// site-configs give two different serials, which is how the agent tells a replaced image from the same one.
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import type { Host } from '../host/host';
import { MULTI_DIR, validateEveryCandidate } from '../siteconfig/load';
import { MANIFEST_FILE } from '../siteconfig/manifests';
import { SEALED_SUFFIX, keyFingerprint, sealFile } from '../siteconfig/sealed';
import { trustedKeysFrom } from '../siteconfig/signature';
import type { MachineMatch } from '../siteconfig/types';
import { LABEL, checkTools, fatImage, isoImage } from './images';
import { BuildError, joinNodes, nodeKeyOf, parseInventory, rowName, type InventoryRow } from './inventory';
import { ANY_TYPES, PLACEHOLDER, SITE_CONFIG_TYPES, fillTemplate } from './template';

export { BuildError } from './inventory';
export { fillTemplate } from './template';
export type { InventoryRow } from './inventory';

/** Fields whose files carry secrets: sealed when the row names the node's public key. */
const SECRET_FIELDS = new Set(['pullSecretFile', 'keyFile']);
/**
 * Fields whose files are YAML the template's placeholders are expanded in, as in site-config.yaml itself: the
 * nmstate state and extra manifests hold per-site values (addresses, names). Any other file is copied as it is,
 * and a placeholder in it is refused (a pull secret or a key with `${…}` is a template mistake, not a value).
 */
const EXPANDED_FIELDS = new Set(['nmstateFile', 'extraManifestFiles']);
const SITE_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** The inventory columns that name a node (spec.match's fields; `serial` as joinNodes takes it too). */
const MATCH_COLUMNS: ReadonlyArray<[string, keyof MachineMatch]> = [['systemUUID', 'systemUUID'], ['serialNumber', 'serialNumber'], ['serial', 'serialNumber'], ['macAddress', 'macAddress']];
/** How long signed media stay valid by default (metadata.expires): a quarter, time for a node to reach its store. */
export const DEFAULT_VALID_DAYS = 90;

/** spec.match from the row's identity columns (systemUUID, serialNumber or serial, macAddress). */
export function matchOfRow(row: InventoryRow): MachineMatch {
  const match: MachineMatch = {};
  for (const [column, field] of MATCH_COLUMNS) if (row.values[column] && match[field] === undefined) match[field] = row.values[column];
  return match;
}

/** Every file a parsed site-config names: its key, where it is, and the path (a folder ends in '/'). */
function fileFields(value: unknown): { key: string; at: (string | number)[]; ref: string }[] {
  const out: { key: string; at: (string | number)[]; ref: string }[] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    if (v === null || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const here = [...at, Array.isArray(v) ? Number(k) : k];
      if (k.endsWith('File') && typeof child === 'string') out.push({ key: k, at: here, ref: child });
      else if (k === 'extraManifestFiles' && Array.isArray(child)) child.forEach((c, i) => typeof c === 'string' && out.push({ key: k, at: [...here, i], ref: c }));
      else walk(child, here);
    }
  };
  walk(value, []);
  return out;
}

/** 2026-11-27T09:00:00Z: seconds, UTC. */
function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface BuildOptions {
  host: Host;
  inventoryPath: string;
  /** The nodes' rows from `prepare` (CSV or YAML), joined to the inventory's rows by serial number. */
  nodesPath?: string;
  templatePath: string;
  outDir: string;
  signingKeyPem?: string;
  formats: readonly ('fat' | 'iso')[];
  /** One volume for every site (site-configs/NAME.yaml, each picked by its spec.match) instead of one per site. */
  multiNode?: boolean;
  /** Every timestamp in the images (seconds since 1970). */
  epoch: number;
  /** metadata.issued of signed site-configs (default: now). */
  issued?: Date;
  /** metadata.expires of signed site-configs, in days after issued (default DEFAULT_VALID_DAYS; 0: none). */
  validDays?: number;
}

export interface ManifestImage {
  file: string;
  format: 'fat' | 'iso';
  bytes: number;
  sha256: string;
}

export interface ManifestEntry {
  site: string;
  row: number;
  line: number;
  match: MachineMatch;
  /** The digest the node computes over what it applies: the report ConfigMap's `digest` (docs: fleet outcome). */
  siteConfigDigest: string;
  /** The signing key's fingerprint (SHA256:…), or "unsigned". */
  signedBy: string;
  sealedFor?: string;
  images: ManifestImage[];
}

export interface Manifest {
  label: string;
  sourceDateEpoch: number;
  sites: ManifestEntry[];
}

export const MANIFEST_FILE_NAME = 'manifest.json';

async function readRows(host: Host, file: string): Promise<{ rows: InventoryRow[]; problems: string[] }> {
  let text: string;
  try {
    text = (await host.readFile(file)).toString('utf8');
  } catch (e) {
    throw new BuildError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { cause: e });
  }
  return parseInventory(text, path.basename(file));
}

export async function buildMedia(opts: BuildOptions): Promise<Manifest> {
  const { host } = opts;
  const out = path.resolve(opts.outDir);
  if (await host.exists(out)) throw new BuildError(`${opts.outDir} exists already: give a new folder (the build never writes into an old one)`);
  await checkTools(host, opts.formats);
  const sites = await readRows(host, opts.inventoryPath);
  const problems = [...sites.problems];
  let rows = sites.rows;
  if (opts.nodesPath) {
    const nodes = await readRows(host, opts.nodesPath);
    const joined = joinNodes(rows, nodes.rows, path.basename(opts.nodesPath));
    problems.push(...nodes.problems, ...joined.problems);
    rows = joined.rows;
  }
  if (rows.length === 0 && problems.length === 0) throw new BuildError(`${opts.inventoryPath} lists no site`);
  const template = (await host.readFile(opts.templatePath)).toString('utf8');
  const templateDir = path.dirname(path.resolve(opts.templatePath));
  const signer = opts.signingKeyPem ? signerOf(opts.signingKeyPem) : undefined;

  const staging = `${out}.partial-${process.pid}`;
  await host.remove(staging);
  await host.mkdirp(staging, 0o755);
  try {
    const seen = new Map<string, InventoryRow>();
    const entries: ManifestEntry[] = [];
    // Every row is judged before any image is made, and every problem of every row is collected.
    for (const row of rows) {
      const name = row.values.name ?? '';
      if (!SITE_NAME.test(name)) {
        problems.push(`${rowName(row)}: name must be a lower-case DNS label (letters, digits, '-'), it names the image files`);
        continue;
      }
      const twin = seen.get(name);
      if (twin) {
        problems.push(`${rowName(row)}: the name ${name} is also in row ${twin.row} (line ${twin.line})`);
        continue;
      }
      seen.set(name, row);
      const volume = path.posix.join(staging, 'work', opts.multiNode ? 'all' : name);
      const layout: Layout = opts.multiNode ? { volume, config: `${MULTI_DIR}/${name}.yaml`, refPrefix: `${name}/` } : { volume, config: 'site-config.yaml', refPrefix: '' };
      try {
        const entry = await buildSite(opts, row, name, template, templateDir, layout, signer);
        if (opts.multiNode && Object.keys(entry.match).length === 0) throw new BuildError('on a volume for several nodes every site-config needs spec.match, or it would fit every machine');
        entries.push(entry);
      } catch (e) {
        if (!(e instanceof BuildError)) throw e;
        problems.push(`${rowName(row)}: ${e.message}`);
      }
    }
    // In the order of the rows (the nodes file's own problems, which name no site row, first).
    const rowOf = (p: string) => Number(/^row (\d+) /.exec(p)?.[1] ?? 0);
    problems.sort((a, b) => rowOf(a) - rowOf(b));
    if (problems.length > 0) throw new BuildError(`${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    if (opts.multiNode) {
      const shared = await writeImages(opts, path.posix.join(staging, 'work', 'all'), 'sites', staging);
      for (const e of entries) e.images = shared;
    } else {
      for (const e of entries) e.images = await writeImages(opts, path.posix.join(staging, 'work', e.site), e.site, staging);
    }
    await host.remove(path.posix.join(staging, 'work'));
    const manifest: Manifest = { label: LABEL, sourceDateEpoch: opts.epoch, sites: entries };
    await host.writeFileAtomic(path.posix.join(staging, MANIFEST_FILE_NAME), `${JSON.stringify(manifest, null, 2)}\n`);
    await host.writeFileAtomic(path.posix.join(staging, 'manifest.txt'), manifestTable(entries));
    await host.rename(staging, out);
    return manifest;
  } catch (e) {
    await host.remove(staging);
    throw e;
  }
}

/** Where one site's files go: its own volume, or its part of the shared one. */
interface Layout {
  volume: string;
  /** The site-config's path on the volume. */
  config: string;
  /** Prefixed to every file the site-config names (each site's files in a folder of its own on a shared volume). */
  refPrefix: string;
}

async function writeImages(opts: BuildOptions, volume: string, name: string, staging: string): Promise<ManifestImage[]> {
  const images: ManifestImage[] = [];
  for (const format of opts.formats) {
    const file = `${name}.${format === 'fat' ? 'fat.img' : 'iso'}`;
    const image = path.posix.join(staging, file);
    if (format === 'fat') await fatImage(opts.host, volume, image, opts.epoch);
    else await isoImage(opts.host, volume, image, opts.epoch);
    const bytes = await opts.host.readFile(image);
    images.push({ file, format, bytes: bytes.length, sha256: sha256(bytes) });
  }
  return images;
}

interface Signer {
  sign(data: Buffer): string;
  publicKeyPem: string;
  fingerprint: string;
}

function signerOf(pem: string): Signer {
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new BuildError('the signing key is not a PEM private key');
  }
  const ed = key.asymmetricKeyType === 'ed25519';
  if (!ed && !(key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1')) throw new BuildError(`the signing key is ${key.asymmetricKeyType ?? 'unknown'}: only Ed25519 and ECDSA P-256 keys sign site-configs`);
  const publicKey = createPublicKey(key);
  return {
    // Ed25519 signatures are deterministic; ECDSA ones are not (a fresh nonce each time): with a P-256 key the
    // images differ from build to build in their .sig file only.
    sign: (data) => sign(ed ? null : 'sha256', data, key).toString('base64'),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    fingerprint: keyFingerprint(publicKey),
  };
}

/** The files a field names: one file, or a folder's manifests (extraManifestFiles may name a folder, ending in '/'). */
async function sourcesOf(host: Host, templateDir: string, ref: string): Promise<string[]> {
  if (!ref.endsWith('/')) return [ref];
  let names: string[];
  try {
    names = await host.listDir(path.resolve(templateDir, ref));
  } catch {
    throw new BuildError(`'${ref}' is not a folder beside the template`);
  }
  return names.filter((n) => MANIFEST_FILE.test(n)).sort().map((n) => `${ref}${n}`);
}

/** One site's folder: the filled template, its files (filled or sealed), pins and signature; then validated. */
async function buildSite(opts: BuildOptions, row: InventoryRow, name: string, template: string, templateDir: string, layout: Layout, signer: Signer | undefined): Promise<ManifestEntry> {
  const { host } = opts;
  const text = fillTemplate(template, row, SITE_CONFIG_TYPES);
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new BuildError(`the filled template is not YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  const nodeKey = row.values.nodePublicKey ? await nodeKeyOf(row.values.nodePublicKey, (f) => host.readFile(path.resolve(path.dirname(path.resolve(opts.inventoryPath)), f)).then((b) => b.toString('utf8'), () => undefined)) : undefined;
  if (nodeKey && 'problem' in nodeKey) throw new BuildError(nodeKey.problem);
  const configDir = path.posix.dirname(path.posix.join(layout.volume, layout.config));
  await host.mkdirp(configDir, 0o755);
  const pins: Record<string, string> = {};
  const plaintext = new Map<string, Buffer>();
  for (const { key, at, ref } of fileFields(doc.toJS())) {
    const named = `${layout.refPrefix}${path.posix.normalize(ref)}`;
    if (layout.refPrefix) doc.setIn(at, named);
    for (const file of await sourcesOf(host, templateDir, ref)) {
      const source = path.resolve(templateDir, file);
      if (!source.startsWith(`${templateDir}${path.sep}`)) throw new BuildError(`${key} '${file}' is outside the template's folder`);
      let data: Buffer;
      try {
        data = await host.readFile(source);
      } catch {
        throw new BuildError(`${key} names '${file}', which is not beside the template`);
      }
      if (EXPANDED_FIELDS.has(key)) data = Buffer.from(fillTemplate(data.toString('utf8'), row, ANY_TYPES));
      else {
        const found = data.toString('latin1').match(PLACEHOLDER);
        if (found) throw new BuildError(`${key} '${file}' holds ${found[0]}: placeholders are expanded only in the template, its nmstateFile and its extraManifestFiles; write the value, or name a file per site with \${name} in its path (e.g. secrets/\${name}/pull-secret.json)`);
      }
      const onVolume = `${layout.refPrefix}${path.posix.normalize(file)}`;
      const sealed = nodeKey !== undefined && SECRET_FIELDS.has(key);
      const onMedia = sealed ? sealFile(data, onVolume, nodeKey.pem, name) : data;
      if (sealed) plaintext.set(onVolume, data);
      const target = path.posix.join(configDir, `${onVolume}${sealed ? SEALED_SUFFIX : ''}`);
      await host.mkdirp(path.posix.dirname(target), 0o755);
      await host.writeFileAtomic(target, onMedia, 0o644);
      pins[onVolume] = sha256(onMedia);
    }
  }
  if (signer && Object.keys(pins).length > 0) doc.setIn(['spec', 'sha256'], pins);
  // Signed means bound (src/siteconfig/trust.ts): the machine it is for, when it was issued, until when it holds.
  if (signer) {
    const match = matchOfRow(row);
    if (!doc.hasIn(['spec', 'match']) && Object.keys(match).length > 0) doc.setIn(['spec', 'match'], match);
    const issued = opts.issued ?? new Date();
    const days = opts.validDays ?? DEFAULT_VALID_DAYS;
    doc.setIn(['metadata', 'issued'], rfc3339(issued));
    if (days > 0) doc.setIn(['metadata', 'expires'], rfc3339(new Date(issued.getTime() + days * 86_400_000)));
  }
  const final = Buffer.from(doc.toString());
  const configPath = path.posix.join(layout.volume, layout.config);
  await host.writeFileAtomic(configPath, final, 0o644);
  if (signer) await host.writeFileAtomic(`${configPath}.sig`, `${signer.sign(final)}\n`, 0o644);

  // The node's own judgement, with the signature required as on a node that trusts this key; sealed files are
  // judged on their content (the build has it), and the digest is the one the node will compute.
  const reports = await validateEveryCandidate(host.resolve(layout.volume), {
    host,
    ...(signer ? { trusted: trustedKeysFrom([{ file: 'the signing key', pem: signer.publicKeyPem }]) } : {}),
    nodeKey: { plaintextOf: (ref) => plaintext.get(path.posix.normalize(ref)) },
  });
  const report = reports.find((r) => r.display === layout.config || reports.length === 1);
  if (!report || !report.valid || !report.site) {
    const found = (report?.errors ?? []).map((p) => `${p.path}: ${p.message}`);
    throw new BuildError(`the site-config is invalid — ${found.join('; ') || 'it could not be read'}`);
  }
  const resolved = report.site.resolved;
  const renamed = (['clusterName', 'hostname'] as const).filter((k) => row.values[k] && resolved[k] !== undefined && resolved[k] !== row.values[k]);
  if (renamed.length > 0) throw new BuildError(renamed.map((k) => `spec.${k} is ${resolved[k]}, but the node was installed with ${k} ${row.values[k]}, which cannot change (use \${${k}} in the template)`).join('; '));
  return {
    site: name,
    row: row.row,
    line: row.line,
    match: report.match ?? {},
    siteConfigDigest: report.site.digest,
    signedBy: signer?.fingerprint ?? 'unsigned',
    ...(nodeKey ? { sealedFor: keyFingerprint(nodeKey.pem) } : {}),
    images: [],
  };
}

/** The images of a build, each once (on a volume for several nodes, every site has the same ones). */
export function imagesOf(manifest: Manifest): ManifestImage[] {
  return [...new Map(manifest.sites.flatMap((s) => s.images.map((i) => [i.file, i] as const))).values()];
}

function manifestTable(entries: readonly ManifestEntry[]): string {
  const lines = ['site\timage\tbytes\tsha256\tfor\tsigned by\tsite-config digest'];
  for (const e of entries) {
    const forWhom = Object.entries(e.match).map(([k, v]) => `${k}=${String(v)}`).join(' ') || 'any machine';
    for (const i of e.images) lines.push(`${e.site}\t${i.file}\t${i.bytes}\t${i.sha256}\t${forWhom}${e.sealedFor ? ` (secrets sealed for ${e.sealedFor})` : ''}\t${e.signedBy}\t${e.siteConfigDigest}`);
  }
  return `${lines.join('\n')}\n`;
}
