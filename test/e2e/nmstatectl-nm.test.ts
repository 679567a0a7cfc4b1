// The nmstatectl stand-in on the real NetworkManager (test/e2e/testbed/stand-ins/nmstatectl-nm.cjs, README "The
// nmstatectl stand-in"), with the real NetworkManager 1.42.4 and its OVS plugin, real Open vSwitch and the configure-ovs
// stand-in on nmcli: each test reproduces one observation of the real programs (nmstatectl 2.2.23), recorded in the
// testbed README — which profile nmstate edits, what it deletes, what NetworkManager's checkpoint gives back (only what
// was active on a device when it was taken) and its errors. Short checkpoint timeouts; a node per situation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Testbed, ensureRootfsImage, type Machine } from './testbed/index';
import { FACTORY_PROFILE_UUID, NM_FACTORY_PROFILE, networkProgramsInUse, realNetworkNode } from './testbed/node-network';
import { eventually } from './testbed/sno-node';

/** Named in every suite title: the report says which network programs ran (issue 38). */
const PROGRAMS = networkProgramsInUse();

const bed = new Testbed();
after(() => bed.cleanup());

const ETC = '/etc/NetworkManager/system-connections';
const CONFIGURE_OVS_PROFILES = ['br-ex', 'ovs-if-br-ex', 'ovs-if-phys0', 'ovs-port-br-ex', 'ovs-port-phys0'];

/** The store's state of the recorded runs (transcripts/site.yml): br-ex released, the site address on eno1. */
const SITE = `interfaces:
- name: br-ex
  type: ovs-interface
  state: absent
- name: br-ex
  type: ovs-bridge
  state: absent
- name: eno1
  type: ethernet
  state: up
  ipv4:
    enabled: true
    dhcp: false
    address:
    - ip: 192.168.42.10
      prefix-length: 24
  ipv6:
    enabled: false
routes:
  config:
  - destination: 0.0.0.0/0
    next-hop-address: 192.168.42.1
    next-hop-interface: eno1
dns-resolver:
  config:
    server:
    - 192.168.42.1
`;
/** The NIC state alone, as the early network phase applies it before configure-ovs (early-apply.md, early.yml). */
const early = (addresses: string[], routesBefore = '') => `interfaces:
- name: eno1
  type: ethernet
  state: up
  ipv4:
    enabled: true
    dhcp: false
    address:
${addresses.map((a) => `    - ip: ${a}\n      prefix-length: 24`).join('\n')}
  ipv6:
    enabled: false
routes:
  config:
${routesBefore}  - destination: 0.0.0.0/0
    next-hop-address: 192.168.42.1
    next-hop-interface: eno1
dns-resolver:
  config:
    server:
    - 192.168.42.1
`;
const ABSENT_ENO1_ROUTES = '  - next-hop-interface: eno1\n    state: absent\n';

interface Profile {
  name: string;
  uuid: string;
  device: string;
  file: string;
}

/** A node with the real NetworkManager and this stand-in, booted (configure-ovs at boot unless `early`). */
async function node(hostname: string, opts: { early?: boolean } = {}): Promise<Machine> {
  await ensureRootfsImage();
  const m = await realNetworkNode(bed, { hostname, release: '4.14', ...(opts.early ? { ovsConfigurationAtBoot: false } : {}) });
  await m.boot({ network: 'private' });
  return m;
}

function helpers(get: () => Machine) {
  const m = () => get();
  const nmstatectl = (args: string[], input?: string) => m().exec(['nmstatectl', ...args], { input, timeoutMs: 120_000 });
  const apply = (state: string, ...args: string[]) => nmstatectl(['apply', ...args, '-'], state);
  const profiles = async (): Promise<Profile[]> =>
    (await m().execOk(['nmcli', '-t', '-f', 'NAME,UUID,DEVICE,FILENAME', 'connection', 'show'])).split('\n').filter(Boolean).map((l) => {
      const [name, uuid, device, file] = l.split(':');
      return { name: name!, uuid: uuid!, device: device!, file: file! };
    });
  const checkpoints = async () => (await m().execOk(['busctl', 'get-property', 'org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager', 'org.freedesktop.NetworkManager', 'Checkpoints'])).trim();
  const addrs = async (dev: string) => (await m().exec(['ip', '-o', '-4', 'addr', 'show', 'dev', dev, 'scope', 'global'])).stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[3]);
  const routes = async () => (await m().execOk(['ip', 'route'])).trim();
  const file = (p: string) => m().readFile(p);
  return { nmstatectl, apply, profiles, checkpoints, addrs, routes, file };
}

