// The simulator serves and validates OpenShift resources with the schema files of test/sim/schemas/openshift-api/
// (the facts of openshift/api types, in the project's compact notation). Its README lists one line per kind
// (kind | Go type | file): a kind the simulator serves with no line or no file, a file nobody listed, or a file
// that does not cite the README's commit is an error here, named by kind and file, before a simulator start fails on it.
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

interface SchemaLine {
  kind: string;
  goFile: string;
  file: string;
}

/** The README's table rows: `| Kind | `group/version/types.go` | `plural.group.yaml` |`. */
function schemaLines(readme: string): SchemaLine[] {
  return [...readme.matchAll(/^\|\s*([A-Za-z]+)\s*\|\s*`([^`]+\.go)`\s*\|\s*`([^`]+\.yaml)`\s*\|\s*$/gm)].map(([, kind, goFile, file]) => ({ kind, goFile, file }));
}

function readmeCommit(readme: string): string | undefined {
  return /^Facts from https:\/\/github\.com\/openshift\/api at commit `([0-9a-f]{40})`\.$/m.exec(readme)?.[1];
}

/** What is wrong with the schema files in dir for the resources the simulator serves; [] when nothing. */
function schemaProblems(dir: string, served: readonly ResourceType[]): string[] {
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8');
  const commit = readmeCommit(readme);
  const listed = schemaLines(readme);
  const present = new Set(readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)));
  const problems: string[] = [];
  if (!commit) problems.push(`${SHOWN_DIR}/README.md does not say which openshift/api commit its facts are from`);
  for (const type of served) {
    const line = listed.find((l) => l.kind === type.kind);
    if (!line) {
      problems.push(`${type.kind} (${type.plural}.${type.group}) is served by the simulator, but no line of ${SHOWN_DIR}/README.md names its schema file`);
    } else if (!present.has(line.file)) {
      problems.push(`${type.kind}: its schema file ${line.file} is missing from ${SHOWN_DIR}; write it from openshift/api ${line.goFile} at the README's commit`);
    }
  }
  const crds = loadCrds(dir);
  for (const line of listed) {
    if (!present.has(line.file)) continue;
    const type = served.find((t) => t.kind === line.kind);
    const crd = crds.find((c) => c.file === line.file);
    const header = readFileSync(path.join(dir, line.file), 'utf8').split('\n').filter((l) => l.startsWith('#')).join('\n');
    if (!type) problems.push(`${line.file} (${line.kind}) is listed, but the simulator does not serve ${line.kind}: remove the file and its README line`);
    else if (crd?.kind !== type.kind || crd.group !== type.group || crd.plural !== type.plural || crd.version !== type.version) {
      problems.push(`${line.file} should state ${type.kind} (${type.group}/${type.version} ${type.plural}), but states ${crd ? `${crd.kind} (${crd.group}/${crd.version} ${crd.plural})` : 'no kind'}`);
    }
    if (commit && !(header.includes(commit) && header.includes(line.goFile))) problems.push(`${line.file} does not cite ${line.goFile} at commit ${commit} in its header`);
  }
  for (const file of present) {
    if (!listed.some((l) => l.file === file)) problems.push(`${file} in ${SHOWN_DIR} has no line in its README (kind, Go type and file)`);
  }
  return problems;
}

const served = SERVED_FROM_CRDS.map((s) => s.type);

function copyOfSchemas(t: { after: (fn: () => void) => void }, skip?: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-schema-files-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of readdirSync(CRD_DIR)) if (f !== skip) copyFileSync(path.join(CRD_DIR, f), path.join(dir, f));
  return dir;
}

test('every kind the simulator serves from a CRD schema has its file, listed in the README and citing its commit, and nothing else is there', () => {
  assert.deepEqual(schemaProblems(CRD_DIR, served), []);
  assert.equal(schemaLines(readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8')).length, served.length);
});

test('a missing schema file is reported by kind and file name', (t) => {
  const missing = schemaLines(readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8')).find((l) => l.kind === 'ImageDigestMirrorSet');
  assert.ok(missing, 'the README lists ImageDigestMirrorSet');
  const dir = copyOfSchemas(t, missing.file);
  assert.deepEqual(schemaProblems(dir, served), [
    `ImageDigestMirrorSet: its schema file ${missing.file} is missing from ${SHOWN_DIR}; write it from openshift/api config/v1/types_image_digest_mirror_set.go at the README's commit`,
  ]);
});

test('a served kind without a README line, and a file without one, are both reported', (t) => {
  const dir = copyOfSchemas(t);
  const readme = readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8');
  const routeLine = readme.split('\n').find((l) => l.startsWith('| Route |'));
  assert.ok(routeLine);
  writeFileSync(path.join(dir, 'README.md'), readme.replace(`${routeLine}\n`, ''));
  assert.deepEqual(schemaProblems(dir, served), [
    `Route (routes.route.openshift.io) is served by the simulator, but no line of ${SHOWN_DIR}/README.md names its schema file`,
    `routes.route.openshift.io.yaml in ${SHOWN_DIR} has no line in its README (kind, Go type and file)`,
  ]);
});

test('a file whose header cites another commit is reported', (t) => {
  const dir = copyOfSchemas(t);
  const file = path.join(dir, 'dnses.config.openshift.io.yaml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/[0-9a-f]{40}/, '0'.repeat(40)));
  const commit = readmeCommit(readFileSync(path.join(CRD_DIR, 'README.md'), 'utf8'));
  assert.deepEqual(schemaProblems(dir, served), [`dnses.config.openshift.io.yaml does not cite config/v1/types_dns.go at commit ${commit} in its header`]);
});

test('a schema file carrying field prose, or a keyword the simulator would not enforce, does not load', (t) => {
  const dir = copyOfSchemas(t);
  const file = path.join(dir, 'dnses.config.openshift.io.yaml');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.replace('    baseDomain: string\n', '    baseDomain: {type: string, description: the base domain}\n'));
  assert.throws(() => loadCrds(dir), /dnses\.config\.openshift\.io\.yaml: schema\.spec\.baseDomain: "description" is not a keyword of the compact schema notation/);
  writeFileSync(file, text.replace('    baseDomain: string\n', '    baseDomain: {type: string, x-kubernetes-unheard-of: true}\n'));
  assert.throws(() => loadCrds(dir), /"x-kubernetes-unheard-of" is not a keyword/);
});
