import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { issueServingCertificate } from '../../../src/certs/issue';
import { ServingKeyPool } from '../../../src/certs/keys';
import { OpensslWorkdir } from './openssl';

const spki = (k: { export(o: { type: 'spki'; format: 'der' }): Buffer }) => k.export({ type: 'spki', format: 'der' }).toString('hex');

describe('ServingKeyPool', () => {
  const ssl = new OpensslWorkdir();
  after(() => ssl.cleanup());

  test('hands out the keys prepared ahead, each once, then new ones; a certificate carries the key it was given', async () => {
    const pool = new ServingKeyPool();
    pool.prepare(2);
    pool.prepare(2);
    assert.equal(pool.size, 2, 'prepare() tops up, it does not add');
    const a = await pool.take();
    const b = await pool.take();
    assert.equal(pool.size, 0);
    const c = await pool.take();
    const keys = [a, b, c].map((k) => spki(k.publicKey));
    assert.equal(new Set(keys).size, 3, 'three different keys');
    for (const k of [a, b, c]) {
      assert.equal(k.privateKey.asymmetricKeyType, 'rsa');
      assert.equal(k.privateKey.asymmetricKeyDetails?.modulusLength, 2048);
    }

    const signer = ssl.rootCa('kube-apiserver-lb-signer');
    const issued = issueServingCertificate({ signer, dnsNames: ['api.sno1.store42.example.com'], key: b });
    assert.equal(spki(new X509Certificate(issued.certPem).publicKey), spki(b.publicKey));
    assert.equal(issued.keyPem, b.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  });

  test('stop() forgets the keys nobody took', async () => {
    const pool = new ServingKeyPool();
    pool.prepare(1);
    await pool.stop();
    assert.equal(pool.size, 0);
  });
});
