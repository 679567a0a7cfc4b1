// validate IMAGE's reader (src/siteconfig/image.ts): which filesystem an image holds, and what a person reads
// when the tool to read it is missing. Real images are built and read in test/integration/factory-and-site.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { extractImage, imageKindOf, MAX_IMAGE_BYTES } from '../../../src/siteconfig/image';

function bootSector(fsType: string, at: number): Buffer {
  const b = Buffer.alloc(512);
  b.write(fsType, at, 'latin1');
  b[510] = 0x55;
  b[511] = 0xaa;
  return b;
}

test('image kinds: FAT12/16 and FAT32 boot sectors, an ISO 9660 volume descriptor, and nothing else', () => {
  const iso = Buffer.alloc(0x8800);
  iso.write('CD001', 0x8001, 'latin1');
  const rows: [string, Buffer, string | undefined][] = [
    ['FAT16', bootSector('FAT16   ', 54), 'fat'],
    ['FAT12', bootSector('FAT12   ', 54), 'fat'],
    ['FAT32', bootSector('FAT32   ', 82), 'fat'],
    ['ISO 9660', iso, 'iso9660'],
    ['a boot signature without a FAT type (an MBR)', bootSector('NTFS    ', 3), undefined],
    ['a YAML file', Buffer.from('apiVersion: sno-reconfigure.io/v1\n'), undefined],
    ['an empty file', Buffer.alloc(0), undefined],
  ];
  for (const [name, head, kind] of rows) assert.equal(imageKindOf(head), kind, name);
});

test('a missing tool names the package to install; an oversized image is refused before anything is copied', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'image-'));
  try {
    const img = path.join(dir, 's.img');
    writeFileSync(img, bootSector('FAT16   ', 54));
    const noTools = new LocalHost({ env: { PATH: path.join(dir, 'empty-bin') } });
    await assert.rejects(extractImage(noTools, img, 'fat', 512), /reading a FAT image needs mcopy: install the mtools package/);
    await assert.rejects(extractImage(noTools, img, 'iso9660', 512), /reading an ISO 9660 image needs xorriso: install the xorriso package/);
    await assert.rejects(extractImage(new LocalHost(), img, 'fat', MAX_IMAGE_BYTES + 1), /site-config media images are expected to be small/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
