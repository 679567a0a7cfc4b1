// Reading the site-config off removable media: mount read-only with nosuid,nodev,noexec on a private 0700
// directory, copy into the state directory, unmount at once (the stick may be pulled any time; nothing may
// run from it). A copy of a directory (the drop directory) goes through the same limits.
import * as path from 'node:path';
import { CommandError } from '../host/command-error';
import { fileWhereFolderBelongs, pathKindInWords, type Host, type PathInfo } from '../host/host';
import { MANIFEST_FILE, MAX_DEPTH, MULTI_DIR, SEALED_SUFFIX, SEED_RECONFIGURATION_FILE, SITE_CONFIG_NAMES } from './media-names';

/**
 * The parser, the schema's reference rule and node:crypto, loaded when media are copied, not while the agent waits
 * (issue 39: node:crypto alone is 2 MiB of a waiting agent's memory).
 */
const configReaders = async () => {
  const [{ parseConfigBytes }, { fileReferenceProblem }, { createHash }] = await Promise.all([import('./parse-text'), import('./schema'), import('node:crypto')]);
  return { parseConfigBytes, fileReferenceProblem, createHash };
};

export class MediaError extends Error {
  constructor(message: string, readonly remedy: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MediaError';
  }
}

/** A site-config needs a few small files; a volume full of other data is refused rather than copied. */
export const COPY_LIMITS = { maxFiles: 256, maxFileBytes: 8 * 1024 * 1024, maxTotalBytes: 32 * 1024 * 1024, maxDepth: 6 };

export interface CopyResult {
  files: number;
  bytes: number;
  /** sha256 over every copied relative path and its bytes: tells a changed config from the same one. */
  treeDigest: string;
  /** The sites the copied configs name (metadata.name, or an image-based config's cluster domain): how a technician tells two media apart. */
  sites: string[];
  /** Each file read, with the inodes its bytes came from (a copy of the drop directory only: `track`). */
  reads?: FileRead[];
}

/**
 * A file a copy read: its path, what stat said of the folders above it (top-level first) and of the file itself just
 * before the read, and whether all of them were the same inodes, unchanged, just after it. The drop directory's
 * rename rule judges these, the inodes the bytes came from, not whatever the names hold when it looks.
 */
export interface FileRead {
  rel: string;
  chain: PathInfo[];
  steady: boolean;
}

/** A site's name as the config gives it (bounded): it is shown beside the device it was read from. */
function siteName(value: unknown): string | undefined {
  const v = (value ?? {}) as { metadata?: { name?: unknown }; cluster_name?: unknown; base_domain?: unknown };
  const name = typeof v.metadata?.name === 'string' ? v.metadata.name : typeof v.cluster_name === 'string' ? `${v.cluster_name}.${String(v.base_domain)}` : undefined;
  return name?.slice(0, 80);
}

const MOUNT_BASE = '/run/sno-reconfigure';

/** The filesystems README "Preparing the media" documents; anything else is refused by name, never probed. */
export const READABLE_FILESYSTEMS = ['vfat', 'ext4', 'iso9660', 'udf'];

const REMOVED_REMEDY = 'Re-insert the media and leave it in until the console says it was read.';
const ONLY_CONFIG_REMEDY = 'Put only the site-config and the files it names on the media.';

/** Something that was there a moment ago is gone: the media was pulled, or the drop directory emptied. */
function vanished(what: string): MediaError {
  return new MediaError(`was removed while it was being read (${what} disappeared)`, REMOVED_REMEDY);
}

function notAFile(rel: string, info: PathInfo): MediaError {
  const what = info.kind === 'symlink' ? 'a symbolic link' : (info.special ?? `a ${info.kind}`);
  const want = info.kind === 'file' ? 'folder' : 'file';
  return new MediaError(`holds ${rel} as ${what}, not a ${want}; copy the real ${want} onto it`, 'Links and devices on the media are never followed.');
}

function under(dir: string, rel: string): string {
  return rel ? path.posix.join(dir, rel) : dir;
}