describe(`nmstatectl stand-in on the real NetworkManager, br-ex built by configure-ovs at boot [${PROGRAMS}]`, { concurrency: 1 }, () => {
  let m: Machine;
  const h = helpers(() => m);
  before(async () => {
    m = await node('nm-brex');
    await eventually(async () => assert.deepEqual(await h.addrs('br-ex'), ['192.168.111.20/24']), 60_000, 200);
  });

  test('observation 8: an address on br-ex\'s port is refused with nmstate\'s text, exit 1, no checkpoint, nothing changed', async () => {
    const before = await h.profiles();
    const res = await h.apply('interfaces:\n- name: eno1\n  type: ethernet\n  state: up\n  ipv4:\n    enabled: true\n    dhcp: false\n    address:\n    - ip: 192.168.42.10\n      prefix-length: 24\n');
    assert.equal(res.code, 1);
    assert.equal(res.stderr.trim().split('\n').pop(), 'NmstateError: InvalidArgument: Interface eno1 cannot have IP enabled as it is attached to a controller where IP is not allowed');
    assert.equal(await h.checkpoints(), 'ao 0');
    assert.deepEqual(await h.profiles(), before);
  });

  test('observation 9: no checkpoint to commit or roll back, and a missing NIC, as nmstate says them', async () => {
    for (const verb of ['commit', 'rollback']) {
      const res = await h.nmstatectl([verb]);
      assert.equal(res.code, 1);
      assert.equal(res.stderr.trim(), 'NmstateError: Bug: NotFound: Not active checkpoints');
    }
    const eno9 = await h.apply('interfaces:\n- name: eno9\n  type: ethernet\n  state: up\n', '--no-commit', '--timeout', '60');
    assert.equal(eno9.code, 1);
    assert.equal(eno9.stderr.trim().split('\n').pop(), 'NmstateError: InvalidArgument: Ethernet interface eno9 does not exists');
    assert.equal(await h.checkpoints(), 'ao 0');
  });

  test('observations 2, 9, 4 and 5: the NIC\'s /etc profile rewritten and configure-ovs\'s five deleted; a second checkpoint refused; the rollback gives back only what was active (in /etc), the site address stays and the next boot comes up on it', async () => {
    const started = Date.now();
    const before = await h.profiles();
    const res = await h.apply(SITE, '--no-commit', '--timeout', '60');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /Deleting existing connection UUID [0-9a-f-]+, id Some\("ovs-if-phys0"\)/);
    // observation 2: the NIC's own profile, same UUID and path, with nmstate's additions
    const after = await h.profiles();
    assert.deepEqual(after.filter((p) => p.name !== 'lo').map((p) => `${p.name} ${p.uuid} ${p.file}`), [`eno1 ${FACTORY_PROFILE_UUID} ${NM_FACTORY_PROFILE}`]);
    const eno1 = h.file(NM_FACTORY_PROFILE);
    for (const line of ['address1=192.168.42.10/24', 'dns-priority=40', 'addr-gen-mode=eui64', 'route1=0.0.0.0/0,192.168.42.1,0', 'dns=192.168.42.1;']) assert.ok(eno1.includes(line), `${line} in\n${eno1}`);
    assert.deepEqual(await h.addrs('eno1'), ['192.168.42.10/24']);
    // observation 9: a second --no-commit while the first checkpoint runs
    const second = await h.apply(SITE, '--no-commit', '--timeout', '60');
    assert.equal(second.code, 1);
    assert.equal(second.stderr.trim().split('\n').pop(), 'NmstateError: Bug: CheckpointConflict: Another checkpoint exists, please wait its timeout or destroy it');
    // observation 4: the rollback re-creates configure-ovs's profiles (active when the checkpoint was taken) with
    // their UUIDs, in /etc, and keeps the site address in the NIC's /etc profile (it was not active then)
    const factoryUuids = new Map(before.map((p) => [p.name, p.uuid]));
    assert.equal((await h.nmstatectl(['rollback'])).code, 0);
    const back = await h.profiles();
    for (const name of CONFIGURE_OVS_PROFILES) assert.equal(`${back.find((p) => p.name === name)?.uuid} ${back.find((p) => p.name === name)?.file}`, `${factoryUuids.get(name)} ${ETC}/${name}.nmconnection`, `${name} back in /etc`);
    assert.ok(h.file(NM_FACTORY_PROFILE).includes('address1=192.168.42.10/24'), 'the NIC\'s profile keeps the site address');
    assert.equal(back.find((p) => p.name === 'eno1')?.device, '', 'the NIC\'s own profile is not active');
    // observation 5: the next boot comes up on the site address (configure-ovs clones the /etc NIC profile)
    await m.reboot({ graceful: true });
    await eventually(async () => assert.deepEqual(await h.addrs('br-ex'), ['192.168.42.10/24']), 90_000, 200);
    process.stderr.write(`# observations 2, 4, 5 took ${Date.now() - started} ms\n`);
  });
});

