// The pool the agent paused is never left paused (issue 36, finding 3): the journal, not only the pool's own
// annotation, says the agent holds it — an annotation anyone who writes the pool can drop (a manifest replacing
// the pool did). The pool here is an in-memory object patched with JSON merge patches, as kube-apiserver does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ApiError, ConnectionError, type ClusterClient } from '../../../src/cluster/types';
import { Journal } from '../../../src/engine/journal';
import { StepError, type Change, type Step, type StepContext } from '../../../src/engine/step';
import { chronyStep } from '../../../src/steps/chrony';
import { manifestsStep, mergePatch } from '../../../src/steps/manifests';
import { proxyStep } from '../../../src/steps/proxy';
import { sshKeyStep } from '../../../src/steps/ssh-key';
import { LocalHost } from '../../../src/host/host';
import { desiredMirrors, MIRROR_OBJECT_NAME, mirrorsStep } from '../../../src/steps/mirrors';
import { HELD_BY, poolHoldStep, poolReleaseStep, writesPoolInputs } from '../../../src/steps/pool-hold';
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

// The pool hold branch by branch against a fake API that keeps the pool and the pull secret and records every
// request. Each phase is called the way the runner calls it: check, then apply only when check says not done.
type Request = { verb: 'get' | 'patch'; plural: string; name: string; body?: unknown; patchType?: string };

interface Api {
  pool: Pool | undefined;
  secret?: Record<string, unknown>;
  requests: Request[];
  /** Errors the next patches throw, in order. */
  patchErrors: Error[];
  /** Errors the next gets of the pool throw, in order. */
  getErrors: Error[];
  /** Patches are answered but change nothing (another writer puts the pool back at once). */
  ignorePatches?: boolean;
  onPatch?: () => Promise<void>;
  /** What a list of each resource (by plural) answers. */
  lists?: Record<string, unknown[]>;
}

const SITE_AUTHS = { 'registry.store42.example.com': { auth: Buffer.from('u:p').toString('base64') } };
const PAUSE = { metadata: { annotations: { [HELD_BY]: 'true' } }, spec: { paused: true } };
const UNPAUSE = { metadata: { annotations: { [HELD_BY]: null } }, spec: { paused: false } };
const PAUSED_MSG = "machine-config pool master paused while the site's machine configuration is written, so the node applies it in one update";
const UNPAUSED_MSG = "machine-config pool master unpaused: the node now applies the site's machine configuration";
const ALREADY_PAUSED = 'The machine-config pool master was already paused before this run: the node takes the site\'s machine configuration only once it is unpaused (`oc patch mcp master --type merge -p \'{"spec":{"paused":false}}\'`).';