/** A name a technician's copy tool leaves while it writes: never taken, however long it stays. */
export function isPartialCopyName(name: string): boolean {
  return name.startsWith('.') || /\.(tmp|part)$/i.test(name);
}

/**
 * A copy at work: the writer contract's names (*.part, *.tmp), the temporary names copy tools give a file until they
 * rename it (WinSCP *.filepart, browsers' *.crdownload, *.download and *.partial, rsync's `.<name>.XXXXXX`: the eighth
 * hostile re-test of issue 36 had last month's config taken beside each). Other dotfiles are an editor's or a tool's own.
 */
const RSYNC_TEMPORARY = /^\.[^.].*\.[A-Za-z0-9]{6}$/;
const TEMPORARY_ENDING = /\.(tmp|part|filepart|crdownload|download|partial)$/i;
const isCopyAtWork = (rel: string): boolean => {
  const name = path.posix.basename(rel);
  return RSYNC_TEMPORARY.test(name) || (!name.startsWith('.') && TEMPORARY_ENDING.test(name));
};

/** The names in a folder of the drop directory; none when it is not a folder (any more): what it is instead is said where it is read. */
export async function dropDirNames(host: Host, dirNode: string): Promise<string[]> {
  return host.listDir(dirNode).catch((e: unknown) => {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw e;
  });
}

/** Copies not renamed to their final names yet, alone (`only`) or beside the files they would replace: said with the way out. */
function copiesAtWork(atWork: string[], only: boolean): MediaError {
  const sorted = [...atWork].sort((a, b) => a.localeCompare(b));
  const first = sorted[0]!;
  const list = `${sorted.slice(0, 3).join(', ')}${sorted.length > 3 ? ` and ${sorted.length - 3} more` : ''}`;
  const one = sorted.length === 1;
  const message = only
    ? one ? `holds only a copy not renamed to its final name yet (${list}), so it has no site-config.yaml` : `holds only copies not renamed to their final names yet (${list}), so it has no site-config.yaml`
    : one ? `holds a copy not renamed to its final name yet (${list}), beside the files it would replace, so none of them is used` : `holds copies not renamed to their final names yet (${list}), beside the files they would replace, so none of them is used`;
  // Beside the files it would replace, renaming it is no way out: it may be no copy at all (a backup named like rsync's
  // `.<name>.XXXXXX`, the fourteenth hostile re-test of issue 36), and mv would put it over today's file.
  return new MediaError(message, only
    ? `Once the copy has finished, rename it to its final name (mv ${first} ${finalNameOf(first)}); if it was left by a copy that failed, remove it.`
    : `Let the copy finish (the copy tool renames it to its final name), or copy the files again; if ${first} is no copy at work (a backup kept there, say), remove it or move it elsewhere.`);
}

/** The name a copy at work will have: rsync's `.<name>.XXXXXX` without its dot and suffix, the others without their ending. */
function finalNameOf(rel: string): string {
  const base = path.posix.basename(rel);
  return path.posix.join(path.posix.dirname(rel), RSYNC_TEMPORARY.test(base) ? base.slice(1, -7) : base.replace(TEMPORARY_ENDING, ''));
}

/**
 * On a stick or an image (the drop directory is walked whole before its copy): a copy at work that would become a
 * file this config reads is the copy onto the media that did not finish, beside last time's file (the tenth hostile
 * re-test of issue 36 had last month's config taken beside today's `.site-config.yaml.Xy12Ab`). Only the config's own
 * folders are looked at: a reused stick's other files, finished or not, are not the config's.
 */
