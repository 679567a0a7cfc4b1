// Reading site-config files from media: paths are on this machine (a mounted volume, the drop directory or a
// path given to `validate`), not under the host root, so this module uses node:fs directly. A referenced file
// must stay inside the site-config's directory and no name on its way there may be a symbolic link (the node's
// copy of the media follows none): the lexical, realpath and link checks all happen BEFORE anything is opened,
// the open refuses a symlink swapped in meanwhile (O_NOFOLLOW) and FIFOs/devices are never opened (they could
// block or be endless).
import { constants as fsc, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { MAX_FILE_BYTES } from './parse-text';

export type ReadOutcome = { ok: true; bytes: Buffer; realPath: string } | { ok: false; message: string };

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * Reads a regular file of at most MAX_FILE_BYTES; `realPath` must already be free of symbolic links. Messages
 * start with `shown` (how the file is named to the user), or with the verb when `shown` is ''.
 */
export async function readRegularFile(realPath: string, shown: string): Promise<ReadOutcome> {
  const subject = shown === '' ? '' : `${shown} `;
  let st;
  try {
    st = await fs.lstat(realPath);
  } catch (e) {
    return { ok: false, message: fsMessage(e, subject) };
  }
  if (!st.isFile()) return { ok: false, message: `${subject}is not a regular file` };
  if (st.size > MAX_FILE_BYTES) return { ok: false, message: `${subject}is ${st.size} bytes; files on site-config media are limited to 1 MiB` };
  let fh;
  try {
    fh = await fs.open(realPath, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch (e) {
    return { ok: false, message: fsMessage(e, subject) };
  }
  try {
    // Read one byte past the limit: a file that grew after stat is still caught.
    const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_FILE_BYTES) return { ok: false, message: `${subject}is larger than 1 MiB, the limit for files on site-config media` };
    }
    return { ok: true, bytes: buf.subarray(0, total), realPath };
  } catch (e) {
    return { ok: false, message: fsMessage(e, subject) };
  } finally {
    await fh.close();
  }
}

/**
 * Reads `ref` (as written in the site-config, relative to `baseDir`) only if it resolves to a regular file
 * inside `rootDir`. Both directories must be real paths (fs.realpath).
 */
export async function readConfinedFile(rootDir: string, baseDir: string, ref: string): Promise<ReadOutcome> {
  if (path.isAbsolute(ref)) return { ok: false, message: `'${ref}' is an absolute path; write it relative to the site-config file` };
  const candidate = path.resolve(baseDir, ref);
  if (!isInside(rootDir, candidate)) return { ok: false, message: `'${ref}' points outside the site-config directory; referenced files must be on the same media, next to or below the site-config` };
  let real: string;
  try {
    real = await fs.realpath(candidate);
  } catch (e) {
    return { ok: false, message: fsMessage(e, `'${ref}' `) };
  }
  if (!isInside(rootDir, real)) return { ok: false, message: `'${ref}' is a symbolic link that resolves outside the site-config directory; it is not read` };
  const link = await linkOnPath(rootDir, candidate);
  if (link !== undefined) return { ok: false, message: `'${ref}' ${link === path.relative(rootDir, candidate) ? 'is' : `is read through ${link}, which is`} a symbolic link; links on site-config media are not followed (the node refuses them): copy the real ${link === path.relative(rootDir, candidate) ? 'file' : 'folder'} there` };
  return readRegularFile(real, `'${ref}'`);
}

/**
 * The first name on the way from `rootDir` to `candidate` that is a symbolic link (relative to `rootDir`), if any:
 * lstat looks at the last name only, and a node copying the media follows no link at all (media.ts).
 */
async function linkOnPath(rootDir: string, candidate: string): Promise<string | undefined> {
  const parts = path.relative(rootDir, candidate).split(path.sep);
  for (let i = 1; i <= parts.length; i++) {
    const rel = parts.slice(0, i).join(path.sep);
    const st = await fs.lstat(path.join(rootDir, rel)).catch(() => undefined);
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) return rel;
  }
  return undefined;
}

/** Resolves `p` to its real path when it exists, else undefined. */
export async function realPathIfExists(p: string): Promise<string | undefined> {
  try {
    return await fs.realpath(p);
  } catch {
    return undefined;
  }
}

export async function statKind(p: string): Promise<'file' | 'directory' | 'other' | 'missing'> {
  try {
    const st = await fs.stat(p);
    return st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
  } catch {
    return 'missing';
  }
}

/** Whether `p` itself (not what it leads to) is a symbolic link. */
export async function isSymbolicLink(p: string): Promise<boolean> {
  return fs.lstat(p).then((st) => st.isSymbolicLink(), () => false);
}

export async function listDirectory(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).sort();
  } catch {
    return [];
  }
}

export { isInside };

/** `subject` is '' or ends with a space. */
function fsMessage(e: unknown, subject: string): string {
  switch ((e as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return `${subject}does not exist`;
    case 'EACCES':
    case 'EPERM':
      return `${subject}cannot be read (permission denied)`;
    case 'ELOOP':
      return `${subject}is a symbolic link loop, or was replaced by a symbolic link`;
    case 'EISDIR':
      return `${subject}is a directory, not a file`;
    case 'ENOTDIR':
      return `${subject}does not exist (a path component is not a directory)`;
    default:
      return `${subject}cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
