// Which site-configs the run loop refuses before changing anything (problemsOf in src/engine/site-intake.ts), as rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { problemsOf } from '../../../src/engine/site-intake';
import { siteOf } from '../../support/step-context';

const valid = (resolved: Parameters<typeof siteOf>[0] = {}) => ({ status: 'valid' as const, site: siteOf(resolved) });
const id = { baseline: { clusterName: 'sno1' }, nodeName: 'sno1-node' };

const rows: { name: string; result: Parameters<typeof problemsOf>[0]; id: Parameters<typeof problemsOf>[1]; paths: string[] }[] = [
  { name: 'a valid config for this cluster and node', result: valid({ clusterName: 'sno1', hostname: 'sno1-node' }), id, paths: [] },
  { name: 'a valid config that names no cluster or host', result: valid(), id, paths: [] },
  { name: 'its own validation errors, as they are', result: { status: 'invalid', errors: [{ path: 'spec.baseDomain', message: 'x' }], warnings: [] }, id, paths: ['spec.baseDomain'] },
  { name: 'a cluster rename', result: valid({ clusterName: 'other' }), id, paths: ['spec.clusterName'] },
  { name: 'a host rename', result: valid({ hostname: 'other-node' }), id, paths: ['spec.hostname'] },
  { name: 'a rename with no baseline to compare with is not judged here', result: valid({ clusterName: 'other' }), id: { baseline: {}, nodeName: '' }, paths: [] },
  { name: 'the exact config refused on this node before', result: valid(), id: { ...id, rejectedDigests: ['f'.repeat(64)] }, paths: ['site-config'] },
  // prepare recorded that kubeadmin was removed at the factory: a new hash would be ignored by the OAuth server.
  { name: 'a kubeadmin hash on a node whose kubeadmin Secret was removed at the factory', result: valid({ kubeadminPassword: { hash: `$2y$10$${'Q'.repeat(53)}` } }), id: { ...id, baseline: { clusterName: 'sno1', kubeadmin: { kubeSystemCreated: '2026-08-01T10:00:00Z' } }, now: Date.parse('2026-11-01T00:00:00Z') }, paths: ['spec.kubeadminPassword.hash'] },
  { name: 'a kubeadmin hash where the installer\'s Secret was there at prepare', result: valid({ kubeadminPassword: { hash: `$2y$10$${'Q'.repeat(53)}` } }), id: { ...id, baseline: { clusterName: 'sno1', kubeadmin: { kubeSystemCreated: '2026-08-01T10:00:00Z', secretCreated: '2026-08-01T10:05:00Z' } }, now: Date.parse('2026-11-01T00:00:00Z') }, paths: [] },
  { name: 'a config for another machine is not a problem of its content', result: { status: 'not-for-this-machine', reasons: ['serial'] }, id, paths: [] },
];

for (const row of rows) {
  test(`problemsOf: ${row.name}`, () => {
    assert.deepEqual(problemsOf(row.result, row.id).map((p) => p.path), row.paths);
  });
}
