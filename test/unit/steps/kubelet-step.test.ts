import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from '../../../src/host/host';
import { kubeletStep } from '../../../src/steps/kubelet';
import { StepError } from '../../../src/engine/step';
import { createStandInNode } from '../../support/standin-host';
import { fastClock, testContext } from '../../support/step-context';

test('kubelet masked by hand: unmask, enable, start without blocking, then active', async () => {
  const node = createStandInNode({ kubelet: 'masked' });
  try {
    const host = new LocalHost({ root: node.root, env: node.env });
    const { ctx, journal } = await testContext(kubeletStep, { host, clock: fastClock() });
    assert.deepEqual((await kubeletStep.plan(ctx)).map((c) => c.action), ['unmask', 'enable', 'start']);
    assert.equal(await kubeletStep.check(ctx), false);
    await kubeletStep.apply(ctx);
    await kubeletStep.verify(ctx);
    const verbs = node.calls('systemctl').map((c) => c.args.join(' ')).filter((a) => !a.startsWith('is-'));
    assert.deepEqual(verbs, ['unmask kubelet.service', 'enable kubelet.service', 'start --no-block kubelet.service']);
    assert.equal(node.units()['kubelet.service']?.enabled, 'enabled');
    assert.equal(node.units()['kubelet.service']?.active, 'active');
    assert.ok(journal.data.facts.kubeletStartedAt, 'the start time bounds which CSRs are the node’s');
    assert.equal(await kubeletStep.check(ctx), true, 'idempotent: a second run has nothing to do');
    assert.deepEqual(await kubeletStep.plan(ctx), []);
  } finally {
    node.cleanup();
  }
});

test('kubelet held by the factory: the hold file goes before kubelet starts', async () => {
  const node = createStandInNode();
  try {
    writeFileSync(path.join(node.standinDir, 'units.json'), JSON.stringify({ 'kubelet.service': { enabled: 'enabled', active: 'inactive' } }));
    mkdirSync(path.join(node.root, 'etc/sno-reconfigure'), { recursive: true });
    writeFileSync(path.join(node.root, 'etc/sno-reconfigure/kubelet-hold'), 'held\n');
    const host = new LocalHost({ root: node.root, env: node.env });
    const { ctx, journal } = await testContext(kubeletStep, { host, clock: fastClock() });
    assert.deepEqual((await kubeletStep.plan(ctx)).map((c) => `${c.action} ${c.target}`), ['delete /etc/sno-reconfigure/kubelet-hold', 'start kubelet.service']);
    await kubeletStep.apply(ctx);
    await kubeletStep.verify(ctx);
    assert.ok(!existsSync(path.join(node.root, 'etc/sno-reconfigure/kubelet-hold')));
    assert.deepEqual(journal.data.changes.map((c) => `${c.action} ${c.target}`), ['delete /etc/sno-reconfigure/kubelet-hold', 'enable kubelet.service', 'start kubelet.service']);
    assert.equal(node.calls('systemctl').filter((c) => c.args[0] === 'unmask').length, 0, 'nothing to unmask');
  } finally {
    node.cleanup();
  }
});

test('kubelet that fails to start: a StepError pointing at its journal', async () => {
  const node = createStandInNode();
  try {
    writeFileSync(path.join(node.standinDir, 'units.json'), JSON.stringify({ 'kubelet.service': { enabled: 'enabled', active: 'failed' } }));
    const host = new LocalHost({ root: node.root, env: node.env });
    const { ctx } = await testContext(kubeletStep, { host, clock: fastClock() });
    await assert.rejects(kubeletStep.verify(ctx), (e: unknown) => e instanceof StepError && /journalctl -u kubelet/.test(e.remedy));
  } finally {
    node.cleanup();
  }
});

test('kubelet already running from before this run: its start time comes from systemd, in UTC', async () => {
  const node = createStandInNode({ kubelet: 'masked' });
  try {
    writeFileSync(path.join(node.standinDir, 'units.json'), JSON.stringify({ 'kubelet.service': { enabled: 'enabled', active: 'active', since: '2026-11-22T08:30:05.000Z' } }));
    const host = new LocalHost({ root: node.root, env: node.env });
    const { ctx, journal } = await testContext(kubeletStep, { host, clock: fastClock() });
    assert.equal(await kubeletStep.check(ctx), true);
    await kubeletStep.verify(ctx);
    assert.equal(journal.data.facts.kubeletStartedAt, '2026-11-22T08:30:05.000Z');
  } finally {
    node.cleanup();
  }
});
