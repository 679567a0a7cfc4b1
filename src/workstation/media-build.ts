// `sno-reconfigure media build` (issue 19): from an inventory of sites and one site-config template to a
// validated, signed (and optionally sealed) site-config per site, written as a FAT image labelled SITE-CONFIG
// for a USB stick (`dd`-able) and/or an ISO 9660 image for BMC virtual media, with a manifest of every image's
// sha256 and the machine it is for.
//
// Workstation code: it lives in dist/sno-reconfigure-workstation.cjs, never in the node bundle (whose every
// KiB rides in a MachineConfig). Every site-config is judged by the node's own validation before anything is
// written; the build happens in a folder beside --out and is renamed into place at the end, so a failed build
// leaves nothing half-written. The images are reproducible: every timestamp is SOURCE_DATE_EPOCH (mtools and
// xorriso honour it; file times are set with touch), entries are copied in sorted order, and the FAT serial is
// derived from the content — the same inventory, template and key give byte-identical images.
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import * as path from 'node:path';
import { parse, parseDocument } from 'yaml';
import { CommandError } from '../host/command-error';
import type { Host } from '../host/host';
import { MULTI_DIR, validateEveryCandidate } from '../siteconfig/load';
import { SEALED_SUFFIX, keyFingerprint, sealFile } from '../siteconfig/sealed';
import { trustedKeysFrom } from '../siteconfig/signature';
import type { MachineMatch } from '../siteconfig/types';

export class BuildError extends Error {
  override name = 'BuildError';
}

/** One site of the inventory: its values by column, and where it is in the file (for messages). */
export interface InventoryRow {
  /** 1-based: the data row in a CSV (after the header), the list item in YAML. */
  row: number;
  values: Record<string, string>;
}

/** A FAT/ISO volume label the node looks for (DESIGN.md section 4), upper-case as FAT stores it. */
const LABEL = 'SITE-CONFIG';
/** Fields whose files carry secrets: sealed when the row names the node's public key. */
const SECRET_FIELDS = new Set(['pullSecretFile', 'keyFile']);
const SITE_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The inventory: YAML (`sites:` list of maps, or a bare list) or CSV (a header row, then one row per site). */
export function parseInventory(text: string, fileName: string): InventoryRow[] {
  if (/\.csv$/i.test(fileName)) return parseCsv(text);
  const doc = parse(text) as unknown;
  const list = Array.isArray(doc) ? doc : (doc as { sites?: unknown } | null)?.sites;
  if (!Array.isArray(list)) throw new BuildError(`${fileName}: expected a list of sites (or "sites:" with a list), one map of values per site`);
  return list.map((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new BuildError(`${fileName}: site ${i + 1} is not a map of values`);
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(item as Record<string, unknown>)) {
      if (v !== null && typeof v === 'object') throw new BuildError(`${fileName}: site ${i + 1}, ${k}: a value must be a string or a number, not a ${Array.isArray(v) ? 'list' : 'map'}`);
      values[k] = String(v ?? '');
    }
    return { row: i + 1, values };
  });
}

/** RFC 4180 CSV: commas, double-quoted fields with "" for a quote, CRLF or LF. */
function parseCsv(text: string): InventoryRow[] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      if (record.some((f) => f !== '')) records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  record.push(field);
  if (record.some((f) => f !== '')) records.push(record);
  const [header, ...rows] = records;
  if (!header) throw new BuildError('the CSV inventory is empty: it needs a header row (name,…) and one row per site');
  return rows.map((r, i) => {
    if (r.length !== header.length) throw new BuildError(`row ${i + 1}: ${r.length} columns, but the header has ${header.length}`);
    return { row: i + 1, values: Object.fromEntries(header.map((h, j) => [h.trim(), r[j]!.trim()])) };
  });
}

/** The template with every ${column} replaced by the row's value; a placeholder the row lacks is an error. */
export function fillTemplate(template: string, row: InventoryRow): string {
  const missing = new Set<string>();
  const text = template.replace(/\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g, (_, key: string) => {
    const v = row.values[key];
    if (v === undefined || v === '') missing.add(key);
    return v ?? '';
  });
  if (missing.size > 0) throw new BuildError(`${siteOf(row)}: the template needs ${[...missing].map((k) => `\${${k}}`).join(', ')}, which this row does not give`);
  return text;
}

