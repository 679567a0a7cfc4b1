// What a finished relocation leaves for the next one (src/engine/relocation-end.ts): the tenth to thirteenth hostile
// re-tests of issue 36 found each of these reused after the done marker alone was removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { closeRelocation, relocationRecords } from '../../../src/engine/relocation-end';

test('a finished run forgets the drop directory\'s renames and the steps\' records; its signed moment and network stay for a re-run, prepare removes them', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-close-'));
  try {
    const state = path.join(root, 'var/lib/sno-reconfigure');
    mkdirSync(state, { recursive: true });
    const digest = 'a'.repeat(64);
    writeFileSync(path.join(state, 'last-issued.json'), JSON.stringify({ issued: '2026-11-01T00:00:00Z', config: 'store-0041', digest }));
    const forgotten = ['drop-dir-renames.json', 'rollouts.json', 'domain.json'];
    const kept = ['network-committed.sha256', 'network-desired.yaml', 'network-early.json'];
    for (const f of [...forgotten, ...kept]) writeFileSync(path.join(state, f), '{}');
    writeFileSync(path.join(state, 'report.json'), '{}');
    await closeRelocation(new LocalHost({ root }), '/var/lib/sno-reconfigure');
    assert.deepEqual(forgotten.filter((f) => existsSync(path.join(state, f))), []);
    // The network committed stays for a re-run of the same config; prepare removes it with the rest (relocationRecords).
    assert.deepEqual(kept.filter((f) => existsSync(path.join(state, f))), kept);
    assert.deepEqual(relocationRecords('/s').map((f) => path.basename(f)).sort(), [...forgotten, ...kept].sort());
    assert.equal((JSON.parse(readFileSync(path.join(state, 'last-issued.json'), 'utf8')) as { finished?: boolean }).finished, undefined, 'prepare closes it when it re-arms the node');
    assert.ok(existsSync(path.join(state, 'report.json')), 'the report stays');
    // Twice (the finish step, then a start that finds the marker): nothing to do the second time, no error.
    await closeRelocation(new LocalHost({ root }), '/var/lib/sno-reconfigure');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('prepare removes the early phase\'s record before the committed digest: cut off between them, nothing says committed without the digest (the twenty-first hostile re-test of issue 36, F3)', () => {
  const names = relocationRecords('/s').map((f) => path.basename(f));
  assert.ok(names.indexOf('network-early.json') < names.indexOf('network-committed.sha256'), names.join(', '));
});
