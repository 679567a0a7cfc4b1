// The node bundle leaves out yaml's code for building documents from values (createNode, anchors), for revivers
// and its JSON schema (esbuild.config.mjs, yamlBuildStandIn): the node code only parses, with schema 'core' and no
// reviver. Here: the bundle holds the stand-in and none of those modules; every example and a document full of
// anchors, aliases and tags read the same through the bundle as through the sources; and the stand-in, if yaml ever
// reached it, says so in a sentence.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/cli';
import { PROJECT_ROOT } from '../../support/bundle';
import { bundleWithScratch, runBundledProbe } from '../../support/yaml-stand-in';

const ANCHORED = `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata:
  name: &site store-42
  labels: {store: *site, number: !!str 42}
spec:
  baseDomain: store42.example.com
  ntpServers: &ntp [ntp1.store42.example.com, ntp2.store42.example.com]
  extra: *ntp
`;

describe("the node bundle without yaml's document building", () => {
  const ctx = bundleWithScratch('sno-yaml-build-');

  test("holds the stand-in, not yaml's createNode, anchors, applyReviver or JSON schema", () => {
    const inputs = Object.keys(ctx.metafile.inputs);
    assert.deepEqual(inputs.filter((p) => /node_modules\/yaml\/.*\/(doc\/createNode|doc\/anchors|doc\/applyReviver|schema\/json\/schema)\.js$/.test(p)), []);
    assert.deepEqual(inputs.filter((p) => p.startsWith('yaml-build-stand-in:')), ['yaml-build-stand-in:build.js']);
  });

  test('every example and a document of anchors, aliases and tags read the same through the bundle as through the sources', async () => {
    writeFileSync(path.join(ctx.dir, 'anchored.yaml'), ANCHORED);
    // Every site-config of examples/ (the fleet template has placeholders: media build fills them).
    const examples = readdirSync(path.join(PROJECT_ROOT, 'examples'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /(^|\/)site-config\.yaml$|site-configs\/.*\.yaml$/.test(f) && !f.startsWith('fleet/'))
      .map((f) => path.join(PROJECT_ROOT, 'examples', f));
    assert.ok(examples.length >= 5, examples.join(', '));
    for (const file of [path.join(ctx.dir, 'anchored.yaml'), ...examples]) {
      let out = '';
      const code = await runCli(['validate', file, '--json'], { out: (s) => (out += s), err: () => undefined, env: {}, cwd: path.dirname(file) });
      const res = spawnSync(process.execPath, [ctx.bundle, 'validate', file, '--json'], { cwd: path.dirname(file), encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
      assert.equal(res.status, code, `${file}: ${res.stderr}`);
      assert.deepEqual(JSON.parse(res.stdout), JSON.parse(out), file);
      assert.doesNotMatch(res.stdout + res.stderr, /internal error|does not build YAML/i, file);
    }
  });

  test('the stand-in, if yaml ever reached it, throws a sentence saying so', async () => {
    // yaml's own setIn on a parsed document builds nodes from values: the node code never does.
    const run = await runBundledProbe("import { parseDocument } from 'yaml';\ntry { parseDocument('a: 1\\n').setIn(['b', 'c'], 2); console.log('built'); } catch (e) { console.log(e.message); }\n");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'the node bundle does not build YAML documents from values (esbuild.config.mjs, yamlBuildStandIn)');
  });
});
