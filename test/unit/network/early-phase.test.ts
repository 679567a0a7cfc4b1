// The early network phase through the host seam (src/network/early.ts), on a node at early boot modelled after the
// real NetworkManager 1.42 + nmstatectl 2.2 with the NIC's own /etc profile active (reference early-apply.md,
// observations 11-12): `apply --no-commit` rewrites that profile, `rollback` writes it back while the checkpoint
// lives, a reboot loses the checkpoint (the profile stays as the apply left it). Power cuts are a thrown PowerCut at a
// chosen call; the next boot is a new host over the same disk.
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, mkdirSync, writeFileSync, readFileSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost, type CommandResult, type RunOptions } from '../../../src/host/host';
import { earlyNetwork, earlyRecordFile, knownGoodFile, IFACE_HINT_FILE, committedFile, desiredDigest, nmstateConfigError, verifyWindows, type EarlyOptions } from '../../../src/network/early';
import { createLogger } from '../../../src/log';
import { parseYamlCore } from '../../../src/util/yaml';
import { sameProfile } from '../../../src/network/profiles';

const PROFILE = '/etc/NetworkManager/system-connections/eno1.nmconnection';
const FACTORY = '[connection]\nid=eno1\ntype=ethernet\nautoconnect=true\ninterface-name=eno1\n\n[ipv4]\naddress1=192.168.111.20/24,192.168.111.1\nmethod=manual\n';
const STATE_DIR = '/var/lib/sno-reconfigure';
class PowerCut extends Error {}

type Call = { args: string[]; phase?: string; timeoutMs?: number };

