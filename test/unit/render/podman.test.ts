// The podman runtime's launcher, run for real by bash with a stand-in `podman` first on PATH that records every
// call: the exact command line it ends with, the archive fallback, and its errors.
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ImageRefError, parseNodeImageRef, parseRuntimeEnv, renderPodmanLauncher, renderRuntimeEnv } from '../../../src/render/podman';
import { MC_BUNDLE_PATH, NODE_IMAGE_ARCHIVE_PATH } from '../../../src/render/layout';

const IMAGE = 'registry.example.com:5000/ubi9/nodejs-24-minimal@sha256:9711ea3b74ca3cfb4278465d7203870d742441c7a21c5e22efa458a28e6d0fae';

describe('parseNodeImageRef', () => {
  test('accepts digest-pinned references, with or without a tag', () => {
    assert.equal(parseNodeImageRef(IMAGE), IMAGE);
    const tagged = 'quay.io/org/node:20-minimal@sha256:' + 'a'.repeat(64);
    assert.equal(parseNodeImageRef(` ${tagged} `), tagged);
  });

  test('rejects a tag-only reference, saying what is expected', () => {
    assert.throws(() => parseNodeImageRef('registry.access.redhat.com/ubi9/nodejs-24-minimal:latest'), (e: unknown) => {
      assert.ok(e instanceof ImageRefError);
      assert.match(e.message, /^--node-image: .* is not pinned by digest\. Expected NAME@sha256:<64 hex digits>/);
      return true;
    });
  });

  test('rejects short digests, other algorithms and invalid names', () => {
    assert.throws(() => parseNodeImageRef('quay.io/a/b@sha256:abc'), ImageRefError);
    assert.throws(() => parseNodeImageRef('quay.io/a/b@sha512:' + 'a'.repeat(128)), ImageRefError);
    assert.throws(() => parseNodeImageRef('quay.io/A/B@sha256:' + 'a'.repeat(64)), /not a valid image reference/);
    assert.throws(() => parseNodeImageRef('quay.io/a b@sha256:' + 'a'.repeat(64)), ImageRefError);
  });
});

describe('runtime.env', () => {
  test('round-trips through parseRuntimeEnv', () => {
    const s = { image: IMAGE, archive: NODE_IMAGE_ARCHIVE_PATH, bundle: MC_BUNDLE_PATH };
    assert.deepEqual(parseRuntimeEnv(renderRuntimeEnv(s)), s);
  });

  test('is not the podman runtime without SNO_RECONFIGURE_RUNTIME=podman, and names missing keys', () => {
    assert.equal(parseRuntimeEnv('# nothing\n'), undefined);
    assert.throws(() => parseRuntimeEnv('SNO_RECONFIGURE_RUNTIME=podman\nSNO_RECONFIGURE_BUNDLE=/x\n'), /missing SNO_RECONFIGURE_NODE_IMAGE, SNO_RECONFIGURE_NODE_IMAGE_ARCHIVE/);
  });

  test('refuses values a settings file cannot carry', () => {
    assert.throws(() => renderRuntimeEnv({ image: IMAGE, archive: '/var/lib/x; rm -rf /', bundle: MC_BUNDLE_PATH }), /archive/);
  });
});

