import { test } from 'node:test';
import assert from 'node:assert/strict';
import { updateObject } from '../../../../src/cluster/objects';
import { R } from '../../../../src/cluster/resources';
import { ApiError, type ClusterClient } from '../../../../src/cluster/types';
import { StepError, type Step, type StepContext } from '../../../../src/engine/step';
import { createLogger } from '../../../../src/log';
import { resilient } from '../../../../src/steps/resilient';

/** A context with scaled time: sleeps return at once and move the clock. */
function fakeContext(): StepContext & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    clock: { now: () => now, sleep: async (ms: number) => { slept.push(ms); now += ms; } },
    signal: new AbortController().signal,
    log: createLogger({ format: 'json', journal: false, level: 'silent', write: () => undefined }),
  } as unknown as StepContext & { slept: number[] };
}

function stepApplying(apply: (ctx: StepContext) => Promise<void>): Step {
  return { name: 'trust', title: 'Trust the registries', plan: async () => [], check: async () => false, apply, verify: async () => undefined };
}

test('a phase rides out a restarting API and then succeeds', async () => {
  const ctx = fakeContext();
  let calls = 0;
  await resilient(stepApplying(async () => { if (++calls < 4) throw new ApiError(503, 'ServiceUnavailable', 'restarting'); })).apply(ctx);
  assert.equal(calls, 4);
  assert.equal(ctx.slept.length, 3);
  assert.ok(ctx.slept.every((ms) => ms >= 500 && ms <= 15_000), ctx.slept.join(', '));
});

test('a phase gives up after three minutes of outage with the last API error', async () => {
  const ctx = fakeContext();
  await assert.rejects(resilient(stepApplying(async () => { throw new ApiError(503, 'ServiceUnavailable', 'still down'); })).apply(ctx), /still down/);
  assert.equal(ctx.slept.reduce((a, b) => a + b, 0), 180_000);
});

test('an object every cluster has, missing, fails the step with a remedy', async () => {
  const client = { get: async () => undefined } as unknown as ClusterClient;
  const step = resilient(stepApplying(async () => { await updateObject(client, R.apiServers, 'cluster', undefined, (c) => c); }));
  await assert.rejects(step.apply(fakeContext()), (err: unknown) => {
    assert.ok(err instanceof StepError, String(err));
    assert.equal(err.message, 'APIServer cluster does not exist');
    assert.match(err.remedy, /part of every OpenShift cluster; check that the agent talks to the right cluster/);
    return true;
  });
});
