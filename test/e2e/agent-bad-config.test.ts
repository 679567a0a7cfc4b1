// The agent end to end on real systemd (issue #7), scenario 4: the technician's stick carries a broken
// site-config. The agent says what is wrong — in the journal at priority err, on the console banner and in
// `sno-reconfigure status` — changes nothing, never shows the pull secret, and keeps waiting; the corrected
// stick then goes through. Before it, a hostile stick whose file names would forge the console (issue 27) is
// shown as text everywhere, journald included. The node: test/e2e/testbed/sno-node.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { BANNER_PATH, DONE_MARKER, KUBELET_HOLD_FILE, KUBELET_UNIT, UNIT_NAME } from '../../src/paths';
import { ensureBundle } from '../support/bundle';
import { Testbed, ensureRootfsImage, leftovers } from './testbed/index';
import { eventually, factoryNode, siteConfigYaml, SIM_DIR } from './testbed/sno-node';
import { HOSTILE_NAMES, assertNoForgery } from '../support/hostile-names';

const bed = new Testbed();
after(async () => {
  await bed.cleanup();
  assert.deepEqual(leftovers(), { processes: [], loopDevices: [], mounts: [], cgroups: [], tempDirs: [] });
});

const REGISTRY = 'registry.store42.example.com:8443';
/** A credential that must never be shown anywhere, in any encoding. */
const SECRET = 's3cr3t-Pa55w0rd-4242';

/** The good site-config with three mistakes a technician makes, and a pull secret whose auth is not user:password. */
function brokenSiteConfig(): string {
  const doc = parse(siteConfigYaml()) as { spec: Record<string, unknown> & { network: { verify: { ping: string[] } }; pullSecret: { auths: Record<string, { auth: string }> } } };
  doc.spec.baseDomian = doc.spec.baseDomain;
  delete doc.spec.baseDomain;
  doc.spec.network.verify.ping = ['gateway.store42'];
  doc.spec.pullSecret.auths[REGISTRY]!.auth = Buffer.from(SECRET).toString('base64');
  return stringify(doc);
}

