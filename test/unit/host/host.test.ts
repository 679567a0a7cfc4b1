// The Host verbs the media copy and the runner use: every path is a node path under the host root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost, WrongKindError, fileWhereFolderBelongs } from '../../../src/host/host';

function withRoot(fn: (host: LocalHost, root: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'host-'));
    try {
      await fn(new LocalHost({ root }), root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
}

test('stat tells files, directories and links apart without following links, and undefined for nothing', withRoot(async (host, root) => {
  writeFileSync(path.join(root, 'a'), 'four');
  mkdirSync(path.join(root, 'd'));
  symlinkSync('/etc/passwd', path.join(root, 'link'));
  const a = await host.stat('/a');
  assert.deepEqual({ ...a, mtimeMs: 0, ctimeMs: 0, birthtimeMs: 0, mode: 0, ino: 0 }, { kind: 'file', size: 4, mtimeMs: 0, ctimeMs: 0, birthtimeMs: 0, mode: 0, ino: 0, nlink: 1 });
  assert.equal(a?.ino, statSync(path.join(root, 'a')).ino);
  assert.equal(a?.birthtimeMs, statSync(path.join(root, 'a')).birthtimeMs, "the inode's birth time, as statx gives it");
  assert.equal((await host.stat('/d'))?.kind, 'directory');
  assert.equal((await host.stat('/link'))?.kind, 'symlink');
  assert.equal(await host.readLink('/link'), '/etc/passwd');
  assert.equal(await host.stat('/missing'), undefined);
}));

// The hostile re-test of issue 36 (C1, C2): a named pipe where a file belongs made every read of it wait for a writer
// for ever (run, status and validate hung, SIGTERM unheard); a folder where a file belongs (or a file where a folder
// does) was an "internal error" at every restart. Both are a WrongKindError naming the path and what stands there.
test('reading a named pipe, a folder or a device where a file belongs fails at once, naming what stands there; a write or mkdir blocked the same way too', withRoot(async (host, root) => {
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
  mkdirSync(path.join(root, 'folder'));
  writeFileSync(path.join(root, 'file'), 'x');
  const refused = async (what: Promise<unknown>, found: RegExp, wanted: 'file' | 'folder') => {
    const e = await what.then(() => assert.fail('did not fail'), (err: unknown) => err);
    assert.ok(e instanceof WrongKindError, String(e));
    assert.match(e.message, found);
    assert.equal(e.wanted, wanted);
  };
  await refused(host.readText('/pipe'), /^\/pipe is a named pipe \(FIFO\) where the agent needs a file$/, 'file');
  await refused(host.readTextIfExists('/pipe'), /named pipe/, 'file');
  await refused(host.readFile('/folder'), /^\/folder is a folder where the agent needs a file$/, 'file');
  await refused(host.writeFileAtomic('/folder', 'x'), /^\/folder is a folder/, 'file');
  await refused(host.mkdirp('/file/sub'), /^\/file is a file where the agent needs a folder$/, 'folder');
  await refused(host.writeFileAtomic('/file/sub/x.json', 'x'), /^\/file is a file where the agent needs a folder$/, 'folder');
  assert.ok(fileWhereFolderBelongs(await host.mkdirp('/file').catch((err: unknown) => err)), 'the agent-folders check still knows it');
  assert.equal(await host.readTextIfExists('/missing'), undefined);
  assert.equal(await host.readText('/file'), 'x');
  // The second hostile re-test: a symbolic link that leads back to itself or to nothing where a folder belongs, and a
  // socket where a file belongs, were internal errors.
  symlinkSync('loop', path.join(root, 'loop'));
  symlinkSync('/nowhere/at/all', path.join(root, 'dangling'));
  await refused(host.mkdirp('/loop'), /^\/loop is a symbolic link that leads back to itself where the agent needs a folder$/, 'folder');
  await refused(host.mkdirp('/dangling/sub'), /^\/dangling is a symbolic link to nothing where the agent needs a folder$/, 'folder');
  await refused(host.readText('/loop'), /^\/loop is a symbolic link that leads back to itself where the agent needs a file$/, 'file');
  const server = createServer().listen(path.join(root, 'sock'));
  await new Promise((r) => server.once('listening', r));
  try {
    await refused(host.readText('/sock'), /^\/sock is a socket where the agent needs a file$/, 'file');
  } finally {
    server.close();
  }
}));

test('rename moves a directory under the root; removeEmptyDir refuses a directory that still holds something', withRoot(async (host, root) => {
  mkdirSync(path.join(root, 'staging'));
  writeFileSync(path.join(root, 'staging', 'f'), 'x');
  await host.rename('/staging', '/copy');
  assert.equal(readFileSync(path.join(root, 'copy', 'f'), 'utf8'), 'x');
  assert.ok(!existsSync(path.join(root, 'staging')));
  await assert.rejects(host.removeEmptyDir('/copy'), { code: 'ENOTEMPTY' });
  await host.remove('/copy/f');
  await host.removeEmptyDir('/copy');
  assert.ok(!existsSync(path.join(root, 'copy')));
}));

test('watchDir reports a change in the directory, and undefined for a directory that is not there', withRoot(async (host, root) => {
  assert.equal(host.watchDir('/nowhere', () => undefined), undefined);
  mkdirSync(path.join(root, 'dev'));
  let changed!: () => void;
  // The watch does not keep the process alive (the agent's rescan timer does): this timer stands in for it.
  let timer: NodeJS.Timeout | undefined;
  const seen = new Promise<void>((resolve, reject) => {
    changed = resolve;
    timer = setTimeout(() => reject(new Error('no change reported within 5 s')), 5_000);
  });
  const watcher = host.watchDir('/dev', () => changed());
  assert.ok(watcher);
  try {
    writeFileSync(path.join(root, 'dev', 'sdb1'), '');
    await seen;
  } finally {
    clearTimeout(timer);
    watcher.close();
  }
}));

// Issue 31: the early SSH key file was seen owned by root during a run — written as root, renamed into place,
// then chowned. With an owner, the file takes its name already theirs: every moment it exists under that name
// (watched here by fs.watch on the folder), it is core's.
test('writeFileAtomic with an owner: the file is theirs from the moment it has its name', withRoot(async (host, root) => {
  const { statSync, watch } = await import('node:fs');
  mkdirSync(path.join(root, 'home/core/.ssh'), { recursive: true });
  const target = path.join(root, 'home/core/.ssh/authorized_keys');
  const seen: number[] = [];
  const watcher = watch(path.dirname(target), (_e, name) => {
    if (name === 'authorized_keys' && existsSync(target)) seen.push(statSync(target).uid);
  });
  try {
    for (let i = 0; i < 20; i++) await host.writeFileAtomic('/home/core/.ssh/authorized_keys', `key ${i}\n`, 0o600, { uid: 1000, gid: 1000 });
  } finally {
    watcher.close();
  }
  const st = statSync(target);
  assert.deepEqual([st.uid, st.gid, st.mode & 0o777], [1000, 1000, 0o600]);
  assert.ok(seen.every((uid) => uid === 1000), `seen owned by ${JSON.stringify(seen)}`);
}));
