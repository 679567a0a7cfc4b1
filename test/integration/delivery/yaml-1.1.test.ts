// The node bundle leaves out yaml's YAML 1.1 types (esbuild.config.mjs, yaml11StandIn) because the agent parses
// only through src/util/yaml.ts, which pins YAML 1.2's core schema and leaves explicit tags unresolved. Here:
// the stand-in is what the node bundle holds, and site-configs that ask for YAML 1.1 (a %YAML 1.1 directive,
// its `yes`, !!binary, !!timestamp, !!set, !!omap) get the same verdict from the bundle as from the sources,
// which run the whole yaml package.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/cli';
import { bundleWithScratch } from '../../support/yaml-stand-in';

const HEAD = 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata:\n  name: store-42\n';
const CASES: Record<string, string> = {
  'directive-1.1': `%YAML 1.1\n---\n${HEAD}spec:\n  baseDomain: store42.example.com\n`,
  'yes-under-1.1': `%YAML 1.1\n---\n${HEAD}spec:\n  baseDomain: store42.example.com\n  clusterName: yes\n`,
  binary: `${HEAD}spec:\n  baseDomain: !!binary c3RvcmU0Mi5leGFtcGxlLmNvbQ==\n`,
  timestamp: `%YAML 1.1\n---\n${HEAD}spec:\n  baseDomain: store42.example.com\n  clusterName: !!timestamp 2001-12-14\n`,
  set: `${HEAD}spec:\n  baseDomain: store42.example.com\n  labels: !!set {a, b}\n`,
  omap: `%YAML 1.1\n---\n${HEAD}spec: !!omap\n  - baseDomain: store42.example.com\n`,
  'merge-key': `${HEAD}spec:\n  <<: {baseDomain: store42.example.com}\n`,
};

describe("the node bundle without yaml's YAML 1.1 types", () => {
  const ctx = bundleWithScratch('sno-yaml11-');

  test('holds the stand-in, not the YAML 1.1 types (yaml-1.1/merge.js stays: the core code uses it)', () => {
    const inputs = Object.keys(ctx.metafile.inputs);
    assert.deepEqual(inputs.filter((p) => /node_modules\/yaml\/.*\/yaml-1\.1\//.test(p)).map((p) => path.basename(p)), ['merge.js']);
    assert.deepEqual(inputs.filter((p) => p.startsWith('yaml-1.1-stand-in:')), ['yaml-1.1-stand-in:types.js']);
  });

  for (const [name, text] of Object.entries(CASES)) {
    test(`${name}: validate --json says the same from the bundle as from the sources`, async () => {
      const file = path.join(ctx.dir, `${name}.yaml`);
      writeFileSync(file, text);
      let out = '';
      const code = await runCli(['validate', file, '--json'], { out: (s) => (out += s), err: () => undefined, env: {}, cwd: ctx.dir });
      const res = spawnSync(process.execPath, [ctx.bundle, 'validate', file, '--json'], { cwd: ctx.dir, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
      assert.equal(res.status, code, res.stderr);
      assert.deepEqual(JSON.parse(res.stdout), JSON.parse(out));
      assert.doesNotMatch(res.stdout, /YAML 1\.1 type/, 'the stand-in is never reached');
    });
  }
});
