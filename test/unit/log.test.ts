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

test('secrets are redacted at any depth; errors become {type, message, stack}; a child carries its bindings', () => {
  const lines: string[] = [];
  const log = createLogger({ journal: false, write: (s) => lines.push(s) }).child({ step: 'pull-secret' }).child({ component: 'merge' });
  log.warn({ deep: { deeper: { token: 'tkn-123', kept: 1 } }, err: new Error('boom') }, 'merged');
  const rec = JSON.parse(lines[0]!);
  assert.equal(rec.step, 'pull-secret');
  assert.equal(rec.component, 'merge');
  assert.deepEqual(rec.deep, { deeper: { token: '[redacted]', kept: 1 } });
  assert.equal(rec.err.type, 'Error');
  assert.equal(rec.err.message, 'boom');
  assert.doesNotMatch(lines[0]!, /tkn-123/);
  assert.deepEqual(Object.keys(rec), ['level', 'time', 'step', 'component', 'deep', 'err', 'msg'], 'the order pino wrote: level, time, bindings, fields, msg');
});

test('levels: below the threshold nothing is written; silent writes nothing; an unknown level is refused', () => {
  const lines: string[] = [];
  const warnOnly = createLogger({ journal: false, level: 'warn', write: (s) => lines.push(s) });
  warnOnly.info('no');
  warnOnly.debug('no');
  warnOnly.warn('yes');
  createLogger({ journal: false, level: 'silent', write: (s) => lines.push(s) }).fatal('no');
  assert.deepEqual(lines.map((l) => JSON.parse(l).msg), ['yes']);
  assert.throws(() => createLogger({ level: 'loud' }), /log level "loud": expected one of/);
});