describe(`nmstatectl stand-in on the real NetworkManager: the checkpoint expires in NetworkManager [${PROGRAMS}]`, { concurrency: 1 }, () => {
  let m: Machine;
  const h = helpers(() => m);
  before(async () => {
    m = await node('nm-expire');
    await eventually(async () => assert.deepEqual(await h.addrs('br-ex'), ['192.168.111.20/24']), 60_000, 200);
  });

  test('observation 6: a checkpoint left to expire (NetworkManager\'s own timer) leaves the node without address or default route', async () => {
    const res = await h.apply(SITE, '--no-commit', '--timeout', '20');
    assert.equal(res.code, 0, res.stderr);
    // configure-ovs re-run: br-ex rebuilt on the site address with new profiles, which the checkpoint deletes
    await m.execOk(['systemctl', 'restart', 'ovs-configuration.service'], { timeoutMs: 180_000 });
    await eventually(async () => assert.equal(await h.checkpoints(), 'ao 0', 'NetworkManager rolled back by itself'), 30_000, 200);
    await eventually(async () => {
      assert.deepEqual([...(await h.addrs('eno1')), ...(await h.addrs('br-ex').catch(() => []))], []);
      assert.doesNotMatch(await h.routes(), /^default/m);
    }, 10_000, 200);
    const log = (await m.journalctl('-u', 'NetworkManager', '-o', 'cat')).stdout;
    assert.match(log, /checkpoint\[.*\]: rollback of \/org\/freedesktop\/NetworkManager\/Checkpoint\/\d+/);
  });
});

describe(`nmstatectl stand-in on the real NetworkManager: ovs-if-phys0 still active when nmstate looks (issue 35 point 2) [${PROGRAMS}]`, { concurrency: 1 }, () => {
  let m: Machine;
  const h = helpers(() => m);
  before(async () => {
    m = await node('nm-race');
    await eventually(async () => assert.deepEqual(await h.addrs('br-ex'), ['192.168.111.20/24']), 60_000, 200);
  });

  test('nmstate edits configure-ovs\'s ovs-if-phys0 (site settings saved to /etc under that name) and deletes the NIC\'s factory profile', async () => {
    await m.execOk(['sh', '-c', 'mkdir -p /etc/nmstate-standin && echo port-still-active > /etc/nmstate-standin/race']);
    const res = await h.apply(SITE, '--no-commit', '--timeout', '60');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /Modifying connection UUID Some\("[0-9a-f-]+"\), ID Some\("ovs-if-phys0"\)/);
    assert.match(res.stderr, new RegExp(`Deleting existing connection UUID ${FACTORY_PROFILE_UUID}, id Some\\("eno1"\\)`));
    const after = await h.profiles();
    assert.equal(after.find((p) => p.name === 'eno1'), undefined, 'the factory profile is gone');
    assert.equal(after.find((p) => p.name === 'ovs-if-phys0')?.file, `${ETC}/ovs-if-phys0.nmconnection`);
    assert.ok(h.file(`${ETC}/ovs-if-phys0.nmconnection`).includes('address1=192.168.42.10/24'));
    assert.equal((await h.nmstatectl(['commit'])).code, 0);
  });
});

