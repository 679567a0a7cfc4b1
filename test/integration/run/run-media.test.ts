// Media a technician cannot use reaches the console banner and `status`, not only the journal (issue #17):
// each problem names the device and label and says what to do. The bundled agent runs `--once` against
// stand-in block devices (test/support/stand-ins); the real-filesystem path is covered by test/e2e.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startScenario, siteConfigFor, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';
import { recordRenamedIn } from '../../support/drop-dir';
import { DEFAULT_STATE_DIR, DONE_MARKER, STATE_FILES } from '../../../src/paths';

interface StatusJson {
  phase: string;
  lastError?: { message: string; remedy?: string; step?: string };
}

function status(s: Scenario): { view: StatusJson; text: string; code: number | null } {
  const json = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--json', '--root', s.node.root], { encoding: 'utf8' });
  const text = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8' });
  return { view: JSON.parse(json.stdout) as StatusJson, text: text.stdout, code: text.status };
}

const banner = (s: Scenario) => readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');

/** Runs `run --once` on what `attach` put in place; returns the one problem as journal, banner and status show it. */
async function refusedMedia(attach: (s: Scenario) => void): Promise<{ code: number | null; journal: string[]; all: string[]; banner: string; status: StatusJson; statusText: string; statusCode: number | null }> {
  const s = await startScenario();
  try {
    attach(s);
    const res = await s.run(['--once']);
    const st = status(s);
    return { code: res.code, journal: res.logs.filter((l) => l.level === 'error').map((l) => l.msg), all: res.logs.map((l) => l.msg), banner: banner(s), status: st.view, statusText: st.text, statusCode: st.code };
  } finally {
    await s.cleanup();
  }
}

/** The same sentence on all three: journal line, banner headline, status's last error. */
function assertShownEverywhere(r: Awaited<ReturnType<typeof refusedMedia>>, message: string, remedy: RegExp): void {
  assert.equal(r.code, 1, 'a --once run that found only unusable media fails');
  assert.ok(r.journal.includes(message), `journal: ${r.journal.join(' | ')}`);
  assert.ok(r.banner.includes(`WAITING — ${message}\n`), r.banner);
  assert.match(r.banner, /What to do: /);
  assert.equal(r.status.phase, 'waiting');
  assert.equal(r.status.lastError?.message, message);
  assert.match(r.status.lastError?.remedy ?? '', remedy);
  assert.ok(r.statusText.includes(`detect): ${message}\n`), r.statusText);
  const screens = `${r.banner}${r.statusText}${r.journal.join('\n')}`;
  assert.ok(!screens.includes('/var/lib/sno-reconfigure/candidate'), 'not the agent\'s own copy of the media');
  // Issue 27: nor the private mount point or mount(8)'s own words; and what the office must do when nothing at the node helps.
  assert.doesNotMatch(screens, /\/run\/sno-reconfigure|mount: |wrong fs type/);
  assert.match(r.banner, /^ {3}Otherwise call the office with the store name and this line: /m);
  assert.match(r.statusText, /^Otherwise call the office with the store name and this line: /m);
  // A media problem needs a person, as a refused config does: status exits 1 (README, "Troubleshooting").
  assert.equal(r.statusCode, 1, 'status exits 1 while the media found cannot be used');
}

test('two different site-config volumes: none is taken, both devices are named', async () => {
  let good = '';
  const r = await refusedMedia((s) => {
    good = siteConfigFor(s.sim);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': good });
    s.node.attachVolume('sr0', 'RELOCATION-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { name: 'store-0041', baseDomain: 'store41.example.com' }) });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sr0.fstype'), 'iso9660');
  });
  assertShownEverywhere(r, '2 different site-config media are attached, so none of them is used: the stick /dev/sdb1 (SITE-CONFIG), which holds site "store-0042"; and the disc image /dev/sr0 (RELOCATION-CONFIG), which holds site "store-0041"', /Pull the media not meant for today/);
});

