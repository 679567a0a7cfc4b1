// The simulator's bootstrap authenticator (test/sim/cluster/bootstrap-user.ts; openshift/library-go
// pkg/authentication/bootstrapauthenticator/bootstrap.go): the installer's kube-system/kubeadmin is honoured, an
// updated hash too; a password shorter than 23 characters is refused even when it matches; a Secret deleted and
// created again after the cluster's first hour is ignored, whatever its hash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { R } from '../../../src/cluster/resources';
import { startSimulator } from '../../sim/index';
import { bootstrapUserEnabled, kubeadminLogin, MIN_PASSWORD_LEN } from '../../sim/cluster/bootstrap-user';

const HASH = `$2y$10$${'Q'.repeat(53)}`;
const LONG = 'abcde-fghij-klmno-pqrst';
const SHORT = 'the password';
// bcrypt's comparison stands in as a table: this hash is the hash of both passwords.
const matches = (hash: string, password: string) => hash === HASH && (password === LONG || password === SHORT);
const secret = (hash: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kubeadmin', namespace: 'kube-system' }, type: 'Opaque', data: { kubeadmin: Buffer.from(hash).toString('base64') } });

test('kubeadmin: the installer\'s Secret works, short passwords never do, and a Secret created again is ignored', async () => {
  const sim = await startSimulator({ timeScale: 0.001 });
  try {
    const installed = Date.parse(String(sim.store.get(R.namespaces, 'kube-system')?.metadata?.creationTimestamp));
    assert.ok(sim.clock.now() - installed > 24 * 3600_000, 'the cluster was installed days before the simulator started');
    assert.deepEqual(bootstrapUserEnabled(sim.store), { ok: true }, 'the installer\'s Secret is honoured');

    sim.store.update(R.secrets, { ...sim.store.get(R.secrets, 'kubeadmin', 'kube-system')!, data: secret(HASH).data });
    assert.equal(LONG.length, MIN_PASSWORD_LEN);
    assert.deepEqual(kubeadminLogin(sim.store, LONG, matches), { ok: true }, 'an updated hash keeps the Secret\'s age');
    assert.deepEqual(kubeadminLogin(sim.store, SHORT, matches), { ok: false, reason: 'too-short', message: 'kubeadmin password must be at least 23 characters long' });
    assert.equal(kubeadminLogin(sim.store, 'x'.repeat(23), matches).ok, false);

    sim.store.delete(R.secrets, 'kubeadmin', 'kube-system');
    assert.equal(bootstrapUserEnabled(sim.store).ok, false);
    sim.store.create(R.secrets, secret(HASH));
    assert.deepEqual(kubeadminLogin(sim.store, LONG, matches), { ok: false, reason: 'recreated', message: 'kubeadmin secret cannot be recreated' });
  } finally {
    await sim.stop();
  }
});
