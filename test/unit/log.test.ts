import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/log';

test('journal mode prefixes each line with its syslog priority', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'json', journal: true, write: (s) => lines.push(s), level: 'debug' });
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
  createLogger({ format: 'json', journal: false, write: (s) => lines.push(s) }).info({ phase: 'api' }, 'waiting');
  const rec = JSON.parse(lines[0]!);
  assert.equal(rec.msg, 'waiting');
  assert.equal(rec.level, 'info');
  assert.match(rec.time, /^\d{4}-\d\d-\d\dT/);
});

test('secrets never reach the log', () => {
  const lines: string[] = [];
  createLogger({ format: 'json', journal: false, write: (s) => lines.push(s) }).info({ pullSecret: { auths: { 'quay.io': { auth: 'c2VjcmV0' } } }, password: 'hunter2' }, 'x');
  assert.doesNotMatch(lines.join(''), /c2VjcmV0|hunter2/);
});

test('secrets are redacted at any depth; errors become {type, message, stack}; a child carries its bindings', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'json', journal: false, write: (s) => lines.push(s) }).child({ step: 'pull-secret' }).child({ component: 'merge' });
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
  const warnOnly = createLogger({ format: 'json', journal: false, level: 'warn', write: (s) => lines.push(s) });
  warnOnly.info('no');
  warnOnly.debug('no');
  warnOnly.warn('yes');
  createLogger({ format: 'json', journal: false, level: 'silent', write: (s) => lines.push(s) }).fatal('no');
  assert.deepEqual(lines.map((l) => JSON.parse(l).msg), ['yes']);
  assert.throws(() => createLogger({ format: 'json', level: 'loud' }), /log level "loud": expected one of/);
});

test('prose under the journal: the step, the sentence, what to do — no JSON, priorities kept', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'prose', journal: true, write: (s) => lines.push(s) });
  log.child({ step: 'network' }).info({ gateway: '192.168.111.1', durationMs: 3 }, 'site network applied; gateway 192.168.111.1 answered in 3 ms');
  log.error({ media: '/dev/sdb1', remedy: 'Write the site-config to a FAT volume.' }, 'cannot mount /dev/sdb1');
  log.child({ step: 'csr', component: 'csr' }).warn({ err: new Error('connect ECONNREFUSED 127.0.0.1:6443'), retryInMs: 2500 }, 'CSR approval failed');
  assert.deepEqual(lines, [
    '<6>network: site network applied; gateway 192.168.111.1 answered in 3 ms\n',
    '<3>cannot mount /dev/sdb1. What to do: Write the site-config to a FAT volume.\n',
    '<4>csr: CSR approval failed (connect ECONNREFUSED 127.0.0.1:6443); next try in 2.5 s\n',
  ]);
});

test('prose in a terminal: the same sentences with the time in front, the level named when it is not info; one line each', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'prose', journal: false, write: (s) => lines.push(s) });
  log.child({ step: 'settle' }).info('cluster settled after 6.2 min');
  log.warn('a name from the media: a\n========\x1b[2J');
  assert.match(lines[0]!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d settle: cluster settled after 6\.2 min\n$/);
  // One record, one line: the newline and ESC of a quoted name are shown, not acted on (issue 27).
  assert.equal(lines[1]!.slice(20), 'WARN a name from the media: a\\n========\\x1b[2J\n');
});

test('JSON lines escape what JSON.stringify leaves raw (C1, U+2028, bidi overrides): journald keeps them as text', () => {
  const lines: string[] = [];
  createLogger({ format: 'json', journal: true, write: (s) => lines.push(s) }).error({ media: 'x\u202ey' }, 'holds \u009b2J\u2028');
  assert.equal(lines[0], '<3>{"level":"error","media":"x\\u202ey","msg":"holds \\u009b2J\\u2028"}\n');
  assert.equal((JSON.parse(lines[0]!.slice(3)) as { msg: string }).msg, 'holds \u009b2J\u2028');
});

test('prose is the default; SNO_RECONFIGURE_LOG_FORMAT=json gives JSON lines; an unknown format is refused', () => {
  const lines: string[] = [];
  createLogger({ journal: true, env: {}, write: (s) => lines.push(s) }).info('hello');
  createLogger({ journal: true, env: { SNO_RECONFIGURE_LOG_FORMAT: 'json' }, write: (s) => lines.push(s) }).info('hello');
  assert.deepEqual(lines, ['<6>hello\n', '<6>{"level":"info","msg":"hello"}\n']);
  assert.throws(() => createLogger({ env: { SNO_RECONFIGURE_LOG_FORMAT: 'xml' } }), /log format "xml": expected prose or json/);
});

test('prose never prints a secret: fields are not written, and an error text is the only field text that is', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'prose', journal: true, write: (s) => lines.push(s) });
  log.info({ pullSecret: { auths: { 'quay.io': { auth: 'c2VjcmV0' } } }, password: 'hunter2', token: 'tkn-123' }, 'pull secret merged');
  log.warn({ err: { message: 'x', token: 'tkn-456' } }, 'failed');
  assert.doesNotMatch(lines.join(''), /c2VjcmV0|hunter2|tkn-123|tkn-456/);
  assert.equal(lines[0], '<6>pull secret merged\n');
});
