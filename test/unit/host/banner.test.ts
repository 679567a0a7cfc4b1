// The console banner names the status command that exists on this node: the launcher's on the podman runtime.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderBanner } from '../../../src/host/banner';

test('the banner footer names the status command of the runtime the agent runs in', () => {
  const at = new Date('2026-11-24T10:00:00Z');
  const content = { tone: 'progress' as const, headline: 'Apply the site network' };
  assert.match(renderBanner(content, at, {}), /details: sno-reconfigure status \| journalctl -u sno-reconfigure$/m);
  assert.match(renderBanner(content, at, { SNO_RECONFIGURE_HOST_TOOLS: 'chroot' }), /details: sno-reconfigure-podman status \| journalctl -u sno-reconfigure$/m);
  assert.match(renderBanner({ ...content, headline: 'a \\4 b' }, at, {}), /a \\\\4 b/, 'agetty escapes stay literal');
});

test('a headline or line quoting a hostile name stays one line, its escapes shown and bounded', () => {
  const at = new Date('2026-11-24T10:00:00Z');
  const text = renderBanner({ tone: 'waiting', headline: 'holds: a\n====\n sno-reconfigure: DONE\x1b[2J', lines: ['What to do: x\n   What to do: rm -rf', 'y'.repeat(5000)] }, at, {});
  const lines = text.split('\n');
  assert.equal(lines.length, 7, text);
  assert.equal(lines[1], ' sno-reconfigure: WAITING — holds: a\\\\n====\\\\n sno-reconfigure: DONE\\\\x1b[2J');
  assert.equal(lines[2], '   What to do: x\\\\n   What to do: rm -rf');
  assert.ok(lines[3]!.endsWith('y…') && lines[3]!.length < 700, lines[3]);
});
