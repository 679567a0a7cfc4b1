import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { credentialSource, KubeconfigError, loadKubeconfig, parseKubeconfig, pickContext, type Fail } from '../../../src/cluster/kubeconfig';
import { clusterOnce } from '../../../src/engine/context';
import { LocalHost } from '../../../src/host/host';
import { createLogger } from '../../../src/log';
import { makePki, type Pki } from './pki';
import { kubeconfigYaml } from './test-server';
import { readFile } from 'node:fs/promises';

const readLocal = (p: string) => readFile(p);

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

  const parse = (text: string) => parseKubeconfig(text, { source: 'test.kubeconfig', baseDir: dir, read: readLocal });

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
    const kc = await loadKubeconfig(readLocal, file);
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
    const kc = await loadKubeconfig(read, '/virtual/kc');
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
    // A list as a key is refused before conversion (the node bundle has no yaml stringify to turn it into a string).
    await rejects(`${base}? [a, b]\n: c\n`, /not valid YAML: a mapping key must be a plain string, not a list or mapping at line \d+, column 3$/);
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
    await assert.rejects(loadKubeconfig(readLocal, path.join(dir, 'nope')), /cannot read kubeconfig .*nope: no such file/);
  });

  test('through the host seam, an absolute certificate path inside the node kubeconfig is read under --root', async () => {
    const root = path.join(dir, 'node-root');
    mkdirSync(path.join(root, 'etc/kubernetes/pki'), { recursive: true });
    writeFileSync(path.join(root, 'etc/kubernetes/pki/ca.crt'), pki.caCert);
    writeFileSync(path.join(root, 'etc/kubernetes/kubeconfig'), kubeconfigYaml('https://api.sno1.example.test:6443', pki, {
      cluster: { 'certificate-authority': '/etc/kubernetes/pki/ca.crt' },
      user: { token: 'node-token' },
    }));
    const cluster = clusterOnce(new LocalHost({ root }), '/etc/kubernetes/kubeconfig', createLogger({ format: 'json', journal: false, level: 'silent', write: () => undefined }));
    try {
      assert.equal((await cluster()).server, 'https://api.sno1.example.test:6443');
    } finally {
      await cluster.close();
    }
  });
});

/** Throws what the parser would report, without the kubeconfig's name. */
const failPlain: Fail = (message) => { throw new Error(message); };

describe('pickContext', () => {
  const doc = (contexts: { name: string; cluster?: string; user?: string }[], current?: string) => ({
    ...(current === undefined ? {} : { 'current-context': current }),
    clusters: [{ name: 'k', cluster: { server: 'https://x:6443' } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: contexts.map((c) => ({ name: c.name, context: { ...(c.cluster ? { cluster: c.cluster } : {}), ...(c.user ? { user: c.user } : {}) } })),
  });
  const rows: { name: string; doc: Record<string, unknown>; picks?: { context: string; clusterName: string; userName: string }; fails?: RegExp }[] = [
    { name: 'the current context', doc: doc([{ name: 'a', cluster: 'k', user: 'u' }, { name: 'b', cluster: 'k' }], 'b'), picks: { context: 'b', clusterName: 'k', userName: '' } },
    { name: 'no current context and one context: that one', doc: doc([{ name: 'only', cluster: 'k', user: 'u' }]), picks: { context: 'only', clusterName: 'k', userName: 'u' } },
    { name: 'an empty current context counts as none', doc: doc([{ name: 'only', cluster: 'k', user: 'u' }], ''), picks: { context: 'only', clusterName: 'k', userName: 'u' } },
    { name: 'no current context and two contexts', doc: doc([{ name: 'a', cluster: 'k' }, { name: 'b', cluster: 'k' }]), fails: /current-context is not set and there are 2 contexts/ },
    { name: 'a current context that is not listed', doc: doc([{ name: 'a', cluster: 'k' }], 'z'), fails: /current-context "z" is not among contexts \[a\]/ },
    { name: 'a context without a cluster', doc: doc([{ name: 'a', user: 'u' }], 'a'), fails: /context "a" names no cluster/ },
    { name: 'a context naming an undefined cluster', doc: doc([{ name: 'a', cluster: 'nope' }], 'a'), fails: /refers to cluster "nope", which is not defined/ },
    { name: 'a context naming an undefined user', doc: doc([{ name: 'a', cluster: 'k', user: 'ghost' }], 'a'), fails: /refers to user "ghost", which is not defined/ },
  ];
  for (const row of rows) {
    test(row.name, () => {
      if (row.fails) return assert.throws(() => pickContext(row.doc, failPlain), row.fails);
      const { context, clusterName, userName } = pickContext(row.doc, failPlain);
      assert.deepEqual({ context, clusterName, userName }, row.picks);
    });
  }
});

describe('credentialSource', () => {
  const where = (f: string) => `users[u].user.${f}`;
  const source = (body: Record<string, unknown>) => credentialSource(body, 'client-key-data', 'client-key', where, failPlain);
  const rows: { name: string; body: Record<string, unknown>; is?: unknown; fails?: RegExp }[] = [
    { name: 'inline data', body: { 'client-key-data': Buffer.from('key').toString('base64') }, is: { data: Buffer.from('key') } },
    { name: 'inline data wins over a file', body: { 'client-key-data': Buffer.from('key').toString('base64'), 'client-key': '/k.pem' }, is: { data: Buffer.from('key') } },
    { name: 'line breaks in the data are ignored', body: { 'client-key-data': 'a2V5\n' }, is: { data: Buffer.from('key') } },
    { name: 'empty data falls back to the file', body: { 'client-key-data': '', 'client-key': 'k.pem' }, is: { file: 'k.pem' } },
    { name: 'a file path as written (resolved when read)', body: { 'client-key': '/etc/k.pem' }, is: { file: '/etc/k.pem' } },
    { name: 'neither', body: {}, is: undefined },
    { name: 'an empty file path is none', body: { 'client-key': '' }, is: undefined },
    { name: 'data that is not base64', body: { 'client-key-data': '%%%' }, fails: /users\[u\]\.user\.client-key-data is not base64/ },
    { name: 'a path that is not a string', body: { 'client-key': 7 }, fails: /users\[u\]\.user\.client-key must be a string/ },
  ];
  for (const row of rows) {
    test(row.name, () => {
      if (row.fails) return assert.throws(() => source(row.body), row.fails);
      assert.deepEqual(source(row.body), row.is);
    });
  }
});
