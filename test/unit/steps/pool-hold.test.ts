// The pool the agent paused is never left paused (issue 36, finding 3): the journal, not only the pool's own
// annotation, says the agent holds it — an annotation anyone who writes the pool can drop (a manifest replacing
// the pool did). The pool here is an in-memory object patched with JSON merge patches, as kube-apiserver does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ConnectionError, type ClusterClient } from '../../../src/cluster/types';
import { LocalHost } from '../../../src/host/host';
import { mergePatch } from '../../../src/steps/manifests';
import { HELD_BY, poolHoldStep, poolReleaseStep } from '../../../src/steps/pool-hold';
import { fastClock, siteOf, testContext } from '../../support/step-context';

interface Pool {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { paused?: boolean };
}

function poolCluster(pool: { current: Pool }): ClusterClient {
  const client = {
    get: async () => structuredClone(pool.current),
    patch: async (_type: unknown, _name: string, patch: unknown) => {
      pool.current = mergePatch(pool.current, patch) as Pool;
      return structuredClone(pool.current);
    },
  };
  return client as unknown as ClusterClient;
}

test('a pool the agent paused is unpaused even after something dropped the agent\'s annotation from it', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'pool-hold-'));
  try {
    const host = new LocalHost({ root });
    const pool = { current: { metadata: { name: 'master' }, spec: { paused: false } } as Pool };
    const site = siteOf({ pullSecret: { auths: {} } });
    const cluster = async () => poolCluster(pool);
    const hold = await testContext(poolHoldStep, { host, site, cluster });
    await poolHoldStep.apply(hold.ctx);
    assert.equal(pool.current.spec.paused, true);
    assert.equal(pool.current.metadata.annotations?.[HELD_BY], 'true');

    // A writer replaces the pool, still paused, without the agent's annotation.
    pool.current = { metadata: { name: 'master' }, spec: { paused: true } };
    const release = await testContext(poolReleaseStep, { host, site, cluster, journal: hold.journal });
    assert.equal(await poolReleaseStep.check(release.ctx), false, 'the pool is still the agent\'s to release');
    await poolReleaseStep.apply(release.ctx);
    assert.equal(pool.current.spec.paused, false, 'the agent unpaused the pool it paused');
    await poolReleaseStep.verify(release.ctx);
    assert.equal(release.ctx.facts.poolHeld, undefined);

    // A pool someone else paused (the agent holds nothing) is left as it is.
    pool.current = { metadata: { name: 'master' }, spec: { paused: true } };
    assert.equal(await poolReleaseStep.check(release.ctx), true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// Seen under load in the suite: the run was refused after the pool was held, and the one unpause attempt of the
// failed run did not land, leaving the pool paused while the agent waited for new media.
test('a failed run unpauses the pool it held even when the API fails the first attempts (an outage is ridden out)', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'pool-hold-'));
  try {
    const host = new LocalHost({ root });
    const pool = { current: { metadata: { name: 'master' }, spec: { paused: false } } as Pool };
    const site = siteOf({ pullSecret: { auths: {} } });
    let failures = 0;
    const flaky = async () => {
      const client = poolCluster(pool);
      const patch = client.patch.bind(client);
      return Object.assign(Object.create(client) as ClusterClient, {
        patch: async (...args: Parameters<ClusterClient['patch']>) => {
          if (failures > 0) {
            failures -= 1;
            throw new ConnectionError('connect ECONNREFUSED 127.0.0.1:6443', 'ECONNREFUSED');
          }
          return patch(...args);
        },
      });
    };
    const hold = await testContext(poolHoldStep, { host, site, cluster: flaky, clock: fastClock() });
    await poolHoldStep.apply(hold.ctx);
    assert.equal(pool.current.spec.paused, true);
    failures = 3;
    await poolHoldStep.onRunFailed!(hold.ctx);
    assert.equal(failures, 0, 'the unpause was tried again');
    assert.equal(pool.current.spec.paused, false, 'the pool is not left paused');
    assert.equal(pool.current.metadata.annotations?.[HELD_BY], undefined);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
