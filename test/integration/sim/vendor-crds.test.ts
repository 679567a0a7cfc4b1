// scripts/vendor-crds.mjs against a stand-in openshift/api checkout (a git repository holding the README's
// paths): it copies the listed files by name and records the checkout's commit; a listed path the checkout
// lacks changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CRD_DIR } from '../../sim/crd-schema';
import { PROJECT_ROOT } from '../../support/bundle';

const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'vendor-crds.mjs');
const README = readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8');
const LISTED = [...README.matchAll(/^\|\s*[A-Za-z]+\s*\|\s*`([^`]+)`\s*\|$/gm)].map((m) => m[1]);
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8' }).trim();

/** A git repository with every listed upstream path (the vendored copy, `edit` applied), and a copy of the vendored folder. */
function standIn(edit: (upstreamPath: string, text: string) => string | undefined): { checkout: string; into: string; commit: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-vendor-crds-'));
  const checkout = path.join(dir, 'api');
  for (const upstreamPath of LISTED) {
    const text = edit(upstreamPath, readFileSync(path.join(CRD_DIR, path.posix.basename(upstreamPath)), 'utf8'));
    if (text === undefined) continue;
    mkdirSync(path.dirname(path.join(checkout, upstreamPath)), { recursive: true });
    writeFileSync(path.join(checkout, upstreamPath), text);
  }
  git(checkout, 'init', '--quiet');
  git(checkout, 'add', '.');
  git(checkout, 'commit', '--quiet', '-m', 'stand-in openshift/api');
  const into = path.join(dir, 'vendored');
  cpSync(CRD_DIR, into, { recursive: true });
  return { checkout, into, commit: git(checkout, 'rev-parse', 'HEAD'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('refreshes every listed file from the checkout and records its commit in the README', (t) => {
  const changedPath = LISTED.find((p) => p.endsWith('routes.crd.yaml'));
  assert.ok(changedPath);
  const s = standIn((p, text) => (p === changedPath ? `${text}# changed upstream\n` : text));
  t.after(s.cleanup);
  const res = spawnSync(process.execPath, [SCRIPT, s.checkout, '--into', s.into], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stdout.trim(), `vendor-crds: ${LISTED.length} CRDs from openshift/api at ${s.commit}, 1 changed`);
  assert.match(readFileSync(path.join(s.into, 'routes.crd.yaml'), 'utf8'), /# changed upstream\n$/);
  const readme = readFileSync(path.join(s.into, 'README.md'), 'utf8');
  assert.equal(readme, README.replace(/^- Commit: [0-9a-f]+$/m, `- Commit: ${s.commit}`));
  assert.deepEqual(readdirSync(s.into).sort(), readdirSync(CRD_DIR).sort(), 'no file added or lost');
});

test('a listed path missing from the checkout is named, and nothing is changed', (t) => {
  const missing = LISTED.find((p) => p.includes('imagedigestmirrorsets'));
  assert.ok(missing);
  const s = standIn((p, text) => (p === missing ? undefined : `${text}# changed upstream\n`));
  t.after(s.cleanup);
  const res = spawnSync(process.execPath, [SCRIPT, s.checkout, '--into', s.into], { encoding: 'utf8' });
  assert.equal(res.status, 1);
  assert.equal(res.stderr, `vendor-crds: not in the checkout at ${s.commit}:\n  ImageDigestMirrorSet: ${missing}\n`);
  assert.equal(readFileSync(path.join(s.into, 'README.md'), 'utf8'), README);
  for (const f of readdirSync(CRD_DIR)) assert.ok(readFileSync(path.join(s.into, f)).equals(readFileSync(path.join(CRD_DIR, f))), `${f} unchanged`);
});
