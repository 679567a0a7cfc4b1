// prepare on OpenShift 4.12/4.13, whose RHCOS ships no nmstatectl: refused at the factory with the release named,
// unless an nmstatectl is installed and runs (src/factory/prepare.ts checkNmstatectl). 4.14 and later: no check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalHost, type CommandResult } from '../../../src/host/host';
import { checkNmstatectl } from '../../../src/factory/prepare';

class Node extends LocalHost {
  constructor(readonly nmstatectl: CommandResult | undefined) {
    super({ root: '/nonexistent' });
  }
  override async run(cmd: string): Promise<CommandResult> {
    if (cmd === 'nmstatectl' && this.nmstatectl) return this.nmstatectl;
    return { code: 127, stdout: '', stderr: `${cmd}: command not found` };
  }
}
const present = { code: 0, stdout: 'nmstatectl 2.2.23\n', stderr: '' };

const rows: [string, string | undefined, CommandResult | undefined, boolean | undefined][] = [
  ['4.12 without nmstatectl: refused', '4.12.45', undefined, false],
  ['4.13 without nmstatectl: refused', '4.13.0', undefined, false],
  ['4.13 with an nmstatectl that runs: accepted', '4.13.10', present, true],
  ['4.14: no check', '4.14.2', undefined, undefined],
  ['4.22: no check', '4.22.1', undefined, undefined],
  ['unknown version: no check (the cluster checks say so)', undefined, undefined, undefined],
];
for (const [name, version, tool, ok] of rows) {
  test(name, async () => {
    const check = await checkNmstatectl(new Node(tool), version);
    assert.equal(check?.ok, ok);
    if (ok === false) {
      assert.match(check!.detail, new RegExp(`OpenShift ${version!.replace(/\./g, '\\.')} ships no nmstatectl`));
      assert.match(check!.remedy ?? '', /4\.14 or later/);
    }
  });
}
