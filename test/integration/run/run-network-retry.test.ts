// After the third failed verification of the site network the config is refused (issue #17): the verification
// failure stays on the console, and the same config runs again when its media is re-inserted or
// `run --retry-network` asks — a cable that was out is no fault of the file. Each attempt is made by the early
// network phase at a boot the run asks for (docs/network.md); the scenario plays each boot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startScenario, siteConfigFor, parseLogs, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';

const banner = (s: Scenario) => readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');
const status = (s: Scenario) => JSON.parse(spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--json', '--root', s.node.root], { encoding: 'utf8' }).stdout) as { phase: string; lastError?: { message: string; remedy?: string } };
const waitUntil = async (what: string, cond: () => boolean, ms = 5 * 60_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

test('a network that failed three times (a cable out) is tried again on re-insertion or --retry-network, its failure kept on screen', { timeout: 40 * 60_000 }, async () => {
  const s = await startScenario();
  try {
    const gateway = s.sim.options.nodeIPs[0]!.replace(/\.\d+$/, '.1');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } }) });
    s.node.fail('ping');
    for (let attempt = 1; attempt <= 3; attempt++) {
      const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
      assert.equal(res.code, 1);
      assert.ok(res.logs.some((l) => l.msg.includes(`(attempt ${attempt} of 3): ping ${gateway}`)), res.stdout.slice(-2000));
      // The journal hears from the verification while it waits, not only when it gives up (issue 27).
      assert.ok(res.logs.some((l) => l.level === 'info' && l.msg.startsWith(`verifying the site network: waiting for ping ${gateway}`)), res.stdout.slice(-2000));
      if (attempt < 3) {
        // The agent tries again by itself: the console says so, with when, and asks nothing of anyone yet.
        assert.match(banner(s), new RegExp(` sno-reconfigure: RETRYING — Apply the site network: attempt ${attempt} of 3 did not succeed; the agent starts attempt ${attempt + 1} of 3 by itself at \\d\\d:\\d\\d:\\d\\d UTC \\(in 30 s\\)\n`), banner(s));
        assert.doesNotMatch(banner(s), /ACTION NEEDED/);
      }
    }
    const failure = status(s).lastError!.message;
    assert.match(failure, /^the site network did not verify at boot and was rolled back \(attempt 3 of 3\): ping /);

    // The next start finds the same stick still in: not tried again, and the screen says why and what to do.
    const again = await s.run(['--once']);
    assert.equal(again.code, 1);
    assert.equal(s.node.nmstateHistory().filter((h) => h.startsWith('apply')).length, 3, 'no fourth attempt without being asked');
    assert.ok(banner(s).includes(' sno-reconfigure: ACTION NEEDED — the site network of "store-0042" did not verify; it is not tried again until the media is re-inserted\n'), banner(s));
    assert.ok(banner(s).includes(`   ${failure}\n`), 'the verification failure itself stays on screen');
    assert.match(banner(s), /What to do: Check that the network cable is in and the switch port is on \(its link light\); .* Then re-insert the media, or type `systemctl stop sno-reconfigure` and then `sno-reconfigure run --retry-network`, to try it again\.\n/);
    assert.match(banner(s), /^ {3}Otherwise call the office with the store name and this line: they must send new media if the address, gateway, VLAN or DNS servers in spec.network are wrong for this site\.$/m);
    // status says what the banner says — the config may be fine — with the command of the node's runtime.
    const statusText = (env: NodeJS.ProcessEnv = {}) => spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8', env: { ...process.env, ...env } }).stdout;
    assert.match(statusText(), /^Phase: +waiting: the site network did not verify in 3 attempts \(the site-config may be fine\); to try it again, re-insert the media, or type `systemctl stop sno-reconfigure` and then `sno-reconfigure run --retry-network`$/m);
    assert.match(statusText({ SNO_RECONFIGURE_HOST_TOOLS: 'chroot' }), /and then `sno-reconfigure-podman run --retry-network`$/m);
    assert.doesNotMatch(statusText(), /corrected site-config/);
    assert.doesNotMatch(banner(s), /is invalid/);
    assert.equal(status(s).lastError?.message, failure, 'status keeps the verification failure as the last error');
    const refusedState = path.join(s.node.dir, 'refused-state');
    cpSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), refusedState, { recursive: true });

    // The cable is back: --retry-network runs the same config again.
    s.node.heal('ping');
    const retried = await s.run(['--once', '--retry-network'], { timeoutMs: 15 * 60_000 });
    assert.equal(retried.code, 0, retried.stdout.slice(-3000));
    assert.ok(retried.logs.some((l) => l.msg === 'retrying the site network of "store-0042": `run --retry-network` asked for it'));

    // Same again from the refused state, now by re-inserting the stick while the service waits.
    rmSync(path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
    rmSync(path.join(s.node.root, 'etc/sno-reconfigure/done'), { force: true });
    cpSync(refusedState, path.join(s.node.root, 'var/lib/sno-reconfigure'), { recursive: true });
    for (const f of ['network-committed.sha256']) rmSync(path.join(s.node.root, 'var/lib/sno-reconfigure', f), { force: true });
    mkdirSync(path.join(s.node.root, 'dev'), { recursive: true });
    const child = s.spawnRun();
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitUntil("the refusal to be shown", () => out.includes("it is not tried again until the media is re-inserted"));
    s.node.detachVolume('sdb1');
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { network: '20s', settleStability: '2s' } } }) });
    // The kernel makes a new device node for the re-inserted stick.
    writeFileSync(path.join(s.node.root, 'dev', 'sdb1'), '');
    let code = await new Promise<number | null>((r) => child.on('exit', r));
    // The run asked for the boot that applies the network: the node restarts and the agent carries on.
    assert.equal(s.node.rebootRequested(), true, out.slice(-3000));
    const afterBoot = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    code = afterBoot.code;
    out += afterBoot.stdout;
    assert.equal(code, 0, out.slice(-3000));
    assert.ok(parseLogs(out).some((l) => l.msg === 'retrying the site network of "store-0042": the stick /dev/sdb1 (SITE-CONFIG) was inserted again'));
  } finally {
    await s.cleanup();
  }
});
