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
import { earlyNetwork, earlyRecordFile, knownGoodFile, IFACE_HINT_FILE, committedFile } from '../../../src/network/early';
import { createLogger } from '../../../src/log';
import { parseYamlCore } from '../../../src/util/yaml';
import { sameProfile } from '../../../src/network/profiles';

const PROFILE = '/etc/NetworkManager/system-connections/eno1.nmconnection';
const FACTORY = '[connection]\nid=eno1\ntype=ethernet\nautoconnect=true\ninterface-name=eno1\n\n[ipv4]\naddress1=192.168.111.20/24,192.168.111.1\nmethod=manual\n';
const STATE_DIR = '/var/lib/sno-reconfigure';
class PowerCut extends Error {}

type Call = { args: string[]; phase?: string };

/** One boot of the node: the checkpoint lives in this object (NetworkManager's memory), the profile on the disk. */
class EarlyBootNode extends LocalHost {
  checkpoint?: string;
  calls: Call[] = [];
  cutAt?: string;
  /** `commit` fails as a hung one killed by the seam's time limit does. */
  commitFails = false;
  applied?: Record<string, unknown>;
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
  override async run(cmd: string, args: readonly string[], _opts?: RunOptions): Promise<CommandResult> {
    const key = `${cmd} ${args[0] ?? ''}`;
    this.calls.push({ args: [cmd, ...args], ...(this.phase() ? { phase: this.phase()! } : {}) });
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
          // NetworkManager writes the profile back, normalised (autoconnect=true dropped): early-apply.md.
          writeFileSync(this.resolve(PROFILE), this.checkpoint.replace('autoconnect=true\n', ''), { mode: 0o600 });
          delete this.checkpoint;
          if (cutHere) throw new PowerCut(key);
          return ok();
      }
    }
    if (cmd === 'ping') return this.answering.has(args[args.length - 1]!) ? ok('time=1 ms') : fail('100% packet loss');
    if (cmd === 'nmcli' || cmd === 'getent') return ok('1.2.3.4 STREAM x');
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

  test('three failed boots give up; the config is not applied again', async () => {
    for (let i = 1; i <= 3; i++) assert.equal((await phaseOnce(boot(), wrongGateway)).record!.failures, i);
    const fourth = boot();
    assert.equal((await phaseOnce(fourth, wrongGateway)).outcome, 'gave-up');
    assert.deepEqual(fourth.calls, []);
  });
});
