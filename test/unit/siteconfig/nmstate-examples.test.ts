// Every example desired state shipped by nmstate (test/fixtures/nmstate-examples, vendored from nmstate/nmstate
// at 614c66dc7a0f; provenance in its README) must validate as spec.network.nmstate: the validator must never
// refuse real nmstate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../support/bundle';
import { validateNmstate } from '../../../src/siteconfig/nmstate';
import { parseConfigBytes } from '../../../src/siteconfig/parse-text';

const EXAMPLES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'nmstate-examples');
const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yml') || f.endsWith('.yaml')).sort();

test('the nmstate examples are all there', () => {
  assert.equal(files.length, 47);
});

for (const file of files) {
  test(`nmstate example ${file} validates`, () => {
    const parsed = parseConfigBytes(readFileSync(path.join(EXAMPLES, file)));
    assert.ok(parsed.ok, `${file} parses: ${parsed.ok ? '' : parsed.messages.join('; ')}`);
    const found = validateNmstate(parsed.value, 'spec.network.nmstate');
    assert.deepEqual(found.errors, [], file);
  });
}
