// The podman runtime's image handling with the real podman (Debian's 4.3, private vfs store): `prepare` saves
// a digest-pinned image and records its ID; after the image is removed (what kubelet's image GC or crio-wipe
// do) the launcher loads the archive and finds the image again by that ID. Only the final `podman run` is
// recorded instead of executed: it needs systemd's delegated cgroup and a Node image, which this machine
// cannot provide offline.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureDebianPackages } from '../../support/apt';
import { LocalHost } from '../../../src/host/host';
import { nodeImageActions } from '../../../src/factory/prepare';
import type { Check } from '../../../src/factory/preflight';
import { renderPodmanLauncher } from '../../../src/render/podman';
import { MC_BUNDLE_PATH, NODE_IMAGE_ARCHIVE_PATH } from '../../../src/render/layout';

describe('podman runtime with the real podman', () => {
  let dir: string;
  let root: string;
  let env: NodeJS.ProcessEnv;
  let image: string;
  let imageId: string;
  const runLog = () => path.join(dir, 'run.json');

  const podman = (...args: string[]) => execFileSync(path.join(dir, 'bin', 'podman'), args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  before(() => {
    ensureDebianPackages(['podman']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'sno-podman-real-'));
    root = path.join(dir, 'root');
    for (const d of ['bin', 'store', 'runroot', 'xdg', 'rootfs/etc', 'root']) mkdirSync(path.join(dir, d), { recursive: true });
    // The real podman on a private store; `run` is recorded (see the header).
    writeFileSync(
      path.join(dir, 'bin', 'podman'),
      `#!/bin/bash
if [ "$1" = run ]; then printf '%s\\n' "$@" > ${JSON.stringify(runLog())}; exit 0; fi
exec /usr/bin/podman --root ${JSON.stringify(path.join(dir, 'store'))} --runroot ${JSON.stringify(path.join(dir, 'runroot'))} --storage-driver vfs --cgroup-manager cgroupfs --events-backend file "$@"
`,
      { mode: 0o755 },
    );
    env = { PATH: `${path.join(dir, 'bin')}:/usr/bin:/bin`, XDG_RUNTIME_DIR: path.join(dir, 'xdg'), HOME: dir };
    writeFileSync(path.join(dir, 'rootfs/etc/os-release'), 'ID=stand-in-node-image\n');
    execFileSync('tar', ['-C', path.join(dir, 'rootfs'), '-cf', path.join(dir, 'rootfs.tar'), '.']);
    podman('import', path.join(dir, 'rootfs.tar'), 'localhost/sno/node:1');
    const digest = podman('image', 'inspect', '--format', '{{.Digest}}', 'localhost/sno/node:1').trim();
    imageId = podman('image', 'inspect', '--format', '{{.Id}}', 'localhost/sno/node:1').trim();
    assert.match(digest, /^sha256:[0-9a-f]{64}$/);
    image = `localhost/sno/node@${digest}`;
  });

  after(() => {
    spawnSync(path.join(dir, 'bin', 'podman'), ['system', 'reset', '--force'], { env, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });

  test('prepare saves the archive and the image ID; after image GC the launcher loads it and runs it by ID', async () => {
    const host = new LocalHost({ root, env });
    const checks: Check[] = [];
    const actions = await nodeImageActions(host, { runtime: 'podman', internalAddresses: [], podman: { image, archive: NODE_IMAGE_ARCHIVE_PATH, bundle: MC_BUNDLE_PATH } }, checks);
    assert.deepEqual(actions.map((a) => a.id), ['save-node-image'], 'image in storage: nothing to pull');
    for (const a of actions) await a.apply();
    const archive = path.join(root, NODE_IMAGE_ARCHIVE_PATH);
    assert.ok(existsSync(archive));
    assert.equal(readFileSync(`${archive}.id`, 'utf8').trim(), imageId);

    // Image GC / crio-wipe: the image is gone from local storage.
    podman('rmi', '--all', '--force');
    assert.notEqual(spawnSync(path.join(dir, 'bin', 'podman'), ['image', 'exists', imageId], { env }).status, 0);

    const launcher = path.join(dir, 'sno-reconfigure-podman');
    writeFileSync(launcher, renderPodmanLauncher(), { mode: 0o755 });
    const res = spawnSync('bash', [launcher, 'run'], {
      encoding: 'utf8',
      env: { ...env, SNO_RECONFIGURE_NODE_IMAGE: image, SNO_RECONFIGURE_NODE_IMAGE_ARCHIVE: archive, SNO_RECONFIGURE_BUNDLE: MC_BUNDLE_PATH },
    });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /loading /);
    assert.equal(spawnSync(path.join(dir, 'bin', 'podman'), ['image', 'exists', imageId], { env }).status, 0, 'the archive brought the image back');
    const run = readFileSync(runLog(), 'utf8').trim().split('\n');
    assert.deepEqual(run.slice(run.indexOf(imageId)), [imageId, 'node', `/host${MC_BUNDLE_PATH}`, 'run', '--root', '/host']);

    // A second prepare finds archive and ID in place and does nothing.
    assert.deepEqual(await nodeImageActions(host, { runtime: 'podman', internalAddresses: [], podman: { image, archive: NODE_IMAGE_ARCHIVE_PATH, bundle: MC_BUNDLE_PATH } }, []), []);
  });
});
