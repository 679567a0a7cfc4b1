// The simulator serves and validates OpenShift resources with the openshift/api CRDs vendored in
// test/sim/schemas/openshift-api/. Its README lists one line per kind (kind | path in openshift/api, the copy
// keeping the file name): a kind the simulator serves with no line or no file, or a file nobody listed, is an
// error here, named by kind and file, before a simulator start fails on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ResourceType } from '../../../src/cluster/types';
import { SERVED_FROM_CRDS } from '../../sim/apiserver/resources';
import { CRD_DIR, loadCrds } from '../../sim/crd-schema';
import { PROJECT_ROOT } from '../../support/bundle';

const SHOWN_DIR = path.relative(PROJECT_ROOT, CRD_DIR);

interface VendoredCrd {
  kind: string;
  upstreamPath: string;
  file: string;
}

/** The README's table rows: `| Kind | `path/in/openshift-api/file.crd.yaml` |`. */
function vendoredCrds(readme: string): VendoredCrd[] {
  return [...readme.matchAll(/^\|\s*([A-Za-z]+)\s*\|\s*`([^`]+\.ya?ml)`\s*\|\s*$/gm)].map(([, kind, upstreamPath]) => ({ kind, upstreamPath, file: path.posix.basename(upstreamPath) }));
}

/** What is wrong with the vendored CRDs in dir for the resources the simulator serves; [] when nothing. */
function schemaProblems(dir: string, served: readonly ResourceType[]): string[] {
  const listed = vendoredCrds(readFileSync(path.join(dir, 'README.md'), 'utf8'));
  const present = new Set(readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)));
  const problems: string[] = [];
  for (const type of served) {
    const line = listed.find((l) => l.kind === type.kind);
    if (!line) {
      problems.push(`${type.kind} (${type.plural}.${type.group}) is served by the simulator, but no line of ${SHOWN_DIR}/README.md names its CRD file`);
    } else if (!present.has(line.file)) {
      problems.push(`${type.kind}: its CRD file ${line.file} is missing from ${SHOWN_DIR}; copy it unmodified from openshift/api ${line.upstreamPath} at the README's commit`);
    }
  }
  const crds = loadCrds(dir);
  for (const line of listed) {
    if (!present.has(line.file)) continue;
    const type = served.find((t) => t.kind === line.kind);
    const crd = crds.find((c) => c.file === line.file);
    if (!type) problems.push(`${line.file} (${line.kind}) is vendored, but the simulator does not serve ${line.kind}: remove the file and its README line`);
    else if (crd?.kind !== type.kind || crd.group !== type.group || crd.plural !== type.plural || crd.version !== type.version) {
      problems.push(`${line.file} should define ${type.kind} (${type.group}/${type.version} ${type.plural}), but defines ${crd ? `${crd.kind} (${crd.group}/${crd.version} ${crd.plural})` : 'no CustomResourceDefinition'}`);
    }
  }
  for (const file of present) {
    if (!listed.some((l) => l.file === file)) problems.push(`${file} in ${SHOWN_DIR} has no line in its README (kind and path in openshift/api)`);
  }
  return problems;
}

const served = SERVED_FROM_CRDS.map((s) => s.type);

test('every kind the simulator serves from a CRD has its vendored file, listed in the README, and nothing else is vendored', () => {
  assert.deepEqual(schemaProblems(CRD_DIR, served), []);
  assert.equal(vendoredCrds(readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8')).length, served.length);
});

test('the README records the upstream commit and licence of the vendored CRDs', () => {
  const readme = readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8');
  assert.match(readme, /^- Upstream: https:\/\/github\.com\/openshift\/api$/m);
  assert.match(readme, /^- Commit: [0-9a-f]{40}$/m);
  assert.match(readme, /^- Licence: Apache-2\.0/m);
});

test('a missing schema file is reported by kind and file name', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-vendored-crds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const missing = vendoredCrds(readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8')).find((l) => l.kind === 'ImageDigestMirrorSet');
  assert.ok(missing, 'the README lists ImageDigestMirrorSet');
  for (const f of readdirSync(CRD_DIR)) if (f !== missing.file) copyFileSync(path.join(CRD_DIR, f), path.join(dir, f));
  assert.deepEqual(schemaProblems(dir, served), [
    `ImageDigestMirrorSet: its CRD file ${missing.file} is missing from ${SHOWN_DIR}; copy it unmodified from openshift/api ${missing.upstreamPath} at the README's commit`,
  ]);
});

test('a served kind without a README line, and a vendored file without one, are both reported', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-vendored-crds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of readdirSync(CRD_DIR)) copyFileSync(path.join(CRD_DIR, f), path.join(dir, f));
  const readme = readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8');
  const routeLine = readme.split('\n').find((l) => l.startsWith('| Route |'));
  assert.ok(routeLine);
  writeFileSync(path.join(dir, 'README.md'), readme.replace(`${routeLine}\n`, ''));
  assert.deepEqual(schemaProblems(dir, served), [
    `Route (routes.route.openshift.io) is served by the simulator, but no line of ${SHOWN_DIR}/README.md names its CRD file`,
    `routes.crd.yaml in ${SHOWN_DIR} has no line in its README (kind and path in openshift/api)`,
  ]);
});
