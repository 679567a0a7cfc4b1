// The decision each referenced file's digest goes through (validateSiteConfigFile, step 5), as named rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pinProblem } from '../../../src/siteconfig/file-validation';

const DIGEST = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);

const rows: { name: string; pin: string | undefined; signedMediaRequired: boolean; problem: RegExp | undefined }[] = [
  { name: 'unpinned on a node without trusted keys: fine', pin: undefined, signedMediaRequired: false, problem: undefined },
  { name: 'pinned and matching: fine', pin: DIGEST, signedMediaRequired: false, problem: undefined },
  { name: 'pinned and matching on a node that requires signed media: fine', pin: DIGEST, signedMediaRequired: true, problem: undefined },
  { name: 'pinned and changed since: the file was changed after the site-config was written', pin: OTHER, signedMediaRequired: false, problem: /^sha256 of 'net\.yaml' is a{64}, but spec\.sha256 pins b{64}: the file was changed after/ },
  { name: 'pinned and changed on signed media: still the mismatch, not the missing pin', pin: OTHER, signedMediaRequired: true, problem: /but spec\.sha256 pins b{64}/ },
  { name: 'unpinned on a node that requires signed media: must be pinned, with the digest to pin', pin: undefined, signedMediaRequired: true, problem: /^this node requires signed media, so 'net\.yaml' must be pinned in spec\.sha256 \(its sha256 is a{64}\)$/ },
];

for (const row of rows) {
  test(`pinProblem: ${row.name}`, () => {
    const problem = pinProblem('net.yaml', DIGEST, row.pin, row.signedMediaRequired);
    if (row.problem === undefined) assert.equal(problem, undefined);
    else assert.match(problem ?? '', row.problem);
  });
}
