// docs/site-config.md cannot drift from the schema: every field path of the zod schema (src/siteconfig/schema.ts)
// has its own section in the document, every documented field exists in the schema, each section gives type,
// required, default and example, the documented timeout defaults are the code's, and the document's complete
// example is a valid site-config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { DEFAULT_LABELS, TRUSTED_KEYS_DIR } from '../../../src/paths';
import { formatDuration } from '../../../src/siteconfig/duration';
import { MULTI_DIR, SITE_CONFIG_NAMES, validateEveryCandidate } from '../../../src/siteconfig/load';
import { API_VERSION, KIND, TIMEOUT_KEYS, siteConfigSchema } from '../../../src/siteconfig/schema';
import { DEFAULT_TIMEOUTS } from '../../../src/siteconfig/types';
import { PROJECT_ROOT } from '../../support/bundle';

const DOC_PATH = path.join(PROJECT_ROOT, 'docs', 'site-config.md');

interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  innerType?: { _zod: { def: SchemaDef } };
  element?: { _zod: { def: SchemaDef } };
  valueType?: { _zod: { def: SchemaDef } };
}

// Types whose values the document describes in prose (their inner rules live in nmstate.ts / pull-secret.ts).
const LEAF_TYPES = new Set(['string', 'literal', 'enum', 'unknown', 'number', 'boolean']);

/** Every field path of a zod/mini schema: `spec.network.verify.ping`, `spec.imageDigestMirrors[].source`. */
function schemaFieldPaths(def: SchemaDef, at = '', out: string[] = []): string[] {
  switch (def.type) {
    case 'optional':
      return schemaFieldPaths(def.innerType!._zod.def, at, out);
    case 'object':
      for (const [key, value] of Object.entries(def.shape!)) {
        const field = at === '' ? key : `${at}.${key}`;
        out.push(field);
        schemaFieldPaths(value._zod.def, field, out);
      }
      return out;
    case 'array':
      return schemaFieldPaths(def.element!._zod.def, `${at}[]`, out);
    case 'record':
      // Free-form keys (spec.sha256): only a value with fields of its own would need paths.
      return schemaFieldPaths(def.valueType!._zod.def, `${at}.*`, out);
    default:
      // A new kind of schema (union, pipe, ...) could hide fields from this walk: teach it rather than skip.
      if (!LEAF_TYPES.has(def.type)) throw new Error(`schemaFieldPaths does not know zod type '${def.type}' (at '${at}')`);
      return out;
  }
}

interface FieldSection {
  path: string;
  body: string;
}

/** The `### \`field.path\`` sections of the document, each with its text up to the next heading. */
function fieldSections(markdown: string): FieldSection[] {
  const sections: FieldSection[] = [];
  const heading = /^#{2,6} `((?:apiVersion|kind|metadata|spec)[^`]*)`\s*$/gm;
  for (const m of markdown.matchAll(heading)) {
    const start = m.index + m[0].length;
    const rest = markdown.slice(start);
    const next = /^#{1,6} /m.exec(rest);
    sections.push({ path: m[1]!, body: next ? rest.slice(0, next.index) : rest });
  }
  return sections;
}

const doc = readFileSync(DOC_PATH, 'utf8');
const schemaPaths = schemaFieldPaths((siteConfigSchema as unknown as { _zod: { def: SchemaDef } })._zod.def);
const documented = fieldSections(doc);

test('the schema walk finds the fields (the walk itself works)', () => {
  assert.ok(schemaPaths.includes('spec.network.verify.ping'));
  assert.ok(schemaPaths.includes('spec.imageDigestMirrors[].mirrors'));
  assert.ok(schemaPaths.length >= 40, `only ${schemaPaths.length} field paths found`);
});

test('every field of the schema has its section in docs/site-config.md', () => {
  const missing = schemaPaths.filter((p) => !documented.some((s) => s.path === p));
  assert.deepEqual(missing, [], `fields without a "### \`path\`" section in docs/site-config.md: ${missing.join(', ')}`);
});

test('every field documented in docs/site-config.md exists in the schema, once', () => {
  const unknown = documented.map((s) => s.path).filter((p) => !schemaPaths.includes(p));
  assert.deepEqual(unknown, [], `documented fields the schema does not have: ${unknown.join(', ')}`);
  const twice = documented.map((s) => s.path).filter((p, i, all) => all.indexOf(p) !== i);
  assert.deepEqual(twice, [], `fields documented twice: ${twice.join(', ')}`);
});

test('every field section gives its type, whether it is required, its default and an example', () => {
  const incomplete = documented
    .map((s) => ({ path: s.path, lacks: ['Type', 'Required', 'Default', 'Example'].filter((k) => !new RegExp(`^- \\*\\*${k}\\*\\*: \\S`, 'm').test(s.body)) }))
    .filter((s) => s.lacks.length > 0);
  assert.deepEqual(incomplete, []);
});

test('the documented timeout defaults are the code\'s', () => {
  for (const key of TIMEOUT_KEYS) {
    const section = documented.find((s) => s.path === `spec.timeouts.${key}`);
    assert.ok(section, `spec.timeouts.${key} is documented`);
    assert.match(section.body, new RegExp(`^- \\*\\*Default\\*\\*: \`${formatDuration(DEFAULT_TIMEOUTS[key])}\`$`, 'm'), `default of spec.timeouts.${key}`);
  }
});

test('the names a site-config is found by are the code\'s', () => {
  for (const name of [API_VERSION, KIND, ...DEFAULT_LABELS, ...SITE_CONFIG_NAMES, `${MULTI_DIR}/`, TRUSTED_KEYS_DIR]) {
    assert.ok(doc.includes(`\`${name}`), `docs/site-config.md names \`${name}\``);
  }
});

test('the complete site-config in the document is valid', async () => {
  const block = /## A complete site-config[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, 'the document has a "A complete site-config" section with a yaml block');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-reference-doc-'));
  try {
    await fs.writeFile(path.join(dir, 'site-config.yaml'), block[1]!);
    await fs.copyFile(path.join(PROJECT_ROOT, 'examples', 'mirrors-and-ca', 'registry-ca.crt'), path.join(dir, 'registry-ca.crt'));
    // Signed media (most of its fields need them): on a workstation without the key, judged as signed, not verified.
    await fs.writeFile(path.join(dir, 'site-config.yaml.sig'), 'c2lnbmVkIGJ5IHRoZSBvZmZpY2U=\n');
    const root = path.join(dir, 'root');
    await fs.mkdir(root);
    const [report] = await validateEveryCandidate(dir, { host: new LocalHost({ root }) });
    assert.deepEqual(report?.errors, []);
    assert.deepEqual(report?.warnings.filter((w) => w.path !== 'site-config.yaml.sig'), []);
    assert.equal(report?.valid, true);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