function apiOf(pool: Pool | undefined, opts: { secretInPlace?: boolean } = {}): Api {
  const secret = opts.secretInPlace
    ? { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull-secret', namespace: 'openshift-config' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: SITE_AUTHS })).toString('base64') } }
    : undefined;
  return { pool, secret, requests: [], patchErrors: [], getErrors: [] };
}

function fakeCluster(api: Api): () => Promise<ClusterClient> {
  const client = {
    get: async (type: { plural: string }, name: string) => {
      api.requests.push({ verb: 'get', plural: type.plural, name });
      if (type.plural === 'secrets') return structuredClone(api.secret);
      assert.equal(type.plural, 'machineconfigpools');
      assert.equal(name, 'master');
      const e = api.getErrors.shift();
      if (e) throw e;
      return structuredClone(api.pool);
    },
    list: async (type: { plural: string }) => {
      api.requests.push({ verb: 'get', plural: type.plural, name: '' });
      return { items: structuredClone(api.lists?.[type.plural] ?? []) };
    },
    patch: async (type: { plural: string }, name: string, body: unknown, patchType: string) => {
      api.requests.push({ verb: 'patch', plural: type.plural, name, body, patchType });
      await api.onPatch?.();
      const e = api.patchErrors.shift();
      if (e) throw e;
      if (!api.ignorePatches) api.pool = mergePatch(api.pool, body) as Pool;
      return structuredClone(api.pool);
    },
  };
  return async () => client as unknown as ClusterClient;
}

const patches = (api: Api) => api.requests.filter((r) => r.verb === 'patch').map(({ plural, name, body, patchType }) => ({ plural, name, body, patchType }));
const pausePatch = { plural: 'machineconfigpools', name: 'master', body: PAUSE, patchType: 'merge' };
const unpausePatch = { plural: 'machineconfigpools', name: 'master', body: UNPAUSE, patchType: 'merge' };
const unpaused = (): Pool => ({ metadata: { name: 'master' }, spec: { paused: false } });
const pausedByOthers = (): Pool => ({ metadata: { name: 'master' }, spec: { paused: true } });
const pausedByAgent = (): Pool => ({ metadata: { name: 'master', annotations: { [HELD_BY]: 'true' } }, spec: { paused: true } });
const messages = (logs: Record<string, unknown>[], level: string) => logs.filter((l) => l.level === level).map((l) => l.msg);
const transient = () => new ConnectionError('connect ECONNREFUSED 127.0.0.1:6443', 'ECONNREFUSED');

async function withRoot(fn: (host: LocalHost) => Promise<void>): Promise<void> {
  const root = mkdtempSync(path.join(tmpdir(), 'pool-hold-'));
  try {
    await fn(new LocalHost({ root }));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The step's turn in a run (runner.ts executeSteps): check, apply unless done, verify. */
async function runStep(step: Step, ctx: StepContext): Promise<boolean> {
  const done = await step.check(ctx);
  if (!done) await step.apply(ctx);
  await step.verify(ctx);
  return done;
}

const WITH_PULL_SECRET = siteOf({ pullSecret: { auths: SITE_AUTHS } });

test('the pool is an input of these site-config fields only: the pull secret, mirrors, proxy, SSH keys, NTP and MachineConfig manifests', () => {
  assert.equal(writesPoolInputs(siteOf().resolved), false);
  assert.equal(writesPoolInputs(siteOf({ pullSecret: { auths: {} } }).resolved), true);
  const mirror = { source: 'quay.io/openshift-release-dev', mirrors: ['mirror.store42.example.com/ocp'] };
  assert.equal(writesPoolInputs(siteOf({ imageDigestMirrors: [mirror] }).resolved), true);
  assert.equal(writesPoolInputs(siteOf({ imageTagMirrors: [mirror] }).resolved), true);
  assert.equal(writesPoolInputs(siteOf({ imageTagMirrors: [] }).resolved), false);
  assert.equal(writesPoolInputs(siteOf({ proxy: { httpProxy: 'http://proxy.store42.example.com:3128' } } as never).resolved), true);
  assert.equal(writesPoolInputs(siteOf({ ssh: { authorizedKeys: ['ssh-ed25519 AAAA'] } } as never).resolved), true);
  assert.equal(writesPoolInputs(siteOf({ ntp: { servers: ['ntp.store42.example.com'] } } as never).resolved), true);
  const manifest = (kind: string) => ({ object: { apiVersion: 'v1', kind, metadata: { name: 'x' } } });
  assert.equal(writesPoolInputs(siteOf({ extraManifests: [manifest('ConfigMap')] } as never).resolved), false);
  assert.equal(writesPoolInputs(siteOf({ extraManifests: [manifest('ConfigMap'), manifest('MachineConfig')] } as never).resolved), true);
});

// What each step plans decides the hold (their plans against the API are their own tests' business): a change the
// proxy, SSH or chrony step plans is an input of the pool; of the manifests step's, only a MachineConfig is.
test('the pool is held when the proxy, SSH, chrony or manifests step plans a change to one of its inputs, and only then', async () => {
  const manifest = (kind: string) => ({ object: { apiVersion: 'v1', kind, metadata: { name: 'x' } } });
  const rows: { step: Step; site: Record<string, unknown>; input: Change; notInput?: Change }[] = [
    { step: proxyStep, site: { proxy: { httpProxy: 'http://proxy.store42.example.com:3128' } }, input: { kind: 'Proxy', target: 'cluster', action: 'update' } },
    { step: sshKeyStep, site: { ssh: { authorizedKeys: ['ssh-ed25519 AAAA'] } }, input: { kind: 'MachineConfig', target: '99-master-ssh', action: 'update' } },
    { step: chronyStep, site: { ntp: { servers: ['ntp.store42.example.com'] } }, input: { kind: 'MachineConfig', target: '50-master-chrony', action: 'create' } },
    { step: manifestsStep, site: { extraManifests: [manifest('ConfigMap'), manifest('MachineConfig')] }, input: { kind: 'MachineConfig', target: 'x', action: 'create' }, notInput: { kind: 'ConfigMap', target: 'x', action: 'create' } },
  ];
  for (const row of rows) {
    const original = row.step.plan;
    try {
      for (const [plan, held] of [[[row.input], true], [[{ ...row.input, action: 'leave' }], false], ...(row.notInput ? [[[row.notInput], false]] : [])] as [Change[], boolean][]) {
        row.step.plan = async () => plan;
        await withRoot(async (host) => {
          const api = apiOf(unpaused());
          const hold = await testContext(poolHoldStep, { host, site: siteOf(row.site as never), cluster: fakeCluster(api) });
          assert.equal(await runStep(poolHoldStep, hold.ctx), !held, `${row.step.name} planning ${JSON.stringify(plan)}`);
          assert.deepEqual(patches(api), held ? [pausePatch] : []);
        });
      }
    } finally {
      row.step.plan = original;
    }
  }
});

test('a plan that only leaves something as it is (a CatalogSource pulled by tag) holds nothing; a mirror set to write holds the pool', async () => {
  const rules = [{ source: 'registry.redhat.io', mirrors: ['mirror.store42.example.com/redhat'] }];
  const site = siteOf({ imageDigestMirrors: rules });
  const catalog = { metadata: { name: 'redhat-operators', namespace: 'openshift-marketplace' }, spec: { image: 'registry.redhat.io/redhat/redhat-operator-index:v4.14' } };
  const ours = { metadata: { name: MIRROR_OBJECT_NAME }, spec: { imageDigestMirrors: desiredMirrors(rules, []) } };
  for (const written of [true, false]) {
    await withRoot(async (host) => {
      const api = apiOf(unpaused());
      api.lists = { catalogsources: [catalog], imagedigestmirrorsets: written ? [ours] : [] };
      const hold = await testContext(poolHoldStep, { host, site, cluster: fakeCluster(api) });
      hold.ctx.facts.clusterVersion = '4.14.12';
      const plan = await mirrorsStep.plan(hold.ctx);
      assert.deepEqual(plan.map((c) => c.action), written ? ['leave'] : ['create', 'leave']);
      assert.equal(await runStep(poolHoldStep, hold.ctx), written);
      assert.deepEqual(patches(api), written ? [] : [pausePatch]);
    });
  }
});

test('a site-config without pool inputs holds nothing: no request to the API at all, and the release finds nothing to do', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const hold = await testContext(poolHoldStep, { host, site: siteOf(), cluster: fakeCluster(api) });
    assert.equal(await runStep(poolHoldStep, hold.ctx), true);
    assert.deepEqual(api.requests, []);
    await poolHoldStep.resume!(hold.ctx);
    assert.deepEqual(api.requests, []);
    const release = await testContext(poolReleaseStep, { host, site: siteOf(), cluster: fakeCluster(api), journal: hold.journal });
    assert.equal(await runStep(poolReleaseStep, release.ctx), true);
    assert.deepEqual(patches(api), []);
    assert.deepEqual(api.pool, unpaused());
  });
});

