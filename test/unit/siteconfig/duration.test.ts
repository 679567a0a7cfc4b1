import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from '../../../src/siteconfig/duration';

test('parseDuration reads Go-style durations', () => {
  assert.equal(parseDuration('30m'), 30 * 60_000);
  assert.equal(parseDuration('1h30m'), 90 * 60_000);
  assert.equal(parseDuration('90s'), 90_000);
  assert.equal(parseDuration('1.5h'), 90 * 60_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2h45m30s'), (2 * 3600 + 45 * 60 + 30) * 1000);
  assert.equal(parseDuration('1500us'), 2); // 1.5 ms, rounded
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('+5m'), 300_000);
  assert.equal(parseDuration(' 10m '), 600_000);
});

test('parseDuration explains what is wrong', () => {
  assert.throws(() => parseDuration('90'), /missing unit after 90/);
  assert.throws(() => parseDuration('30 minutes'), /expected a number followed by a unit/);
  assert.throws(() => parseDuration('1d'), /expected a number followed by a unit/);
  assert.throws(() => parseDuration(''), /invalid duration ''/);
  assert.throws(() => parseDuration('-5m'), /cannot be negative/);
  assert.throws(() => parseDuration('m'), /invalid duration 'm'/);
  assert.throws(() => parseDuration('1e400h'), /invalid duration/);
});

test('formatDuration renders compactly', () => {
  assert.equal(formatDuration(5_400_000), '1h30m');
  assert.equal(formatDuration(90_000), '1m30s');
  assert.equal(formatDuration(45 * 60_000), '45m');
  assert.equal(formatDuration(500), '500ms');
  assert.equal(formatDuration(1000), '1s');
});
