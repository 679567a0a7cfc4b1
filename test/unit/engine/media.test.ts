import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { CommandError } from '../../../src/host/command-error';
import { LocalHost } from '../../../src/host/host';
import { decodeUdevName, findLabelledVolumes, parseBlkidExport, parseLsblk } from '../../../src/siteconfig/discovery';
import { copyFromVolume, copyTree, dropDirIsStable, MediaError, snapshotInto } from '../../../src/siteconfig/media';
import { DEFAULT_LABELS } from '../../../src/paths';
import { createStandInNode, standInNodeEachTest, type StandInNode } from '../../support/standin-host';

describe('finding the site-config volume', () => {
  test('parsers match labels case-insensitively and walk lsblk children', () => {
    const lsblk = JSON.stringify({ blockdevices: [{ name: 'sdb', label: null, path: '/dev/sdb', children: [{ name: 'sdb1', label: 'SITE-CONFIG', fstype: 'vfat', path: '/dev/sdb1', uuid: '7DB1-D881' }] }, { name: 'sdc', label: 'DATA', path: '/dev/sdc' }] });
    assert.deepEqual(parseLsblk(lsblk, DEFAULT_LABELS), [{ device: '/dev/sdb1', nodeDevice: '/dev/sdb1', label: 'SITE-CONFIG', uuid: '7DB1-D881', fstype: 'vfat', foundBy: 'lsblk' }]);
    const blkid = 'DEVNAME=/dev/loop0\nSEC_TYPE=msdos\nLABEL_FATBOOT=SITE-CONFIG\nLABEL=SITE-CONFIG\nUUID=7DB1-D881\nTYPE=vfat\n\nDEVNAME=/dev/vda1\nLABEL=root\nTYPE=ext4\n\nDEVNAME=/dev/sr0\nLABEL=relocation-config\nTYPE=iso9660\n';
    assert.deepEqual(parseBlkidExport(blkid, DEFAULT_LABELS).map((c) => [c.device, c.label, c.fstype]), [['/dev/loop0', 'SITE-CONFIG', 'vfat'], ['/dev/sr0', 'relocation-config', 'iso9660']]);
    assert.deepEqual(parseLsblk('not json', DEFAULT_LABELS), []);
    assert.equal(decodeUdevName('SITE\\x20CONFIG'), 'SITE CONFIG');
  });

  let node: StandInNode;
  beforeEach(() => {
    node = createStandInNode();
  });
  afterEach(() => node.cleanup());

  test('without udev (no by-label link, lsblk without labels) blkid probing finds the volume', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    node.attachVolume('loop1', 'OTHER', { 'a.txt': 'x' });
    const host = new LocalHost({ root: node.root, env: node.env });
    const found = await findLabelledVolumes(host, DEFAULT_LABELS);
    assert.deepEqual(found.map((f) => [f.device, f.foundBy]), [['/dev/loop0', 'blkid']]);
  });

  test('udev by-label links are used first and resolve to the same device lsblk reports', async () => {
    node.attachVolume('sdb1', 'Cluster-Config', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(node.standinDir, 'udev'), '');
    mkdirSync(path.join(node.root, 'dev/disk/by-label'), { recursive: true });
    symlinkSync('../../sdb1', path.join(node.root, 'dev/disk/by-label/Cluster-Config'));
    const host = new LocalHost({ root: node.root, env: node.env });
    const found = await findLabelledVolumes(host, DEFAULT_LABELS);
    assert.equal(found.length, 1, 'the device is offered once');
    assert.equal(found[0]!.foundBy, 'by-label');
    assert.equal(found[0]!.device, path.join(node.root, 'dev/sdb1'));
  });

  test('two devices with the same filesystem UUID (sticks cloned from one image) are two volumes', async () => {
    writeFileSync(path.join(node.standinDir, 'udev'), '');
    node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' }, { uuid: '1234-ABCD' });
    node.attachVolume('sdc1', 'SITE-CONFIG', { 'site-config.yaml': 'y' }, { uuid: '1234-ABCD' });
    const host = new LocalHost({ root: node.root, env: node.env });
    const found = await findLabelledVolumes(host, DEFAULT_LABELS);
    assert.deepEqual(found.map((f) => [f.nodeDevice, f.uuid]), [['/dev/sdb1', '1234-ABCD'], ['/dev/sdc1', '1234-ABCD']]);
  });

  test('extra labels from --label are accepted', async () => {
    node.attachVolume('sdc', 'STORE-42', { 'site-config.yaml': 'x' });
    const host = new LocalHost({ root: node.root, env: node.env });
    assert.equal((await findLabelledVolumes(host, DEFAULT_LABELS)).length, 0);
    assert.equal((await findLabelledVolumes(host, [...DEFAULT_LABELS, 'store-42'])).length, 1);
  });
});