test('a re-run whose pool inputs are all in place sends no PATCH (issue 37)', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused(), { secretInPlace: true });
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    assert.equal(await runStep(poolHoldStep, hold.ctx), true);
    await poolHoldStep.resume!(hold.ctx);
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal: hold.journal });
    await runStep(poolReleaseStep, release.ctx);
    assert.deepEqual(patches(api), []);
    assert.deepEqual(api.pool, unpaused());
    assert.equal(hold.ctx.facts.poolHeld, undefined);
  });
});

test('a run that writes a pool input pauses the pool with the agent\'s annotation, journaled before the PATCH, and says so', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    let journaledAtPatch: unknown;
    api.onPatch = async () => {
      journaledAtPatch = (await Journal.open(host, '/var/lib/sno-reconfigure')).data.facts.poolHeld;
    };
    assert.equal(await runStep(poolHoldStep, hold.ctx), false);
    assert.deepEqual(patches(api), [pausePatch]);
    assert.deepEqual(api.pool, { metadata: { name: 'master', annotations: { [HELD_BY]: 'true' } }, spec: { paused: true } });
    assert.equal(journaledAtPatch, true, 'a power cut right after the PATCH still finds the hold in the journal');
    assert.equal(hold.ctx.facts.poolHeld, true);
    assert.deepEqual(messages(hold.logs, 'info').filter((m) => m === PAUSED_MSG), [PAUSED_MSG]);
    assert.deepEqual(hold.journal.data.warnings, []);
    assert.equal(HELD_BY, 'sno-reconfigure.io/paused-by-agent', 'the annotation status and technicians look for');
  });
});