async function unfinishedCopiesOf(host: Host, fromNode: string, copied: ReadonlySet<string>, caseInsensitive: boolean): Promise<void> {
  // On FAT a name has no case: `.SITE-CONFIG.YAML.Ab12Cd` becomes site-config.yaml (the twelfth hostile re-test).
  const fold = (rel: string) => (caseInsensitive ? rel.toLowerCase() : rel);
  const reads = new Set([...copied, ...TOP_LEVEL_NAMES].map(fold));
  // Every config in site-configs/ is read, so a copy at work there is one even under a name not seen yet (the twelfth:
  // November's config on its way was passed over, and October's applied).
  const becomesRead = (rel: string) => reads.has(fold(finalNameOf(rel))) || (fold(path.posix.dirname(rel)) === MULTI_DIR && /\.(ya?ml|json)(\.sig)?$/i.test(finalNameOf(rel)));
  const atWork: string[] = [];
  const folders = new Set(['', MULTI_DIR, ...[...copied].map((f) => path.posix.dirname(f)).filter((d) => d !== '.')]);
  for (const dir of folders) {
    const onMedia = caseInsensitive ? ((await caselessPath(host, fromNode, dir)) ?? dir) : dir;
    for (const n of (await host.listDir(under(fromNode, onMedia)).catch((): string[] => [])).filter(isCopyAtWork)) {
      const rel = onMedia === '' ? n : `${onMedia}/${n}`;
      if (becomesRead(rel)) atWork.push(rel);
    }
  }
  if (atWork.length > 0) throw copiesAtWork(atWork, false);
}

const TOP_LEVEL_NAMES = [...SITE_CONFIG_NAMES, ...SITE_CONFIG_NAMES.map((n) => `${n}.sig`), MULTI_DIR];

/**
 * The top-level entries that make up a site-config, as (name on the media, name in the copy). On FAT a name
 * matches whatever its case (FAT treats SITE-CONFIG.YAML and site-config.yaml as one name; Windows shows either).
 */
function configEntries(names: string[], caseInsensitive: boolean): [string, string][] {
  const out: [string, string][] = [];
  for (const name of names) {
    const canonical = TOP_LEVEL_NAMES.find((n) => n === name || (caseInsensitive && n.toLowerCase() === name.toLowerCase()));
    if (canonical && !out.some(([, c]) => c === canonical)) out.push([name, canonical]);
  }
  return out;
}

/** Every `...File` value and `...Files` entry of a parsed site-config (the schema's file references all end so), relative to `dir`. */
function referencedFiles(value: unknown, dir: string, fileReferenceProblem: (ref: string) => string | undefined): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > MAX_DEPTH || v === null || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      // A reference the schema refuses (too long, control characters) is its to report: it is never looked up.
      const refs = k.endsWith('File') && typeof child === 'string' ? [child] : k.endsWith('Files') && Array.isArray(child) ? child : undefined;
      if (!refs) {
        walk(child, depth + 1);
        continue;
      }
      for (const ref of refs) {
        if (typeof ref !== 'string' || path.posix.isAbsolute(ref) || fileReferenceProblem(ref) !== undefined) continue;
        const rel = path.posix.normalize(path.posix.join(dir, ref));
        // Outside the media: validation reports it; nothing outside is ever read.
        if (!rel.startsWith('../') && rel !== '..') out.push(rel);
      }
    }
  };
  walk(value, 0);
  return out;
}

/**
 * Copies the site-config out of a directory tree (node paths): site-config.yaml (or site-configs/) with its
 * signature, and the files the config names — nothing else, so a reused stick with other files on it is fine.
 */
