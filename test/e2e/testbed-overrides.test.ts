// Real programs in place of the testbed's stand-ins on the real-NetworkManager node (issue 38): SNO_TESTBED_CONFIGURE_OVS
// (+ _RELEASE) and SNO_TESTBED_NMSTATECTL. A wrong path is reported before any test starts (node-network.ts checks
// the environment when it loads); a tiny configure-ovs proves the file given is the one the node runs.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Testbed } from './testbed/index';
import { FACTORY_LAN, RELEASE_FILE, networkProgramsInUse, realNetworkNode, toolOverrides } from './testbed/node-network';

const bed = new Testbed();
const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-testbed-overrides-'));
after(async () => {
  delete process.env.SNO_TESTBED_CONFIGURE_OVS;
  delete process.env.SNO_TESTBED_CONFIGURE_OVS_RELEASE;
  await bed.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function script(name: string, text: string, mode = 0o755): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

test('a missing, non-executable or non-running override is refused, naming the variable', () => {
  assert.throws(() => toolOverrides({ SNO_TESTBED_CONFIGURE_OVS: path.join(dir, 'absent.sh') }), /SNO_TESTBED_CONFIGURE_OVS=.*absent\.sh: the testbed cannot install it/);
  assert.throws(() => toolOverrides({ SNO_TESTBED_CONFIGURE_OVS: script('plain.sh', '#!/bin/bash\n', 0o644) }), /SNO_TESTBED_CONFIGURE_OVS=.*cannot install it/);
  assert.throws(() => toolOverrides({ SNO_TESTBED_CONFIGURE_OVS: script('broken.sh', '#!/bin/bash\nif then fi\n') }), /SNO_TESTBED_CONFIGURE_OVS=.*does not run here/);
  assert.throws(() => toolOverrides({ SNO_TESTBED_NMSTATECTL: script('nmstatectl', '#!/bin/sh\nexit 3\n') }), /SNO_TESTBED_NMSTATECTL=.*does not run here/);
  assert.throws(() => toolOverrides({ SNO_TESTBED_CONFIGURE_OVS: script('ok.sh', '#!/bin/bash\n'), SNO_TESTBED_CONFIGURE_OVS_RELEASE: '4.12' }), /SNO_TESTBED_CONFIGURE_OVS_RELEASE=4\.12/);
  assert.deepEqual(toolOverrides({}), {});
});

test('SNO_TESTBED_CONFIGURE_OVS: the node runs the given configure-ovs.sh (and its release) instead of the stand-in', async () => {
  process.env.SNO_TESTBED_CONFIGURE_OVS = script('tiny-configure-ovs.sh', '#!/bin/bash\necho "tiny configure-ovs ran with $1" > /run/tiny-configure-ovs\n');
  process.env.SNO_TESTBED_CONFIGURE_OVS_RELEASE = '4.14';
  const m = await realNetworkNode(bed, { release: '4.16' });
  await m.boot({ network: 'private', timeoutMs: 120_000 });
  assert.equal(m.readFile('/run/tiny-configure-ovs'), 'tiny configure-ovs ran with OVNKubernetes\n');
  assert.equal(m.readFile(RELEASE_FILE).trim(), '4.14');
  assert.notEqual((await m.exec(['ip', 'link', 'show', 'br-ex'])).code, 0, 'no br-ex: the stand-in did not run');
  assert.match(await m.execOk(['ip', '-4', '-o', 'addr', 'show', 'dev', 'eno1']), new RegExp(`${FACTORY_LAN.nodeIp}/24`));
});

test('the network test files\' suite titles say which programs ran: the stand-ins, or each real one with its path', () => {
  assert.equal(networkProgramsInUse({}), 'configure-ovs stand-in, nmstatectl stand-in');
  const ovs = script('named.sh', '#!/bin/bash\n');
  const nmstatectl = script('nmstatectl-real', '#!/bin/sh\necho nmstatectl 2.2.23\n');
  assert.equal(networkProgramsInUse({ SNO_TESTBED_CONFIGURE_OVS: ovs, SNO_TESTBED_CONFIGURE_OVS_RELEASE: '4.14', SNO_TESTBED_NMSTATECTL: nmstatectl }), `REAL configure-ovs ${ovs} (release 4.14), REAL nmstatectl ${nmstatectl}`);
});