test('a pool someone else paused is left paused: a warning with the command, no PATCH from hold or release, nothing journaled', async () => {
  await withRoot(async (host) => {
    const api = apiOf(pausedByOthers());
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    assert.equal(await runStep(poolHoldStep, hold.ctx), false);
    assert.deepEqual(hold.journal.data.warnings, [ALREADY_PAUSED]);
    assert.deepEqual(messages(hold.logs, 'warn'), [ALREADY_PAUSED]);
    assert.equal(hold.ctx.facts.poolHeld, undefined);
    await poolHoldStep.onRunFailed!(hold.ctx);
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal: hold.journal });
    assert.equal(await runStep(poolReleaseStep, release.ctx), true);
    await poolReleaseStep.apply(release.ctx);
    assert.deepEqual(patches(api), []);
    assert.deepEqual(api.pool, pausedByOthers());
    assert.equal(release.ctx.facts.poolReleased, true);
  });
});

test('hold leaves alone a pool already paused by the agent (no PATCH, no warning) and a cluster without the pool', async () => {
  await withRoot(async (host) => {
    for (const pool of [pausedByAgent(), undefined]) {
      const api = apiOf(pool);
      const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
      await poolHoldStep.apply(hold.ctx);
      assert.deepEqual(patches(api), []);
      assert.deepEqual(hold.journal.data.warnings, []);
      assert.deepEqual(api.pool, pool);
    }
    // Nor does the release touch a cluster without the pool, and neither step plans a change of its own.
    const none = apiOf(undefined);
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(none) });
    assert.equal(await poolReleaseStep.check(release.ctx), true);
    await poolReleaseStep.apply(release.ctx);
    assert.deepEqual(patches(none), []);
    assert.deepEqual(await poolHoldStep.plan(release.ctx), []);
    assert.deepEqual(await poolReleaseStep.plan(release.ctx), []);
    // The journal alone says the agent paused it (the annotation was dropped): still no warning.
    const api = apiOf(pausedByOthers());
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    hold.ctx.facts.poolHeld = true;
    await poolHoldStep.apply(hold.ctx);
    assert.deepEqual(patches(api), []);
    assert.deepEqual(hold.journal.data.warnings, []);
  });
});