export async function copyTree(host: Host, fromNode: string, toNode: string, limits = COPY_LIMITS, opts: CopyOptions = {}): Promise<CopyResult> {
  const { parseConfigBytes, fileReferenceProblem, createHash } = await configReaders();
  const hash = createHash('sha256');
  let files = 0;
  let bytes = 0;
  const copied = new Set<string>();
  const sites: string[] = [];
  const reads: FileRead[] | undefined = opts.track ? [] : undefined;
  const copyFile = async (fromRel: string, toRel: string): Promise<Buffer | undefined> => {
    // On FAT a name has no case: `PS.JSON` on the stick is the config's `ps.json` (copied under the config's name).
    if (opts.caseInsensitive) fromRel = (await caselessPath(host, fromNode, fromRel)) ?? fromRel;
    const folders = (await folderChain(host, fromNode, fromRel)) ?? [];
    const info = await host.stat(under(fromNode, fromRel));
    // A missing referenced file is the validation's to report (with the field that names it).
    if (copied.has(toRel) || info === undefined || info.kind === 'directory') return undefined;
    if (info.kind !== 'file') throw notAFile(fromRel, info);
    if (toRel.split('/').length > limits.maxDepth) throw new MediaError(`nests ${toRel} deeper than ${limits.maxDepth} levels`, ONLY_CONFIG_REMEDY);
    if (++files > limits.maxFiles) throw new MediaError(`holds more than ${limits.maxFiles} site-config files`, ONLY_CONFIG_REMEDY);
    if (info.size > limits.maxFileBytes) throw new MediaError(`holds ${fromRel} of ${info.size} bytes, more than a site-config file can be (${limits.maxFileBytes})`, ONLY_CONFIG_REMEDY);
    bytes += info.size;
    if (bytes > limits.maxTotalBytes) throw new MediaError(`holds more than ${limits.maxTotalBytes} bytes of site-config files`, ONLY_CONFIG_REMEDY);
    const data = await host.readFile(under(fromNode, fromRel));
    if (reads) {
      const chain = [...folders, info];
      const after = [...((await folderChain(host, fromNode, fromRel)) ?? []), await host.stat(under(fromNode, fromRel))];
      reads.push({ rel: fromRel, chain, steady: chain.every((x, i) => after[i]?.ino === x.ino && after[i]?.ctimeMs === x.ctimeMs) });
    }
    copied.add(toRel);
    hash.update(`${toRel}\0${data.length}\0`).update(data);
    await host.mkdirp(path.posix.dirname(under(toNode, toRel)), 0o700);
    await host.writeFileAtomic(under(toNode, toRel), data, 0o600);
    return data;
  };
  const copyConfig = async (fromRel: string, toRel: string) => {
    const data = await copyFile(fromRel, toRel);
    await copyFile(`${fromRel}.sig`, `${toRel}.sig`);
    if (!data) return;
    const parsed = parseConfigBytes(data);
    if (!parsed.ok) return;
    const site = siteName(parsed.value);
    if (site !== undefined) sites.push(site);
    // A referenced file may be on the media sealed to this node (X.sealed): it is copied as it is, still sealed.
    for (const ref of referencedFiles(parsed.value, path.posix.dirname(toRel) === '.' ? '' : path.posix.dirname(toRel), fileReferenceProblem)) {
      // A folder of manifests (`extra-manifests/`): its manifest files, as validation reads them.
      if (ref.endsWith('/')) await folderChain(host, fromNode, ref);
      const folder = ref.endsWith('/') || (await host.stat(under(fromNode, ref)))?.kind === 'directory';
      const files = folder ? (await host.listDir(under(fromNode, ref)).catch(() => [])).filter((n) => MANIFEST_FILE.test(n)).map((n) => path.posix.join(ref, n)) : [ref, `${ref}${SEALED_SUFFIX}`];
      for (const file of files) await copyFile(file, file);
    }
  };

  if ((await host.stat(fromNode))?.kind !== 'directory') throw vanished('the media');
  const names = await host.listDir(fromNode);
  // The drop directory (`track`): a copy at work beside the files it would replace is today's config on its way, so
  // none of what is there is used (the seventh hostile re-test of issue 36: last month's renamed-in file was taken
  // beside today's stalled site-config.yaml.part).
  // At any depth (the ninth: a copy at work inside cluster-configuration/, extra-manifests/ or a network file's folder
  // was not looked at, and the config beside it was taken).
  if (opts.track) {
    const atWork: string[] = [];
    const walk = async (rel: string, depth: number): Promise<void> => {
      if (depth > COPY_LIMITS.maxDepth) return;
      for (const n of await dropDirNames(host, under(fromNode, rel))) {
        const child = rel === '' ? n : `${rel}/${n}`;
        if (isCopyAtWork(n)) atWork.push(child);
        else if (!isPartialCopyName(n) && (await host.stat(under(fromNode, child)))?.kind === 'directory') await walk(child, depth + 1);
      }
    };
    await walk('', 0);
    if (atWork.length > 0 && names.some((n) => !isPartialCopyName(n))) throw copiesAtWork(atWork, false);
  }
  await host.mkdirp(toNode, 0o700);
  const entries = configEntries(names, opts.caseInsensitive ?? false);
  // Image-based install's configuration ISO: manifest.json (and its .sig), the mirror sets beside it and extra-manifests/.
  if (!entries.some(([, c]) => !c.endsWith('.sig')) && (await host.stat(under(fromNode, SEED_RECONFIGURATION_FILE)))?.kind === 'file') {
    const seed = await copyFile(SEED_RECONFIGURATION_FILE, SEED_RECONFIGURATION_FILE);
    // Its signature travels with it, as site-config.yaml's does: a node that requires signed media verifies it.
    await copyFile(`${SEED_RECONFIGURATION_FILE}.sig`, `${SEED_RECONFIGURATION_FILE}.sig`);
    const parsed = seed && parseConfigBytes(seed);
    const site = parsed && parsed.ok ? siteName(parsed.value) : undefined;
    if (site !== undefined) sites.push(site);
    for (const dir of ['cluster-configuration/manifests', 'extra-manifests']) {
      if ((await host.stat(under(fromNode, dir)))?.kind !== 'directory') continue;
      for (const n of (await host.listDir(under(fromNode, dir))).filter((x) => MANIFEST_FILE.test(x)).sort()) await copyFile(`${dir}/${n}`, `${dir}/${n}`);
    }
    if (!opts.track) await unfinishedCopiesOf(host, fromNode, copied, opts.caseInsensitive ?? false);
    return { files, bytes, treeDigest: hash.digest('hex'), sites, ...(reads && { reads }) };
  }
  if (!entries.some(([, c]) => !c.endsWith('.sig'))) {
    const shown = names.filter((n) => !isPartialCopyName(n)).sort((a, b) => a.localeCompare(b));
    const list = `${shown.slice(0, 8).join(', ')}${shown.length > 8 ? ` and ${shown.length - 8} more` : ''}`;
    // Windows hides a .txt ending; ext4, ISO 9660 and UDF names have a case.
    const near = shown.find((n) => TOP_LEVEL_NAMES.includes(n.toLowerCase().replace(/\.txt$/, '')));
    const remedy = near ? `Rename ${near} to ${near.toLowerCase().replace(/\.txt$/, '')}.` : 'Copy site-config.yaml (or a site-configs/ folder) to the top of the media.';
    const atWork = names.filter(isCopyAtWork);
    if (shown.length === 0 && atWork.length > 0) throw copiesAtWork(atWork, true);
    throw new MediaError(shown.length === 0 ? 'has no site-config.yaml; no files can be seen on it' : `has no site-config.yaml; it holds: ${list}`, shown.length === 0 ? `${remedy} If the file is there on another computer, pull the stick and insert it again.` : remedy);
  }
  for (const [name, canonical] of entries.sort((a, b) => a[1].localeCompare(b[1]))) {
    if (canonical.endsWith('.sig')) continue;
    if (canonical !== MULTI_DIR) {
      await copyConfig(name, canonical);
      continue;
    }
    const info = await host.stat(under(fromNode, name));
    if (info?.kind !== 'directory') throw info ? notAFile(name, info) : vanished(name);
    const inner = (await host.listDir(under(fromNode, name))).filter((n) => !isPartialCopyName(n) && /\.(ya?ml|json)$/i.test(n)).sort((a, b) => a.localeCompare(b));
    for (const n of inner) await copyConfig(`${name}/${n}`, `${MULTI_DIR}/${n}`);
  }
  if (!opts.track) await unfinishedCopiesOf(host, fromNode, copied, opts.caseInsensitive ?? false);
  return { files, bytes, treeDigest: hash.digest('hex'), sites, ...(reads && { reads }) };
}

