// Refreshes the vendored openshift/api CRDs from a checkout of openshift/api:
//
//   node scripts/vendor-crds.mjs <openshift-api-checkout> [--into DIR]
//
// Copies, unmodified, every file the README of test/sim/schemas/openshift-api lists (one line per kind: its
// path in openshift/api; the copy keeps the file name) and records the checkout's commit in that README. To
// vendor a new kind, add its line to the README first. --into is for tests: another folder laid out the same.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const DEFAULT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'sim', 'schemas', 'openshift-api');

function fail(message) {
  console.error(`vendor-crds: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
const intoAt = args.indexOf('--into');
const into = intoAt >= 0 ? args.splice(intoAt, 2)[1] : DEFAULT_DIR;
if (args.length !== 1 || !into) fail('usage: node scripts/vendor-crds.mjs <openshift-api-checkout> [--into DIR]');
const checkout = path.resolve(args[0]);

let commit;
try {
  commit = execFileSync('git', ['-C', checkout, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
} catch {
  fail(`${checkout} is not a git checkout of openshift/api: its commit is what the README records`);
}

const readmePath = path.join(into, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const listed = [...readme.matchAll(/^\|\s*([A-Za-z]+)\s*\|\s*`([^`]+\.ya?ml)`\s*\|\s*$/gm)].map(([, kind, upstreamPath]) => ({ kind, upstreamPath }));
if (listed.length === 0) fail(`${readmePath} lists no CRD (lines "| Kind | \`path/in/openshift-api\` |")`);
const absent = listed.filter((l) => !existsSync(path.join(checkout, l.upstreamPath)));
if (absent.length > 0) fail(`not in the checkout at ${commit}:\n${absent.map((l) => `  ${l.kind}: ${l.upstreamPath}`).join('\n')}`);
if (!/^- Commit: [0-9a-f]+$/m.test(readme)) fail(`${readmePath} has no "- Commit: <sha>" line to update`);

let changed = 0;
for (const { upstreamPath } of listed) {
  const target = path.join(into, path.posix.basename(upstreamPath));
  const source = path.join(checkout, upstreamPath);
  if (!existsSync(target) || !readFileSync(target).equals(readFileSync(source))) changed++;
  copyFileSync(source, target);
}
writeFileSync(readmePath, readme.replace(/^- Commit: [0-9a-f]+$/m, `- Commit: ${commit}`));
console.log(`vendor-crds: ${listed.length} CRDs from openshift/api at ${commit}, ${changed} changed`);