test('release unpauses the pool the agent paused, drops the annotation, clears the journal\'s hold and says so', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    await runStep(poolHoldStep, hold.ctx);
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal: hold.journal });
    assert.equal(await runStep(poolReleaseStep, release.ctx), false);
    assert.deepEqual(patches(api), [pausePatch, unpausePatch]);
    assert.deepEqual(api.pool, { metadata: { name: 'master', annotations: {} }, spec: { paused: false } });
    assert.equal(release.ctx.facts.poolHeld, undefined);
    assert.equal(release.ctx.facts.poolReleased, true);
    assert.deepEqual(messages(release.logs, 'info').filter((m) => m === UNPAUSED_MSG), [UNPAUSED_MSG]);
    // Done: a second release finds nothing of the agent's to unpause.
    assert.equal(await poolReleaseStep.check(release.ctx), true);
    await poolReleaseStep.apply(release.ctx);
    assert.equal(patches(api).length, 2);
  });
});

test('whose pause it is: the annotation "true" or the journal, and only while the pool is paused', async () => {
  {
    const cases: { name: string; pool: Pool; held?: boolean; ours: boolean }[] = [
      { name: 'annotation changed by someone else, journal holds', pool: { metadata: { name: 'master', annotations: { [HELD_BY]: 'false' } }, spec: { paused: true } }, held: true, ours: true },
      { name: 'annotation changed by someone else, no journal', pool: { metadata: { name: 'master', annotations: { [HELD_BY]: 'false' } }, spec: { paused: true } }, ours: false },
      { name: 'annotation gone, no journal', pool: pausedByOthers(), ours: false },
      { name: 'annotation only (a journal started afresh)', pool: pausedByAgent(), ours: true },
      { name: 'annotation and journal but unpaused by someone else', pool: { metadata: { name: 'master', annotations: { [HELD_BY]: 'true' } }, spec: { paused: false } }, held: true, ours: false },
      { name: 'no spec at all', pool: { metadata: { name: 'master', annotations: { [HELD_BY]: 'true' } } } as unknown as Pool, held: true, ours: false },
    ];
    for (const c of cases) await withRoot(async (host) => {
      const api = apiOf(structuredClone(c.pool));
      const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
      if (c.held) release.ctx.facts.poolHeld = true;
      // Done only once neither the pool nor the journal says the agent holds it.
      assert.equal(await poolReleaseStep.check(release.ctx), !c.ours && !c.held, c.name);
      await poolReleaseStep.apply(release.ctx);
      // An unpaused pool keeps no annotation of the agent's: a later pause by someone else would pass for the agent's.
      const leftover = c.pool.spec?.paused !== true && c.pool.metadata?.annotations?.[HELD_BY] !== undefined;
      assert.deepEqual(patches(api), c.ours ? [unpausePatch] : leftover ? [{ ...unpausePatch, body: { metadata: { annotations: { [HELD_BY]: null } } } }] : [], c.name);
      assert.equal(api.pool?.metadata?.annotations?.[HELD_BY], c.ours || leftover ? undefined : c.pool.metadata?.annotations?.[HELD_BY], c.name);
      assert.equal(api.pool?.spec?.paused === true, c.pool.spec?.paused === true && !c.ours, c.name);
      assert.equal(release.ctx.facts.poolHeld, undefined, `${c.name}: the journal holds nothing after the release`);
      await poolReleaseStep.verify(release.ctx);
    });
  }
});

test('a pool still paused after the unpause fails verify with the sentence the technician reads, and is not recorded as released', async () => {
  await withRoot(async (host) => {
    const api = apiOf(pausedByAgent());
    api.ignorePatches = true;
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    await poolReleaseStep.apply(release.ctx);
    await assert.rejects(poolReleaseStep.verify(release.ctx), (e: unknown) => {
      assert.ok(e instanceof StepError);
      assert.equal(e.message, 'the machine-config pool master is still paused after unpausing it');
      assert.equal(e.remedy, 'Something else changed that pool at the same time; the agent retries after a restart.');
      return true;
    });
    assert.equal(release.ctx.facts.poolReleased, undefined);
  });
});

