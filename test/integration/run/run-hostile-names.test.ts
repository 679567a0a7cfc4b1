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
import { CONTROL, HOSTILE_NAMES, assertNoForgery } from '../../support/hostile-names';

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
