// One failed host command reads the same everywhere: the command line, how it ended, the tail of its output.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CommandError } from '../../../src/host/command-error';
import type { CommandResult } from '../../../src/host/host';
import { LocalHost } from '../../../src/host/host';
import { NmstateError, nmstateApplyNoCommit } from '../../../src/host/nmstate';
import { systemctl } from '../../../src/host/systemctl';
import { standInNodeEachTest, type StandInNode } from '../../support/standin-host';

const rows: { name: string; result: CommandResult; shown?: string; message: string; detail: string }[] = [
  {
    name: 'stderr is preferred, trimmed',
    result: { code: 1, stdout: 'ignored\n', stderr: '  Failed to enable unit: Unit file x.service does not exist.\n' },
    message: 'systemctl enable x.service failed (exit 1): Failed to enable unit: Unit file x.service does not exist.',
    detail: 'exit 1: Failed to enable unit: Unit file x.service does not exist.',
  },
  {
    name: 'stdout when stderr is empty',
    result: { code: 3, stdout: 'inactive\n', stderr: '' },
    message: 'systemctl enable x.service failed (exit 3): inactive',
    detail: 'exit 3: inactive',
  },
  {
    name: 'no output at all says so',
    result: { code: 2, stdout: '', stderr: '\n' },
    message: 'systemctl enable x.service failed (exit 2): no output',
    detail: 'exit 2: no output',
  },
  {
    name: 'only the last six lines, one line each',
    result: { code: 1, stdout: '', stderr: `${['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'].join('\n')}\n` },
    message: 'systemctl enable x.service failed (exit 1): three | four | five | six | seven | eight',
    detail: 'exit 1: three | four | five | six | seven | eight',
  },
  {
    name: 'a killed command says by which signal',
    result: { code: 1, stdout: '', stderr: '', signal: 'SIGTERM' },
    message: 'systemctl enable x.service failed (killed by SIGTERM): no output',
    detail: 'killed by SIGTERM: no output',
  },
  {
    name: 'a shown command line replaces the arguments in the message',
    result: { code: 125, stdout: '', stderr: 'Error: unauthorized\n' },
    shown: 'podman pull quay.io/x',
    message: 'podman pull quay.io/x failed (exit 125): Error: unauthorized',
    detail: 'exit 125: Error: unauthorized',
  },
];

describe('CommandError', () => {
  for (const row of rows) {
    test(row.name, () => {
      const e = new CommandError('systemctl', ['enable', 'x.service'], row.result, row.shown === undefined ? {} : { shown: row.shown });
      assert.equal(e.message, row.message);
      assert.equal(e.detail, row.detail);
      assert.deepEqual(e.args, ['enable', 'x.service'], 'the real arguments are kept whatever is shown');
    });
  }
});

describe('runChecked and the tool wrappers', () => {
  let node: StandInNode;
  let host: LocalHost;
  standInNodeEachTest((n, h) => ((node = n), (host = h)));

  test('runChecked returns the result of a command that exits 0 and throws a CommandError otherwise', async () => {
    assert.equal((await host.runChecked('systemctl', ['daemon-reload'])).code, 0);
    node.fail('systemctl-enable', 'Failed to enable unit: access denied\n');
    await assert.rejects(host.runChecked('systemctl', ['enable', 'a.service']), (e: unknown) => e instanceof CommandError && e.command === 'systemctl' && e.exitCode !== 0 && /^systemctl enable a\.service failed \(exit \d+\): Failed to enable unit: access denied$/.test(e.message));
  });

  test('systemctl and nmstatectl failures are CommandErrors; nmstate names its verb, not the state file', async () => {
    node.fail('systemctl-restart', 'Job failed\n');
    await assert.rejects(systemctl(host, ['restart', 'kubelet.service']), (e: unknown) => e instanceof CommandError && /^systemctl restart kubelet\.service failed \(exit \d+\): Job failed$/.test(e.message));
    node.fail('nmstatectl-apply', 'NmstateError: InvalidArgument: Interface eno1 not found\n');
    await assert.rejects(nmstateApplyNoCommit(host, '/etc/desired.yml', 30), (e: unknown) => e instanceof NmstateError && e instanceof CommandError && /^nmstatectl apply failed \(exit \d+\): NmstateError: InvalidArgument: Interface eno1 not found$/.test(e.message));
  });
});