test('hold and release ride out an API outage: the PATCH is sent again until it lands', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const clock = fastClock();
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), clock });
    api.patchErrors.push(transient(), new ApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request'));
    assert.equal(await runStep(poolHoldStep, hold.ctx), false);
    assert.deepEqual(patches(api), [pausePatch, pausePatch, pausePatch]);
    assert.equal(api.pool?.spec.paused, true);
    assert.equal(messages(hold.logs, 'warn').filter((m) => m === 'Hold node updates while the machine configuration is written: the API is not available; trying again').length, 2);

    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal: hold.journal, clock });
    api.getErrors.push(transient());
    api.patchErrors.push(transient());
    await runStep(poolReleaseStep, release.ctx);
    assert.deepEqual(patches(api).slice(3), [unpausePatch, unpausePatch]);
    assert.equal(api.pool?.spec.paused, false);
    assert.equal(release.ctx.facts.poolReleased, true);
  });
});

test('a failed run unpauses the pool it held, and a pool it did not hold it leaves paused', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    await runStep(poolHoldStep, hold.ctx);
    await poolHoldStep.onRunFailed!(hold.ctx);
    assert.deepEqual(patches(api), [pausePatch, unpausePatch]);
    assert.equal(api.pool?.spec.paused, false);
    assert.equal(hold.ctx.facts.poolHeld, undefined);
    assert.equal(hold.ctx.facts.poolReleased, undefined, 'the run is not done: a restart holds the pool again while it still writes');
    assert.deepEqual(messages(hold.logs, 'info').filter((m) => m === UNPAUSED_MSG), [UNPAUSED_MSG]);
    // Saved: nothing else saves the journal after a failed run, and status reads the hold from it.
    assert.equal((await Journal.open(host, '/var/lib/sno-reconfigure')).data.facts.poolHeld, undefined, 'the journal on disk no longer says the pool is held');
  });
  await withRoot(async (host) => {
    const other = apiOf(pausedByOthers());
    const failed = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(other) });
    await poolHoldStep.onRunFailed!(failed.ctx);
    assert.deepEqual(patches(other), []);
    assert.deepEqual(other.pool, pausedByOthers());
  });
});

test('a failed run\'s unpause retries through an outage, saying so, and gives up on a refusal without throwing', async () => {
  await withRoot(async (host) => {
    const api = apiOf(pausedByAgent());
    const hold = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), clock: fastClock() });
    hold.ctx.facts.poolHeld = true;
    api.getErrors.push(transient());
    api.patchErrors.push(transient());
    await poolHoldStep.onRunFailed!(hold.ctx);
    assert.equal(api.pool?.spec.paused, false);
    const retries = hold.logs.filter((l) => l.level === 'warn');
    assert.deepEqual(retries.map((l) => l.msg), ['the machine-config pool master could not be unpaused yet; trying again', 'the machine-config pool master could not be unpaused yet; trying again']);
    assert.equal(retries[0]!.err, 'connect ECONNREFUSED 127.0.0.1:6443');
    assert.equal(typeof retries[0]!.retryInMs, 'number');

  });
  // A refusal (403) is not ridden out: one attempt, then the sentence saying when it is unpaused.
  await withRoot(async (host) => {
    const refused = apiOf(pausedByAgent());
    const ctx2 = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(refused), clock: fastClock() });
    refused.patchErrors.push(new ApiError(403, 'Forbidden', 'machineconfigpools.machineconfiguration.openshift.io "master" is forbidden'));
    await poolHoldStep.onRunFailed!(ctx2.ctx);
    assert.equal(patches(refused).length, 1);
    assert.equal(refused.pool?.spec.paused, true);
    const warned = ctx2.logs.filter((l) => l.level === 'warn');
    assert.deepEqual(warned.map((l) => l.msg), ['the machine-config pool master could not be unpaused after the failure; it is unpaused when the run is tried again']);
    assert.equal(warned[0]!.err, 'machineconfigpools.machineconfiguration.openshift.io "master" is forbidden');
  });
});

