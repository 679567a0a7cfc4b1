import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, ConnectionError, isConflict, isGone, isNotFound } from '../../../src/cluster/types';
import { MissingObjectError } from '../../../src/cluster/objects';
import { R } from '../../../src/cluster/resources';

const rows: { name: string; err: unknown; notFound: boolean; conflict: boolean; gone: boolean }[] = [
  { name: '404 NotFound', err: new ApiError(404, 'NotFound', 'x'), notFound: true, conflict: false, gone: false },
  { name: 'an object updateObject did not find', err: new MissingObjectError(R.apiServers, 'cluster', undefined), notFound: true, conflict: false, gone: false },
  { name: '409 Conflict', err: new ApiError(409, 'Conflict', 'x'), notFound: false, conflict: true, gone: false },
  { name: '409 AlreadyExists', err: new ApiError(409, 'AlreadyExists', 'x'), notFound: false, conflict: true, gone: false },
  { name: '410 Gone', err: new ApiError(410, 'Expired', 'x'), notFound: false, conflict: false, gone: true },
  { name: '503', err: new ApiError(503, 'ServiceUnavailable', 'x'), notFound: false, conflict: false, gone: false },
  { name: 'a refused connection', err: new ConnectionError('refused', 'ECONNREFUSED'), notFound: false, conflict: false, gone: false },
  { name: 'a plain error with a statusCode field', err: Object.assign(new Error('x'), { statusCode: 404 }), notFound: false, conflict: false, gone: false },
  { name: 'not an error', err: undefined, notFound: false, conflict: false, gone: false },
];
for (const row of rows) {
  test(`API predicates: ${row.name}`, () => {
    assert.deepEqual({ notFound: isNotFound(row.err), conflict: isConflict(row.err), gone: isGone(row.err) }, { notFound: row.notFound, conflict: row.conflict, gone: row.gone });
  });
}

test('a MissingObjectError names the object for people', () => {
  assert.equal(new MissingObjectError(R.routes, 'console', 'openshift-console').message, 'Route openshift-console/console does not exist');
  assert.equal(new MissingObjectError(R.apiServers, 'cluster', undefined).message, 'APIServer cluster does not exist');
});