// The fourth hostile re-test of issue 36: two sticks cloned from one image share a filesystem UUID; they were one
// source, and the first found was applied without a look at the other.
test('two sticks with the same filesystem UUID and different sites: none is taken, both devices are named', async () => {
  const r = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { name: 'store-0041-last-month', baseDomain: 'store41.example.com' }) }, { uuid: '1234-ABCD' });
    s.node.attachVolume('sdc1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) }, { uuid: '1234-ABCD' });
  });
  assertShownEverywhere(r, '2 different site-config media are attached, so none of them is used: the stick /dev/sdb1 (SITE-CONFIG), which holds site "store-0041-last-month"; and the stick /dev/sdc1 (SITE-CONFIG), which holds site "store-0042"', /Pull the media not meant for today/);
  assert.deepEqual(r.all.filter((l) => /accepted site-config/i.test(l)), [], "last month's stick is not taken");
});

test('three media holding two different site-configs are counted as such', async () => {
  const r = await refusedMedia((s) => {
    const old = siteConfigFor(s.sim, { name: 'store-0041-last-month', baseDomain: 'store41.example.com' });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': old });
    s.node.attachVolume('sdc1', 'SITE-CONFIG', { 'site-config.yaml': old });
    s.node.attachVolume('sdd1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
  });
  assert.match(r.status.lastError?.message ?? '', /^3 site-config media are attached, holding 2 different site-configs, so none of them is used: the stick \/dev\/sdb1/);
});

// The fifth hostile re-test of issue 36: the drop directory counted only regular files with a plausible mtime, so one
// holding today's config as a link, a FIFO, or a file dated 1970 (touch -d @0, a reproducible build's tar) was no source
// at all, and last month's stick was taken alone.
const notCountedBefore: [string, (s: Scenario, drop: string) => void, RegExp][] = [
  ['a file dated 1970', (s, drop) => {
    writeFileSync(path.join(drop, 'site-config.yaml'), siteConfigFor(s.sim));
    utimesSync(path.join(drop, 'site-config.yaml'), 0, 0);
    recordRenamedIn(s.node.root, ['site-config.yaml']);
  }, /^2 different site-config media are attached, so none of them is used: the stick \/dev\/sdb1 \(SITE-CONFIG\), which holds site "store-0041-last-month"; and the drop directory \S+, which holds site "store-0042"$/],
  ['a symbolic link', (s, drop) => {
    writeFileSync(path.join(s.node.root, 'today.yaml'), siteConfigFor(s.sim));
    symlinkSync(path.join(s.node.root, 'today.yaml'), path.join(drop, 'site-config.yaml'));
  }, /^2 site-config media are attached and one of them cannot be read, so none of them is used: the stick \/dev\/sdb1 \(SITE-CONFIG\), which holds site "store-0041-last-month"; and the drop directory \S+, which cannot be used: it holds site-config\.yaml as a symbolic link/],
  ['a folder holding only a symbolic link', (s, drop) => {
    writeFileSync(path.join(s.node.root, 'today.yaml'), siteConfigFor(s.sim));
    mkdirSync(path.join(drop, 'site-configs'));
    symlinkSync(path.join(s.node.root, 'today.yaml'), path.join(drop, 'site-configs', 'store-0042.yaml'));
  }, /^2 site-config media are attached and one of them cannot be read, so none of them is used: .* and the drop directory \S+, which cannot be used: /],
  ['a FIFO', (_s, drop) => void spawnSync('mkfifo', [path.join(drop, 'site-config.yaml')]), /^2 site-config media are attached and one of them cannot be read, so none of them is used: .* and the drop directory \S+, which cannot be used: /],
  // The sixth hostile re-test: folders counted for nothing, and a copy at work neither.
  ['a folder', (_s, drop) => mkdirSync(path.join(drop, 'site-config.yaml')), /^2 different site-config media are attached, so none of them is used: .* and the drop directory \S+, which holds no site-config file \(a folder, or nothing, where it belongs\)$/],
  ['an empty site-configs/ folder', (_s, drop) => mkdirSync(path.join(drop, 'site-configs')), /^2 different site-config media are attached, so none of them is used: .* and the drop directory \S+, which holds no site-config file \(a folder, or nothing, where it belongs\)$/],
  ['a copy into site-configs/ not renamed in yet', (s, drop) => {
    mkdirSync(path.join(drop, 'site-configs'));
    writeFileSync(path.join(drop, 'site-configs', 'store-0042.yaml.part'), siteConfigFor(s.sim));
  }, /^2 site-config media are attached and one of them cannot be read, so none of them is used: .* and the drop directory \S+, which cannot be used: it holds a copy not renamed to its final name yet \(site-configs\/store-0042\.yaml\.part\), beside the files it would replace, so none of them is used$/],
  // The seventh: last month's config renamed in long ago, today's copy beside it not renamed yet (stalled, or failed).
  ['a copy not renamed in yet beside last month\'s config', (s, drop) => {
    writeFileSync(path.join(drop, 'site-config.yaml'), siteConfigFor(s.sim, { name: 'store-0041-last-month', baseDomain: 'store41.example.com' }));
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(drop, 'site-config.yaml'), past, past);
    recordRenamedIn(s.node.root, ['site-config.yaml']);
    writeFileSync(path.join(drop, 'site-config.yaml.part'), siteConfigFor(s.sim).slice(0, 200));
  }, /^2 site-config media are attached and one of them cannot be read, so none of them is used: .* and the drop directory \S+, which cannot be used: it holds a copy not renamed to its final name yet \(site-config\.yaml\.part\), beside the files it would replace, so none of them is used$/],
  ['a copy not renamed in yet', (s, drop) => writeFileSync(path.join(drop, 'site-config.yaml.part'), siteConfigFor(s.sim)), /^2 site-config media are attached and one of them cannot be read, so none of them is used: .* and the drop directory \S+, which cannot be used: it holds only a copy not renamed to its final name yet \(site-config\.yaml\.part\), so it has no site-config\.yaml$/],
  // The eighth: other copy tools' temporary names, and something else where the drop directory belongs.
  ...['site-config.yaml.filepart', '.site-config.yaml.Xa1b2C'].map((name): [string, (s: Scenario, drop: string) => void, RegExp] => [`a copy at work named ${name} beside last month's config`, (s, drop) => {
    writeFileSync(path.join(drop, 'site-config.yaml'), siteConfigFor(s.sim, { name: 'store-0041-last-month', baseDomain: 'store41.example.com' }));
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(drop, 'site-config.yaml'), past, past);
    recordRenamedIn(s.node.root, ['site-config.yaml']);
    writeFileSync(path.join(drop, name), siteConfigFor(s.sim).slice(0, 200));
  }, new RegExp(`which cannot be used: it holds a copy not renamed to its final name yet \\(${name.replace(/\./g, '\\.')}\\), beside the files it would replace, so none of them is used$`)]),
  ['an rsync copy at work alone', (s, drop) => writeFileSync(path.join(drop, '.site-config.yaml.Xa1b2C'), siteConfigFor(s.sim).slice(0, 200)), /which cannot be used: it holds only a copy not renamed to its final name yet \(\.site-config\.yaml\.Xa1b2C\), so it has no site-config\.yaml$/],
  // The ninth: a copy at work below the top (here a network file's folder) was not looked at.
  ['a copy at work inside a folder beside last month\'s config', (s, drop) => {
    writeFileSync(path.join(drop, 'site-config.yaml'), siteConfigFor(s.sim, { name: 'store-0041-last-month', baseDomain: 'store41.example.com' }));
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(drop, 'site-config.yaml'), past, past);
    recordRenamedIn(s.node.root, ['site-config.yaml']);
    mkdirSync(path.join(drop, 'net'));
    writeFileSync(path.join(drop, 'net', 'network.yaml.part'), 'interfaces: []\n');
  }, /which cannot be used: it holds a copy not renamed to its final name yet \(net\/network\.yaml\.part\), beside the files it would replace, so none of them is used$/],
];
for (const [what, put, said] of notCountedBefore) {
  test(`last month's stick beside today's config in the drop directory as ${what}: none is used, both are named`, async () => {
    const r = await refusedMedia((s) => {
      s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { name: 'store-0041-last-month', baseDomain: 'store41.example.com' }) });
      const drop = path.join(s.node.root, 'etc/sno-reconfigure/site-config.d');
      mkdirSync(drop, { recursive: true });
      put(s, drop);
      // Past the drop directory's quiet period (2 s): what was put there is settled, not still being copied.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2_500);
    });
    assert.match(r.status.lastError?.message ?? '', said, r.all.join('\n'));
    assert.deepEqual(r.all.filter((l) => /accepted site-config/i.test(l)), [], "last month's stick is not taken");
  });
}