/**
 * What stat says of each folder above `rel` (top-level first); undefined when one is missing. Refuses a path whose
 * folder on the media is a symbolic link (issue 36, finding 1): lstat looks at the last name only, so
 * `net -> ../../etc/x` would have `net/network.yaml` read from the node itself. No link is ever followed.
 */
async function folderChain(host: Host, fromNode: string, rel: string): Promise<PathInfo[] | undefined> {
  const parts = rel.split('/');
  const chain: PathInfo[] = [];
  for (let i = 1; i < parts.length; i++) {
    const folder = parts.slice(0, i).join('/');
    const info = await host.stat(under(fromNode, folder));
    if (info === undefined) return undefined;
    if (info.kind !== 'directory') throw new MediaError(`holds ${folder} as ${pathKindInWords(info)}, not a folder, so ${rel} is not read; copy the real folder onto it`, 'Links and devices on the media are never followed.');
    chain.push(info);
  }
  return chain;
}

/** `rel` as it is spelled under `dirNode` when names match whatever their case (FAT); undefined when absent. */
async function caselessPath(host: Host, dirNode: string, rel: string): Promise<string | undefined> {
  let found = '';
  for (const part of rel.split('/')) {
    const names = await host.listDir(under(dirNode, found)).catch((): string[] => []);
    const name = names.includes(part) ? part : names.find((n) => n.toLowerCase() === part.toLowerCase());
    if (name === undefined) return undefined;
    found = found ? `${found}/${name}` : name;
  }
  return found;
}

