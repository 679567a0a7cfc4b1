// The host seam: every file the agent touches and every command it runs goes through a Host, so the same
// code runs against `/` on a node, a temp dir in tests, `/host` inside the podman runtime and a real
// systemd rootfs in the end-to-end tests (DESIGN.md section 2).
import { execFile } from 'node:child_process';
import { promises as fs, constants as fsc, watch } from 'node:fs';
import * as path from 'node:path';
import { CommandError, type CommandErrorOptions } from './command-error';
import { filesOpenForWriting } from './open-files';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Set when the command was killed (timeout or signal). */
  signal?: string;
}

export interface RunOptions {
  input?: string;
  timeoutMs?: number;
  env?: Record<string, string | undefined>;
}

/** What `stat` tells about a node path, without following a symbolic link. */
export interface PathInfo {
  kind: 'file' | 'directory' | 'symlink' | 'other';
  /** What an 'other' entry is, in words (a FIFO, a device …). */
  special?: string;
  size: number;
  mtimeMs: number;
  /** The inode's last change of any kind (a write, a rename, its times or mode set): later than mtimeMs when something but a write came last. */
  ctimeMs: number;
  /** When the inode was made (statx's btime): 0 where the filesystem does not keep it. */
  birthtimeMs: number;
  /** Permission bits (mode & 0o7777). */
  mode: number;
  /** The inode number, and how many names (hard links) it has. */
  ino: number;
  nlink: number;
}

export interface Closable {
  close(): void;
}

export interface Host {
  /** The host root the agent works under (`--root`, default `/`). */
  readonly root: string;
  /** Absolute path on this machine for a node path such as `/etc/issue.d/x` (never escapes the root). */
  resolve(nodePath: string): string;
  /**
   * A node path as a host tool will see it in its arguments: the resolved path when tools run beside us
   * (`path`), the node path itself when they run chrooted into the host root (`chroot`).
   */
  toolPath(nodePath: string): string;
  /** Runs a host tool (systemctl, nmstatectl, mount, ...). Never throws for a non-zero exit. */
  run(cmd: string, args: readonly string[], opts?: RunOptions): Promise<CommandResult>;
  /** Runs a host tool and throws a CommandError unless it exits 0. */
  runChecked(cmd: string, args: readonly string[], opts?: RunOptions & Pick<CommandErrorOptions, 'shown'>): Promise<CommandResult>;
  readFile(nodePath: string): Promise<Buffer>;
  readText(nodePath: string): Promise<string>;
  /** undefined when the file does not exist. */
  readTextIfExists(nodePath: string): Promise<string | undefined>;
  exists(nodePath: string): Promise<boolean>;
  listDir(nodePath: string): Promise<string[]>;
  /** undefined when nothing is there; a symbolic link is reported as one, never followed. */
  stat(nodePath: string): Promise<PathInfo | undefined>;
  /** The target of a symbolic link, as written in the link. */
  readLink(nodePath: string): Promise<string>;
  /** Atomic replace: temp file in the same directory, fsync, rename, fsync the directory. */
  /** `owner`: the file appears under its name already owned by them (never a moment as root's). */
  writeFileAtomic(nodePath: string, data: string | Buffer, mode?: number, owner?: { uid: number; gid: number }): Promise<void>;
  mkdirp(nodePath: string, mode?: number): Promise<void>;
  chmod(nodePath: string, mode: number): Promise<void>;
  /** Changes the owner of a node path (not following a symbolic link). */
  chown(nodePath: string, uid: number, gid: number): Promise<void>;
  /** Moves a file or directory within the node's filesystem (replaces a file; a directory target must not exist). */
  rename(fromNodePath: string, toNodePath: string): Promise<void>;
  /** Removes a file or directory tree; nothing there is fine. */
  remove(nodePath: string): Promise<void>;
  /** Removes a directory only if it is empty (a mount point that may still hold a mount is never emptied). */
  removeEmptyDir(nodePath: string): Promise<void>;
  /**
   * Calls `onChange` when entries in a directory change; undefined when it cannot be watched (missing,
   * or no inotify), so callers fall back to polling.
   */
  /**
   * `event`: 'change' when a file's content changed in place (inotify IN_MODIFY/IN_ATTRIB), 'rename' when a name
   * appeared or went away (created, moved in or out, deleted); `filename` relative to the directory.
   */
  watchDir(nodePath: string, onChange: (event: WatchEvent, filename: string | undefined) => void): Closable | undefined;
  /**
   * The files under a node directory (names relative to it) that a process on the machine holds open for
   * writing: a copy still running. The process table is the machine's (the podman runtime runs --pid=host).
   */
  openForWriting(nodeDir: string): Promise<string[]>;
}

