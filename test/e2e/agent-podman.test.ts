// The podman runtime end to end (issue #16), on real systemd with the real podman (Debian's 4.3) on the node:
// the MachineConfig rendered with `--runtime podman`, a Node image built offline from the host's own node
// (testbed/node-image.ts) and served by a registry stand-in at the factory, then one node through the story:
//   factory: `sno-reconfigure-podman prepare` on a node with no image pulls it (the launcher's pull path) and
//            saves the archive with its image ID and sha256;
//   site:    container storage wiped (as crio-wipe does) and the archive damaged: the launcher says so on the
//            console banner and in the journal, and backs off instead of looping; an intact archive restored,
//            the image is loaded and the agent waits for its stick; `sno-reconfigure-podman status` meanwhile
//            leaves the agent running; a hung agent in the container is killed by the watchdog and restarted
//            (the unit as rendered, with a testbed drop-in for a 20 s watchdog and a 2 s restart delay:
//            helpers/short-watchdog.ts);
//            the stick comes and the relocation runs to done.
// One node for all of it: each step starts where the previous one left the node, as on a real one, and a second
// factory node would double the cost. The registry is a stand-in rather than pre-seeded storage because the
// path under test is the launcher's own `podman pull` (HTTP, manifest digest check, blobs): `podman load` into
// storage beforehand would skip exactly that. The node: test/e2e/testbed/sno-node.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { BANNER_PATH, DONE_MARKER, KUBELET_HOLD_FILE, KUBELET_UNIT, UNIT_NAME } from '../../src/paths';
import { LAUNCHER_FAILURES_PATH, NODE_IMAGE_ARCHIVE_PATH } from '../../src/render/layout';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { nodeImage, removeNodeImage } from './testbed/node-image';
import { eventually, factoryNode, nodeImageRef, REGISTRY_LOG, siteConfigYaml } from './testbed/sno-node';
import { assertRenderedAndShortened, SHORT_WATCHDOG, shortenWatchdog } from './helpers/short-watchdog';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  await removeNodeImage();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

