// The drop directory never takes a file a copy is still writing (issues 27, 36): a real writer process holds
// site-config.yaml open, writes a prefix that is a valid site-config on its own, stalls for 30 s and then writes
// the rest. Written in place, the file is never taken on a node that takes unsigned media (the agent says how to
// move it in); renamed away and back, the whole file is applied (its last lines add a digest mirror the prefix
// does not have: a field unsigned media may carry, src/siteconfig/trust.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { siteConfigFor, startScenario } from '../../support/scenario';

const WRITER = `
const fs = require('node:fs');
const [file, prefix, rest, stallMs] = process.argv.slice(1);
const fd = fs.openSync(file, 'w');
fs.writeSync(fd, prefix);
process.stdout.write('prefix written\\n');
setTimeout(() => {
  fs.writeSync(fd, rest);
  process.stdout.write('complete\\n');
  fs.closeSync(fd);
}, Number(stallMs));
`;

test('a copy written in place that stalls for 30 s with the file held open is never taken, not even complete; renamed in, the whole file is applied', { timeout: 20 * 60_000 }, async () => {
  const s = await startScenario();
  try {
    const full = siteConfigFor(s.sim, { extraSpec: { imageDigestMirrors: [{ source: 'quay.io/store/complete', mirrors: ['registry.store42.example.com:8443/complete'] }] } });
    const cut = full.indexOf('  imageDigestMirrors:');
    assert.ok(cut > 0, full);
    const drop = path.join(s.node.root, 'etc/sno-reconfigure/site-config.d');
    mkdirSync(drop, { recursive: true });
    const writer = spawn(process.execPath, ['-e', WRITER, path.join(drop, 'site-config.yaml'), full.slice(0, cut), full.slice(cut), '30000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let written = '';
    writer.stdout.on('data', (d: Buffer) => (written += d.toString()));
    await new Promise<void>((resolve) => writer.stdout.on('data', () => written.includes('prefix written') && resolve()));

    const agent = s.spawnRun([]);
    let out = '';
    let renamed = false;
    const acceptedBeforeRename: string[] = [];
    agent.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/accepted site-config/.test(d.toString()) && !renamed) acceptedBeforeRename.push(d.toString());
    });
    if (!written.includes('complete')) await new Promise<void>((resolve) => writer.stdout.on('data', () => written.includes('complete') && resolve()));
    // Written in place: the agent says so and waits, however long after the writer finished.
    const said = () => /holds site-config\.yaml, which it did not see renamed in \(written in place, copied straight under the final name, or left there from before\), so the agent cannot tell whether the copy has finished; it is not used/.test(out);
    for (const deadline = Date.now() + 5 * 60_000; !said(); await new Promise((r) => setTimeout(r, 200))) assert.ok(Date.now() < deadline, out.slice(-3000));
    const file = path.join(drop, 'site-config.yaml');
    renamed = true;
    renameSync(file, `${file}.part`);
    renameSync(`${file}.part`, file);
    let code = await new Promise<number | null>((resolve) => agent.on('exit', resolve));
    // Stopped for the reboot that applies the site network at boot (docs/network.md); the next start finishes.
    if (s.node.rebootRequested()) {
      const after = await s.run([], { timeoutMs: 15 * 60_000 });
      [code, out] = [after.code, out + after.stdout];
    }
    assert.equal(code, 0, out.slice(-3000));
    assert.deepEqual(acceptedBeforeRename, [], 'nothing written in place is accepted, before or after the writer finished');
    const mirrored = s.sim.store.list(R.imageDigestMirrorSets).flatMap((o) => ((o.spec as { imageDigestMirrors?: { source: string }[] } | undefined)?.imageDigestMirrors ?? []).map((m) => m.source));
    assert.ok(mirrored.includes('quay.io/store/complete'), `the whole file was applied, not its prefix: ${mirrored.join(', ')}`);
  } finally {
    await s.cleanup();
  }
});
