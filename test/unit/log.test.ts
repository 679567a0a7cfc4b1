import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/log';

test('journal mode prefixes each line with its syslog priority', () => {
  const lines: string[] = [];
  const log = createLogger({ journal: true, write: (s) => lines.push(s), level: 'debug' });
  log.error('boom');
  log.warn('careful');
  log.info('hello');
  log.debug('detail');
  log.child({ step: 'csr' }).fatal('dead');
  assert.deepEqual(lines.map((l) => l.slice(0, 3)), ['<3>', '<4>', '<6>', '<7>', '<2>']);
  assert.equal(JSON.parse(lines[4]!.slice(3)).step, 'csr');
});

test('terminal mode writes plain JSON lines with a timestamp', () => {
  const lines: string[] = [];
  createLogger({ journal: false, write: (s) => lines.push(s) }).info({ phase: 'api' }, 'waiting');
  const rec = JSON.parse(lines[0]!);
  assert.equal(rec.msg, 'waiting');
  assert.equal(rec.level, 'info');
  assert.match(rec.time, /^\d{4}-\d\d-\d\dT/);
});

test('secrets never reach the log', () => {
  const lines: string[] = [];
  createLogger({ journal: false, write: (s) => lines.push(s) }).info({ pullSecret: { auths: { 'quay.io': { auth: 'c2VjcmV0' } } }, password: 'hunter2' }, 'x');
  assert.doesNotMatch(lines.join(''), /c2VjcmV0|hunter2/);
});
