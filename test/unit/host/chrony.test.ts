// What chronyc prints, read as the clock step needs it (real chrony 4.3 output, test/fixtures/chrony), and the
// clock's finding as a technician reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTracking } from '../../../src/host/chrony';
import { clockLine } from '../../../src/engine/report';

const fixture = (name: string) => readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/chrony', name), 'utf8');

test('tracking of a synchronised chronyd: its source and the offset, fast as positive', () => {
  assert.deepEqual(parseTracking(fixture('tracking-synced.txt')), { synchronised: true, source: '127.0.0.1', offsetSeconds: 0.000001315 });
  const slow = fixture('tracking-synced.txt').replace(/0\.000001315 seconds fast/, '10800.250000000 seconds slow');
  assert.equal(parseTracking(slow)?.offsetSeconds, -10800.25);
});

test('tracking without a source is not synchronised, whatever its offset line says; other text is not tracking', () => {
  assert.deepEqual(parseTracking(fixture('tracking-unsynced.txt')), { synchronised: false, offsetSeconds: 0 });
  assert.equal(parseTracking(fixture('tracking-no-daemon.txt')), undefined);
  assert.equal(parseTracking(''), undefined);
});

test('the clock as a sentence: set right by how much and which way, or not synchronised with which servers', () => {
  const at = '2026-11-25T02:00:00.000Z';
  assert.equal(clockLine({ checkedAt: at, synchronised: true, source: '10.20.0.5', offsetSeconds: -0.0004, correctedSeconds: 10800.4 }), "The node's clock is synchronised with 10.20.0.5, 0.000 s from NTP time; it was 3h behind and was set right");
  assert.equal(clockLine({ checkedAt: at, synchronised: true, source: '10.20.0.5', offsetSeconds: 0.25, correctedSeconds: -90 }), "The node's clock is synchronised with 10.20.0.5, 0.250 s from NTP time; it was 1m30s ahead and was set right");
  assert.equal(clockLine({ checkedAt: at, synchronised: true, source: '10.20.0.5', offsetSeconds: 0.25, correctedSeconds: 0.5 }), "The node's clock is synchronised with 10.20.0.5, 0.250 s from NTP time");
  assert.equal(clockLine({ checkedAt: at, synchronised: false }, 'ntp1, ntp2'), "The node's clock is not synchronised with the site's NTP servers (ntp1, ntp2); it keeps its own time");
});
