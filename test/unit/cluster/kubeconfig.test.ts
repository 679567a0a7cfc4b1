import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { KubeconfigError, loadKubeconfig, parseKubeconfig } from '../../../src/cluster/kubeconfig';
import { makePki, type Pki } from './pki';
import { kubeconfigYaml } from './test-server';

describe('kubeconfig', () => {
  let pki: Pki;
  let dir: string;
  before(() => {
    pki = makePki();
    dir = mkdtempSync(path.join(tmpdir(), 'sno-kc-'));
  });
  after(() => {
    pki.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const parse = (text: string) => parseKubeconfig(text, { source: 'test.kubeconfig', baseDir: dir });

  test('embedded data: server, CA, client certificate and key', async () => {
    const kc = await parse(kubeconfigYaml('https://localhost:6443/', pki));
    assert.equal(kc.server, 'https://localhost:6443');
    assert.equal(kc.context, 'test');
    assert.equal(kc.clusterName, 'test-cluster');
    assert.equal(kc.userName, 'test-user');
    assert.equal(kc.ca?.toString(), pki.caCert);
    assert.equal(kc.clientCert?.toString(), pki.clientCert);
    assert.equal(kc.clientKey?.toString(), pki.clientKey);
    assert.equal(kc.insecureSkipTlsVerify, false);
    assert.equal(kc.token, undefined);
  });

  test('file references resolve relative to the kubeconfig file; tokenFile is read and remembered', async () => {
    const sub = path.join(dir, 'rel');
    mkdirSync(path.join(sub, 'certs'), { recursive: true });
    writeFileSync(path.join(sub, 'certs', 'ca.crt'), pki.caCert);
    writeFileSync(path.join(sub, 'token'), 'tok-123\n');
    const file = path.join(sub, 'kubeconfig');
    writeFileSync(file, kubeconfigYaml('https://api-int.sno1.example.test:6443', pki, {
      cluster: { 'certificate-authority': 'certs/ca.crt', 'tls-server-name': 'api-int.sno1.example.test' },
      user: { tokenFile: 'token' },
    }));
    const kc = await loadKubeconfig(file);
    assert.equal(kc.ca?.toString(), pki.caCert);
    assert.equal(kc.tlsServerName, 'api-int.sno1.example.test');
    assert.equal(kc.token, 'tok-123');
    assert.equal(kc.tokenFile, path.join(sub, 'token'));
    assert.equal(kc.clientCert, undefined);
  });

  test('a custom reader is used for the kubeconfig and every file it references', async () => {
    const files: Record<string, string> = {
      '/virtual/kc': kubeconfigYaml('https://x:6443', pki, { cluster: { 'certificate-authority': 'ca.pem' }, user: { token: ' abc ' } }),
      '/virtual/ca.pem': pki.caCert,
    };
    const read = async (p: string) => {
      const v = files[p];
      if (v === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return Buffer.from(v);
    };
    const kc = await loadKubeconfig('/virtual/kc', read);
    assert.equal(kc.ca?.toString(), pki.caCert);
    assert.equal(kc.token, 'abc');
  });

  test('insecure-skip-tls-verify is honoured', async () => {
    const kc = await parse(kubeconfigYaml('https://x:6443', pki, { cluster: { 'insecure-skip-tls-verify': true }, user: { token: 't' } }));
    assert.equal(kc.insecureSkipTlsVerify, true);
    assert.equal(kc.ca, undefined);
  });

  test('without current-context a single context is used; with several it is an error', async () => {
    const single = kubeconfigYaml('https://x:6443', pki).replace('current-context: test\n', '');
    assert.equal((await parse(single)).context, 'test');
    const two = single.replace('contexts:\n', 'contexts:\n  - name: other\n    context: {cluster: test-cluster, user: test-user}\n');
    await assert.rejects(parse(two), /current-context is not set and there are 2 contexts/);
  });

  const rejects = async (text: string, pattern: RegExp) => {
    await assert.rejects(parse(text), (err: unknown) => {
      assert.ok(err instanceof KubeconfigError, `expected KubeconfigError, got ${String(err)}`);
      assert.match(err.message, pattern);
      return true;
    });
  };

  test('errors name the field and what is expected', async () => {
    const base = kubeconfigYaml('https://x:6443', pki);
    await rejects(base.replace('current-context: test', 'current-context: nope'), /current-context "nope" is not among contexts \[test\]/);
    await rejects(base.replace('user: test-user}', 'user: ghost}'), /refers to user "ghost", which is not defined/);
    await rejects(base.replace('server: https://x:6443', 'server: not a url'), /clusters\[test-cluster\]\.cluster\.server "not a url" is not a URL/);
    await rejects(base.replace('server: https://x:6443', 'server: ftp://x'), /must be an https:\/\/ URL/);
    await rejects(kubeconfigYaml('https://x:6443', pki, { cluster: { 'certificate-authority-data': '%%%not-base64' } }), /certificate-authority-data is not base64/);
    await rejects(kubeconfigYaml('https://x:6443', pki, { cluster: { 'certificate-authority': 'missing/ca.crt' } }), /certificate-authority file .*missing\/ca\.crt cannot be read: no such file/);
    await rejects(kubeconfigYaml('https://x:6443', pki, { user: { 'client-certificate-data': Buffer.from(pki.clientCert).toString('base64') } }), /client-certificate is set but no client key is/);
    await rejects(base.replace('clusters:', 'clusters: 3\nx:'), /clusters must be a list/);
    await rejects('{{{', /not valid YAML/);
    await rejects('- a\n- b\n', /expected a mapping/);
  });

  test('unsupported credential kinds are refused with the field named', async () => {
    const text = [
      'current-context: c',
      'clusters: [{name: k, cluster: {server: "https://x:6443"}}]',
      'users: [{name: u, user: {exec: {command: oc}}}]',
      'contexts: [{name: c, context: {cluster: k, user: u}}]',
    ].join('\n');
    await rejects(text, /users\[u\]\.user\.exec is not supported: use a client certificate or a token/);
    await rejects(text.replace('user: {exec: {command: oc}}', 'user: {username: a, password: b}'), /users\[u\]\.user\.username is not supported/);
    await rejects(text.replace('server: "https://x:6443"', 'server: "https://x:6443", proxy-url: "http://p:3128"'), /proxy-url is not supported/);
  });

  test('a client key that does not belong to the certificate is caught at load time', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await rejects(kubeconfigYaml('https://x:6443', pki, { user: { 'client-certificate-data': b64(pki.clientCert), 'client-key-data': b64(pki.otherCaKey) } }), /client key does not belong to the client certificate/);
  });

  test('unusable CA, certificate or key data is named', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await rejects(kubeconfigYaml('https://x:6443', pki, { cluster: { 'certificate-authority-data': b64('garbage') } }), /certificate-authority\(-data\) holds no usable PEM certificate/);
    await rejects(kubeconfigYaml('https://x:6443', pki, { user: { 'client-certificate-data': b64('garbage'), 'client-key-data': b64(pki.clientKey) } }), /client-certificate\(-data\) holds no usable PEM certificate/);
    await rejects(kubeconfigYaml('https://x:6443', pki, { user: { 'client-certificate-data': b64(pki.clientCert), 'client-key-data': b64('garbage') } }), /client-key\(-data\) is not a usable PEM private key/);
  });

  test('a missing kubeconfig file says so', async () => {
    await assert.rejects(loadKubeconfig(path.join(dir, 'nope')), /cannot read kubeconfig .*nope: no such file/);
  });
});