// Issue 27: last month's valid virtual media must not be applied because today's stick cannot be read.
const todaysUnusableSticks: [string, (s: Scenario) => void, string][] = [
  ['named site-config.yaml.txt', (s) => s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml.txt': 'x' }), 'has no site-config.yaml; it holds: site-config.yaml.txt'],
  ['formatted NTFS', (s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.fstype'), 'ntfs');
  }, 'uses ntfs, which is not a filesystem the node reads'],
  ['that fails to mount', (s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.unreadable'), '');
  }, 'could not be mounted'],
];
for (const [what, attach, why] of todaysUnusableSticks) {
  test(`last month's valid virtual media and today's stick ${what}: nothing is applied, both devices and the old site are named`, async () => {
    const r = await refusedMedia((s) => {
      s.node.attachVolume('sr0', 'RELOCATION-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { name: 'store-0041-last-month' }) });
      writeFileSync(path.join(s.node.standinDir, 'devices', 'sr0.fstype'), 'iso9660');
      attach(s);
    });
    const message = r.status.lastError?.message ?? '';
    assert.ok(message.startsWith('2 site-config media are attached and one of them cannot be read, so none of them is used: '), message);
    assert.ok(message.includes(`the stick /dev/sdb1 (SITE-CONFIG), which cannot be used: it ${why}`), message);
    assert.ok(message.includes('the disc image /dev/sr0 (RELOCATION-CONFIG), which holds site "store-0041-last-month"'), message);
    assertShownEverywhere(r, message, /Pull the media not meant for today.*If the stick \/dev\/sdb1 \(SITE-CONFIG\) is today's: /);
    assert.deepEqual(r.all.filter((l) => /accepted site-config|network/i.test(l)), [], 'last month\'s config is not taken');
  });
}

/** A site-config in the node's drop directory, written a minute ago (settled: no writer at work). */
function dropSettled(s: Scenario, text: string): void {
  const drop = path.join(s.node.root, 'etc/sno-reconfigure/site-config.d');
  mkdirSync(drop, { recursive: true });
  writeFileSync(path.join(drop, 'site-config.yaml'), text);
  const past = new Date(Date.now() - 60_000);
  utimesSync(path.join(drop, 'site-config.yaml'), past, past);
  // Renamed in while an earlier start of the agent watched, as far as this run knows (these tests are about sources).
  recordRenamedIn(s.node.root, ['site-config.yaml']);
}

// Issue 36, finding 4: only volumes were compared with each other, so last month's BMC image was applied while
// today's config sat in the drop directory.
test('last month\'s virtual media and today\'s config in the drop directory: none is used, both are named, with how to remove the stale one', async () => {
  const r = await refusedMedia((s) => {
    s.node.attachVolume('sr0', 'RELOCATION-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { name: 'store-0041-last-month' }) });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sr0.fstype'), 'iso9660');
    dropSettled(s, siteConfigFor(s.sim));
  });
  const drop = path.join(r.status.lastError?.message.match(/the drop directory (\S+),/)?.[1] ?? '');
  assertShownEverywhere(r, `2 different site-config media are attached, so none of them is used: the disc image /dev/sr0 (RELOCATION-CONFIG), which holds site "store-0041-last-month"; and the drop directory ${drop}, which holds site "store-0042"`, /Pull the media not meant for today .* If the file in the drop directory \S+ is not today's, remove it from there/);
  assert.deepEqual(r.all.filter((l) => /accepted site-config|network/i.test(l)), [], 'last month\'s config is not taken');
});

test('the same site-config on a volume and in the drop directory is one site-config', async () => {
  const s = await startScenario();
  try {
    const good = siteConfigFor(s.sim);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': good });
    dropSettled(s, good);
    const res = await s.run(['--once']);
    assert.equal(res.code, 0, res.stdout.slice(-2000));
    assert.ok(res.logs.some((l) => /accepted site-config "store-0042" from the drop directory/.test(l.msg)), res.logs.map((l) => l.msg).join('\n'));
  } finally {
    await s.cleanup();
  }
});

test('identical copies on two volumes are one site-config', async () => {
  const s = await startScenario();
  try {
    const good = siteConfigFor(s.sim);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': good });
    s.node.attachVolume('sdc1', 'CLUSTER-CONFIG', { 'site-config.yaml': good, 'unrelated.txt': 'old notes' });
    const res = await s.run(['--once']);
    assert.equal(res.code, 0, res.stdout.slice(-2000));
    assert.ok(res.logs.some((l) => /accepted site-config/.test(l.msg)));
  } finally {
    await s.cleanup();
  }
});

test('a stick without site-config.yaml says what it holds, never the agent\'s own paths', async () => {
  const r = await refusedMedia((s) => s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml.txt': 'x', 'notes.doc': 'x' }));
  assertShownEverywhere(r, 'the stick /dev/sdb1 (SITE-CONFIG) has no site-config.yaml; it holds: notes.doc, site-config.yaml.txt', /Rename site-config.yaml.txt to site-config.yaml\./);
  const empty = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', {});
    mkdirSync(path.join(s.node.standinDir, 'devices', 'sdb1'), { recursive: true });
  });
  assertShownEverywhere(empty, 'the stick /dev/sdb1 (SITE-CONFIG) has no site-config.yaml; no files can be seen on it', /Copy site-config.yaml.* pull the stick and insert it again/);
});

test('on FAT, SITE-CONFIG.YAML is site-config.yaml (FAT names have no case); on ext4 it is named in the refusal', async () => {
  const s = await startScenario();
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'SITE-CONFIG.YAML': siteConfigFor(s.sim) });
    const res = await s.run(['--once']);
    assert.equal(res.code, 0, res.stdout.slice(-2000));
  } finally {
    await s.cleanup();
  }
  const r = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'SITE-CONFIG.YAML': 'x' });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.fstype'), 'ext4');
  });
  assertShownEverywhere(r, 'the stick /dev/sdb1 (SITE-CONFIG) has no site-config.yaml; it holds: SITE-CONFIG.YAML', /Rename SITE-CONFIG.YAML to site-config.yaml\./);
});