describe(`nmstatectl stand-in on the real NetworkManager: the early network phase (the NIC's own profile active, before configure-ovs) [${PROGRAMS}]`, { concurrency: 1 }, () => {
  let m: Machine;
  const h = helpers(() => m);
  before(async () => {
    m = await node('nm-early', { early: true });
    await eventually(async () => assert.deepEqual(await h.addrs('eno1'), ['192.168.111.20/24']), 60_000, 200);
  });

  test('observation 13: the factory default route is kept in the new profile (route1 via .111.1, metric 100, table 254)', async () => {
    assert.equal((await h.apply(early(['192.168.42.10']), '--no-commit', '--timeout', '60')).code, 0);
    const eno1 = h.file(NM_FACTORY_PROFILE);
    assert.match(eno1, /route1=0\.0\.0\.0\/0,192\.168\.111\.1,100\n/);
    assert.match(eno1, /route1_options=table=254/);
    assert.match(eno1, /route2=0\.0\.0\.0\/0,192\.168\.42\.1,0\n/);
  });

  test('observation 11: rollback puts the factory profile back (same UUID and path) and live at once', async () => {
    assert.equal((await h.nmstatectl(['rollback'])).code, 0);
    const eno1 = h.file(NM_FACTORY_PROFILE);
    assert.match(eno1, /address1=192\.168\.111\.20\/24,192\.168\.111\.1/);
    assert.match(eno1, new RegExp(`uuid=${FACTORY_PROFILE_UUID}`));
    await eventually(async () => assert.deepEqual(await h.addrs('eno1'), ['192.168.111.20/24']), 5_000, 100);
  });

  test('observation 11: a checkpoint left to expire does the same, by NetworkManager alone', async () => {
    assert.equal((await h.apply(early(['192.168.42.10']), '--no-commit', '--timeout', '4')).code, 0);
    await eventually(async () => assert.equal(await h.checkpoints(), 'ao 0'), 30_000, 200);
    await eventually(async () => assert.deepEqual(await h.addrs('eno1'), ['192.168.111.20/24']), 5_000, 100);
    assert.match(h.file(NM_FACTORY_PROFILE), /address1=192\.168\.111\.20\/24,192\.168\.111\.1/);
  });

  test('observations 13 and 15: an absent entry removes the factory route; two addresses keep the state\'s order', async () => {
    assert.equal((await h.apply(early(['192.168.127.10', '192.168.42.10'], ABSENT_ENO1_ROUTES), '--no-commit', '--timeout', '60')).code, 0);
    const eno1 = h.file(NM_FACTORY_PROFILE);
    assert.match(eno1, /address1=192\.168\.127\.10\/24\naddress2=192\.168\.42\.10\/24/);
    assert.doesNotMatch(eno1, /192\.168\.111\.1/);
    await eventually(async () => assert.deepEqual(await h.addrs('eno1'), ['192.168.127.10/24', '192.168.42.10/24']), 10_000, 100);
    assert.equal((await h.nmstatectl(['rollback'])).code, 0);
  });

  test('observation 12: after commit configure-ovs clones the site profile into br-ex', async () => {
    assert.equal((await h.apply(early(['192.168.42.10'], ABSENT_ENO1_ROUTES), '--no-commit', '--timeout', '60')).code, 0);
    assert.equal((await h.nmstatectl(['commit'])).code, 0);
    assert.equal(await h.checkpoints(), 'ao 0');
    await m.execOk(['systemctl', 'start', 'ovs-configuration.service'], { timeoutMs: 180_000 });
    await eventually(async () => assert.deepEqual(await h.addrs('br-ex'), ['192.168.42.10/24']), 30_000, 200);
    // NetworkManager adds a profile's routes just after its address (one CI run read none with the address in place).
    await eventually(async () => assert.match(await h.routes(), /^default via 192\.168\.42\.1 dev br-ex/m), 20_000, 200);
  });
});