/** What `sno-reconfigure validate --json` (the same bundle, on the host) finds in a site-config. */
function validateOffline(text: string): { path: string; message: string }[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-e2e-validate-'));
  try {
    writeFileSync(path.join(dir, 'site-config.yaml'), text);
    let out: string;
    try {
      out = execFileSync(process.execPath, [ensureBundle(), 'validate', '--json', path.join(dir, 'site-config.yaml')], { encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? '');
    }
    return (JSON.parse(out) as { errors: { path: string; message: string }[] }).errors;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertNoSecret(where: string, text: string): void {
  for (const form of [SECRET, Buffer.from(SECRET).toString('base64')]) assert.ok(!text.includes(form), `${where} shows the pull secret`);
}

test('4. a broken site-config: errors in the journal (err), on the banner and in status; nothing changes; the agent waits; the corrected stick goes through', async (t) => {
  await ensureRootfsImage();
  const node = await factoryNode(bed);
  const m = node.machine;
  const broken = brokenSiteConfig();
  const expected = validateOffline(broken);
  assert.ok(expected.length >= 4, JSON.stringify(expected));
  const clusterBefore = readFileSync(m.path(`${SIM_DIR}/state/store.json`));

  // the wrong stick is in when the node is powered on
  const stick = await bed.insertMedia(m, { 'site-config.yaml': broken });
  await node.boot();
  await node.waitForAgent('invalid-config', (j) => j?.phase === 'invalid-config', 90_000);
  // from here the agent must keep waiting, the same process, through a few rescans of the media (every 5 s,
  // src/engine/runner.ts): the checks below run meanwhile, and the wait further down only makes up the rest
  const before = await node.unit(UNIT_NAME, ['ActiveState', 'MainPID', 'NRestarts']);
  const keepsWaitingUntil = Date.now() + 12_000;

  // --- the journal, at priority err: the headline with what to do, then one line per problem, naming the field, as `validate` does
  const headline = `the site-config on the stick ${stick.device} (SITE-CONFIG) is invalid — nothing was changed`;
  await eventually(async () => {
    const errors = await node.agentLog('-p', 'err');
    assert.deepEqual(errors.map((e) => e.log?.msg), [headline, ...expected.map((p) => `invalid site-config: ${p.path}: ${p.message}`)]);
    assert.match(errors[0]!.message, /What to do: If a second stick or image came for this node, try that one\. Otherwise call the office with the store name and this line: they must send new media/);
  });
  // --- the console banner (written right after the journal file)
  const banner = await eventually(() => {
    const text = m.readFile(BANNER_PATH);
    assert.ok(text.includes(`ACTION NEEDED — ${headline}\n`), text);
    assert.match(text, /^ {3}What to do: If a second stick/m);
    return text;
  });
  for (const p of expected) assert.ok(banner.includes(`${p.path}: ${p.message}`), `banner lists ${p.path}:\n${banner}`);
  // --- status
  const status = await node.status();
  assert.equal(status.phase, 'invalid-config');
  assert.deepEqual(status.lastError?.problems, expected);
  const statusText = await node.statusText();
  assert.match(statusText, /^Phase: +waiting for a corrected site-config/m);
  for (const p of expected) assert.ok(statusText.includes(`${p.path}: ${p.message}`), statusText);
  // --- the pull secret is shown nowhere
  assertNoSecret('the journal', (await m.journalctl('-o', 'cat')).stdout);
  assertNoSecret('the banner', banner);
  assertNoSecret('status', statusText + JSON.stringify(status));

  // --- nothing changed: no network call, kubelet never started, the cluster untouched, no done marker
  assert.deepEqual(node.nmstateCalls(), []);
  assert.deepEqual(await node.unit(KUBELET_UNIT, ['ActiveState', 'ExecMainStartTimestampMonotonic']), { ActiveState: 'inactive', ExecMainStartTimestampMonotonic: '0' });
  assert.equal(node.exists(KUBELET_HOLD_FILE), true);
  assert.equal(node.exists(DONE_MARKER), false);
  assert.ok(readFileSync(m.path(`${SIM_DIR}/state/store.json`)).equals(clusterBefore), 'the cluster store is unchanged');

  // --- and it keeps waiting: the same process, still running, through a few rescans of the media
  assert.equal(before.ActiveState, 'active');
  await new Promise((r) => setTimeout(r, Math.max(0, keepsWaitingUntil - Date.now())));
  assert.deepEqual(await node.unit(UNIT_NAME, ['ActiveState', 'MainPID', 'NRestarts']), { ...before, NRestarts: '0' });
  assert.equal((await node.agentLog('-p', 'err')).length, expected.length + 1, 'the same stick is not reported again and again');

  // --- a hostile stick next (issue 27): its file names hold newlines, ESC and BEL; ext4, since FAT refuses
  // control characters in names. journald keeps the error as text (a blob before), and neither the journal,
  // the banner nor status shows a forged line.
  const hostile = await bed.replaceMedia(m, stick, Object.fromEntries(HOSTILE_NAMES.map((n) => [n, 'x'])), 'SITE-CONFIG', { fs: 'ext4' });
  const hostileError = await eventually(async () => {
    const entry = (await node.agentLog('-p', 'err')).find((e) => e.message.includes('has no site-config.yaml'));
    assert.ok(entry, 'the hostile stick is reported');
    return entry!;
  }, 60_000);
  const journalText = (await m.journalctl('-u', UNIT_NAME, '-p', 'err')).stdout;
  assert.doesNotMatch(journalText, /blob data/, journalText);
  assert.ok(journalText.includes(`the stick ${hostile.device} (SITE-CONFIG) has no site-config.yaml; it holds: a\\n========\\n sno-reconfigure: DONE — reconfiguration complete; remove the stick\\x1b[2J\\x1b[H, b\\x1b]0;owned\\x07.txt`), journalText);
  assertNoForgery('journalctl -o cat', (await m.journalctl('-u', UNIT_NAME, '-o', 'cat')).stdout.trimEnd(), 0);
  assertNoForgery('the banner', await eventually(() => {
    const text = m.readFile(BANNER_PATH);
    assert.ok(text.includes(`WAITING — the stick ${hostile.device} (SITE-CONFIG) has no site-config.yaml`), text);
    return text;
  }), 1);
  assertNoForgery('status', await node.statusText(), 1);
  assert.ok((await node.status()).lastError?.message.includes(HOSTILE_NAMES[1]!), 'status --json keeps the names exactly');
  assert.equal(hostileError.priority, 3);

  // --- the technician swaps in the corrected stick
  await bed.replaceMedia(m, hostile, { 'site-config.yaml': siteConfigYaml() });
  await node.waitForSuccess();
  const end = await node.status();
  assert.equal(end.phase, 'succeeded');
  assert.equal(end.lastError, undefined);
  assert.match(m.readFile(BANNER_PATH), /DONE — site configuration "store-0042" applied/);
  assert.deepEqual(await node.unit(UNIT_NAME, ['Result', 'NRestarts', 'UnitFileState']), { Result: 'success', NRestarts: '0', UnitFileState: 'disabled' });
  assert.deepEqual(await node.unit(KUBELET_UNIT, ['ActiveState', 'UnitFileState']), { ActiveState: 'active', UnitFileState: 'enabled' });
  // the only errors of the whole story are the broken stick's and the hostile one's (once journald has read the whole run)
  await eventually(async () => assert.ok((await node.agentLog()).some((e) => e.log?.msg === 'site-config "store-0042" applied: reconfiguration complete')));
  assert.equal((await node.agentLog('-p', 'err')).length, expected.length + 2);
  assertNoSecret('the journal', (await m.journalctl('-o', 'cat')).stdout);
  t.diagnostic(`problems reported: ${expected.map((p) => p.path).join(', ')}`);
});