function siteOf(row: InventoryRow): string {
  return `row ${row.row}${row.values.name ? ` (${row.values.name})` : ''}`;
}

/** Every `…File` field of a parsed site-config: its key, where it is, and the path it names. */
function fileFields(value: unknown): { key: string; at: (string | number)[]; ref: string }[] {
  const out: { key: string; at: (string | number)[]; ref: string }[] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    if (v === null || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const here = [...at, Array.isArray(v) ? Number(k) : k];
      if (k.endsWith('File') && typeof child === 'string') out.push({ key: k, at: here, ref: child });
      else walk(child, here);
    }
  };
  walk(value, []);
  return out;
}

function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface BuildOptions {
  host: Host;
  inventoryPath: string;
  templatePath: string;
  outDir: string;
  signingKeyPem?: string;
  formats: readonly ('fat' | 'iso')[];
  /** One volume for every site (site-configs/NAME.yaml, each picked by its spec.match) instead of one per site. */
  multiNode?: boolean;
  /** Every timestamp in the images (seconds since 1970). */
  epoch: number;
  progress?: (line: string) => void;
}

export interface ManifestEntry {
  site: string;
  row: number;
  match: MachineMatch;
  sealedFor?: string;
  images: { file: string; format: 'fat' | 'iso'; bytes: number; sha256: string }[];
}

/** The tools the images need, each named with the Debian/RHEL package that has it. */
const TOOLS = { fat: [['mkfs.fat', 'dosfstools'], ['mcopy', 'mtools']], iso: [['xorriso', 'xorriso']] } as const;

async function checkTools(host: Host, formats: readonly ('fat' | 'iso')[]): Promise<void> {
  for (const f of formats) {
    for (const [tool, pkg] of TOOLS[f]) {
      const res = await host.run('sh', ['-c', `command -v ${tool}`], { timeoutMs: 10_000 });
      if (res.code !== 0) throw new BuildError(`${tool} is not installed; install the ${pkg} package (it makes the ${f === 'fat' ? 'FAT' : 'ISO 9660'} images)`);
    }
  }
}

/** Files under `dir` (relative, sorted), for the images and the times. */
async function treeOf(host: Host, dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await host.listDir(path.posix.join(dir, rel))).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    if ((await host.stat(path.posix.join(dir, p)))?.kind === 'directory') out.push(p, ...(await treeOf(host, dir, p)));
    else out.push(p);
  }
  return out;
}