test('podman runtime: prepare pulls on a fresh node; a damaged archive is shown and backed off; status leaves the agent running; the watchdog restarts a hung agent; the relocation completes', async (t) => {
  const started = Date.now();
  const lap = (what: string) => t.diagnostic(`${what}: ${Math.round((Date.now() - started) / 1000)} s`);
  await ensureRootfsImage();
  const image = await nodeImage();

  // --- factory: no image on the node; prepare, run through the launcher, gets it from the registry
  const node = await factoryNode(bed, { podman: { image } });
  const m = node.machine;
  lap('factory node prepared');
  const requests = readFileSync(m.path(REGISTRY_LOG), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { method: string; path: string; status: number });
  const fetched = (what: string) => requests.some((r) => r.method === 'GET' && r.status === 200 && r.path === `/v2/${image.repository}/${what}`);
  assert.ok(fetched(`manifests/${image.digest}`), `the launcher pulled the pinned manifest: ${JSON.stringify(requests)}`);
  assert.ok(fetched(`blobs/sha256:${image.id}`), 'and its config');
  const archivePath = m.path(NODE_IMAGE_ARCHIVE_PATH);
  const archive = readFileSync(archivePath);
  assert.equal(readFileSync(`${archivePath}.id`, 'utf8').trim(), image.id, 'prepare recorded the image ID');
  assert.equal(readFileSync(`${archivePath}.sha256`, 'utf8').trim(), createHash('sha256').update(archive).digest('hex'), 'and the archive\'s sha256');
  assert.match(node.factoryPrepare?.stdout ?? '', new RegExp(`ok +node-image +Node image ${nodeImageRef(image).replace(/[.]/g, '\\.')}: in local storage`));

  // --- at the site: storage wiped (crio-wipe after an unclean shutdown) and the archive damaged (truncated)
  const storage = path.join(m.disk.dir, 'containers');
  for (const entry of readdirSync(storage)) rmSync(path.join(storage, entry), { recursive: true, force: true });
  truncateSync(archivePath, Math.floor(archive.length / 2));
  shortenWatchdog(m);
  // not waiting for `running`: the system is still starting while the launcher backs off in the unit's start-up
  await node.boot({ waitFor: 'none' });
  const banner = await eventually(() => {
    const text = node.readIfExists(BANNER_PATH) ?? '';
    assert.match(text, new RegExp(`ACTION NEEDED — the agent's Node image archive ${NODE_IMAGE_ARCHIVE_PATH} is damaged: its sha256 is [0-9a-f]{64}, prepare recorded [0-9a-f]{64}`));
    return text;
  }, 60_000);
  assert.match(banner, /The agent cannot start, and nothing on this node has been changed\./);
  assert.match(banner, /At the factory: run 'sno-reconfigure-podman prepare'/);
  const errors = await eventually(async () => {
    const text = (await m.journalctl('-u', UNIT_NAME, '-p', 'err', '-o', 'cat')).stdout;
    assert.match(text, /archive .* is damaged/);
    return text;
  });
  t.diagnostic(`journal, priority err: ${JSON.stringify(errors.trim().split('\n'))}`);
  // it backs off: the launcher waits 30 s in the unit's start-up, then systemd's RestartSec= (30 s as rendered)
  // follows, so the second attempt comes a minute after the first, the third two minutes later, and so on
  await eventually(async () => assert.match((await m.journalctl('-u', UNIT_NAME, '-o', 'cat')).stdout, /start 1 failed; the next attempt follows in 30 s/));
  await eventually(async () =>
    assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'SubState', 'NRestarts', 'StatusText']), {
      ActiveState: 'activating',
      SubState: 'start',
      NRestarts: '0',
      StatusText: 'the agent\'s Node image is unusable (start 1 failed); retrying in 30 s',
    }),
  );
  assert.equal(m.readFile(LAUNCHER_FAILURES_PATH).trim(), '1');
  assert.doesNotMatch((await m.journalctl('-u', UNIT_NAME, '-o', 'cat')).stdout, /loading/, 'a damaged archive is not fed to podman load');
  assert.deepEqual(node.nmstateCalls(), []);
  lap('damaged archive reported');

  // --- an intact archive is put back; restarting the unit does not wait for the backoff
  writeFileSync(archivePath, archive, { mode: 0o600 });
  const restartAt = Date.now();
  await m.systemctl('restart', '--no-block', UNIT_NAME);
  await node.waitForAgent('waiting', (j) => j?.phase === 'waiting', 90_000);
  const restartMs = Date.now() - restartAt;
  t.diagnostic(`from restart to waiting (stop, load, start): ${restartMs} ms`);
  assert.ok(restartMs < 20_000, 'stopping the unit ended the launcher\'s 30 s wait at once');
  await eventually(() => assert.match(node.banner() ?? '', /WAITING — waiting for the site-config/));
  assert.match((await m.journalctl('-u', UNIT_NAME, '-o', 'cat')).stdout, /not in local storage; loading .*node-image\.docker-archive\.tar/);
  assert.equal(node.exists(LAUNCHER_FAILURES_PATH), false, 'a start clears the backoff');
  lap('image loaded from the archive, agent waiting');

  // --- the technician asks for the status while the agent waits: the agent keeps running
  const before = await node.unit(UNIT_NAME, ['ActiveState', 'SubState', 'MainPID', 'NRestarts', 'StatusText']);
  assert.deepEqual({ ...before, MainPID: '' }, { ActiveState: 'active', SubState: 'running', MainPID: '', NRestarts: '0', StatusText: 'waiting for the site-config' });
  assert.match(await node.statusText(), /^Phase: +waiting for a site-config$/m);
  assert.equal((await node.status()).phase, 'waiting');
  await new Promise((r) => setTimeout(r, 3_000));
  assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'SubState', 'MainPID', 'NRestarts', 'StatusText']), before, 'status did not replace the agent\'s container');
  lap('status checked');

  // --- the agent hangs inside its container: the watchdog kills it and systemd starts it again
  await assertRenderedAndShortened(m);
  // the agent in the container pings: the watchdog timestamp moves on past the one systemd set when it armed the
  // watchdog (systemd/systemd main, src/core/service.c, service_reset_watchdog()), under the same main process
  const armed = await m.waitForUnit(UNIT_NAME, ['MainPID', 'WatchdogTimestampMonotonic'], (u) => Number(u.WatchdogTimestampMonotonic) > 0, 60_000);
  const pinged = await m.waitForUnit(UNIT_NAME, ['MainPID', 'NRestarts', 'WatchdogTimestampMonotonic'], (u) => Number(u.WatchdogTimestampMonotonic) > Number(armed.WatchdogTimestampMonotonic), 60_000);
  assert.deepEqual([pinged.MainPID, pinged.NRestarts], [armed.MainPID, '0'], 'the same agent pinged, never restarted');
  const agentPid = (await m.execOk(['pgrep', '-f', '^node /host/usr/local/libexec/sno-reconfigure/sno-reconfigure.cjs run'])).trim();
  assert.match(agentPid, /^\d+$/, 'one agent process');
  const cgroup = (await m.execOk(['cat', `/proc/${agentPid}/cgroup`])).trim();
  assert.match(cgroup, /sno-reconfigure\.service\/libpod-payload-/, 'the agent runs in the container, inside the unit\'s cgroup');
  await m.execOk(['kill', '-STOP', agentPid]);
  const frozenAt = Date.now();
  await m.waitForUnit(UNIT_NAME, ['NRestarts', 'ActiveState'], (u) => u.NRestarts === '1' && u.ActiveState === 'active', 150_000);
  t.diagnostic(`restarted ${Math.round((Date.now() - frozenAt) / 1000)} s after the freeze`);
  const systemdSays = (await m.journalctl('-u', UNIT_NAME, '-o', 'cat', '_PID=1')).stdout;
  assert.ok(systemdSays.includes(`sno-reconfigure.service: Watchdog timeout (limit ${SHORT_WATCHDOG.limit})!`), systemdSays);
  assert.match(systemdSays, /sno-reconfigure\.service: Failed with result 'watchdog'/);
  await node.waitForAgent('waiting again', (j) => j?.phase === 'waiting', 60_000);
  assert.notEqual((await m.execOk(['pgrep', '-f', '^node /host/usr/local/libexec/sno-reconfigure/sno-reconfigure.cjs run'])).trim(), agentPid);
  lap('watchdog restart');

  // --- the stick comes: the whole relocation, with the agent in its container
  await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml() });
  await node.waitForSuccess();
  lap('relocation done');
  // NRestarts counts this boot's restarts: the watchdog's was before the agent's reboot for the early network phase.
  assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'Result', 'UnitFileState', 'NRestarts']), { ActiveState: 'inactive', Result: 'success', UnitFileState: 'disabled', NRestarts: '0' });
  assert.equal(m.requestedReboots, 1);
  assert.equal(node.exists(DONE_MARKER), true);
  assert.equal(node.exists(KUBELET_HOLD_FILE), false);
  assert.deepEqual(await node.unit(KUBELET_UNIT, ['ActiveState', 'UnitFileState']), { ActiveState: 'active', UnitFileState: 'enabled' });
  assert.match(m.readFile(BANNER_PATH), /DONE — site configuration "store-0042" applied/);
  assert.equal((await node.status()).phase, 'succeeded');
  assert.ok(node.nmstateCalls().includes('commit'), JSON.stringify(node.nmstateCalls()));
  // the agent's container is gone with the unit; only the status commands' containers ran besides it, and left nothing
  assert.equal((await m.execOk(['podman', 'ps', '--all', '--format', '{{.Names}}'])).trim(), '');
  // the agent itself logged no error: the errors are the launcher's (damaged archive) and systemd's (watchdog)
  assert.deepEqual((await node.agentLog('-p', 'err')).filter((e) => e.log !== undefined), []);
  lap('total');
});
