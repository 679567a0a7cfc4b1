// A fleet's image end to end (issue 19): `media build` on a "workstation" (the workstation bundle, here on the
// test host) makes a signed FAT image for one site; attached as a real loop device to a node running real
// systemd — which trusts the signing key, as a factory would set it up — it drives the whole relocation.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { TRUSTED_KEYS_DIR } from '../../src/paths';
import { ensureBundle } from '../support/bundle';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { factoryNode, siteConfigYaml } from './testbed/sno-node';
import { NIC_MAC } from './testbed/node-network';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

test('an image from media build, signed, drives a full relocation on a node that trusts the signing key', async () => {
  await ensureRootfsImage();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-e2e-media-build-'));
  const signing = generateKeyPairSync('ed25519');
  writeFileSync(path.join(dir, 'signing.key.pem'), signing.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  // The template: the testbed's site-config with its name from the inventory.
  writeFileSync(path.join(dir, 'site-config.yaml'), siteConfigYaml({ name: '${name}' }));
  // Signed means bound: the row names the machine by its NIC's MAC (the testbed has no DMI serial or UUID).
  writeFileSync(path.join(dir, 'sites.yaml'), stringify({ sites: [{ name: 'store-0042', macAddress: NIC_MAC.toLowerCase() }] }));
  execFileSync(process.execPath, [ensureBundle(), 'media', 'build', '--inventory', 'sites.yaml', '--template', 'site-config.yaml', '--signing-key', 'signing.key.pem', '--format', 'fat', '--out', 'out'], { cwd: dir, stdio: 'pipe' });

  const node = await factoryNode(bed);
  const m = node.machine;
  m.writeFile(`${TRUSTED_KEYS_DIR}/fleet.pem`, signing.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  await m.plug(await bed.attach(path.join(dir, 'out', 'store-0042.fat.img')));
  await node.boot();
  await node.waitForSuccess();
  const status = await node.status();
  assert.equal(status.phase, 'succeeded');
  assert.equal(status.siteConfig?.name, 'store-0042');
});