export type WatchEvent = 'change' | 'rename';

/** A mkdirp that failed because something other than a folder stands at the path or on the way to it. */
export function fileWhereFolderBelongs(e: unknown): boolean {
  if (e instanceof WrongKindError) return e.wanted === 'folder';
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'EEXIST' || code === 'ENOTDIR';
}

/**
 * Something other than what the agent needs stands at a node path: a folder, a named pipe or a device where a file
 * belongs (reading a named pipe would wait for a writer for ever), or a file where a folder belongs. Said as a sentence
 * with the path, never as an internal error. `code` is the system's (EISDIR, EEXIST, ENOTDIR) or ENOTFILE.
 */
export class WrongKindError extends Error {
  constructor(
    readonly nodePath: string,
    readonly found: string,
    readonly wanted: 'file' | 'folder',
    readonly code: string,
  ) {
    super(`${nodePath} is ${found} where the agent needs a ${wanted}`);
  }
}

/** What a non-regular entry is, in words. */
function kindInWords(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isBlockDevice(): boolean; isCharacterDevice(): boolean }): string {
  return st.isDirectory() ? 'a folder' : st.isFIFO() ? 'a named pipe (FIFO)' : st.isSocket() ? 'a socket' : st.isBlockDevice() ? 'a block device' : st.isCharacterDevice() ? 'a character device' : 'not a regular file';
}

/** What stat found at a path, in words: a file, a folder, a symbolic link, or the special entry it is. */
export function pathKindInWords(info: PathInfo): string {
  return info.kind === 'file' ? 'a file' : info.kind === 'directory' ? 'a folder' : info.kind === 'symlink' ? 'a symbolic link' : (info.special ?? 'not a regular file');
}

/** Why a read failed, in words: what stands there, or the system's reason. */
export function whyUnreadable(e: unknown): string {
  if (e instanceof WrongKindError) return `it is ${e.found}, not a ${e.wanted}`;
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ELOOP') return 'a symbolic link that leads back to itself';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  return `a read error (${code ?? 'unknown'})`;
}

/**
 * An error of a write or mkdir at `nodePath` (resolved: `hostPath`) as a WrongKindError when the cause is what
 * stands there: a folder where the file goes, or a file where a folder on the way belongs (the nearest such entry).
 */
async function wrongKind(e: unknown, nodePath: string, hostPath: string, wanted: 'file' | 'folder'): Promise<unknown> {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EISDIR') return new WrongKindError(nodePath, 'a folder', 'file', code);
  // ELOOP and ENOENT too: a symbolic link that leads back to itself, or to nothing, where a folder belongs (the second
  // hostile re-test of issue 36: at the state or drop directory, an internal error at every start).
  if (code !== 'EEXIST' && code !== 'ENOTDIR' && code !== 'ELOOP' && code !== 'ENOENT') return e;
  let [node, host] = wanted === 'folder' ? [nodePath, hostPath] : [path.posix.dirname(nodePath), path.dirname(hostPath)];
  for (;;) {
    const st = await fs.lstat(host).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      const target = await fs.stat(host).catch((err: NodeJS.ErrnoException) => err.code);
      if (typeof target === 'string') return new WrongKindError(node, target === 'ELOOP' ? 'a symbolic link that leads back to itself' : 'a symbolic link to nothing', 'folder', code);
    } else if (st !== undefined && !st.isDirectory()) return new WrongKindError(node, st.isFile() ? 'a file' : kindInWords(st), 'folder', code);
    if (node === '/' || node === '.') return e;
    [node, host] = [path.posix.dirname(node), path.dirname(host)];
  }
}