describe('sno-reconfigure-podman launcher', () => {
  const IMAGE_ID = 'e'.repeat(64);
  let dir: string;
  let log: string;
  let storage: string;
  let archive: string;
  let paths: { banner: string; failures: string; authfile: string };
  let sleeps: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-podman-'));
    mkdirSync(path.join(dir, 'bin'));
    log = path.join(dir, 'calls.jsonl');
    storage = path.join(dir, 'storage');
    archive = path.join(dir, 'node-image.docker-archive.tar');
    sleeps = path.join(dir, 'sleeps');
    paths = { banner: path.join(dir, 'issue.d', '50-sno-reconfigure.issue'), failures: path.join(dir, 'run', 'launcher-failures'), authfile: path.join(dir, 'config.json') };
    // Stand-in podman: records argv as JSON lines; local storage is a file listing the references it resolves;
    // `load -i A` adds the references listed in A.
    writeFileSync(
      path.join(dir, 'bin', 'podman'),
      `#!/usr/bin/env node
const fs = require('fs');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(args) + '\\n');
const present = () => (fs.existsSync(${JSON.stringify(storage)}) ? fs.readFileSync(${JSON.stringify(storage)}, 'utf8').split('\\n') : []);
if (args[0] === 'image' && args[1] === 'exists') process.exit(present().includes(args[2]) ? 0 : 1);
if (args[0] === 'load') {
  fs.appendFileSync(${JSON.stringify(storage)}, fs.readFileSync(args[2], 'utf8') + '\\n');
  console.log('Loaded image: sha256:' + ${JSON.stringify(IMAGE_ID)});
}
if (args[0] === 'pull' && process.env.STANDIN_PULL_FAILS) { console.error('Error: initializing source: pinging container registry: connection refused'); process.exit(125); }
if (args[0] === 'pull') fs.appendFileSync(${JSON.stringify(storage)}, args.at(-1) + '\\n');
`,
      { mode: 0o755 },
    );
    // Stand-in sleep: records how long the launcher would wait.
    writeFileSync(path.join(dir, 'bin', 'sleep'), `#!/bin/sh\necho "$1" >> ${JSON.stringify(sleeps)}\n`, { mode: 0o755 });
    writeFileSync(path.join(dir, 'sno-reconfigure-podman'), renderPodmanLauncher(paths), { mode: 0o755 });
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function launch(args: string[], env: Record<string, string> = {}): { code: number | null; stderr: string; calls: string[][] } {
    const res = spawnSync('bash', [path.join(dir, 'sno-reconfigure-podman'), ...args], {
      encoding: 'utf8',
      env: {
        PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin`,
        SNO_RECONFIGURE_NODE_IMAGE: IMAGE,
        SNO_RECONFIGURE_NODE_IMAGE_ARCHIVE: archive,
        SNO_RECONFIGURE_BUNDLE: MC_BUNDLE_PATH,
        ...env,
      },
    });
    const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]) : [];
    return { code: res.status, stderr: res.stderr, calls };
  }

  const COMMON_OPTIONS = [
    '--pull=never', '--privileged', '--security-opt', 'label=disable', '--pid=host', '--net=host', '--uts=host',
    '--sdnotify=ignore', '--user', '0:0',
    // host tools run as `chroot /host TOOL`, looked up with this PATH, not the image's
    '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '--volume', '/:/host',
    '--env', 'SNO_RECONFIGURE_HOST_TOOLS=chroot',
  ];
  const RUN_PREFIX = ['run', '--rm', '--replace', '--name', 'sno-reconfigure', '--cgroups=split', '--log-driver=passthrough', ...COMMON_OPTIONS];

  test('image present (pulled by digest, prepare not run): runs it by digest from /host with --root /host', () => {
    writeFileSync(storage, IMAGE);
    const res = launch(['run', '--once']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.calls, [
      ['image', 'exists', IMAGE],
      [...RUN_PREFIX, IMAGE, 'node', `/host${MC_BUNDLE_PATH}`, 'run', '--root', '/host', '--once'],
    ]);
  });

  test('with the image ID recorded by prepare, it checks and runs the image by ID', () => {
    writeFileSync(storage, IMAGE_ID);
    writeFileSync(`${archive}.id`, `${IMAGE_ID}\n`);
    const res = launch(['run']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.calls, [['image', 'exists', IMAGE_ID], [...RUN_PREFIX, IMAGE_ID, 'node', `/host${MC_BUNDLE_PATH}`, 'run', '--root', '/host']]);
  });

  test('image gone (image GC, crio-wipe): loads the archive, then runs the loaded image by ID', () => {
    writeFileSync(archive, IMAGE_ID);
    writeFileSync(`${archive}.id`, IMAGE_ID);
    const res = launch(['run']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.calls.slice(0, 3), [['image', 'exists', IMAGE_ID], ['load', '-i', archive], ['image', 'exists', IMAGE_ID]]);
    assert.deepEqual(res.calls[3], [...RUN_PREFIX, IMAGE_ID, 'node', `/host${MC_BUNDLE_PATH}`, 'run', '--root', '/host']);
    assert.match(res.stderr, /loading .*node-image\.docker-archive\.tar/);
  });

  test('a damaged ID record is ignored, saying so', () => {
    writeFileSync(storage, IMAGE);
    writeFileSync(`${archive}.id`, 'not-an-id');
    const res = launch(['run']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /ignoring .*\.id: not an image ID/);
    assert.equal(res.calls.at(-1)?.includes(IMAGE), true);
  });

  test('image gone and no archive: fails with what to do at the factory, runs nothing', () => {
    const res = launch(['run']);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /Node image is missing: .* is not in this node's container storage and its archive .* does not exist/);
    assert.match(res.stderr, /At the factory: run 'sno-reconfigure-podman prepare'/);
    assert.equal(res.calls.some((c) => c[0] === 'run'), false);
  });

  test('an archive without the image: fails instead of pulling', () => {
    writeFileSync(archive, 'quay.io/other/image@sha256:' + 'b'.repeat(64));
    const res = launch(['run']);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /does not contain/);
    assert.equal(res.calls.some((c) => c[0] === 'run'), false);
  });

  test('passes NOTIFY_SOCKET (and mounts it), WATCHDOG_USEC, JOURNAL_STREAM; never WATCHDOG_PID', () => {
    writeFileSync(storage, IMAGE);
    const res = launch(['run'], { NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '60000000', WATCHDOG_PID: '4242', JOURNAL_STREAM: '8:12345' });
    assert.equal(res.code, 0, res.stderr);
    const run = res.calls.at(-1) ?? [];
    const imageAt = run.indexOf(IMAGE);
    const options = run.slice(0, imageAt);
    assert.deepEqual(options.slice(RUN_PREFIX.length), [
      '--env', 'NOTIFY_SOCKET=/run/systemd/notify',
      '--volume', '/run/systemd/notify:/run/systemd/notify',
      '--env', 'WATCHDOG_USEC=60000000',
      '--env', 'JOURNAL_STREAM=8:12345',
    ]);
    assert.equal(run.some((a) => a.includes('WATCHDOG_PID')), false);
  });

  test('an abstract notify socket is passed but not mounted', () => {
    writeFileSync(storage, IMAGE);
    const run = launch(['run'], { NOTIFY_SOCKET: '@/org/freedesktop/systemd1/notify' }).calls.at(-1) ?? [];
    assert.ok(run.includes('NOTIFY_SOCKET=@/org/freedesktop/systemd1/notify'));
    assert.equal(run.filter((a) => a.includes('systemd1/notify')).length, 1);
  });

  test('status, plan and prepare get a container of their own and --root /host: they never replace the running agent', () => {
    writeFileSync(storage, IMAGE);
    for (const command of ['status', 'plan', 'prepare']) {
      const run = launch([command, '--json']).calls.at(-1) ?? [];
      const name = run[run.indexOf('--name') + 1] ?? '';
      assert.match(name, new RegExp(`^sno-reconfigure-${command}-\\d+$`), `${command}: ${run.join(' ')}`);
      assert.deepEqual(run.slice(0, 5), ['run', '--rm', '--name', name, '-i'], command);
      assert.deepEqual(run.slice(5, 5 + COMMON_OPTIONS.length), COMMON_OPTIONS, command);
      for (const runOnly of ['--replace', '--cgroups=split', '--log-driver=passthrough', '-t']) assert.equal(run.includes(runOnly), false, `${command} uses ${runOnly}`);
      assert.deepEqual(run.slice(run.indexOf(IMAGE)), [IMAGE, 'node', `/host${MC_BUNDLE_PATH}`, command, '--root', '/host', '--json']);
    }
  });

  test('validate and other commands get no --root: their paths are the caller\'s, under /host', () => {
    writeFileSync(storage, IMAGE);
    const run = launch(['validate', '/host/root/site-config.yaml']).calls.at(-1) ?? [];
    assert.deepEqual(run.slice(run.indexOf(IMAGE)), [IMAGE, 'node', `/host${MC_BUNDLE_PATH}`, 'validate', '/host/root/site-config.yaml']);
    assert.equal(run.includes('--replace'), false);
  });

  test('on a fresh factory node (no image, no archive) prepare pulls the image with the kubelet\'s authfile, then runs', () => {
    writeFileSync(paths.authfile, '{"auths":{}}');
    const res = launch(['prepare']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.calls.slice(0, 3), [['image', 'exists', IMAGE], ['pull', '--authfile', paths.authfile, IMAGE], ['image', 'exists', IMAGE]]);
    assert.deepEqual(res.calls[3]?.slice(-4), [`/host${MC_BUNDLE_PATH}`, 'prepare', '--root', '/host']);
    assert.match(res.stderr, /is missing.*pulling/s);
  });

  test('run never pulls', () => {
    writeFileSync(paths.authfile, '{"auths":{}}');
    const res = launch(['run']);
    assert.equal(res.code, 1);
    assert.equal(res.calls.some((c) => c[0] === 'pull' || c[0] === 'run'), false, JSON.stringify(res.calls));
  });

  test('a damaged archive (sha256 differs from what prepare recorded) is not loaded; run shows it on the console and backs off', () => {
    writeFileSync(archive, IMAGE_ID.slice(0, 20)); // truncated
    writeFileSync(`${archive}.id`, IMAGE_ID);
    writeFileSync(`${archive}.sha256`, `${createHash('sha256').update(IMAGE_ID).digest('hex')}\n`);
    const first = launch(['run']);
    assert.equal(first.code, 1);
    assert.deepEqual(first.calls, [['image', 'exists', IMAGE_ID]], 'no load, no run');
    assert.match(first.stderr, /archive .*node-image\.docker-archive\.tar is damaged: its sha256 is [0-9a-f]{64}, prepare recorded/);
    const banner = readFileSync(paths.banner, 'utf8');
    assert.match(banner, /^={72}\n sno-reconfigure: ACTION NEEDED — the agent's Node image archive .* is damaged/);
    assert.match(banner, /At the factory: run 'sno-reconfigure-podman prepare'/);
    assert.match(first.stderr, /start 1 failed; the next attempt follows in 30 s/);
    assert.equal(readFileSync(sleeps, 'utf8'), '30\n');
    const second = launch(['run'], { JOURNAL_STREAM: '8:1234' });
    assert.match(second.stderr, /^<3>sno-reconfigure-podman: the agent's Node image archive .* is damaged/m, 'errors reach the journal at priority err');
    assert.match(second.stderr, /start 2 failed; the next attempt follows in 60 s/);
    assert.equal(readFileSync(paths.failures, 'utf8').trim(), '2');
  });

  test('the backoff doubles from 30 s up to 16 min, counting failed starts since boot', () => {
    const waits: string[] = [];
    for (const before of [undefined, '1', '4', '5', '6', '20', 'garbage']) {
      mkdirSync(path.dirname(paths.failures), { recursive: true });
      if (before === undefined) rmSync(paths.failures, { force: true });
      else writeFileSync(paths.failures, before);
      const res = launch(['run']);
      assert.equal(res.code, 1);
      waits.push(readFileSync(sleeps, 'utf8').trim().split('\n').at(-1) ?? '');
    }
    assert.deepEqual(waits, ['30', '60', '480', '960', '960', '960', '30']);
  });

  test('stopping the unit while the launcher backs off ends the wait at once, the sleep included', async () => {
    // a sleep that really sleeps, and says which process it is
    writeFileSync(path.join(dir, 'bin', 'sleep'), `#!/bin/sh\necho $$ > ${JSON.stringify(sleeps)}\nexec /bin/sleep "$1"\n`, { mode: 0o755 });
    const child = spawn('bash', [path.join(dir, 'sno-reconfigure-podman'), 'run'], {
      env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin`, SNO_RECONFIGURE_NODE_IMAGE: IMAGE, SNO_RECONFIGURE_NODE_IMAGE_ARCHIVE: archive, SNO_RECONFIGURE_BUNDLE: MC_BUNDLE_PATH },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 10_000;
    while (!(existsSync(sleeps) && readFileSync(sleeps, 'utf8').trim()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const sleeper = Number(readFileSync(sleeps, 'utf8').trim());
    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    assert.equal(await exited, 143);
    assert.ok(Date.now() - stoppedAt < 2_000, 'not after the 30 s wait');
    // the sleep is gone too (dead: reaped, or a zombie until its new parent reaps it)
    const alive = () => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${sleeper}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    const until = Date.now() + 2_000;
    while (alive() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(), false, 'the sleep is gone too');
  });

  test('a run that starts clears the backoff counter', () => {
    mkdirSync(path.dirname(paths.failures), { recursive: true });
    writeFileSync(paths.failures, '3\n');
    writeFileSync(storage, IMAGE);
    assert.equal(launch(['run']).code, 0);
    assert.equal(existsSync(paths.failures), false);
  });

  test('a failed prepare or status changes neither the banner nor the backoff', () => {
    const res = launch(['status'], { STANDIN_PULL_FAILS: '1' });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /cannot pull .*: check the registry and the pull secret/);
    assert.equal(existsSync(paths.banner), false);
    assert.equal(existsSync(paths.failures), false);
  });

  test('without settings it says which one is missing', () => {
    const res = spawnSync('bash', [path.join(dir, 'sno-reconfigure-podman'), 'run'], { encoding: 'utf8', env: { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin` } });
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /SNO_RECONFIGURE_NODE_IMAGE is not set/);
  });
});
