// The read-and-confine stage: the site-config's own bytes (a regular file of at most 1 MiB, src/siteconfig/files.ts),
// and whether a path beside it is a file or folder inside the directory its references must stay in.
import * as path from 'node:path';
import { isInside, listDirectory, readRegularFile, realPathIfExists, statKind } from '../files';
import { MANIFEST_FILE } from '../manifests';
import type { Findings } from '../problems';
import type { FileValidationContext } from './context';

/** The site-config file's bytes, or undefined (the reason reported) when it cannot be read. */
export async function readSiteConfigBytes(f: Findings, ctx: FileValidationContext): Promise<Buffer | undefined> {
  const read = await readRegularFile(ctx.filePath, '');
  if (read.ok) return read.bytes;
  f.error(ctx.display, read.message);
  return undefined;
}

async function confinedKind(ctx: FileValidationContext, rel: string): Promise<'file' | 'directory' | 'other' | 'missing'> {
  const real = await realPathIfExists(path.resolve(path.dirname(ctx.filePath), rel));
  return real && isInside(ctx.rootDir, real) ? statKind(real) : 'missing';
}

/** The manifest files (.yaml, .yml, .json) of a folder inside the site-config's directory; none when it is not one. */
export async function manifestFilesIn(ctx: FileValidationContext, rel: string): Promise<string[]> {
  if ((await confinedKind(ctx, rel)) !== 'directory') return [];
  return (await listDirectory(path.resolve(path.dirname(ctx.filePath), rel))).filter((x) => MANIFEST_FILE.test(x));
}