test('a filesystem the node does not read is refused by name, never mounted', async () => {
  const r = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.fstype'), 'ntfs');
  });
  assertShownEverywhere(r, 'the stick /dev/sdb1 (SITE-CONFIG) uses ntfs, which is not a filesystem the node reads; use FAT, ext4, ISO 9660 or UDF', /formatted FAT \(vfat\) or ext4/);
});

test('a stick that cannot be mounted, and a file too big, reach the banner and status', async () => {
  const r = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.unreadable'), '');
  });
  assertShownEverywhere(r, 'the stick /dev/sdb1 (SITE-CONFIG) could not be mounted: its vfat filesystem is damaged (mount exit 32)', /Pull the stick and insert it again/);
  const noDriver = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'x' });
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.fstype'), 'udf');
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.nodriver'), '');
  });
  assertShownEverywhere(noDriver, 'the disc image /dev/sdb1 (SITE-CONFIG) uses udf, but this node has no driver for udf (its kernel module is missing)', /formatted FAT or ext4/);
  const big = await refusedMedia((s) => s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': 'spec:\n  pullSecretFile: ps.json\n', 'ps.json': Buffer.alloc(9 * 1024 * 1024, 0x20) }));
  assertShownEverywhere(big, 'the stick /dev/sdb1 (SITE-CONFIG) holds ps.json of 9437184 bytes, more than a site-config file can be (8388608)', /Put only the site-config/);
});