/** One boot of the node: the checkpoint lives in this object (NetworkManager's memory), the profile on the disk. */
class EarlyBootNode extends LocalHost {
  checkpoint?: string;
  calls: Call[] = [];
  cutAt?: string;
  /** `commit` fails as a hung one killed by the seam's time limit does. */
  commitFails = false;
  applied?: Record<string, unknown>;
  /** `apply` fails with this stderr (nmstatectl's "NmstateError: <Kind>: …") and changes nothing. */
  applyFails?: string;
  /** nmcli answers with this exit code. */
  nmcliExit = 0;
  /** `rollback` answers success without writing the profile back (the checkpoint did not cover it). */
  rollbackKeepsProfile = false;
  /** Writes into the profile folder do not stick (a read-only or failing /etc). */
  profileWritesLost = false;
  /** An address that answers ping only from this clock time on (a link that comes up late). */
  lateAnswer?: { ip: string; from: number; clock: () => number };
  made: string[] = [];
  constructor(root: string, readonly answering: Set<string>) {
    super({ root });
  }
  private phase(): string | undefined {
    try {
      return (JSON.parse(readFileSync(this.resolve(earlyRecordFile(STATE_DIR)), 'utf8')) as { phase: string }).phase;
    } catch {
      return undefined;
    }
  }
  override async writeFileAtomic(nodePath: string, data: string | Buffer, mode?: number): Promise<void> {
    if (this.profileWritesLost && nodePath.startsWith(path.dirname(PROFILE))) return;
    await super.writeFileAtomic(nodePath, data, mode);
  }
  override async mkdirp(nodePath: string, mode?: number): Promise<void> {
    this.made.push(nodePath);
    await super.mkdirp(nodePath, mode);
  }
  override async run(cmd: string, args: readonly string[], opts?: RunOptions): Promise<CommandResult> {
    const key = `${cmd} ${args[0] ?? ''}`;
    this.calls.push({ args: [cmd, ...args], ...(this.phase() ? { phase: this.phase()! } : {}), ...(opts?.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
    const ok = (stdout = ''): CommandResult => ({ code: 0, stdout, stderr: '' });
    const fail = (stderr: string): CommandResult => ({ code: 1, stdout: '', stderr });
    const cutHere = this.cutAt === key;
    if (cutHere && cmd !== 'nmstatectl') throw new PowerCut(key);
    const profile = () => readFileSync(this.resolve(PROFILE), 'utf8');
    if (cmd === 'nmstatectl') {
      switch (args[0]) {
        case 'show': {
          const addr = /address1=([\d.]+)\/(\d+)(?:,([\d.]+))?/.exec(profile());
          return ok(`interfaces:\n- {name: eno1, type: ethernet, state: up, ipv4: {enabled: true, address: [{ip: ${addr![1]}, prefix-length: ${addr![2]}}]}}\nroutes:\n  config:\n  - {destination: 0.0.0.0/0, next-hop-address: ${addr![3] ?? '192.168.111.1'}, next-hop-interface: eno1}\n`);
        }
        case 'apply': {
          if (this.applyFails) return fail(this.applyFails);
          const state = parseYamlCore(readFileSync(args[args.length - 1]!, 'utf8')) as { interfaces: { ipv4?: { address?: { ip: string; 'prefix-length': number }[] } }[]; routes?: { config: { 'next-hop-address'?: string }[] } };
          this.applied = state as Record<string, unknown>;
          this.checkpoint = profile();
          const addresses = state.interfaces[0]!.ipv4?.address ?? [];
          const gw = state.routes?.config.find((r) => r['next-hop-address'])?.['next-hop-address'];
          writeFileSync(this.resolve(PROFILE), `[connection]\nid=eno1\ntype=ethernet\ninterface-name=eno1\n[ipv4]\n${addresses.map((a, i) => `address${i + 1}=${a.ip}/${a['prefix-length']}`).join('\n')}\n${gw ? `route1=0.0.0.0/0,${gw},0\n` : ''}method=manual\n`, { mode: 0o600 });
          if (cutHere) throw new PowerCut(key);
          return ok();
        }
        case 'commit':
          if (cutHere) throw new PowerCut(key);
          if (this.commitFails) return fail('');
          if (!this.checkpoint) return fail('NmstateError: Bug: NotFound: Not active checkpoints');
          delete this.checkpoint;
          return ok();
        case 'rollback':
          if (!this.checkpoint) return fail('NmstateError: Bug: NotFound: Not active checkpoints');
          if (this.rollbackKeepsProfile) {
            delete this.checkpoint;
            return ok();
          }
          // NetworkManager writes the profile back, normalised (autoconnect=true dropped): early-apply.md.
          writeFileSync(this.resolve(PROFILE), this.checkpoint.replace('autoconnect=true\n', ''), { mode: 0o600 });
          delete this.checkpoint;
          if (cutHere) throw new PowerCut(key);
          return ok();
      }
    }
    if (cmd === 'ping') {
      const ip = args[args.length - 1]!;
      const late = this.lateAnswer?.ip === ip && this.lateAnswer.clock() >= this.lateAnswer.from;
      return this.answering.has(ip) || late ? ok('time=1 ms') : fail('100% packet loss');
    }
    if (cmd === 'nmcli') return { code: this.nmcliExit, stdout: '', stderr: this.nmcliExit ? 'Error: failed' : '' };
    if (cmd === 'getent') return ok('1.2.3.4 STREAM x');
    return fail(`unexpected ${cmd}`);
  }
}

const SITE = {
  nmstate: {
    interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.42.10', 'prefix-length': 24 }] } }],
    routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.1', 'next-hop-interface': 'eno1' }] },
  },
  verify: { ping: [] as string[], resolve: [] as string[] },
};
const wrongGateway = { ...SITE, nmstate: { ...SITE.nmstate, routes: { config: [{ destination: '0.0.0.0/0', 'next-hop-address': '192.168.42.254', 'next-hop-interface': 'eno1' }] } } };
const STORE = new Set(['192.168.42.1', '192.168.111.1']);

describe('early network phase', () => {
  let root: string;
  let now: number;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'early-'));
    mkdirSync(path.join(root, path.dirname(PROFILE)), { recursive: true });
    writeFileSync(path.join(root, PROFILE), FACTORY, { mode: 0o600 });
    now = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const boot = () => new EarlyBootNode(root, STORE);
  const phaseOnce = (host: EarlyBootNode, network: typeof SITE | null = SITE) =>
    earlyNetwork({ host, log: createLogger({ format: 'json', journal: false, level: 'error', write: () => undefined }), stateDir: STATE_DIR, ...(network ? { network } : {}), internal: ['192.168.111.20/24'], networkTimeoutMs: 20_000, clock: { now: () => now, sleep: async (ms) => void (now += ms) } });
  const disk = () => readFileSync(path.join(root, PROFILE), 'utf8');
  const record = () => JSON.parse(readFileSync(path.join(root, earlyRecordFile(STATE_DIR)), 'utf8')) as { phase: string; failures: number };
  // By content: NetworkManager rewrites a profile it rolls back (early-apply.md), and the known good may be taken from that.
  const knownGood = () => (JSON.parse(readFileSync(path.join(root, knownGoodFile(STATE_DIR)), 'utf8')) as { content: string; mode: number }[]).map((p) => { const text = Buffer.from(p.content, 'base64').toString(); return { text: sameProfile(text, FACTORY) ? FACTORY : text, mode: p.mode }; });

  test('commits a site network that verifies; each change is preceded by its journaled phase; the hint names the uplink', async () => {
    const host = boot();
    const { outcome } = await phaseOnce(host);
    assert.equal(outcome, 'committed');
    const nm = host.calls.filter((c) => c.args[0] === 'nmstatectl' && c.args[1] !== 'show').map((c) => `${c.args[1]}@${c.phase}`);
    assert.deepEqual(nm, ['apply@applying', 'commit@committing']);
    assert.ok(host.calls.some((c) => c.args[0] === 'ping' && c.args.includes('192.168.42.1') && c.phase === 'verifying'), 'the configured gateway itself is pinged');
    assert.match(disk(), /address1=192\.168\.42\.10\/24\naddress2=192\.168\.111\.20\/24/, 'site address first, the internal IP after it, on the NIC profile');
    const routes = (host.applied!.routes as { config: unknown[] }).config;
    assert.deepEqual(routes[0], { 'next-hop-interface': 'eno1', state: 'absent' }, 'the old default route is removed first');
    assert.equal(record().phase, 'committed');
    assert.equal(readFileSync(path.join(root, IFACE_HINT_FILE), 'utf8'), 'eno1\n');
    assert.ok(readFileSync(path.join(root, committedFile(STATE_DIR)), 'utf8').trim().length === 64);
    assert.deepEqual(knownGood(), [{ text: FACTORY, mode: 0o600 }]);
    // the next boot: nothing to do
    const again = boot();
    assert.equal((await phaseOnce(again)).outcome, 'nothing');
    assert.deepEqual(again.calls, []);
  });

  test('a wrong gateway is rolled back to the factory profile (same content, mode), counted as an attempt', async () => {
    const host = boot();
    const { outcome, record: rec } = await phaseOnce(host, wrongGateway);
    assert.equal(outcome, 'failed');
    assert.equal(rec!.failures, 1);
    assert.match(rec!.lastFailure!, /ping 192\.168\.42\.254/);
    assert.deepEqual(host.calls.filter((c) => c.args[0] === 'nmstatectl' && c.args[1] !== 'show').map((c) => `${c.args[1]}@${c.phase}`), ['apply@applying', 'rollback@restoring']);
    assert.match(disk(), /192\.168\.111\.20\/24,192\.168\.111\.1/);
    assert.equal(statSync(path.join(root, PROFILE)).mode & 0o777, 0o600);
    assert.equal(record().phase, 'rolled-back');
  });

  test('a commit that fails (hung, killed) is a failed attempt: the known good comes back, the boot goes on', async () => {
    const host = boot();
    host.commitFails = true;
    const { outcome, record: rec } = await phaseOnce(host);
    assert.equal(outcome, 'failed');
    assert.equal(rec!.failures, 1);
    assert.deepEqual(host.calls.filter((c) => c.args[0] === 'nmstatectl' && c.args[1] !== 'show').map((c) => `${c.args[1]}@${c.phase}`), ['apply@applying', 'commit@committing', 'rollback@restoring']);
    assert.match(disk(), /192\.168\.111\.20\/24,192\.168\.111\.1/);
    assert.equal(record().phase, 'rolled-back');
    assert.equal(existsSync(path.join(root, committedFile(STATE_DIR))), false);
  });

  for (const [phase, cutAt] of [['applying', 'nmstatectl apply'], ['verifying', 'ping -c'], ['committing', 'nmstatectl commit'], ['restoring', 'nmstatectl rollback']] as const) {
    test(`a power cut in ${phase}: the next boot writes the known-good profile back before anything else, then tries again from it`, async () => {
      const first = boot();
      first.cutAt = cutAt;
      await assert.rejects(phaseOnce(first, phase === 'restoring' ? wrongGateway : SITE), PowerCut);
      assert.equal(record().phase, phase === 'restoring' ? 'restoring' : phase);
      // The boot after the cut: no checkpoint. The profile on disk may hold the uncommitted site settings.
      const second = boot();
      second.cutAt = 'nmstatectl apply';
      await assert.rejects(phaseOnce(second), PowerCut);
      const nmcli = second.calls.filter((c) => c.args[0] === 'nmcli').map((c) => c.args.slice(1).join(' '));
      if (phase !== 'restoring') assert.deepEqual(nmcli, ['connection reload', 'connection up id eno1'], 'NetworkManager reloads and re-activates the written profile');
      assert.deepEqual(knownGood(), [{ text: FACTORY, mode: 0o600 }], 'the known good is the factory profile, never the half-applied one');
      // A third boot finishes: restore, apply, verify, commit.
      const third = boot();
      assert.equal((await phaseOnce(third)).outcome, 'committed');
      assert.equal(third.calls.find((c) => c.args[0] === 'nmstatectl' && c.args[1] === 'apply')?.phase, 'applying');
      assert.deepEqual(knownGood(), [{ text: FACTORY, mode: 0o600 }]);
    });
  }

  test('a power cut in applying and media gone at the next boot: the known good comes back and nothing is applied', async () => {
    const first = boot();
    first.cutAt = 'nmstatectl apply';
    await assert.rejects(phaseOnce(first), PowerCut);
    assert.match(disk(), /192\.168\.42\.10/, 'the uncommitted site settings are on disk after the cut');
    const second = boot();
    assert.equal((await phaseOnce(second, null)).outcome, 'restored');
    assert.match(disk(), /192\.168\.111\.20\/24,192\.168\.111\.1/);
    assert.equal(record().phase, 'rolled-back');
  });

  // What the technician sees: the logged sentences (json lines' msg).
  let said: string[] = [];
  const phaseWith = (host: EarlyBootNode, over: { network?: EarlyOptions['network'] | null; networkTimeoutMs?: number } = {}) => {
    said = [];
    const network = over.network === undefined ? SITE : over.network;
    return earlyNetwork({ host, log: createLogger({ format: 'json', journal: false, level: 'info', write: (line) => void said.push((JSON.parse(line) as { msg: string }).msg) }), stateDir: STATE_DIR, ...(network ? { network } : {}), internal: ['192.168.111.20/24'], networkTimeoutMs: over.networkTimeoutMs ?? 20_000, clock: { now: () => now, sleep: async (ms) => void (now += ms) } });
  };
  const writeRecord = (rec: Record<string, unknown> | string) => {
    mkdirSync(path.join(root, STATE_DIR), { recursive: true });
    writeFileSync(path.join(root, earlyRecordFile(STATE_DIR)), typeof rec === 'string' ? rec : JSON.stringify(rec));
  };
  const nmstate = (host: EarlyBootNode) => host.calls.filter((c) => c.args[0] === 'nmstatectl' && c.args[1] !== 'show').map((c) => c.args[1]);
  const nmcli = (host: EarlyBootNode) => host.calls.filter((c) => c.args[0] === 'nmcli').map((c) => c.args.slice(1).join(' '));

  test('nmstatectl is asked to apply the desired state file with a checkpoint of the verify window plus a minute', async () => {
    const host = boot();
    const vlan = { name: 'eno1.100', type: 'vlan', state: 'up', vlan: { 'base-iface': 'eno1', id: 100 } };
    const network = { ...SITE, nmstate: { ...SITE.nmstate, interfaces: [...SITE.nmstate.interfaces, vlan] } };
    assert.equal((await phaseWith(host, { network, networkTimeoutMs: 100_000 })).outcome, 'committed');
    const apply = host.calls.find((c) => c.args[1] === 'apply')!;
    assert.deepEqual(apply.args, ['nmstatectl', 'apply', '--no-commit', '--timeout', '110', host.toolPath(`${STATE_DIR}/network-desired.yaml`)]);
    assert.ok(said.includes('applying the site network (eno1, eno1.100) with a 110-second checkpoint, before configure-ovs builds br-ex'), said.join('\n'));
    assert.ok(said.includes('site network applied on eno1 and committed; configure-ovs builds br-ex from it now and at every boot'), said.join('\n'));
  });

  test('the verify window is half the network timeout: a gateway that comes up within it commits, the window ends on the dot', async () => {
    const host = boot();
    host.lateAnswer = { ip: '192.168.42.9', from: 8_000, clock: () => now };
    const late = { ...SITE, verify: { ping: ['192.168.42.9'], resolve: [] } };
    assert.equal((await phaseWith(host, { network: late })).outcome, 'committed');
  });

  test('a gateway that never answers is checked until exactly the end of the window, not a round beyond', async () => {
    assert.equal((await phaseWith(boot(), { network: wrongGateway, networkTimeoutMs: 21_000 })).outcome, 'failed');
    assert.equal(now, 10_500);
  });

  test('a failed verification names only the checks that failed, each of them, and the technician reads the attempt count', async () => {
    const host = boot();
    const network = { ...wrongGateway, verify: { ping: ['192.168.111.1', '192.168.42.99'], resolve: [] } };
    const { outcome, record: rec } = await phaseWith(host, { network });
    assert.equal(outcome, 'failed');
    assert.match(rec!.lastFailure!, /^ping 192\.168\.42\.254: [^;]+; ping 192\.168\.42\.99: [^;]+$/);
    assert.ok(said.includes(`the site network did not verify and was rolled back (attempt 1 of 3): ${rec!.lastFailure}; the node is back on its previous network`), said.join('\n'));
    // NetworkManager's rollback brought the profile back: nothing for the agent to write or re-activate.
    assert.deepEqual(nmcli(host), []);
  });

  test('a state nmstate refuses as wrong is refused at once, not retried; the next boot says so', async () => {
    const host = boot();
    host.applyFails = 'NmstateError: InvalidArgument: Invalid IPv4 network prefix length 99 | more context';
    const { outcome, record: rec } = await phaseWith(host);
    assert.equal(outcome, 'refused');
    assert.equal(rec!.refused, true);
    assert.equal(rec!.failures, 1);
    assert.equal(rec!.lastFailure, 'nmstate refused the site network in spec.network (InvalidArgument: Invalid IPv4 network prefix length 99)');
    assert.deepEqual(nmstate(host), ['apply', 'rollback']);
    assert.equal(record().phase, 'rolled-back');
    const next = boot();
    assert.equal((await phaseWith(next)).outcome, 'gave-up');
    assert.deepEqual(next.calls, []);
    assert.deepEqual(said, [`the site network of this site-config was not applied at this boot: nmstate refused it (${rec!.lastFailure}); the node keeps its previous network`]);
  });

  test('an apply that fails for another reason is a failed attempt, tried again at the next boot', async () => {
    const host = boot();
    host.applyFails = 'NmstateError: VerificationError: Failed to verify the state';
    const { outcome, record: rec } = await phaseWith(host);
    assert.equal(outcome, 'failed');
    assert.equal(rec!.refused, undefined);
    assert.match(rec!.lastFailure!, /nmstatectl apply/);
    assert.equal((await phaseWith(boot())).outcome, 'committed');
  });

  test('an interface the node does not have is refused before anything changes, with the remedy once', async () => {
    const host = boot();
    const network = { ...SITE, nmstate: { ...SITE.nmstate, interfaces: [...SITE.nmstate.interfaces, { name: 'eno8', type: 'ethernet', state: 'up' }, { name: 'eno9', type: 'ethernet', state: 'up' }] } };
    const { outcome, record: rec } = await phaseWith(host, { network });
    assert.equal(outcome, 'refused');
    const want = 'spec.network.nmstate names the network interface eno8, which this node does not have (this node has eno1); spec.network.nmstate names the network interface eno9, which this node does not have (this node has eno1). Write in spec.network.nmstate the interface names this node has (this node has eno1).';
    assert.deepEqual(record(), { digest: desiredDigest(network.nmstate), phase: 'rolled-back', failures: 0, refused: true, lastFailure: want });
    assert.deepEqual(rec, record());
    assert.deepEqual(said, [`the site network was not applied: ${want}`]);
    assert.deepEqual(nmstate(host), []);
    assert.equal(disk(), FACTORY);
  });

  // Issue 41: the early phase removes today's default route before the site's (earlyState); a site state with no
  // address and no DHCP (an MTU alone) would have been applied, verified with nothing to check, and committed: the
  // node left without a default route at every boot, and configure-ovs with no interface to build br-ex on.
  test('a site network that gives no interface an address or DHCP is refused before anything changes', async () => {
    for (const nmstateState of [
      { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', mtu: 9000 }] },
      { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: false }, ipv6: { enabled: false } }] },
    ]) {
      rmSync(path.join(root, STATE_DIR), { recursive: true, force: true });
      const host = boot();
      const network = { nmstate: nmstateState as unknown as typeof SITE.nmstate, verify: { ping: [], resolve: [] } };
      const { outcome } = await phaseWith(host, { network });
      assert.equal(outcome, 'refused', JSON.stringify(nmstateState));
      assert.deepEqual(nmstate(host), [], 'nothing applied');
      assert.equal(disk(), FACTORY);
      assert.equal(existsSync(path.join(root, IFACE_HINT_FILE)), false);
      assert.deepEqual(said, ['the site network was not applied: spec.network.nmstate gives no interface an address or DHCP, so the node would be left without its network (eno1 carries the default route today; configure-ovs builds br-ex on the interface that carries it). Describe in spec.network.nmstate the uplink — eno1 or the bond or VLAN that replaces it — with its addresses or DHCP, default route and DNS servers, never br-ex.']);
    }
  });

