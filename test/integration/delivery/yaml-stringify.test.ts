// The node bundle leaves out yaml's stringify code (esbuild.config.mjs, stringifyStandIn): the node code writes
// YAML with src/util/yaml.ts's emitYaml. Parsing reached that code in one place, a list, mapping or alias as a
// mapping key converted to plain data (yaml's nodes/addPairToJSMap.js); src/util/yaml.ts refuses such a key
// first. Here: the node bundle holds the stand-in and the workstation bundle the real thing; a site-config with
// such a key gets the same located refusal, exit code and all, from both bundles as from the sources; and the
// stand-in, if yaml ever reached it, says so in a sentence.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/cli';
import { bundleWithScratch, runBundledProbe } from '../../support/yaml-stand-in';

const HEAD = 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata:\n  name: store-42\nspec:\n  baseDomain: store42.example.com\n';
const CASES: Record<string, { text: string; line: number }> = {
  'explicit list key': { text: `${HEAD}  labels:\n    ? [a, b]\n    : c\n`, line: 8 },
  'flow list key': { text: `${HEAD}  labels: {[a]: 1}\n`, line: 7 },
  'mapping key': { text: `${HEAD}  labels:\n    ? {k: v}\n    : c\n`, line: 8 },
  'alias of a list as a key': { text: `${HEAD}  x: &l [a]\n  labels:\n    *l : c\n`, line: 9 },
};
/** Another YAML problem the same runs refuse, for the exit code such a refusal has. */
const SYNTAX_ERROR = `${HEAD}  labels: [a\n`;

describe("the node bundle without yaml's stringify", () => {
  const ctx = bundleWithScratch('sno-yaml-stringify-');
  const workstation = () => path.join(path.dirname(ctx.bundle), 'sno-reconfigure-workstation.cjs');

  test("holds the stand-in, not yaml's stringify modules", () => {
    const inputs = Object.keys(ctx.metafile.inputs);
    assert.deepEqual(inputs.filter((p) => /node_modules\/yaml\/.*\/stringify\//.test(p)), []);
    assert.deepEqual(inputs.filter((p) => p.startsWith('yaml-stringify-stand-in:')), ['yaml-stringify-stand-in:stringify.js']);
  });

  const validate = async (name: string, text: string) => {
    const file = path.join(ctx.dir, `${name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(file, text);
    let out = '';
    const code = await runCli(['validate', file, '--json'], { out: (s) => (out += s), err: () => undefined, env: {}, cwd: ctx.dir });
    const run = (cjs: string) => spawnSync(process.execPath, [cjs, 'validate', file, '--json'], { cwd: ctx.dir, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    return { file, code, json: JSON.parse(out) as { problems?: { message: string }[] }, node: run(ctx.bundle), workstation: run(workstation()) };
  };

  for (const [name, { text, line }] of Object.entries(CASES)) {
    test(`${name}: refused with its line, the same from both bundles as from the sources, with the exit code of a syntax error`, async () => {
      const r = await validate(name, text);
      const syntax = await validate(`${name} syntax`, SYNTAX_ERROR);
      assert.notEqual(syntax.code, 0);
      assert.equal(r.code, syntax.code, 'the exit code of other invalid YAML');
      const messages = JSON.stringify(r.json);
      assert.match(messages, new RegExp(`line ${line}, column \\d+: a mapping key must be a plain string, not (a list or mapping|an alias)`));
      assert.doesNotMatch(messages, /internal error|does not write YAML/i);
      for (const [which, res] of [['node', r.node], ['workstation', r.workstation]] as const) {
        assert.equal(res.status, r.code, `${which} bundle: ${res.stderr}`);
        assert.deepEqual(JSON.parse(res.stdout), r.json, `${which} bundle`);
      }
      // Without --json, as a technician reads it.
      const plain = spawnSync(process.execPath, [ctx.bundle, 'validate', r.file], { cwd: ctx.dir, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
      assert.equal(plain.status, r.code);
      assert.match(plain.stdout + plain.stderr, new RegExp(`line ${line}, column \\d+: a mapping key must be a plain string`));
    });
  }

  test('the stand-in, if yaml ever reached it, throws a sentence saying so', async () => {
    // yaml's own toJS of a list key, with no src/util/yaml.ts in front of it.
    const run = await runBundledProbe("import { parseDocument } from 'yaml';\ntry { parseDocument('? [a, b]\\n: c\\n').toJS(); console.log('converted'); } catch (e) { console.log(e.message); }\n");
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), 'the node bundle does not write YAML with the yaml package (src/util/yaml.ts emitYaml does; esbuild.config.mjs, stringifyStandIn)');
  });
});
