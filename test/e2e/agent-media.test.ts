// The agent end to end on real systemd with real loop devices (issue #17): last month's virtual media is still
// attached when today's stick goes in, and the two hold different site-configs. Neither is taken; the journal
// (priority err), the console banner and `sno-reconfigure status` name both devices. Once the old one is
// detached, today's goes through. The node: test/e2e/testbed/sno-node.ts.
// The two cases run side by side, each on a node of its own: one's factory run and boot fill the other's waits
// (the agent's polls during a relocation), and neither sees the other's node, media or journal.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BANNER_PATH, UNIT_NAME } from '../../src/paths';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { eventually, factoryNode, siteConfigYaml } from './testbed/sno-node';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

describe('site-config media: more than one attached', { concurrency: true }, () => {
  test('two different site-config volumes (a FAT stick and an old ext4 image): both refused and named; the one left goes through', async () => {
    await ensureRootfsImage();
    const node = await factoryNode(bed);
    const m = node.machine;
    const today = await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml(), 'holiday.jpg': 'a reused stick' });
    const old = await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml({ name: 'store-0041' }).replace(/store42/g, 'store41') }, 'cluster-config', { fs: 'ext4' });
    await node.boot();
    const parts = [`the stick ${today.device} (SITE-CONFIG), which holds site "store-0042"`, `the stick ${old.device} (cluster-config), which holds site "store-0041"`];
    const head = '2 different site-config media are attached, so none of them is used: ';
    const shown = await eventually(async () => {
      const errors = (await node.agentLog('-p', 'err')).map((e) => e.log?.msg);
      const said = errors.find((e) => e === `${head}${parts.join('; and ')}` || e === `${head}${[...parts].reverse().join('; and ')}`);
      assert.ok(said, JSON.stringify(errors));
      return said!;
    }, 90_000);
    await eventually(() => assert.ok(m.readFile(BANNER_PATH).includes(` sno-reconfigure: WAITING — ${shown}\n`), m.readFile(BANNER_PATH)));
    const status = await node.status();
    assert.equal(status.phase, 'waiting');
    assert.equal(status.lastError?.message, shown);
    assert.ok((await node.statusText()).includes(`detect): ${shown}\n`));
    assert.deepEqual(node.nmstateCalls(), [], 'nothing changed');
    assert.equal((await node.unit(UNIT_NAME, ['ActiveState'])).ActiveState, 'active', 'the agent keeps waiting');

    await bed.detach(old);
    await node.waitForSuccess();
    assert.equal((await node.status()).phase, 'succeeded');
  });

  // Issue 27: today's stick cannot be used (its file is site-config.yaml.txt), last month's ext4 image is valid.
  test('last month\'s valid ext4 image and today\'s unusable FAT stick: nothing is applied, both are named with the old site', async () => {
    await ensureRootfsImage();
    const node = await factoryNode(bed);
    const m = node.machine;
    const today = await bed.insertMedia(m, { 'site-config.yaml.txt': siteConfigYaml() });
    const old = await bed.insertMedia(m, { 'site-config.yaml': siteConfigYaml({ name: 'store-0041' }).replace(/store42/g, 'store41') }, 'cluster-config', { fs: 'ext4' });
    await node.boot();
    const shown = await eventually(async () => {
      const said = (await node.agentLog('-p', 'err')).map((e) => e.log?.msg ?? '').find((e) => e.startsWith('2 site-config media are attached and one of them cannot be read, so none of them is used: '));
      assert.ok(said);
      return said;
    }, 90_000);
    assert.ok(shown.includes(`the stick ${today.device} (SITE-CONFIG), which cannot be used: it has no site-config.yaml; it holds: site-config.yaml.txt`), shown);
    assert.ok(shown.includes(`the stick ${old.device} (cluster-config), which holds site "store-0041"`), shown);
    await eventually(() => assert.ok(m.readFile(BANNER_PATH).includes(` sno-reconfigure: WAITING — ${shown}\n`), m.readFile(BANNER_PATH)));
    assert.equal((await node.status()).lastError?.message, shown);
    assert.deepEqual(node.nmstateCalls(), [], 'last month\'s site network is not applied');
  });
});
