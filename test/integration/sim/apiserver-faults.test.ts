// Injectable faults (ApiFaults) and availability gating: 503 bursts, connection resets, slow answers,
// conflicts on the next writes, an API that never comes up, and down/up with connections refused.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { R } from '../../../src/cluster/resources';
import { ADMIN, startApiServer, type ApiServer } from '../../sim/apiserver/index';
import { SimClient } from '../../sim/apiserver/client';

let server: ApiServer;
let admin: SimClient;

async function connectionError(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
  return 'no error';
}

describe('faults and availability', () => {
  before(async () => {
    server = await startApiServer();
    admin = new SimClient(server, { identity: ADMIN });
    server.store.create(R.namespaces, { metadata: { name: 'f' } });
  });

  after(async () => {
    admin.close();
    await server.close();
  });

  test('unavailableUntil: 503 ServiceUnavailable with Retry-After, also on /readyz, until the deadline', async () => {
    server.faults.unavailableUntil = Date.now() + 60_000;
    const r = await admin.get('/api/v1/namespaces');
    assert.equal(r.status, 503);
    assert.equal(r.headers['retry-after'], '1');
    assert.deepEqual([(r.body as { reason: string }).reason, (r.body as { message: string }).message], ['ServiceUnavailable', 'the server is currently unable to handle the request']);
    assert.equal((await admin.get('/readyz')).status, 503);
    server.faults.unavailableUntil = Date.now() - 1;
    assert.equal((await admin.get('/readyz')).status, 200);
  });

  test('resetUntil: connections are cut without an answer (recorded with status 0)', async () => {
    server.clearRequests();
    server.faults.resetUntil = Date.now() + 60_000;
    const code = await connectionError(admin.get('/api/v1/namespaces'));
    assert.ok(['ECONNRESET', 'EPIPE'].includes(code) || /socket hang up/.test(code), code);
    server.faults.resetUntil = undefined;
    assert.equal((await admin.get('/api/v1/namespaces')).status, 200);
    assert.equal(server.requests[0].status, 0);
  });

  test('slowMs: answers are delayed (a client with a short timeout gives up, a patient one gets the answer)', async () => {
    server.faults = { slowMs: 1500 };
    const url = new URL('/readyz', server.url);
    const impatient = new Promise<string>((resolve) => {
      const req = httpsRequest(url, { ca: server.caPem, timeout: 100 }, (res) => {
        res.resume();
        resolve('answered');
      });
      req.on('timeout', () => {
        req.destroy();
        resolve('timed out');
      });
      req.on('error', () => resolve('timed out'));
      req.end();
    });
    const patient = admin.get('/readyz');
    assert.equal(await impatient, 'timed out');
    assert.equal((await patient).status, 200);
    server.faults = {};
  });

  test('conflictsOnNextWrites: the next N writes get 409 Conflict, reads are unaffected', async () => {
    server.faults.conflictsOnNextWrites = 2;
    const first = await admin.request('POST', '/api/v1/namespaces/f/configmaps', { body: { metadata: { name: 'c' } } });
    assert.equal(first.status, 409);
    assert.equal((first.body as { reason: string }).reason, 'Conflict');
    assert.equal((await admin.get('/api/v1/namespaces/f/configmaps')).status, 200);
    assert.equal((await admin.request('POST', '/api/v1/namespaces/f/configmaps', { body: { metadata: { name: 'c' } } })).status, 409);
    assert.equal((await admin.request('POST', '/api/v1/namespaces/f/configmaps', { body: { metadata: { name: 'c' } } })).status, 201);
    assert.equal(server.faults.conflictsOnNextWrites, 0);
  });

  test('setUp(false): connections refused on the same URL until setUp(true); state survives', async () => {
    const url = server.url;
    await server.setUp(false);
    assert.equal(server.isUp, false);
    assert.equal(await connectionError(admin.get('/readyz')), 'ECONNREFUSED');
    await server.setUp(true);
    assert.equal(server.url, url);
    assert.equal((await admin.get('/api/v1/namespaces/f/configmaps/c')).status, 200);
  });

  test('neverUp: the API goes down and refuses to come up until the fault is lifted', async () => {
    server.faults.neverUp = true;
    await server.setUp(true);
    assert.equal(server.isUp, false);
    assert.equal(await connectionError(admin.get('/readyz')), 'ECONNREFUSED');
    server.faults.neverUp = false;
    await server.setUp(true);
    assert.equal((await admin.get('/readyz')).status, 200);
  });

  test('a server can start down and come up later at the URL it announced', async () => {
    const late = await startApiServer({ up: false });
    try {
      assert.notEqual(late.port, 0);
      const c = new SimClient(late, { identity: ADMIN });
      assert.equal(await connectionError(c.get('/readyz')), 'ECONNREFUSED');
      await late.setUp(true);
      assert.equal((await c.get('/readyz')).status, 200);
      c.close();
    } finally {
      await late.close();
    }
  });
});
