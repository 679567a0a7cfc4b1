// Issue 36, C4: the agent's own report.json is an input too, in the sense that something else may stand where it
// writes it. A folder there failed the finish step with EISDIR ("internal error") after the whole relocation had
// succeeded; it is moved aside, the report written, and the run finishes with a warning that says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { startScenario, siteConfigFor } from '../../support/scenario';

test('a folder where report.json belongs is moved aside; the run finishes and says so', async () => {
  const s = await startScenario();
  try {
    const report = path.join(s.node.root, 'var/lib/sno-reconfigure/report.json');
    mkdirSync(report, { recursive: true });
    s.node.attachVolume('sdb1', 'SITE-CONFIG', { 'site-config.yaml': siteConfigFor(s.sim) });
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, `${res.stdout.slice(-3000)}\n${res.stderr}`);
    assert.doesNotMatch(`${res.stdout}${res.stderr}`, /internal error|EISDIR/);
    assert.ok(res.logs.some((l) => l.msg.includes("the agent's report /var/lib/sno-reconfigure/report.json was a folder, not a file: it was moved aside as report.json.corrupt and the report written anew")), res.logs.map((l) => l.msg).join('\n'));
    assert.equal((JSON.parse(readFileSync(report, 'utf8')) as { result: string }).result, 'succeeded');
    assert.ok(statSync(`${report}.corrupt`).isDirectory());
  } finally {
    await s.cleanup();
  }
});