export interface CopyOptions {
  /** Names match whatever their case (FAT). */
  caseInsensitive?: boolean;
  /** Report each file read with its inodes (`reads`): the drop directory's rename rule judges them. */
  track?: boolean;
}

/** Replaces `toNode` with a fresh copy of `fromNode` (both node paths), atomically (staging dir + rename). */
export async function snapshotInto(host: Host, fromNode: string, toNode: string, opts: CopyOptions = {}): Promise<CopyResult> {
  const staging = `${toNode}.staging`;
  await host.remove(staging);
  try {
    const result = await copyTree(host, fromNode, staging, COPY_LIMITS, opts);
    await host.remove(toNode);
    await host.rename(staging, toNode);
    return result;
  } catch (e) {
    await host.remove(staging);
    if (e instanceof MediaError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new MediaError(`was removed while it was being read (${code ?? 'read error'})`, REMOVED_REMEDY, { cause: e });
  }
}

/**
 * Why mount(8) failed, in words a technician can act on — never mount's own text (it names our private mount
 * point). util-linux says "unknown filesystem type '<type>'" when the kernel has no driver for it
 * (libmount/src/context_mount.c, mnt_context_get_mount_excode, case ENODEV).
 */
async function mountFailure(host: Host, nodeDevice: string, fstype: string, e: CommandError): Promise<MediaError> {
  if (!(await host.exists(nodeDevice))) return vanished('the device');
  if (/unknown filesystem type/.test(e.outputTail)) {
    return new MediaError(`uses ${fstype}, but this node has no driver for ${fstype} (its kernel module is missing)`, 'If another stick came with the node, formatted FAT or ext4, use that one.', { cause: e });
  }
  return new MediaError(`could not be mounted: its ${fstype} filesystem is damaged (mount exit ${e.exitCode})`, 'Pull the stick and insert it again; if that does not help and a second stick came, use that one.', { cause: e });
}

/** The agent's folder for mounting media (on /run, a tmpfs): a file in its place (issue 36, C6) is a sentence, not an internal error. */
async function mountBaseInPlace(host: Host): Promise<void> {
  // A link there would have the agent chmod and mount inside whatever it leads to (the tenth hostile re-test of issue
  // 36 had it set /etc to 0700): said, never followed.
  const info = await host.stat(MOUNT_BASE).catch(() => undefined);
  if (info !== undefined && info.kind !== 'directory' && info.kind !== 'file') {
    throw new MediaError(
      `cannot be read: the agent's folder for reading media, ${MOUNT_BASE}, is ${pathKindInWords(info)}, not a folder`,
      `Move it aside (mv ${MOUNT_BASE} ${MOUNT_BASE}.bad); the agent reads the media again within a minute. A restart of the node clears it too.`,
    );
  }
  try {
    await host.mkdirp(MOUNT_BASE, 0o700);
    await host.chmod(MOUNT_BASE, 0o700);
  } catch (e) {
    if (!fileWhereFolderBelongs(e)) throw e;
    throw new MediaError(
      `cannot be read: the agent's folder for reading media, ${MOUNT_BASE}, is a file, not a folder`,
      `Move the file aside (mv ${MOUNT_BASE} ${MOUNT_BASE}.bad); the agent reads the media again within a minute. A restart of the node clears it too.`,
      { cause: e },
    );
  }
}

/**
 * Mounts `device` (holding `fstype`) read-only on a private directory, snapshots it into `toNode`, unmounts at once.
 * `nodeDevice`: the same device as a node path, to tell a pulled stick from a damaged one.
 */
export async function copyFromVolume(host: Host, device: string, toNode: string, fstype: string | undefined, nodeDevice = device): Promise<CopyResult> {
  // Only what the README documents, and always with -t: mount never guesses a filesystem from hostile bytes.
  if (!fstype || !READABLE_FILESYSTEMS.includes(fstype)) {
    throw new MediaError(`uses ${fstype ?? 'an unknown filesystem'}, which is not a filesystem the node reads; use FAT, ext4, ISO 9660 or UDF`, 'Use a stick formatted FAT (vfat) or ext4, or an ISO 9660 or UDF image.');
  }
  await mountBaseInPlace(host);
  const mountNode = `${MOUNT_BASE}/media-${(await import('node:crypto')).randomBytes(6).toString('hex')}`;
  await host.mkdirp(mountNode, 0o700);
  const args = ['-o', 'ro,nosuid,nodev,noexec', '-t', fstype, device, host.toolPath(mountNode)];
  try {
    await host.runChecked('mount', args, { timeoutMs: 60_000 });
  } catch (e) {
    await host.removeEmptyDir(mountNode).catch(() => undefined);
    if (!(e instanceof CommandError)) throw e;
    throw await mountFailure(host, nodeDevice, fstype, e);
  }
  try {
    return await snapshotInto(host, mountNode, toNode, { caseInsensitive: fstype === 'vfat' });
  } catch (e) {
    // A stick pulled while it was read can look empty or unreadable: say what happened.
    if (e instanceof MediaError && !(await host.exists(nodeDevice))) throw vanished('the device');
    throw e;
  } finally {
    const un = await host.run('umount', [host.toolPath(mountNode)], { timeoutMs: 60_000 });
    // A yanked stick can leave the mount busy or dead: detach it lazily rather than leave it behind.
    if (un.code !== 0) await host.run('umount', ['-l', host.toolPath(mountNode)], { timeoutMs: 60_000 });
    await host.removeEmptyDir(mountNode).catch(() => undefined);
  }
}

/**
 * The drop directory holds files a technician copies over the network, maybe slowly: it is taken only when no
 * process holds a file in it open for writing (a `cp` or `scp` still running, however long it stalls) and nothing
 * in it changed for `stableMs` (an inotify watch wakes the scan; this is the same rule for the periodic rescan).
 * A copy at work (isCopyAtWork) counts as a change like any other entry; other dotfiles are not looked at.
 */
export async function dropDirIsStable(host: Host, dirNode: string, stableMs: number, now = Date.now()): Promise<boolean> {
  const newest = await dropDirNewestChange(host, dirNode, now);
  return newest > 0 && now - newest >= stableMs && (await host.openForWriting(dirNode)).length === 0;
}

/**
 * What stat says of every folder and file the drop directory offers (partial copies and dotfiles left out, no deeper
 * than a copy goes); `withCopiesAtWork`: copies at work too (isCopyAtWork: to be renamed; other dotfiles stay out).
 */
async function eachDropDirEntry(host: Host, dirNode: string, visit: (info: PathInfo) => void, withCopiesAtWork = false): Promise<void> {
  const looked = (n: string) => !isPartialCopyName(n) || (withCopiesAtWork && isCopyAtWork(n));
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > COPY_LIMITS.maxDepth) return;
    for (const name of (await dropDirNames(host, dir)).filter(looked)) {
      const info = await host.stat(path.posix.join(dir, name));
      if (info !== undefined) visit(info);
      if (info?.kind === 'directory') await walk(path.posix.join(dir, name), depth + 1);
    }
  };
  await walk(dirNode, 0);
}

