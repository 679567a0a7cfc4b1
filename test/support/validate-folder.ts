// `sno-reconfigure validate --json` (in process) on a media folder written from a map of files, the folder being the
// node root too (its trusted keys, if the files hold any). The folder is removed by the caller's `cleanups`.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/cli';

export interface ValidateReport {
  valid: boolean;
  errors: { path: string; message: string }[];
  warnings: { path: string; message: string }[];
}

export async function validateFolder(files: (dir: string) => Record<string, string>, cleanups: Array<() => Promise<void>>, prefix = 'sno-validate-'): Promise<{ code: number; report: ValidateReport }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  for (const [rel, text] of Object.entries(files(dir))) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), text);
  }
  let stdout = '';
  let stderr = '';
  const code = await runCli(['validate', dir, '--json', '--root', dir], { out: (s) => (stdout += s), err: (s) => (stderr += s), env: {}, cwd: dir });
  assert.doesNotMatch(stderr, /internal error/);
  return { code, report: JSON.parse(stdout) as ValidateReport };
}
