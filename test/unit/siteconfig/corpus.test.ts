// Table-driven: every case of the site-config corpus (test/fixtures/site-configs) through loadSiteConfig, with
// the verdict, the error paths and messages its expect.json names.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalHost } from '../../../src/host/host';
import { loadSiteConfig } from '../../../src/siteconfig/load';
import { listCases, normalizeLocationPaths, outcomeOf, prepareCase, unmetExpectations, type CaseKind } from './corpus';

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(cleanups.map((c) => c()));
});

test('the corpus has at least 12 valid and 60 invalid cases', () => {
  assert.ok(listCases('valid').length >= 12, `${listCases('valid').length} valid cases`);
  assert.ok(listCases('invalid').length >= 60, `${listCases('invalid').length} invalid cases`);
});

for (const kind of ['valid', 'invalid'] as CaseKind[]) {
  describe(`${kind} site-configs`, () => {
    for (const name of listCases(kind)) {
      test(name, async () => {
        const c = await prepareCase(kind, name);
        cleanups.push(c.cleanup);
        const result = await loadSiteConfig(c.location, { host: new LocalHost({ root: c.root }) });
        const unmet = unmetExpectations(normalizeLocationPaths(outcomeOf(result), c.location), c.expect);
        assert.deepEqual(unmet, [], `${name} (${c.expect.description})`);
        if (result.status === 'valid') {
          assert.match(result.site.digest, /^[0-9a-f]{64}$/);
          assert.equal(result.site.sourcePath.startsWith('/'), true);
        }
      });
    }
  });
}