export interface LocalHostOptions {
  root?: string;
  /**
   * How host tools are reached. `path`: from PATH as given (a node, or tests with stand-in tools first
   * on PATH). `chroot`: `chroot <root> cmd ...` — the podman runtime, where the host is mounted at /host.
   */
  tools?: 'path' | 'chroot';
  env?: NodeJS.ProcessEnv;
  /** The machine's process table (default /proc: never under the host root, which may be a test directory). */
  procDir?: string;
}

export function resolveUnderRoot(root: string, nodePath: string): string {
  const normalized = path.posix.normalize(`/${nodePath}`);
  return root === '/' ? normalized : path.join(root, normalized);
}

export class LocalHost implements Host {
  readonly root: string;
  private readonly tools: 'path' | 'chroot';
  private readonly env: NodeJS.ProcessEnv;
  private readonly procDir: string;

  constructor(opts: LocalHostOptions = {}) {
    this.root = path.resolve(opts.root ?? '/');
    this.procDir = opts.procDir ?? '/proc';
    this.tools = opts.tools ?? 'path';
    this.env = opts.env ?? process.env;
  }

  resolve(nodePath: string): string {
    return resolveUnderRoot(this.root, nodePath);
  }

  toolPath(nodePath: string): string {
    return this.tools === 'chroot' ? path.posix.normalize(`/${nodePath}`) : this.resolve(nodePath);
  }