/**
 * When an entry of the drop directory last changed, for the quiet period: its mtime (which a copy that keeps times, or
 * a test, may set back), unless that is no time at all (0 or before: `touch -d @0`, a reproducible build's tar) or later
 * than `now` (`scp -p` or `rsync -t` from a machine whose clock is ahead, or onto a node whose clock fell behind in
 * storage, waited silently until the clock caught up): then its ctime, which only the kernel sets.
 */
const changedAt = (info: PathInfo, now: number): number => (info.mtimeMs > 0 && info.mtimeMs <= now ? info.mtimeMs : info.ctimeMs);

/**
 * The latest change of what the drop directory holds (0 when it holds nothing but dotfiles): a change after it was
 * read means a writer is still at work. Whatever it holds makes it a source, never nothing (the fifth and sixth
 * hostile re-tests of issue 36: a drop directory holding only a link, a FIFO, a file dated 1970 or a folder was no
 * source at all, and last month's stick was taken alone): a link, a FIFO or a folder named like a config is today's
 * config that cannot be read, and a copy at work (isCopyAtWork) is today's config not renamed in yet.
 */
export async function dropDirNewestChange(host: Host, dirNode: string, now = Date.now()): Promise<number> {
  let newest = 0;
  await eachDropDirEntry(host, dirNode, (info) => {
    newest = Math.max(newest, changedAt(info, now));
  }, true);
  return newest;
}

