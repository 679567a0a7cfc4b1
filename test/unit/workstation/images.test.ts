// The volume identity `media build` gives each image (issue 30): the FAT serial written into the boot sector
// where FAT12/16 and FAT32 keep it (and FAT32's backup boot sector), and the ISO's UUID as a valid 16-digit date.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { isoDateOf, setFatSerial } from '../../../src/workstation/images';

test('FAT12/16: BS_VolID at offset 39, little-endian', () => {
  const image = Buffer.alloc(1024);
  image.write('FAT12   ', 54, 'latin1');
  setFatSerial(image, Buffer.from('1a2b3c4d', 'hex'));
  assert.equal(image.subarray(39, 43).toString('hex'), '4d3c2b1a');
  assert.equal(image.subarray(67, 71).toString('hex'), '00000000');
});

test('FAT32: BS_VolID at offset 67, in the boot sector and its backup', () => {
  const image = Buffer.alloc(8 * 512);
  image.write('FAT32   ', 82, 'latin1');
  image.writeUInt16LE(512, 11);
  image.writeUInt16LE(6, 50);
  setFatSerial(image, Buffer.from('1a2b3c4d', 'hex'));
  assert.equal(image.subarray(67, 71).toString('hex'), '4d3c2b1a');
  assert.equal(image.subarray(6 * 512 + 67, 6 * 512 + 71).toString('hex'), '4d3c2b1a');
  assert.equal(image.subarray(39, 43).toString('hex'), '00000000');
});

test('the ISO date is 16 digits of a real date between 2000 and 2099, different for different content', () => {
  const dates = ['a', 'b', 'c', 'd'].map((x) => isoDateOf(createHash('sha256').update(x).digest()));
  for (const d of dates) {
    assert.match(d, /^20\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])([01]\d|2[0-3])[0-5]\d[0-5]\d\d\d$/);
  }
  assert.equal(new Set(dates).size, dates.length);
  assert.equal(isoDateOf(createHash('sha256').update('a').digest()), dates[0]);
});
