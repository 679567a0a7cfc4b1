// A stick is untrusted input, its file names included (issue 27): names holding a newline, ESC sequences
// (clear screen, set the terminal title) and a forged "What to do" line must reach the banner, `status` (text
// and --json) and the journal as one visible line each — never as a forged DONE section, a screen clear or a
// blob in journald. The bundled agent runs `--once` through the real run loop against a stand-in stick.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startScenario, type AgentRun, type Scenario } from '../../support/scenario';
import { BUNDLE_PATH } from '../../support/bundle';

export const HOSTILE_NAMES = [
  'a\n========\n sno-reconfigure: DONE — reconfiguration complete; remove the stick\x1b[2J\x1b[H',
  'b\x1b]0;owned\x07.txt',
  'SITE-CONFIG.YAML\n   What to do: type: rm -rf --no-preserve-root \n.txt',
  // What JSON.stringify leaves raw: a right-to-left override (shows "c.yaml.txt" reversed), a C1 CSI, U+2028.
  'c\u202etxt.lmay\u009b2J\u2028.yaml',
];

/** Every character a terminal or journald acts on, except the line breaks of the text's own layout. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** The banner's, status's or journal's lines: none forged, none carrying a control character. */
export function assertNoForgery(where: string, text: string, allowedWhatToDo: number): void {
  assert.doesNotMatch(text, CONTROL, `${where} carries a control character:\n${JSON.stringify(text)}`);
  const lines = text.split('\n');
  assert.ok(!lines.some((l) => /^\s*sno-reconfigure: DONE/.test(l)), `${where} shows a forged DONE line:\n${text}`);
  assert.ok(!lines.some((l) => /^=+$/.test(l.trim()) && l.trim().length < 72), `${where} shows a forged rule:\n${text}`);
  assert.ok(lines.filter((l) => /^\s*What to do:/.test(l)).length <= allowedWhatToDo, `${where} shows a forged "What to do" line:\n${text}`);
}

describe('hostile file names on a stick', () => {
  let s: Scenario;
  let res: AgentRun;
  before(async () => {
    s = await startScenario();
    s.node.attachVolume('sdb1', 'SITE-CONFIG', Object.fromEntries(HOSTILE_NAMES.map((n) => [n, 'x'])));
    res = await s.run(['--once'], { env: { SNO_RECONFIGURE_LOG_FORMAT: 'prose' } });
  });
  after(() => s?.cleanup());

  test('the journal: each record one line of text', () => {
    assert.equal(res.code, 1, res.stdout.slice(-2000));
    assertNoForgery('the journal', res.stdout.trimEnd(), 0);
    for (const line of res.stdout.trimEnd().split('\n')) assert.match(line, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /, `a journal line that is not a record of its own: ${JSON.stringify(line)}`);
    assert.ok(res.stdout.includes('it holds: a\\n========\\n sno-reconfigure: DONE — reconfiguration complete; remove the stick\\x1b[2J\\x1b[H, b\\x1b]0;owned\\x07.txt'), res.stdout);
  });

  test('the banner: one headline, one "What to do", the names visible', () => {
    const banner = readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8');
    assertNoForgery('the banner', banner, 1);
    assert.equal(banner.split('\n').filter((l) => l.startsWith(' sno-reconfigure: ')).length, 1, banner);
    // agetty shows `\\` as `\`: the escapes read \x1b on the console.
    assert.ok(banner.includes('remove the stick\\\\x1b[2J\\\\x1b[H'), banner);
  });

  test('status: the names on the "Now:" line, no forged line', () => {
    const text = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--root', s.node.root], { encoding: 'utf8' });
    assertNoForgery('status', text.stdout, 1);
    assert.match(text.stdout, /^Now: .*it holds: a\\n========\\n sno-reconfigure: DONE/m);
  });

  test('status --json: valid JSON, the names exact, no control character on the terminal', () => {
    const json = spawnSync(process.execPath, [BUNDLE_PATH, 'status', '--json', '--root', s.node.root], { encoding: 'utf8' });
    assert.doesNotMatch(json.stdout, CONTROL, `status --json shows a control character: ${JSON.stringify(json.stdout)}`);
    const view = JSON.parse(json.stdout) as { lastError?: { message: string } };
    assert.ok(view.lastError?.message.includes(HOSTILE_NAMES[0]!), view.lastError?.message);
  });
});