  // The eleventh hostile re-test of issue 36: a static address without a default route removed today's and added none.
  test('a static site network without a default route is refused before anything changes; DHCP or autoconf bring their own', async () => {
    const staticOnly = { interfaces: SITE.nmstate.interfaces };
    const host = boot();
    const { outcome } = await phaseWith(host, { network: { nmstate: staticOnly as unknown as typeof SITE.nmstate, verify: { ping: [], resolve: [] } } });
    assert.equal(outcome, 'refused');
    assert.deepEqual(nmstate(host), []);
    assert.equal(disk(), FACTORY);
    assert.match(said[0] ?? '', /^the site network was not applied: spec\.network\.nmstate gives no default route, and no interface DHCP or autoconf to bring one, so the node would be left without its network \(eno1 carries the default route today;/);
    const slaac = { interfaces: [{ name: 'eno1', type: 'ethernet', state: 'up', ipv4: { enabled: false }, ipv6: { enabled: true, autoconf: true, dhcp: false } }] };
    rmSync(path.join(root, STATE_DIR), { recursive: true, force: true });
    const other = boot();
    assert.notEqual((await phaseWith(other, { network: { nmstate: slaac as unknown as typeof SITE.nmstate, verify: { ping: [], resolve: [] } } })).outcome, 'refused', said.join('\n'));
  });

  test('a network committed earlier is not applied again after another config failed', async () => {
    assert.equal((await phaseWith(boot())).outcome, 'committed');
    assert.equal((await phaseWith(boot(), { network: wrongGateway })).outcome, 'failed');
    const host = boot();
    const { outcome, record: rec } = await phaseWith(host);
    assert.equal(outcome, 'nothing');
    assert.equal(rec!.phase, 'rolled-back');
    assert.deepEqual(host.calls, []);
  });

  test('a cut attempt of another config is restored even though this network was committed before', async () => {
    assert.equal((await phaseWith(boot())).outcome, 'committed');
    const cut = boot();
    cut.cutAt = 'nmstatectl apply';
    await assert.rejects(phaseWith(cut, { network: wrongGateway }), PowerCut);
    assert.match(disk(), /192\.168\.42\.254/);
    const host = boot();
    await phaseWith(host);
    assert.ok(said.includes('the last attempt at the site network was cut off (phase applying) before it was committed; bringing back the network the node had before it'), said.join('\n'));
    assert.doesNotMatch(disk(), /192\.168\.42\.254/);
  });

  // The tenth hostile re-test of issue 36 (M1): `null` made the phase stop with a raw error, and `[]`, `"x"` or a phase
  // of the wrong type were read as "nothing to do".
  test('an unreadable or damaged record is an attempt in flight: the known good comes back first', async () => {
    assert.equal((await phaseWith(boot())).outcome, 'committed');
    const whole = { digest: 'x', phase: 'committed', failures: 0 };
    const wrong = [{ digest: 5 }, { phase: 'done' }, { failures: 1.5 }, { failures: -1 }, { lastFailure: 5 }, { refused: 'yes' }].map((w) => JSON.stringify({ ...whole, ...w }));
    for (const damaged of ['{"digest": "ab', 'null', '[]', '"x"', '{"phase": 5}', ...wrong]) {
      writeRecord(damaged);
      const host = boot();
      await phaseWith(host);
      assert.equal(said[0], 'the last attempt at the site network was cut off (phase applying) before it was committed; bringing back the network the node had before it', damaged);
      assert.equal(nmstate(host)[0], 'rollback', damaged);
    }
    // Whole, the same record is taken at its word: nothing in flight, and this network was committed before.
    writeRecord({ ...whole, lastFailure: 'earlier', refused: false });
    const host = boot();
    assert.equal((await phaseWith(host)).outcome, 'nothing');
    assert.deepEqual(nmstate(host), []);
  });

  test('a damaged copy of the known good is said, and the restore completes with what is on disk', async () => {
    const folder = path.join(root, knownGoodFile(STATE_DIR));
    rmSync(folder, { force: true });
    mkdirSync(folder, { recursive: true });
    writeRecord({ digest: 'x', phase: 'applying', failures: 0 });
    assert.equal((await phaseWith(boot(), { network: null })).outcome, 'restored');
    assert.ok(said.some((l) => l.startsWith("the agent's copy of the network profiles the node had before the attempt is damaged (it is a folder, not a file)")), said.join('\n'));
    rmSync(folder, { recursive: true });
    for (const damaged of ['null', '{}', '[{"name": 5}]', '[{"name": "../../etc/passwd", "mode": 384, "content": ""}]', 'not JSON']) {
      writeRecord({ digest: 'x', phase: 'applying', failures: 0 });
      mkdirSync(path.dirname(path.join(root, knownGoodFile(STATE_DIR))), { recursive: true });
      writeFileSync(path.join(root, knownGoodFile(STATE_DIR)), damaged);
      const host = boot();
      const { outcome } = await phaseWith(host, { network: null });
      assert.equal(outcome, 'restored', damaged);
      assert.ok(said.some((l) => l.startsWith("the agent's copy of the network profiles the node had before the attempt is damaged (it is not the list of profiles the agent writes), so it cannot be written back")), said.join('\n'));
      assert.equal(record().phase, 'rolled-back');
      assert.equal(disk(), FACTORY);
    }
  });

  test('an attempt in flight with no known good saved keeps what is on disk and says so', async () => {
    writeRecord({ digest: 'x', phase: 'applying', failures: 0 });
    const host = boot();
    const { outcome } = await phaseWith(host, { network: null });
    assert.equal(outcome, 'restored');
    assert.ok(said.includes('no known-good network profiles were saved before the interrupted attempt; the node keeps what NetworkManager has on disk'), said.join('\n'));
    assert.equal(record().phase, 'rolled-back');
    assert.equal(disk(), FACTORY);
  });

  test('restoring writes back only the changed profiles and brings up those with an id, within a time limit', async () => {
    const dir = path.join(root, path.dirname(PROFILE));
    const ENO2 = '[connection]\nuuid=2b2b\nid=eno2\ntype=ethernet\ninterface-name=eno2\n';
    const NO_ID = '[connection]\nuuid=3c3c\ntype=ethernet\ninterface-name=eno3\n';
    writeFileSync(path.join(dir, 'eno2.nmconnection'), ENO2, { mode: 0o600 });
    writeFileSync(path.join(dir, 'eno3.nmconnection'), NO_ID, { mode: 0o600 });
    const first = boot();
    first.cutAt = 'nmstatectl apply';
    await assert.rejects(phaseWith(first), PowerCut);
    writeFileSync(path.join(dir, 'eno3.nmconnection'), `${NO_ID}autoconnect=false\n`, { mode: 0o600 });
    const second = boot();
    assert.equal((await phaseWith(second, { network: null })).outcome, 'restored');
    assert.deepEqual(nmcli(second), ['connection reload', 'connection up id eno1']);
    assert.ok(second.calls.filter((c) => c.args[0] === 'nmcli').every((c) => typeof c.timeoutMs === 'number'), 'every nmcli call is bounded');
    assert.ok(said.includes('the network profiles eno1.nmconnection, eno3.nmconnection in /etc/NetworkManager/system-connections were not as before the attempt; the agent wrote the saved ones back and asks NetworkManager to use them'), said.join('\n'));
    assert.ok(!said.some((s) => s.startsWith('NetworkManager did not')), said.join('\n'));
    assert.equal(readFileSync(path.join(dir, 'eno3.nmconnection'), 'utf8'), NO_ID);
    assert.equal(readFileSync(path.join(dir, 'eno2.nmconnection'), 'utf8'), ENO2);
  });

  test('NetworkManager refusing to reload or bring up a restored profile is said, and the restore completes', async () => {
    const first = boot();
    first.cutAt = 'nmstatectl apply';
    await assert.rejects(phaseWith(first), PowerCut);
    const second = boot();
    second.nmcliExit = 4;
    assert.equal((await phaseWith(second, { network: null })).outcome, 'restored');
    assert.ok(said.includes('NetworkManager did not reload its profiles (nmcli exit 4); it uses the restored profiles at the next boot at the latest'), said.join('\n'));
    assert.ok(said.includes('NetworkManager did not bring up the profile eno1 (nmcli exit 4); it uses the restored profiles at the next boot at the latest'), said.join('\n'));
    assert.equal(disk(), FACTORY);
  });

  test('a rollback that left the site settings on disk: the agent writes the known good back itself', async () => {
    const host = boot();
    host.rollbackKeepsProfile = true;
    assert.equal((await phaseWith(host, { network: wrongGateway })).outcome, 'failed');
    assert.ok(said.includes('after the rollback the network profiles eno1.nmconnection in /etc/NetworkManager/system-connections were not as before the attempt; the agent wrote the saved ones back and asks NetworkManager to use them'), said.join('\n'));
    assert.deepEqual(nmcli(host), ['connection reload', 'connection up id eno1']);
    assert.equal(disk(), FACTORY);
  });

  test('profiles that cannot be written back stop the boot in phase restoring, to be restored again', async () => {
    const ENO2 = path.join(root, path.dirname(PROFILE), 'eno2.nmconnection');
    writeFileSync(ENO2, '[connection]\nid=eno2\n', { mode: 0o600 });
    const first = boot();
    first.cutAt = 'nmstatectl apply';
    await assert.rejects(phaseWith(first), PowerCut);
    writeFileSync(ENO2, '[connection]\nid=eno2\nautoconnect=false\n', { mode: 0o600 });
    const second = boot();
    second.profileWritesLost = true;
    await assert.rejects(phaseWith(second), { message: 'the saved network profiles eno1.nmconnection, eno2.nmconnection could not be written back' });
    assert.equal(record().phase, 'restoring');
  });

  test('a hint that already names the uplink is left as it is', async () => {
    mkdirSync(path.join(root, path.dirname(IFACE_HINT_FILE)), { recursive: true });
    writeFileSync(path.join(root, IFACE_HINT_FILE), 'eno1\n');
    assert.equal((await phaseWith(boot())).outcome, 'committed');
    assert.equal(readFileSync(path.join(root, IFACE_HINT_FILE), 'utf8'), 'eno1\n');
  });

  test('a hint naming another interface is rewritten in configure-ovs\'s folder, made if missing', async () => {
    mkdirSync(path.join(root, path.dirname(IFACE_HINT_FILE)), { recursive: true });
    writeFileSync(path.join(root, IFACE_HINT_FILE), 'eno2\n');
    const host = boot();
    assert.equal((await phaseWith(host)).outcome, 'committed');
    assert.equal(readFileSync(path.join(root, IFACE_HINT_FILE), 'utf8'), 'eno1\n');
    assert.deepEqual(host.made, ['/var/lib/ovnk']);
  });

  test('out of attempts with no failure recorded: the technician is sent to the earlier messages', async () => {
    writeRecord({ digest: desiredDigest(SITE.nmstate), phase: 'rolled-back', failures: 3 });
    const { outcome, record: rec } = await phaseWith(boot());
    assert.equal(outcome, 'gave-up');
    assert.equal(rec!.failures, 3);
    assert.deepEqual(said, ['the site network of this site-config was not applied at this boot: it failed 3 times (see the earlier messages); the node keeps its previous network']);
  });

  test('a committed network returns its record with nothing to do', async () => {
    await phaseWith(boot());
    const { outcome, record: rec } = await phaseWith(boot());
    assert.equal(outcome, 'nothing');
    assert.deepEqual(rec, { digest: desiredDigest(SITE.nmstate), phase: 'committed', failures: 0 });
  });

  test('three failed boots give up; the config is not applied again', async () => {
    for (let i = 1; i <= 3; i++) assert.equal((await phaseOnce(boot(), wrongGateway)).record!.failures, i);
    const fourth = boot();
    assert.equal((await phaseOnce(fourth, wrongGateway)).outcome, 'gave-up');
    assert.deepEqual(fourth.calls, []);
  });
});