/**
 * The latest inode change in the drop directory, itself included: a file renamed in changes it whatever mtime the
 * copy kept (rsync -t, scp -p), so sources compared before are compared again.
 */
export async function dropDirLastChange(host: Host, dirNode: string): Promise<number> {
  let newest = (await host.stat(dirNode))?.ctimeMs ?? 0;
  await eachDropDirEntry(host, dirNode, (info) => {
    newest = Math.max(newest, info.ctimeMs);
  });
  return newest;
}

/** A name at the top of the drop directory the agent saw renamed in: its inode, and the inode's change time then. */
export interface RenamedIn {
  ino: number;
  ctimeMs: number;
}

/**
 * Files a copy of the drop directory read that nothing shows finished: a writer may still append to them after any
 * pause, so on a node that takes unsigned media (where no signature fails on a prefix) they are not used. A file is
 * finished only when the agent saw it, or the folder at the top of the drop directory it is in, renamed in
 * (`renamedIn`: recorded at the watch's event, kept across the agent's starts) and nothing happened to it since: every
 * change to an inode — a write, a new or removed entry in a folder, a mode, owner, link or times set — moves its
 * change time (ctime), so the top-level entry still has the change time recorded at its rename, and every folder and
 * file below it changed strictly before that rename (the same clock tick counts as after: the remedy, rename it away
 * and back, settles it). A file with another name (a hard link) may be written through that name, and is not finished
 * either. Nothing else counts: a file's own times cannot tell a rename from a chmod or a link. What is judged is what
 * stat said of the inodes the bytes were read from (`reads`), whatever name they had: a file renamed over the one read
 * proves nothing about the bytes taken, and a file the config names is judged whatever its name.
 */
export function dropDirUnfinished(reads: readonly FileRead[], renamedIn: ReadonlyMap<string, RenamedIn>): string[] {
  return reads
    .filter(({ rel, chain }) => {
      const top = chain[0]!;
      const seen = renamedIn.get(rel.split('/')[0]!);
      const unchangedSinceRename = seen !== undefined && seen.ino === top.ino && seen.ctimeMs === top.ctimeMs;
      return !(unchangedSinceRename && chain.slice(1).every((x) => x.ctimeMs < top.ctimeMs) && chain.at(-1)!.nlink === 1);
    })
    .map((r) => r.rel);
}