test('a symbolic link on the stick is named as one, with what to do', async () => {
  const r = await refusedMedia((s) => {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'real.yaml': 'x' });
    symlinkSync('real.yaml', path.join(s.node.standinDir, 'devices', 'sdb1', 'site-config.yaml'));
  });
  assertShownEverywhere(r, 'the stick /dev/sdb1 (SITE-CONFIG) holds site-config.yaml as a symbolic link, not a file; copy the real file onto it', /never followed/);
});

// Issue 36, finding 1: on ext4 (or an ISO) a folder can be a link; lstat of net/network.yaml looks at the last
// name only, so `net -> ../../../etc/x` had the node's own file copied as the site's network and applied.
test('a folder on the stick that is a symbolic link into the node is refused by name; nothing of the node is read', async () => {
  const r = await refusedMedia((s) => {
    const nodeDir = path.join(s.node.root, 'etc/hostile-node-dir');
    mkdirSync(nodeDir, { recursive: true });
    writeFileSync(path.join(nodeDir, 'network.yaml'), 'interfaces: []\n# NODE-LOCAL-FILE\n');
    const text = siteConfigFor(s.sim).replace(/\n {4}nmstate:\n(?: {6}.*\n)+/, '\n    nmstateFile: net/network.yaml\n');
    assert.match(text, /nmstateFile: net\/network\.yaml/);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': text });
    symlinkSync('../../../etc/hostile-node-dir', path.join(s.node.standinDir, 'devices', 'sdb1', 'net'));
    writeFileSync(path.join(s.node.standinDir, 'devices', 'sdb1.fstype'), 'ext4');
  });
  assertShownEverywhere(r, 'the stick /dev/sdb1 (SITE-CONFIG) holds net as a symbolic link, not a folder, so net/network.yaml is not read; copy the real folder onto it', /never followed/);
  assert.ok(!r.all.some((m) => /accepted site-config/.test(m)), r.all.join('\n'));
});