describe('verifyWindows', () => {
  // [network timeout, verify window, checkpoint seconds]: half the timeout, between 10 s and 2 min; the checkpoint a minute longer.
  const rows: [number, number, number][] = [[1_000, 10_000, 70], [20_000, 10_000, 70], [100_000, 50_000, 110], [100_500, 50_250, 111], [600_000, 120_000, 180]];
  for (const [timeout, verifyMs, checkpointSeconds] of rows) test(`${timeout} ms`, () => assert.deepEqual(verifyWindows(timeout), { verifyMs, checkpointSeconds }));
});

describe('nmstateConfigError', () => {
  for (const kind of ['InvalidArgument', 'NotImplementedError', 'NotSupportedError', 'KernelIntegerRoundedError', 'DependencyError', 'PolicyError', 'SrIovOperatorOverlap']) {
    test(`${kind} is the state's fault`, () => assert.equal(nmstateConfigError(`[2024] ERROR nmstate\nNmstateError: ${kind}: the reason  | detail`), `${kind}: the reason`));
  }
  test('a retryable kind or another failure is not', () => {
    assert.equal(nmstateConfigError('NmstateError: VerificationError: Failed to verify'), undefined);
    assert.equal(nmstateConfigError('NmstateError: Bug: NotFound: Not active checkpoints'), undefined);
    assert.equal(nmstateConfigError(''), undefined);
  });
});
