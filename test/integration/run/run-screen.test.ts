// What the technician reads (issue 27): every refusal has its headline and "What to do" — in two parts, what the
// person at the node can do and what the office must do — in the journal, on the banner and in `status`;
// `status` lists why a site-config is not for this machine; after success "Now:" says so, and a step the
// site-config does not ask for is "not requested". The bundled agent through the real run loop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse, stringify } from 'yaml';
import { startScenario, siteConfigFor, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';

const banner = (s: Scenario) => readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');
const statusText = (s: Scenario) => spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8' });
const OFFICE = 'Otherwise call the office with the store name and this line: they must send';

test('an invalid site-config: its headline and what to do in the journal and on the banner, not only in status', async () => {
  const s = await startScenario();
  try {
    const doc = parse(siteConfigFor(s.sim)) as { spec: Record<string, unknown> };
    doc.spec.baseDomian = doc.spec.baseDomain;
    delete doc.spec.baseDomain;
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': stringify(doc) });
    const res = await s.run(['--once']);
    assert.equal(res.code, 1);
    const headline = 'the site-config on the stick /dev/sdb1 (SITE-CONFIG) is invalid — nothing was changed';
    const logged = res.logs.find((l) => l.level === 'error' && l.msg === headline);
    assert.ok(logged, res.stdout.slice(-2000));
    assert.match(String(logged.remedy), /second stick/);
    assert.match(String(logged.office), /they must send new media/);
    const b = banner(s);
    assert.ok(b.includes(` sno-reconfigure: ACTION NEEDED — ${headline}\n`), b);
    assert.match(b, /^ {3}What to do: If a second stick or image came for this node, try that one\.$/m);
    assert.match(b, new RegExp(`^ {3}${OFFICE} new media`, 'm'));
    assert.doesNotMatch(b, /Correct the site-config/, 'never asks the store to edit a file');
    const st = statusText(s).stdout;
    assert.match(st, /^What to do: If a second stick/m);
    assert.match(st, new RegExp(`^${OFFICE} new media`, 'm'));
  } finally {
    await s.cleanup();
  }
});

test('a site-config for another machine: status lists why, and exits 1 (a person must act)', async () => {
  const s = await startScenario();
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { match: { serialNumber: 'NOT-THIS-ONE' } } }) });
    await s.run(['--once']);
    const st = statusText(s);
    assert.equal(st.status, 1, st.stdout);
    assert.match(st.stdout, /^Last error \(.*, validate\): the site-config on the stick \/dev\/sdb1 \(SITE-CONFIG\) is not for this machine$/m);
    assert.match(st.stdout, /^ {2}- spec\.match: .*serialNumber NOT-THIS-ONE/m);
    assert.match(st.stdout, new RegExp(`^${OFFICE} the site-config for this machine`, 'm'));
    assert.match(banner(s), /serialNumber NOT-THIS-ONE/);
  } finally {
    await s.cleanup();
  }
});

test('after success "Now:" says the site-config was applied, and steps it did not ask for are "not requested"', async () => {
  const s = await startScenario();
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-2000));
    const st = statusText(s).stdout;
    assert.match(st, /^Now: +site-config "store-0042" applied: reconfiguration complete$/m);
    assert.match(st, /^ {2}done +Configure the image mirrors .*not requested$/m);
    assert.match(st, /^ {2}done +Apply the site network .*\d/m);
    assert.doesNotMatch(st, /Configure the image mirrors .*already in place/);
    assert.ok(res.logs.some((l) => l.step === 'mirrors' && / — not requested by the site-config$/.test(l.msg)), res.stdout.slice(-2000));
  } finally {
    await s.cleanup();
  }
});

test('a problem with the media as a whole names the stick, never the agent\'s own copy of it (candidate/, dry-run-<pid>)', async () => {
  const s = await startScenario();
  try {
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim), 'site-config.yml': siteConfigFor(s.sim) });
    const res = await s.run(['--once']);
    assert.equal(res.code, 1);
    const dry = await s.run(['--once', '--dry-run']);
    assert.equal(dry.code, 1);
    const screens = [res.stdout, res.stderr, dry.stdout, dry.stderr, banner(s), statusText(s).stdout].join('\n');
    assert.match(screens, /the stick \/dev\/sdb1 \(SITE-CONFIG\): holds both site-config\.yaml and site-config\.yml/);
    assert.doesNotMatch(screens, /\/var\/lib\/sno-reconfigure\/candidate|\/run\/sno-reconfigure|dry-run-\d+/);
  } finally {
    await s.cleanup();
  }
});