// The tenth hostile re-test of issue 36 (U1): a config renamed into the drop directory stayed "renamed in" after its
// relocation finished, and was applied again by the next run once the marker was removed.
test('a finished relocation forgets what was renamed into the drop directory: the file left there is not taken again until renamed in again', async () => {
  const s = await startScenario();
  try {
    dropSettled(s, siteConfigFor(s.sim));
    const first = await s.run(['--once']);
    assert.equal(first.code, 0, first.stdout.slice(-2000));
    assert.ok(first.logs.some((l) => /accepted site-config "store-0042" from the drop directory/.test(l.msg)));
    assert.ok(existsSync(path.join(s.node.root, DONE_MARKER)));
    assert.equal(existsSync(path.join(s.node.root, DEFAULT_STATE_DIR, STATE_FILES.dropDirRenames)), false, 'the record of renames is gone');
    rmSync(path.join(s.node.root, DONE_MARKER));
    const again = await s.run(['--once']);
    assert.equal(again.logs.some((l) => /accepted site-config/.test(l.msg)), false, again.logs.map((l) => l.msg).join('\n'));
    assert.ok(again.logs.some((l) => /holds site-config\.yaml, which it did not see renamed in/.test(l.msg)), again.logs.map((l) => l.msg).join('\n'));
  } finally {
    await s.cleanup();
  }
});