test('the next start after a kill: a pool the agent still holds stays held while inputs remain and is released at pool-release', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const first = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    await runStep(poolHoldStep, first.ctx);
    // Killed here; the next start reads the journal again and resumes the done pool-hold.
    const journal = await Journal.open(host, '/var/lib/sno-reconfigure');
    assert.equal(journal.data.facts.poolHeld, true);
    const next = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal });
    await poolHoldStep.resume!(next.ctx);
    assert.deepEqual(patches(api), [pausePatch], 'the pool is still held: nothing sent again');
    assert.deepEqual(next.journal.data.warnings, [], 'the agent\'s own pause is not "paused before this run"');
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal });
    assert.equal(await runStep(poolReleaseStep, release.ctx), false);
    assert.deepEqual(patches(api), [pausePatch, unpausePatch]);
    assert.equal(api.pool?.spec.paused, false);
  });
});

test('the next start after a failed run: the pool is held again while inputs remain, not once they are written or released', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const first = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    await runStep(poolHoldStep, first.ctx);
    await poolHoldStep.onRunFailed!(first.ctx);
    const next = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal: first.journal });
    await poolHoldStep.resume!(next.ctx);
    assert.deepEqual(patches(api), [pausePatch, unpausePatch, pausePatch]);
    assert.equal(api.pool?.spec.paused, true);
    assert.equal(next.ctx.facts.poolHeld, true);

    // Inputs written meanwhile (the pull secret in place): a resume after another failure holds nothing.
    await poolHoldStep.onRunFailed!(next.ctx);
    const written = apiOf(structuredClone(api.pool), { secretInPlace: true });
    const later = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(written), journal: first.journal });
    await poolHoldStep.resume!(later.ctx);
    assert.deepEqual(patches(written), []);

    // Released by pool-release already: a resume holds nothing, whatever remains.
    const released = apiOf(unpaused());
    const after = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(released), journal: first.journal });
    after.ctx.facts.poolReleased = true;
    await poolHoldStep.resume!(after.ctx);
    assert.deepEqual(released.requests, []);
  });
});

test('a power cut between the journal\'s hold and the PATCH: the next start pauses the pool, and a release unpauses nothing it did not pause', async () => {
  await withRoot(async (host) => {
    const api = apiOf(unpaused());
    const first = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api) });
    first.ctx.facts.poolHeld = true;
    await first.journal.save();
    // pool-hold was still running: the next start runs it again.
    const next = await testContext(poolHoldStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(api), journal: await Journal.open(host, '/var/lib/sno-reconfigure') });
    assert.equal(await runStep(poolHoldStep, next.ctx), false);
    assert.deepEqual(patches(api), [pausePatch]);

    const orphan = apiOf(unpaused());
    const release = await testContext(poolReleaseStep, { host, site: WITH_PULL_SECRET, cluster: fakeCluster(orphan), journal: first.journal });
    release.ctx.facts.poolHeld = true;
    assert.equal(await poolReleaseStep.check(release.ctx), false, 'the journal\'s claim is still to be cleared');
    await poolReleaseStep.apply(release.ctx);
    assert.deepEqual(patches(orphan), []);
    assert.equal(release.ctx.facts.poolHeld, undefined, 'the journal no longer says the pool is held');
    assert.equal((await Journal.open(host, '/var/lib/sno-reconfigure')).data.facts.poolHeld, undefined, 'and that is saved');
  });
});