export async function buildMedia(opts: BuildOptions): Promise<ManifestEntry[]> {
  const { host } = opts;
  const out = path.resolve(opts.outDir);
  if (await host.exists(out)) throw new BuildError(`${opts.outDir} exists already: give a new folder (the build never writes into an old one)`);
  await checkTools(host, opts.formats);
  const rows = parseInventory((await host.readFile(opts.inventoryPath)).toString('utf8'), opts.inventoryPath);
  if (rows.length === 0) throw new BuildError(`${opts.inventoryPath} lists no site`);
  const template = (await host.readFile(opts.templatePath)).toString('utf8');
  const templateDir = path.dirname(path.resolve(opts.templatePath));
  const signer = opts.signingKeyPem ? signerOf(opts.signingKeyPem) : undefined;

  const staging = `${out}.partial-${process.pid}`;
  await host.remove(staging);
  await host.mkdirp(staging, 0o755);
  try {
    const seen = new Set<string>();
    const manifest: ManifestEntry[] = [];
    for (const row of rows) {
      const name = row.values.name ?? '';
      if (!SITE_NAME.test(name)) throw new BuildError(`${siteOf(row)}: name must be a lower-case DNS label (letters, digits, '-'), it names the image files`);
      if (seen.has(name)) throw new BuildError(`${siteOf(row)}: the name ${name} is given twice`);
      seen.add(name);
      const volume = path.posix.join(staging, 'work', opts.multiNode ? 'all' : name);
      const layout: Layout = opts.multiNode ? { volume, config: `${MULTI_DIR}/${name}.yaml`, refPrefix: `${name}/` } : { volume, config: 'site-config.yaml', refPrefix: '' };
      const entry = await buildSite(opts, row, name, template, templateDir, layout, signer);
      if (opts.multiNode && Object.keys(entry.match).length === 0) throw new BuildError(`${siteOf(row)}: on a volume for several nodes every site-config needs spec.match, or it would fit every machine`);
      if (!opts.multiNode) await writeImages(opts, volume, name, staging, entry);
      manifest.push(entry);
      if (!opts.multiNode) opts.progress?.(`${name}: ${entry.images.map((i) => i.file).join(', ')}`);
    }
    if (opts.multiNode) {
      const shared: ManifestEntry = { site: 'sites', row: 0, match: {}, images: [] };
      await writeImages(opts, path.posix.join(staging, 'work', 'all'), 'sites', staging, shared);
      for (const e of manifest) e.images = shared.images;
      opts.progress?.(`${manifest.length} site-configs on one volume: ${shared.images.map((i) => i.file).join(', ')}`);
    }
    await host.remove(path.posix.join(staging, 'work'));
    await host.writeFileAtomic(path.posix.join(staging, 'manifest.json'), `${JSON.stringify({ label: LABEL, sourceDateEpoch: opts.epoch, sites: manifest }, null, 2)}\n`);
    await host.writeFileAtomic(path.posix.join(staging, 'manifest.txt'), manifestTable(manifest));
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

async function writeImages(opts: BuildOptions, volume: string, name: string, staging: string, entry: ManifestEntry): Promise<void> {
  for (const format of opts.formats) {
    const file = `${name}.${format === 'fat' ? 'fat.img' : 'iso'}`;
    const image = path.posix.join(staging, file);
    if (format === 'fat') await fatImage(opts.host, volume, image, opts.epoch);
    else await isoImage(opts.host, volume, image, opts.epoch);
    const bytes = await opts.host.readFile(image);
    entry.images.push({ file, format, bytes: bytes.length, sha256: sha256(bytes) });
  }
}

interface Signer {
  sign(data: Buffer): string;
  publicKeyPem: string;
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
  return {
    // Ed25519 signatures are deterministic; ECDSA ones are not (a fresh nonce each time): with a P-256 key the
    // images differ from build to build in their .sig file only.
    sign: (data) => sign(ed ? null : 'sha256', data, key).toString('base64'),
    publicKeyPem: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** One site's folder: the filled template, its files (sealed when asked), pins and signature; then validated. */
async function buildSite(opts: BuildOptions, row: InventoryRow, name: string, template: string, templateDir: string, layout: Layout, signer: Signer | undefined): Promise<ManifestEntry> {
  const { host } = opts;
  const text = fillTemplate(template, row);
  let doc;
  try {
    doc = parseDocument(text);
  } catch (e) {
    throw new BuildError(`${siteOf(row)}: the filled template is not YAML (${(e as Error).message})`, { cause: e });
  }
  if (doc.errors.length > 0) throw new BuildError(`${siteOf(row)}: the filled template is not YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  const nodeKeyFile = row.values.nodePublicKey;
  const nodeKey = nodeKeyFile ? (await host.readFile(path.resolve(path.dirname(path.resolve(opts.inventoryPath)), nodeKeyFile))).toString('utf8') : undefined;
  const configDir = path.posix.dirname(path.posix.join(layout.volume, layout.config));
  await host.mkdirp(configDir, 0o755);
  const pins: Record<string, string> = {};
  for (const { key, at, ref } of fileFields(doc.toJS())) {
    const source = path.resolve(templateDir, ref);
    if (!source.startsWith(`${templateDir}${path.sep}`)) throw new BuildError(`${siteOf(row)}: ${key} '${ref}' is outside the template's folder`);
    let data: Buffer;
    try {
      data = await host.readFile(source);
    } catch {
      throw new BuildError(`${siteOf(row)}: ${key} names '${ref}', which is not beside the template`);
    }
    const named = `${layout.refPrefix}${path.posix.normalize(ref)}`;
    if (layout.refPrefix) doc.setIn(at, named);
    const sealed = nodeKey !== undefined && SECRET_FIELDS.has(key);
    const onMedia = sealed ? sealFile(data, named, nodeKey, name) : data;
    const target = path.posix.join(configDir, `${named}${sealed ? SEALED_SUFFIX : ''}`);
    await host.mkdirp(path.posix.dirname(target), 0o755);
    await host.writeFileAtomic(target, onMedia, 0o644);
    pins[named] = sha256(onMedia);
  }
  if (signer && Object.keys(pins).length > 0) doc.setIn(['spec', 'sha256'], pins);
  const final = Buffer.from(signer || layout.refPrefix ? doc.toString() : text);
  const configPath = path.posix.join(layout.volume, layout.config);
  await host.writeFileAtomic(configPath, final, 0o644);
  if (signer) await host.writeFileAtomic(`${configPath}.sig`, `${signer.sign(final)}\n`, 0o644);

  // The node's own judgement, with the signature required as on a node that trusts this key.
  const reports = await validateEveryCandidate(host.resolve(layout.volume), { host, ...(signer ? { trusted: trustedKeysFrom([{ file: 'the signing key', pem: signer.publicKeyPem }]) } : {}) });
  const report = reports.find((r) => r.display === layout.config || reports.length === 1);
  if (!report || !report.valid) {
    const problems = (report?.errors ?? []).map((p) => `${p.path}: ${p.message}`);
    throw new BuildError(`${siteOf(row)}: the site-config is invalid — ${problems.join('; ') || 'it could not be read'}`);
  }
  return { site: name, row: row.row, match: report.match ?? {}, ...(nodeKey ? { sealedFor: keyFingerprint(nodeKey) } : {}), images: [] };
}

/** A FAT image just big enough (at least a 1.44 MB floppy's size), labelled SITE-CONFIG, `dd`-able to a stick. */
async function fatImage(host: Host, siteDir: string, image: string, epoch: number): Promise<void> {
  const files = await treeOf(host, siteDir);
  let bytes = 0;
  for (const f of files) bytes += (await host.stat(path.posix.join(siteDir, f)))?.size ?? 0;
  const kib = Math.max(1440, Math.ceil((bytes * 2) / 1024) + 512);
  // The volume serial from the content, not the clock: --invariant fixes the rest of mkfs.fat's output.
  const serial = sha256(files.join('\0') + bytes).slice(0, 8);
  const env = { SOURCE_DATE_EPOCH: String(epoch) };
  await runTool(host, 'mkfs.fat', ['-C', '-n', LABEL, '-i', serial, '--invariant', host.toolPath(image), String(kib)], env);
  const top = files.filter((f) => !f.includes('/'));
  await runTool(host, 'mcopy', ['-s', '-i', host.toolPath(image), ...top.map((f) => host.toolPath(path.posix.join(siteDir, f))), '::/'], env);
}

/** An ISO 9660 image with Joliet and Rock Ridge names, volume ID SITE-CONFIG, for BMC virtual media. */
async function isoImage(host: Host, siteDir: string, image: string, epoch: number): Promise<void> {
  const files = await treeOf(host, siteDir);
  // File times come from the files themselves: set them all to the build's epoch.
  await runTool(host, 'touch', ['-h', '-d', `@${epoch}`, host.toolPath(siteDir), ...files.map((f) => host.toolPath(path.posix.join(siteDir, f)))], {});
  await runTool(host, 'xorriso', ['-as', 'mkisofs', '-quiet', '-V', LABEL, '-J', '-r', '-o', host.toolPath(image), host.toolPath(siteDir)], { SOURCE_DATE_EPOCH: String(epoch) });
}

async function runTool(host: Host, cmd: string, args: string[], env: Record<string, string>): Promise<void> {
  try {
    await host.runChecked(cmd, args, { timeoutMs: 120_000, env });
  } catch (e) {
    if (e instanceof CommandError) throw new BuildError(`${cmd} failed: ${e.detail}`, { cause: e });
    throw e;
  }
}

function manifestTable(entries: readonly ManifestEntry[]): string {
  const lines = ['site\timage\tbytes\tsha256\tfor'];
  for (const e of entries) {
    const forWhom = Object.entries(e.match).map(([k, v]) => `${k}=${String(v)}`).join(' ') || 'any machine';
    for (const i of e.images) lines.push(`${e.site}\t${i.file}\t${i.bytes}\t${i.sha256}\t${forWhom}${e.sealedFor ? ` (secrets sealed for ${e.sealedFor})` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
