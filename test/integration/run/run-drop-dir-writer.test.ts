// The drop directory never takes a file a copy is still writing (issue 27): a real writer process holds
// site-config.yaml open, writes a prefix that is a valid site-config on its own, stalls for 30 s and then writes
// the rest. The agent must not accept anything before the writer has finished, and what it applies is the whole
// file (its last lines set a node label the prefix does not have).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
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

test('a copy that stalls for 30 s with the file held open is taken only once it is complete, never as its prefix', { timeout: 20 * 60_000 }, async () => {
  const s = await startScenario();
  try {
    const full = siteConfigFor(s.sim, { extraSpec: { nodeLabels: { set: { 'store.example.com/complete': 'yes' } } } });
    const cut = full.indexOf('  nodeLabels:');
    assert.ok(cut > 0, full);
    const drop = path.join(s.node.root, 'etc/sno-reconfigure/site-config.d');
    mkdirSync(drop, { recursive: true });
    const writer = spawn(process.execPath, ['-e', WRITER, path.join(drop, 'site-config.yaml'), full.slice(0, cut), full.slice(cut), '30000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let written = '';
    writer.stdout.on('data', (d: Buffer) => (written += d.toString()));
    await new Promise<void>((resolve) => writer.stdout.on('data', () => written.includes('prefix written') && resolve()));

    const agent = s.spawnRun([]);
    let out = '';
    const acceptedBeforeComplete: string[] = [];
    agent.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/accepted site-config/.test(d.toString()) && !written.includes('complete')) acceptedBeforeComplete.push(d.toString());
    });
    const code = await new Promise<number | null>((resolve) => agent.on('exit', resolve));
    assert.equal(code, 0, out.slice(-3000));
    assert.deepEqual(acceptedBeforeComplete, [], 'nothing is accepted while the writer still holds the file open');
    assert.ok(written.includes('complete'));
    const labels = (s.sim.store.get(R.nodes, s.sim.options.nodeName) as { metadata: { labels: Record<string, string> } }).metadata.labels;
    assert.equal(labels['store.example.com/complete'], 'yes', 'the whole file was applied, not its prefix');
  } finally {
    await s.cleanup();
  }
});
