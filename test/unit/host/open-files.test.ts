// Host.openForWriting finds a file a real process holds open for writing (its /proc/PID/fd link and the access
// mode in fdinfo), not one held open only for reading, and nothing once the writer closed it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';

const HOLDER = `
const fs = require('node:fs');
const fd = fs.openSync(process.argv[1], process.argv[2]);
process.stdout.write('open\\n');
process.stdin.on('data', () => { fs.closeSync(fd); process.stdout.write('closed\\n'); });
process.stdin.on('end', () => process.exit(0));
`;

function hold(file: string, flags: 'a' | 'r') {
  const child = spawn(process.execPath, ['-e', HOLDER, file, flags], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const said = (word: string) => new Promise<void>((resolve) => {
    const check = () => out.includes(word) && resolve();
    child.stdout.on('data', (d: Buffer) => ((out += d.toString()), check()));
    check();
  });
  return { said, close: () => child.stdin.write('x'), end: () => child.stdin.end() };
}

test('a file held open for writing under the directory is named; read-only or closed is not', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'open-files-'));
  const host = new LocalHost({ root });
  const dir = path.join(root, 'etc/sno-reconfigure/site-config.d');
  mkdirSync(path.join(dir, 'sub'), { recursive: true });
  writeFileSync(path.join(dir, 'read.yaml'), 'x');
  const reader = hold(path.join(dir, 'read.yaml'), 'r');
  const writer = hold(path.join(dir, 'sub/site-config.yaml'), 'a');
  try {
    await reader.said('open');
    await writer.said('open');
    assert.deepEqual(await host.openForWriting('/etc/sno-reconfigure/site-config.d'), ['sub/site-config.yaml']);
    assert.deepEqual(await host.openForWriting('/etc/sno-reconfigure/site-config.d/sub'), ['site-config.yaml']);
    assert.deepEqual(await host.openForWriting('/etc/sno-reconfigure/site-config'), [], 'a sibling whose name starts the same is not inside');
    writer.close();
    await writer.said('closed');
    assert.deepEqual(await host.openForWriting('/etc/sno-reconfigure/site-config.d'), []);
  } finally {
    reader.end();
    writer.end();
    rmSync(root, { recursive: true, force: true });
  }
});