describe('reading the media', () => {
  let node: StandInNode;
  let host: LocalHost;
  standInNodeEachTest((n, h) => ((node = n), (host = h)));

  test('mounts read-only, nosuid, nodev, noexec on a private dir, copies, and unmounts at once', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'spec:\n  certificates:\n    api: {certFile: certs/api.crt}\n', 'certs/api.crt': 'PEM', 'holiday.jpg': 'not a site-config' });
    const res = await copyFromVolume(host, '/dev/loop0', '/var/lib/sno-reconfigure/candidate', 'vfat');
    assert.equal(res.files, 2, 'the config and the file it names; nothing else on the stick');
    const mountCall = node.calls('mount')[0]!;
    assert.deepEqual(mountCall.args.slice(0, 4), ['-o', 'ro,nosuid,nodev,noexec', '-t', 'vfat']);
    assert.match(mountCall.args.at(-1)!, /\/run\/sno-reconfigure\/media-[0-9a-f]{12}$/);
    assert.equal(node.calls('umount').length, 1);
    assert.deepEqual(node.mounts(), {}, 'nothing left mounted');
    assert.equal(readFileSync(path.join(node.root, 'var/lib/sno-reconfigure/candidate/certs/api.crt'), 'utf8'), 'PEM');
    assert.deepEqual(readdirSync(path.join(node.root, 'run/sno-reconfigure')), [], 'mount point removed');
  });

  test('an unreadable filesystem is a MediaError that says what to do, and nothing is left behind', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(node.standinDir, 'devices', 'loop0.unreadable'), '');
    await assert.rejects(copyFromVolume(host, '/dev/loop0', '/var/lib/sno-reconfigure/candidate', 'vfat'), (e: unknown) => e instanceof MediaError && e.message === 'could not be mounted: its vfat filesystem is damaged (mount exit 32)' && /insert it again/.test(e.remedy) && e.cause instanceof CommandError);
    assert.ok(!existsSync(path.join(node.root, 'var/lib/sno-reconfigure/candidate')));
    assert.deepEqual(readdirSync(path.join(node.root, 'run/sno-reconfigure')), [], 'mount point removed');
  });

  // Issue 27: mount(8)'s own text (it names the private mount point) is never shown; each cause is said as such.
  test('a missing filesystem driver is not damage, and a pulled stick is not damaged or empty', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(node.standinDir, 'devices', 'loop0.nodriver'), '');
    await assert.rejects(copyFromVolume(host, '/dev/loop0', '/c', 'udf'), (e: unknown) => e instanceof MediaError && e.message === 'uses udf, but this node has no driver for udf (its kernel module is missing)' && !/damaged/.test(e.remedy));
    node.detachVolume('loop0');
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(node.standinDir, 'devices', 'loop0.unreadable'), '');
    rmSync(path.join(node.root, 'dev', 'loop0'));
    await assert.rejects(copyFromVolume(host, '/dev/loop0', '/c', 'vfat'), (e: unknown) => e instanceof MediaError && e.message === 'was removed while it was being read (the device disappeared)');
  });

  // Issue 36, C6: a file where the agent's folder for reading media belongs (on /run) was an internal error.
  test('a file where the folder for reading media belongs: a sentence with the way out, nothing mounted', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    mkdirSync(path.join(node.root, 'run'), { recursive: true });
    writeFileSync(path.join(node.root, 'run/sno-reconfigure'), 'x');
    await assert.rejects(
      copyFromVolume(host, '/dev/loop0', '/c', 'vfat'),
      (e: unknown) => e instanceof MediaError && e.message === "cannot be read: the agent's folder for reading media, /run/sno-reconfigure, is a file, not a folder" && e.remedy.startsWith('Move the file aside (mv /run/sno-reconfigure /run/sno-reconfigure.bad)'),
    );
    assert.equal(node.calls('mount').length, 0);
  });

  // The tenth hostile re-test of issue 36 (M8): a link there had the agent chmod its target to 0700 and mount inside it.
  test('a link where the folder for reading media belongs is never followed: a sentence, nothing changed or mounted', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    mkdirSync(path.join(node.root, 'run'), { recursive: true });
    mkdirSync(path.join(node.root, 'etc-like'), { mode: 0o755 });
    symlinkSync('../etc-like', path.join(node.root, 'run/sno-reconfigure'));
    await assert.rejects(
      copyFromVolume(host, '/dev/loop0', '/c', 'vfat'),
      (e: unknown) => e instanceof MediaError && e.message === "cannot be read: the agent's folder for reading media, /run/sno-reconfigure, is a symbolic link, not a folder" && e.remedy.startsWith('Move it aside (mv /run/sno-reconfigure /run/sno-reconfigure.bad)'),
    );
    assert.equal(statSync(path.join(node.root, 'etc-like')).mode & 0o777, 0o755);
    assert.deepEqual(readdirSync(path.join(node.root, 'etc-like')), []);
    assert.equal(node.calls('mount').length, 0);
  });

  // Issue 36: image-based media can be accepted on a node that requires signatures only if the signature comes along.
  test("an image-based config ISO is copied with manifest.json's signature, its mirror sets and extra manifests, and nothing else", async () => {
    node.attachVolume('sr0', 'cluster-config', {
      'cluster-configuration/manifest.json': '{"api_version": 1}',
      'cluster-configuration/manifest.json.sig': 'c2lnbmF0dXJl',
      'cluster-configuration/manifests/image-digest-sources.json': '[]',
      'extra-manifests/settings.yaml': 'kind: ConfigMap\n',
      'auth/kubeconfig': 'not copied',
    });
    const res = await copyFromVolume(host, '/dev/sr0', '/c', 'iso9660');
    assert.equal(res.files, 4);
    assert.equal(readFileSync(path.join(node.root, 'c/cluster-configuration/manifest.json.sig'), 'utf8'), 'c2lnbmF0dXJl');
    assert.ok(!existsSync(path.join(node.root, 'c/auth')));
  });

  test('on FAT, the files a site-config names match whatever their case', async () => {
    node.attachVolume('loop0', 'SITE-CONFIG', { 'Site-Config.YAML': 'spec:\n  pullSecretFile: secrets/ps.json\n', 'SECRETS/PS.JSON': '{}' });
    await copyFromVolume(host, '/dev/loop0', '/c', 'vfat');
    assert.equal(readFileSync(path.join(node.root, 'c/secrets/ps.json'), 'utf8'), '{}');
    node.detachVolume('loop0');
    node.attachVolume('loop0', 'SITE-CONFIG', { 'site-config.yaml': 'spec:\n  pullSecretFile: secrets/ps.json\n', 'SECRETS/PS.JSON': '{}' });
    await copyFromVolume(host, '/dev/loop0', '/c', 'ext4');
    assert.ok(!existsSync(path.join(node.root, 'c/secrets/ps.json')), 'ext4 names have a case');
  });

  test('media pulled out mid-copy is reported as such and the previous copy stays intact', async () => {
    mkdirSync(path.join(node.root, 'media'));
    writeFileSync(path.join(node.root, 'media', 'site-config.yaml'), 'x');
    await copyTree(host, '/media', '/keep');
    rmSync(path.join(node.root, 'media'), { recursive: true });
    await assert.rejects(snapshotInto(host, '/media', '/keep'), (e: unknown) => e instanceof MediaError && /removed while it was being read/.test(e.message));
    assert.equal(readFileSync(path.join(node.root, 'keep/site-config.yaml'), 'utf8'), 'x');
    assert.ok(!existsSync(path.join(node.root, 'keep.staging')), 'the staging copy is cleaned up');
  });

  test('copy limits and symlinks: links are never followed, oversized media is refused', async () => {
    const src = path.join(node.root, 'media');
    mkdirSync(src);
    writeFileSync(path.join(src, 'site-config.yaml'), 'x');
    symlinkSync('/etc/shadow', path.join(src, 'shadow'));
    const res = await copyTree(host, '/media', '/copy/a');
    assert.equal(res.files, 1);
    assert.ok(!existsSync(path.join(node.root, 'copy', 'a', 'shadow')));
    await assert.rejects(copyTree(host, '/media', '/copy/b', { maxFiles: 256, maxFileBytes: 0, maxTotalBytes: 10, maxDepth: 6 }), MediaError);
    const again = await copyTree(host, '/media', '/copy/c');
    assert.equal(again.treeDigest, res.treeDigest, 'same content, same digest');
  });

  // The tenth hostile re-test of issue 36 (M5): on a stick, last month's site-config.yaml was taken beside today's copy
  // that never finished (rsync's temporary name, *.part, WinSCP's, a browser's).
  test('on a stick, a copy at work that would become a file the config reads refuses the copy; other unfinished files on it do not', async () => {
    const src = path.join(node.root, 'media');
    for (const [atWork, final] of [['.site-config.yaml.Xy12Ab', 'site-config.yaml'], ['site-config.yaml.part', 'site-config.yaml'], ['net/network.yaml.filepart', 'net/network.yaml'], ['.site-config.yaml.sig.Ab12Cd', 'site-config.yaml.sig']] as const) {
      rmSync(src, { recursive: true, force: true });
      mkdirSync(path.join(src, 'net'), { recursive: true });
      writeFileSync(path.join(src, 'site-config.yaml'), 'spec:\n  network:\n    nmstateFile: net/network.yaml\n');
      writeFileSync(path.join(src, 'net', 'network.yaml'), 'interfaces: []\n');
      writeFileSync(path.join(src, atWork), 'today');
      await assert.rejects(copyTree(host, '/media', '/copy/at-work'), (e: unknown) => e instanceof MediaError && e.message === `holds a copy not renamed to its final name yet (${atWork}), beside the files it would replace, so none of them is used` && e.remedy.startsWith('Let the copy finish') && e.remedy.includes(`if ${atWork} is no copy at work`) && !e.remedy.includes('mv '), `${atWork} → ${final}`);
    }
    // The twelfth: on FAT the copy's name in another case is the same file; in site-configs/ a new config on its way is one.
    rmSync(src, { recursive: true, force: true });
    mkdirSync(src, { recursive: true });
    writeFileSync(path.join(src, 'site-config.yaml'), 'x');
    writeFileSync(path.join(src, '.SITE-CONFIG.YAML.Ab12Cd'), 'today');
    assert.equal((await copyTree(host, '/media', '/copy/ext4')).files, 1, 'ext4 names have a case: another file');
    await assert.rejects(copyTree(host, '/media', '/copy/fat', undefined, { caseInsensitive: true }), (e: unknown) => e instanceof MediaError && /\.SITE-CONFIG\.YAML\.Ab12Cd/.test(e.message));
    rmSync(src, { recursive: true, force: true });
    mkdirSync(path.join(src, 'site-configs'), { recursive: true });
    writeFileSync(path.join(src, 'site-configs', 'store-a-oct.yaml'), 'x');
    writeFileSync(path.join(src, 'site-configs', '.store-b-nov.yaml.Qw12Er'), 'today');
    await assert.rejects(copyTree(host, '/media', '/copy/multi'), (e: unknown) => e instanceof MediaError && e.message === 'holds a copy not renamed to its final name yet (site-configs/.store-b-nov.yaml.Qw12Er), beside the files it would replace, so none of them is used');
    rmSync(src, { recursive: true, force: true });
    mkdirSync(path.join(src, 'photos'), { recursive: true });
    writeFileSync(path.join(src, 'site-config.yaml'), 'x');
    writeFileSync(path.join(src, 'photos', 'holiday.mkv.part'), 'unrelated');
    writeFileSync(path.join(src, 'notes.txt.part'), 'unrelated');
    assert.equal((await copyTree(host, '/media', '/copy/reused')).files, 1, 'a reused stick\'s own unfinished files are not the config\'s');
  });

  test('a FIFO or a link where the config names a file is said to be one, with what to do (not "does not exist")', async () => {
    const src = path.join(node.root, 'media');
    mkdirSync(src);
    writeFileSync(path.join(src, 'site-config.yaml'), 'spec:\n  network:\n    nmstateFile: net/network.yaml\n');
    mkdirSync(path.join(src, 'net'));
    execFileSync('mkfifo', [path.join(src, 'net', 'network.yaml')]);
    await assert.rejects(copyTree(host, '/media', '/copy/fifo'), (e: unknown) => e instanceof MediaError && e.message === 'holds net/network.yaml as a named pipe (FIFO), not a file; copy the real file onto it' && /never followed/.test(e.remedy));
    rmSync(path.join(src, 'net', 'network.yaml'));
    symlinkSync('/etc/hostname', path.join(src, 'net', 'network.yaml'));
    await assert.rejects(copyTree(host, '/media', '/copy/link'), (e: unknown) => e instanceof MediaError && e.message === 'holds net/network.yaml as a symbolic link, not a file; copy the real file onto it');
  });

  // Issue 36, finding 1: lstat looks at the last name only; `net -> ../etc/x` had the node's own file copied.
  test('a folder on the media that is a symbolic link is refused by name, never followed', async () => {
    const src = path.join(node.root, 'media-linked');
    mkdirSync(src);
    mkdirSync(path.join(node.root, 'etc', 'node-dir'), { recursive: true });
    writeFileSync(path.join(node.root, 'etc', 'node-dir', 'network.yaml'), 'NODE-LOCAL-FILE\n');
    writeFileSync(path.join(src, 'site-config.yaml'), 'spec:\n  network:\n    nmstateFile: net/network.yaml\n  extraManifestFiles: [extra/]\n');
    symlinkSync('../etc/node-dir', path.join(src, 'net'));
    await assert.rejects(copyTree(host, '/media-linked', '/copy/linked-dir'), (e: unknown) => e instanceof MediaError && e.message === 'holds net as a symbolic link, not a folder, so net/network.yaml is not read; copy the real folder onto it' && /never followed/.test(e.remedy));
    assert.ok(!existsSync(path.join(node.root, 'copy', 'linked-dir', 'net')), 'nothing of the node was copied');
    rmSync(path.join(src, 'net'));
    symlinkSync('../etc/node-dir', path.join(src, 'extra'));
    await assert.rejects(copyTree(host, '/media-linked', '/copy/linked-extra'), (e: unknown) => e instanceof MediaError && e.message === 'holds extra as a symbolic link, not a folder, so extra/ is not read; copy the real folder onto it');
  });

  test('the drop directory is taken only once it stopped changing', async () => {
    mkdirSync(path.join(node.root, 'drop'));
    mkdirSync(path.join(node.root, 'empty'));
    writeFileSync(path.join(node.root, 'drop', 'site-config.yaml'), 'x');
    // Judged at given times after the write, not at whenever a loaded machine gets to the next line.
    const written = statSync(path.join(node.root, 'drop', 'site-config.yaml')).mtimeMs;
    assert.equal(await dropDirIsStable(host, '/drop', 2_000, written + 1_000), false);
    assert.equal(await dropDirIsStable(host, '/drop', 2_000, written + 2_500), true);
    assert.equal(await dropDirIsStable(host, '/empty', 0), false, 'an empty directory holds no config');
  });

  // The fifth hostile re-test of issue 36: a time that is no time (1970, the future) or an entry that is not a file
  // left the drop directory unsettled for good, or no source at all; the kernel's change time judges them.
  test('the drop directory dated in the future or in 1970, or holding only a link or a FIFO, is settled once its quiet period has passed', async () => {
    const cases: [string, (dir: string) => void][] = [
      ['dated a day ahead (scp -p from a clock ahead)', (dir) => {
        writeFileSync(path.join(dir, 'site-config.yaml'), 'x');
        const ahead = new Date(Date.now() + 86_400_000);
        utimesSync(path.join(dir, 'site-config.yaml'), ahead, ahead);
      }],
      ['dated 1970', (dir) => {
        writeFileSync(path.join(dir, 'site-config.yaml'), 'x');
        utimesSync(path.join(dir, 'site-config.yaml'), 0, 0);
      }],
      ['a symbolic link', (dir) => symlinkSync('/etc/hostname', path.join(dir, 'site-config.yaml'))],
      ['a FIFO', (dir) => void execFileSync('mkfifo', [path.join(dir, 'site-config.yaml')])],
    ];
    for (const [what, put] of cases) {
      const dir = path.join(node.root, `drop-${cases.findIndex((c) => c[0] === what)}`);
      mkdirSync(dir);
      put(dir);
      const changed = lstatSync(path.join(dir, 'site-config.yaml')).ctimeMs;
      assert.equal(await dropDirIsStable(host, `/${path.basename(dir)}`, 2_000, changed + 1_000), false, `${what}: within the quiet period`);
      assert.equal(await dropDirIsStable(host, `/${path.basename(dir)}`, 2_000, changed + 2_500), true, `${what}: after it`);
    }
  });
});