  run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<CommandResult> {
    const [file, argv] = this.tools === 'chroot' && this.root !== '/' ? ['chroot', [this.root, cmd, ...args]] : [cmd, [...args]];
    return new Promise((resolve) => {
      const child = execFile(
        file,
        argv,
        { env: { ...this.env, ...opts.env }, timeout: opts.timeoutMs ?? 0, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
        (err, stdout, stderr) => {
          if (!err) return resolve({ code: 0, stdout, stderr });
          const e = err as NodeJS.ErrnoException & { code?: number | string; signal?: string; killed?: boolean };
          if (typeof e.code === 'string') {
            // spawn failure (ENOENT: tool missing) — report like a shell would (127).
            return resolve({ code: 127, stdout, stderr: `${stderr}${cmd}: ${e.message}` });
          }
          resolve({ code: typeof e.code === 'number' ? e.code : 1, stdout, stderr, ...(e.signal ? { signal: e.signal } : {}) });
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  async runChecked(cmd: string, args: readonly string[], opts: RunOptions & Pick<CommandErrorOptions, 'shown'> = {}): Promise<CommandResult> {
    const result = await this.run(cmd, args, opts);
    if (result.code !== 0) throw new CommandError(cmd, args, result, opts.shown === undefined ? {} : { shown: opts.shown });
    return result;
  }

  async readFile(nodePath: string): Promise<Buffer> {
    // Opened without waiting (a named pipe opens at once) and checked before a byte is read.
    const fh = await fs.open(this.resolve(nodePath), fsc.O_RDONLY | fsc.O_NONBLOCK).catch((e: NodeJS.ErrnoException) => {
      // A socket cannot be opened at all (ENXIO); a symbolic link that leads back to itself neither (ELOOP).
      if (e.code === 'ENXIO') throw new WrongKindError(nodePath, 'a socket', 'file', e.code);
      if (e.code === 'ELOOP') throw new WrongKindError(nodePath, 'a symbolic link that leads back to itself', 'file', e.code);
      throw e;
    });
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new WrongKindError(nodePath, kindInWords(st), 'file', st.isDirectory() ? 'EISDIR' : 'ENOTFILE');
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  }

  async readText(nodePath: string): Promise<string> {
    return (await this.readFile(nodePath)).toString('utf8');
  }

  async readTextIfExists(nodePath: string): Promise<string | undefined> {
    try {
      return await this.readText(nodePath);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async exists(nodePath: string): Promise<boolean> {
    try {
      await fs.access(this.resolve(nodePath), fsc.F_OK);
      return true;
    } catch {
      return false;
    }
  }

  async listDir(nodePath: string): Promise<string[]> {
    try {
      return (await fs.readdir(this.resolve(nodePath))).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }

  async stat(nodePath: string): Promise<PathInfo | undefined> {
    try {
      const st = await fs.lstat(this.resolve(nodePath));
      const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
      return { kind, ...(kind === 'other' && { special: kindInWords(st) }), size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, birthtimeMs: st.birthtimeMs, mode: st.mode & 0o7777, ino: st.ino, nlink: st.nlink };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  readLink(nodePath: string): Promise<string> {
    return fs.readlink(this.resolve(nodePath));
  }

  async writeFileAtomic(nodePath: string, data: string | Buffer, mode = 0o644, owner?: { uid: number; gid: number }): Promise<void> {
    const target = this.resolve(nodePath);
    await writeFileAtomicAt(target, data, mode, owner).catch(async (e: unknown) => {
      throw await wrongKind(e, nodePath, target, 'file');
    });
  }

  async mkdirp(nodePath: string, mode = 0o755): Promise<void> {
    const target = this.resolve(nodePath);
    await fs.mkdir(target, { recursive: true, mode }).catch(async (e: unknown) => {
      throw await wrongKind(e, nodePath, target, 'folder');
    });
  }

  async chmod(nodePath: string, mode: number): Promise<void> {
    await fs.chmod(this.resolve(nodePath), mode);
  }

  async chown(nodePath: string, uid: number, gid: number): Promise<void> {
    await fs.lchown(this.resolve(nodePath), uid, gid);
  }

  async rename(fromNodePath: string, toNodePath: string): Promise<void> {
    await fs.rename(this.resolve(fromNodePath), this.resolve(toNodePath));
  }

  async remove(nodePath: string): Promise<void> {
    await fs.rm(this.resolve(nodePath), { recursive: true, force: true });
  }

  async removeEmptyDir(nodePath: string): Promise<void> {
    await fs.rmdir(this.resolve(nodePath));
  }

  async openForWriting(nodeDir: string): Promise<string[]> {
    // A writer on the host names the file by its node path; one beside us (tests, --root) by the resolved one.
    const dirs = [...new Set([this.resolve(nodeDir), path.posix.normalize(`/${nodeDir}`)])].map((d) => `${d}/`);
    const open = await filesOpenForWriting(this.procDir, dirs);
    return [...new Set(open.map((t) => t.slice(dirs.find((d) => t.startsWith(d))!.length)))];
  }

  watchDir(nodePath: string, onChange: (event: WatchEvent, filename: string | undefined) => void): Closable | undefined {
    try {
      // libuv maps IN_MODIFY and IN_ATTRIB to 'change', every other event to 'rename' (src/unix/linux.c, uv__inotify_read).
      const watcher = watch(this.resolve(nodePath), { persistent: false }, (event, filename) => onChange(event === 'change' ? 'change' : 'rename', filename ?? undefined));
      watcher.on('error', () => undefined);
      return watcher;
    } catch {
      return undefined;
    }
  }
}

/** Temporary names of this process's atomic writes: the PID tells processes apart, the counter calls. */
let atomicWrites = 0;

/** Atomic write to an absolute path: a power cut leaves either the old or the new content, never a mix. */
export async function writeFileAtomicAt(target: string, data: string | Buffer, mode = 0o644, owner?: { uid: number; gid: number }): Promise<void> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true });
  // Unique per call: two saves of the same file may be in flight at once. Not random: node:crypto costs a waiting
  // agent 2 MiB of memory (issue 39), and the name needs only to differ from every other write's.
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${++atomicWrites}.tmp`);
  const fh = await fs.open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(mode);
    if (owner) await fh.chown(owner.uid, owner.gid);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, target);
  const dh = await fs.open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
