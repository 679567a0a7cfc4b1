// Watch streams: initial state, resume from a resourceVersion, selectors (objects entering/leaving appear
// as ADDED/DELETED), BOOKMARK events, timeoutSeconds, 410 Expired after compaction, streams cut when the
// API goes down.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { SimClient } from '../../sim/apiserver/client';

let server: ApiServer;
let admin: SimClient;
const CM = '/api/v1/namespaces/w/configmaps';

const summary = (e: { type: string; object: { metadata?: { name?: string } } }) => `${e.type} ${e.object.metadata?.name ?? ''}`;

describe('watch', () => {
  before(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 50 });
    admin = new SimClient(server, { identity: ADMIN });
    server.store.create(R.namespaces, { metadata: { name: 'w' } });
    server.store.create(R.namespaces, { metadata: { name: 'elsewhere' } });
  });

  after(async () => {
    admin.close();
    await server.close();
  });

  test('without a resourceVersion: synthetic ADDED for the current state, then live changes', async () => {
    server.store.create(R.configMaps, { metadata: { name: 'existing', namespace: 'w' } });
    const w = await admin.watch(CM);
    try {
      assert.equal(summary(await w.next()), 'ADDED existing');
      const cm = server.store.create(R.configMaps, { metadata: { name: 'live', namespace: 'w' } });
      server.store.create(R.configMaps, { metadata: { name: 'not-here', namespace: 'elsewhere' } });
      server.store.update(R.configMaps, { ...cm, data: { a: 'b' } });
      server.store.delete(R.configMaps, 'live', 'w');
      assert.equal(summary(await w.next()), 'ADDED live');
      const modified = await w.next();
      assert.equal(summary(modified), 'MODIFIED live');
      assert.deepEqual((modified.object as { data: unknown }).data, { a: 'b' });
      assert.equal(modified.object.kind, 'ConfigMap', 'watch objects carry kind');
      const deleted = await w.next();
      assert.equal(summary(deleted), 'DELETED live');
      assert.ok(Number(deleted.object.metadata?.resourceVersion) > Number(modified.object.metadata?.resourceVersion));
    } finally {
      w.close();
    }
  });

  test('from a resourceVersion: replays exactly the later events, then continues', async () => {
    const start = server.store.resourceVersion();
    server.store.create(R.configMaps, { metadata: { name: 'r1', namespace: 'w' } });
    server.store.create(R.configMaps, { metadata: { name: 'r2', namespace: 'w' } });
    const w = await admin.watch(CM, { resourceVersion: start });
    try {
      assert.equal(summary(await w.next()), 'ADDED r1');
      assert.equal(summary(await w.next()), 'ADDED r2');
      await admin.request('POST', CM, { body: { metadata: { name: 'r3' } } });
      assert.equal(summary(await w.next()), 'ADDED r3');
      const list = (await admin.get(CM)).body as { metadata: { resourceVersion: string } };
      const resumed = await admin.watch(CM, { resourceVersion: list.metadata.resourceVersion });
      await admin.request('DELETE', `${CM}/r1`);
      assert.equal(summary(await resumed.next()), 'DELETED r1');
      resumed.close();
    } finally {
      w.close();
    }
  });

  test('label and field selectors: objects moving in or out appear as ADDED / DELETED', async () => {
    const w = await admin.watch(CM, { labelSelector: 'watched=yes', resourceVersion: server.store.resourceVersion() });
    const byName = await admin.watch('/api/v1/configmaps', { fieldSelector: 'metadata.name=sel', resourceVersion: server.store.resourceVersion() });
    try {
      const cm = server.store.create(R.configMaps, { metadata: { name: 'sel', namespace: 'w' } });
      const labelled = server.store.update(R.configMaps, { ...cm, metadata: { ...cm.metadata, labels: { watched: 'yes' } } });
      const changed = server.store.update(R.configMaps, { ...labelled, data: { x: '1' } });
      server.store.update(R.configMaps, { ...changed, metadata: { ...changed.metadata, labels: { watched: 'no' } } });
      assert.equal(summary(await w.next()), 'ADDED sel');
      assert.equal(summary(await w.next()), 'MODIFIED sel');
      const left = await w.next();
      assert.equal(summary(left), 'DELETED sel');
      assert.deepEqual(left.object.metadata && (left.object.metadata as { labels?: unknown }).labels, { watched: 'yes' }, 'the last state that matched');
      assert.deepEqual(
        [await byName.next(), await byName.next(), await byName.next(), await byName.next()].map(summary),
        ['ADDED sel', 'MODIFIED sel', 'MODIFIED sel', 'MODIFIED sel'],
      );
    } finally {
      w.close();
      byName.close();
    }
  });

  test('allowWatchBookmarks: BOOKMARK events carry only kind, apiVersion and the current resourceVersion', async () => {
    const w = await admin.watch(CM, { resourceVersion: server.store.resourceVersion(), allowWatchBookmarks: 'true' });
    try {
      const b = await w.next();
      assert.equal(b.type, 'BOOKMARK');
      assert.deepEqual(b.object, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: server.store.resourceVersion() } });
    } finally {
      w.close();
    }
    const plain = await admin.watch(CM, { resourceVersion: server.store.resourceVersion(), timeoutSeconds: '1' });
    await plain.ended;
    assert.deepEqual(plain.events, [], 'no bookmarks unless asked for');
  });

  test('timeoutSeconds ends the stream', async () => {
    const w = await admin.watch(CM, { resourceVersion: server.store.resourceVersion(), timeoutSeconds: '1' });
    await w.ended;
    await assert.rejects(w.next(10), /ended/);
  });

  test('410 Expired: an ERROR event with a Status after compaction, while fresh resourceVersions still work', async () => {
    const old = server.store.resourceVersion();
    server.store.create(R.configMaps, { metadata: { name: 'after-old', namespace: 'w' } });
    server.compactHistory();
    const w = await admin.watch(CM, { resourceVersion: old });
    await w.ended;
    assert.deepEqual(w.events, [
      {
        type: 'ERROR',
        object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${old} (${server.store.resourceVersion()})`, reason: 'Expired', code: 410 },
      },
    ]);
    const fresh = await admin.watch(CM, { resourceVersion: server.store.resourceVersion() });
    server.store.create(R.configMaps, { metadata: { name: 'after-compaction', namespace: 'w' } });
    assert.equal(summary(await fresh.next()), 'ADDED after-compaction');
    fresh.close();
  });

  test('an API restart rebuilds the watch cache: a watch from before it gets 410 Expired, one from after it works', async () => {
    const beforeRestart = server.store.resourceVersion();
    server.store.create(R.configMaps, { metadata: { name: 'before-restart', namespace: 'w' } });
    await server.setUp(false);
    server.store.create(R.configMaps, { metadata: { name: 'while-down', namespace: 'w' } });
    await server.setUp(true);
    const afterRestart = server.store.resourceVersion();
    const stale = await admin.watch(CM, { resourceVersion: beforeRestart, timeoutSeconds: '2' });
    await stale.ended;
    assert.deepEqual(stale.events, [
      {
        type: 'ERROR',
        object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${beforeRestart} (${afterRestart})`, reason: 'Expired', code: 410 },
      },
    ]);
    const fresh = await admin.watch(CM, { resourceVersion: afterRestart });
    server.store.create(R.configMaps, { metadata: { name: 'after-restart', namespace: 'w' } });
    assert.equal(summary(await fresh.next()), 'ADDED after-restart');
    fresh.close();
  });

  test('watching a single object by name, and streams cut when the API goes down', async () => {
    const w = await admin.watch(`${CM}/after-compaction`, { resourceVersion: server.store.resourceVersion() });
    server.store.create(R.configMaps, { metadata: { name: 'unrelated', namespace: 'w' } });
    server.store.delete(R.configMaps, 'after-compaction', 'w');
    assert.equal(summary(await w.next()), 'DELETED after-compaction');
    await server.setUp(false);
    await w.ended;
    await server.setUp(true);
    assert.equal((await admin.get('/readyz')).status, 200);
  });
});
