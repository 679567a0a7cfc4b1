// The security Contract (DESIGN.md section 5), rule by rule, with real CSRs from `openssl req`.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import type { V1CertificateSigningRequest } from '@kubernetes/client-node';
import { evaluateCsr, issuedKind, type ExpectedNode } from '../../../src/csr/policy';
import {
  BOOTSTRAPPER, BOOTSTRAPPER_GROUPS, CLIENT, SERVING, cleanupCsrFiles, csrObject, derToPem, opensslCsr, pemToDer, type CsrObjectOptions, type KeyKind,
} from './make-csr';

const NODE: ExpectedNode = {
  name: 'sno1',
  addresses: ['192.168.42.10', 'fd00::10'],
  dnsNames: ['sno1.store42.example.com'],
  notBefore: new Date('2025-01-01T10:00:00.500Z'),
  nodeExists: true,
};
const NODE_USER = 'system:node:sno1';
const NODE_GROUPS = ['system:nodes', 'system:authenticated'];
const CLIENT_USAGES = ['digital signature', 'client auth'];
const SERVING_USAGES = ['digital signature', 'server auth'];
const SERVING_SANS = ['DNS:sno1', 'DNS:sno1.store42.example.com', 'IP:192.168.42.10', 'IP:fd00::10'];

after(() => cleanupCsrFiles());

interface ClientCase { subject?: string; sans?: string[]; key?: KeyKind; username?: string; groups?: string[]; usages?: string[]; signerName?: string }

function clientCsr(c: ClientCase = {}): V1CertificateSigningRequest {
  const pem = opensslCsr({ subject: c.subject ?? '/O=system:nodes/CN=system:node:sno1', sans: c.sans, key: c.key });
  return csrObject(pem, { signerName: c.signerName ?? CLIENT, username: c.username ?? BOOTSTRAPPER, groups: c.groups ?? BOOTSTRAPPER_GROUPS, usages: c.usages ?? CLIENT_USAGES });
}

function servingCsr(c: ClientCase = {}): V1CertificateSigningRequest {
  const pem = opensslCsr({ subject: c.subject ?? '/O=system:nodes/CN=system:node:sno1', sans: c.sans ?? SERVING_SANS, key: c.key });
  return csrObject(pem, { signerName: c.signerName ?? SERVING, username: c.username ?? NODE_USER, groups: c.groups ?? NODE_GROUPS, usages: c.usages ?? SERVING_USAGES });
}

function approves(csr: V1CertificateSigningRequest, kind: 'client' | 'serving', node: ExpectedNode = NODE, reason?: RegExp): void {
  const d = evaluateCsr(csr, node);
  assert.equal(d.approve, true, `expected approval, got: ${d.reason}`);
  assert.equal(d.kind, kind);
  if (reason) assert.match(d.reason, reason);
}

function leavesPending(csr: V1CertificateSigningRequest, kind: 'client' | 'serving' | 'other', reason: RegExp | string, node: ExpectedNode = NODE): void {
  const d = evaluateCsr(csr, node);
  assert.equal(d.approve, false, `expected to be left pending, but approved: ${d.reason}`);
  assert.equal(d.kind, kind);
  if (typeof reason === 'string') assert.ok(d.reason.includes(reason), `reason was: ${d.reason}`);
  else assert.match(d.reason, reason);
}

describe('client CSRs (kubernetes.io/kube-apiserver-client-kubelet)', () => {
  test('legit bootstrap request by the node-bootstrapper, EC P-256 (what a kubelet sends)', () => {
    approves(clientCsr(), 'client', NODE, /node-bootstrapper .*Node exists: the kubelet re-bootstraps/);
    approves(clientCsr(), 'client', { ...NODE, nodeExists: false }, /^client CSR for node sno1 by the node-bootstrapper matches/);
  });
  test('legit bootstrap request, RSA 2048 with key encipherment (what a kubelet with an RSA key sends)', () => {
    approves(clientCsr({ key: 'rsa', usages: ['key encipherment', 'digital signature', 'client auth'] }), 'client');
  });
  test('legit renewal by system:node:<name> itself', () => {
    approves(clientCsr({ username: NODE_USER, groups: NODE_GROUPS }), 'client', NODE, /renewal by system:node:sno1/);
  });
  test('renewal by the node without the node groups', () => {
    leavesPending(clientCsr({ username: NODE_USER, groups: ['system:authenticated'] }), 'client', 'client renewal CSR by system:node:sno1 lacks groups [system:nodes] (has [system:authenticated])');
  });
  test("another node's name in CN", () => {
    leavesPending(clientCsr({ subject: '/O=system:nodes/CN=system:node:sno2' }), 'client', 'client CSR subject CN is "system:node:sno2", expected "system:node:sno1" (this node is sno1)');
  });
  test('renewal requested by another node', () => {
    leavesPending(clientCsr({ username: 'system:node:sno2', groups: NODE_GROUPS }), 'client', /client CSR was requested by "system:node:sno2", expected the node-bootstrapper .* or system:node:sno1 renewing/);
  });
  test('system:masters in O', () => {
    leavesPending(clientCsr({ subject: '/O=system:masters/CN=system:node:sno1' }), 'client', 'client CSR subject O is [system:masters], expected exactly [system:nodes]');
    leavesPending(clientCsr({ subject: '/O=system:nodes/O=system:masters/CN=system:node:sno1' }), 'client', 'client CSR subject O is [system:nodes, system:masters], expected exactly [system:nodes]');
  });
  test('an extra O, or none', () => {
    leavesPending(clientCsr({ subject: '/O=system:nodes/O=acme/CN=system:node:sno1' }), 'client', 'expected exactly [system:nodes]');
    leavesPending(clientCsr({ subject: '/CN=system:node:sno1' }), 'client', 'client CSR subject O is [], expected exactly [system:nodes]');
  });
  test('any SAN in a client CSR', () => {
    leavesPending(clientCsr({ sans: ['DNS:sno1', 'IP:192.168.42.10'] }), 'client', 'client CSR must have no SANs, but has DNS:sno1, IP:192.168.42.10');
    leavesPending(clientCsr({ sans: ['email:root@sno1'] }), 'client', 'but has email:root@sno1');
    leavesPending(clientCsr({ sans: ['URI:spiffe://cluster/ns/x'] }), 'client', 'but has URI:spiffe://cluster/ns/x');
    leavesPending(clientCsr({ sans: ['otherName:1.3.6.1.4.1.311.20.2.3;UTF8:admin@corp'] }), 'client', 'but has otherName');
  });
  test('the generic kube-apiserver-client signer (the ZTPFW escalation) is never approved', () => {
    leavesPending(clientCsr({ signerName: 'kubernetes.io/kube-apiserver-client', subject: '/O=system:masters/CN=admin' }), 'other', /signer kubernetes\.io\/kube-apiserver-client is not a kubelet signer/);
    leavesPending(clientCsr({ signerName: 'kubernetes.io/kube-apiserver-client' }), 'other', /is not a kubelet signer/);
    leavesPending(clientCsr({ signerName: 'kubernetes.io/legacy-unknown' }), 'other', /is not a kubelet signer/);
  });
  test('wrong, missing, extra or duplicated usages', () => {
    const expected = 'expected exactly [digital signature, client auth] (optionally with key encipherment)';
    leavesPending(clientCsr({ usages: ['digital signature'] }), 'client', `client CSR usages are [digital signature], ${expected}`);
    leavesPending(clientCsr({ usages: ['digital signature', 'server auth'] }), 'client', expected);
    leavesPending(clientCsr({ usages: ['digital signature', 'client auth', 'server auth'] }), 'client', expected);
    leavesPending(clientCsr({ usages: ['digital signature', 'client auth', 'cert sign'] }), 'client', expected);
    leavesPending(clientCsr({ usages: ['digital signature', 'client auth', 'client auth'] }), 'client', expected);
    leavesPending(clientCsr({ usages: [] }), 'client', expected);
  });
  test('wrong requestor', () => {
    leavesPending(clientCsr({ username: 'system:serviceaccount:default:default', groups: ['system:serviceaccounts', 'system:authenticated'] }), 'client', /client CSR was requested by "system:serviceaccount:default:default"/);
    leavesPending(clientCsr({ username: 'system:admin', groups: ['system:masters', 'system:authenticated'] }), 'client', /requested by "system:admin"/);
  });
  // DESIGN.md section 5: both group sets a real node-bootstrapper certificate yields (installer PR #7032).
  const PRE_414_GROUPS = ['system:serviceaccounts:openshift-machine-config-operator', 'system:authenticated'];
  const ACCEPTED_GROUP_SETS: [string, string[]][] = [
    ['installed with 4.14 or later', BOOTSTRAPPER_GROUPS],
    ['installed before 4.14 (bootstrap certificate without system:serviceaccounts)', PRE_414_GROUPS],
    ['in another order', [...PRE_414_GROUPS].reverse()],
  ];
  for (const [name, groups] of ACCEPTED_GROUP_SETS) {
    test(`node-bootstrapper groups of a cluster ${name} are approved`, () => {
      approves(clientCsr({ groups }), 'client', NODE, /by the node-bootstrapper matches/);
    });
  }
  const EXTRA_GROUPS = ['system:masters', 'system:cluster-admins', 'system:nodes', 'system:unauthenticated', 'system:bootstrappers',
    'system:serviceaccounts:kube-system', 'system:serviceaccounts:openshift-config', 'acme:operators'];
  for (const extra of EXTRA_GROUPS) {
    test(`node-bootstrapper with the extra group ${extra} is refused, whichever base set`, () => {
      for (const [, groups] of ACCEPTED_GROUP_SETS) {
        leavesPending(clientCsr({ groups: [...groups, extra] }), 'client', `has other groups [${extra}]`);
      }
    });
  }
  test('node-bootstrapper without a required group, or with a group twice, is refused', () => {
    leavesPending(clientCsr({ groups: BOOTSTRAPPER_GROUPS.slice(1) }), 'client', /lacks \[system:serviceaccounts:openshift-machine-config-operator\]; expected \[system:serviceaccounts:openshift-machine-config-operator, system:authenticated\], optionally with \[system:serviceaccounts\], and nothing else/);
    leavesPending(clientCsr({ groups: ['system:serviceaccounts:openshift-machine-config-operator', 'system:serviceaccounts'] }), 'client', 'lacks [system:authenticated]');
    leavesPending(clientCsr({ groups: [] }), 'client', 'lacks [system:serviceaccounts:openshift-machine-config-operator, system:authenticated]');
    leavesPending(clientCsr({ groups: [...PRE_414_GROUPS, 'system:authenticated'] }), 'client', 'repeats a group');
  });
  test('two CNs (Go would use the last one)', () => {
    leavesPending(clientCsr({ subject: '/O=system:nodes/CN=system:node:sno1/CN=system:node:sno2' }), 'client', 'client CSR subject has 2 CNs ["system:node:sno1", "system:node:sno2"]; expected exactly one');
  });
  test('every problem is listed, not only the first', () => {
    const d = evaluateCsr(clientCsr({ subject: '/O=system:masters/CN=system:node:sno2', sans: ['DNS:x'], usages: ['server auth'] }), NODE);
    assert.equal(d.approve, false);
    for (const part of ['CN is "system:node:sno2"', 'O is [system:masters]', 'no SANs', 'usages are [server auth]']) assert.ok(d.reason.includes(part), d.reason);
  });
});

describe('serving CSRs (kubernetes.io/kubelet-serving)', () => {
  test('legit serving request, EC P-256, with node name, FQDN and both addresses', () => {
    approves(servingCsr(), 'serving', NODE, /serving CSR for node sno1 with SANs \[sno1, sno1\.store42\.example\.com, 192\.168\.42\.10, fd00::10\]/);
  });
  test('legit serving request, RSA with key encipherment, IP SAN only; unknown nodeExists is fine', () => {
    approves(servingCsr({ key: 'rsa', sans: ['IP:192.168.42.10'], usages: ['digital signature', 'key encipherment', 'server auth'] }), 'serving', { ...NODE, nodeExists: undefined });
  });
  test('a P-384 key is accepted', () => {
    approves(servingCsr({ key: 'p384' }), 'serving');
  });
  test("another node's serving request", () => {
    const d = evaluateCsr(servingCsr({ subject: '/O=system:nodes/CN=system:node:sno2', username: 'system:node:sno2', sans: ['DNS:sno2'] }), NODE);
    assert.equal(d.approve, false);
    assert.ok(d.reason.includes('serving CSR was requested by "system:node:sno2", expected system:node:sno1'), d.reason);
    assert.ok(d.reason.includes('DNS SAN sno2 not among'), d.reason);
  });
  test('username and CN disagree', () => {
    leavesPending(servingCsr({ subject: '/O=system:nodes/CN=system:node:sno2' }), 'serving', 'serving CSR subject CN is "system:node:sno2", expected "system:node:sno1"');
  });
  test('an extra DNS SAN, and a name that only starts with the node name', () => {
    leavesPending(servingCsr({ sans: [...SERVING_SANS, 'DNS:evil.example.com'] }), 'serving', "serving CSR has DNS SAN evil.example.com not among the node's names [sno1, sno1.store42.example.com]");
    leavesPending(servingCsr({ sans: ['DNS:sno1.evil.example.com', 'IP:192.168.42.10'] }), 'serving', 'DNS SAN sno1.evil.example.com not among');
    leavesPending(servingCsr({ sans: ['DNS:*.store42.example.com'] }), 'serving', 'DNS SAN *.store42.example.com not among');
  });
  test('an extra IP SAN', () => {
    leavesPending(servingCsr({ sans: [...SERVING_SANS, 'IP:10.0.0.9'] }), 'serving', 'serving CSR has IP SAN 10.0.0.9 not among the node addresses [192.168.42.10, fd00::10]');
    leavesPending(servingCsr({ sans: ['IP:fd00::11'] }), 'serving', 'serving CSR has IP SAN fd00::11 not among the node addresses');
  });
  test('a Node with no addresses yet (its status not patched): every IP SAN is refused, its names alone still pass', () => {
    // An empty list means "no address may be certified", never "any address": otherwise a serving CSR sent before
    // the Node's status lists its addresses could name any IP.
    const noAddresses = { ...NODE, addresses: [] };
    leavesPending(servingCsr(), 'serving', 'serving CSR has IP SAN 192.168.42.10 not among the node addresses []', noAddresses);
    leavesPending(servingCsr({ sans: ['DNS:sno1', 'IP:10.0.0.9'] }), 'serving', 'IP SAN 10.0.0.9 not among the node addresses', noAddresses);
    approves(servingCsr({ sans: ['DNS:sno1', 'DNS:sno1.store42.example.com'] }), 'serving', noAddresses);
  });
  test('an unparsable entry in the node\'s addresses is skipped, not compared: the other addresses still match', () => {
    approves(servingCsr({ sans: ['DNS:sno1', 'IP:192.168.42.10'] }), 'serving', { ...NODE, addresses: ['not-an-address', '192.168.42.10'] });
    leavesPending(servingCsr({ sans: ['DNS:sno1', 'IP:10.0.0.9'] }), 'serving', 'IP SAN 10.0.0.9 not among the node addresses', { ...NODE, addresses: ['not-an-address', '192.168.42.10'] });
  });
  test('the node\'s expected names compare without surrounding blanks', () => {
    approves(servingCsr({ sans: ['DNS:sno1.store42.example.com', 'IP:192.168.42.10'] }), 'serving', { ...NODE, dnsNames: [' sno1.store42.example.com '] });
  });
  test('email, URI and otherName SANs', () => {
    leavesPending(servingCsr({ sans: [...SERVING_SANS, 'email:admin@sno1'] }), 'serving', 'serving CSR has email SANs [admin@sno1]; none are allowed');
    leavesPending(servingCsr({ sans: [...SERVING_SANS, 'URI:https://sno1/'] }), 'serving', 'serving CSR has URI SANs [https://sno1/]; none are allowed');
    leavesPending(servingCsr({ sans: [...SERVING_SANS, 'otherName:1.3.6.1.4.1.311.20.2.3;UTF8:admin@corp'] }), 'serving', 'serving CSR has [otherName] SANs; only DNS and IP SANs are allowed');
  });
  test('no SAN at all', () => {
    const pem = opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1' });
    leavesPending(csrObject(pem, { signerName: SERVING, username: NODE_USER, groups: NODE_GROUPS, usages: SERVING_USAGES }), 'serving', 'serving CSR has no DNS or IP SAN');
  });
  test('groups must include system:nodes and system:authenticated', () => {
    leavesPending(servingCsr({ groups: ['system:authenticated'] }), 'serving', 'serving CSR requestor lacks groups [system:nodes] (has [system:authenticated])');
    leavesPending(servingCsr({ groups: [] }), 'serving', 'lacks groups [system:nodes, system:authenticated]');
  });
  test('O must include system:nodes and no other system: group', () => {
    leavesPending(servingCsr({ subject: '/O=acme/CN=system:node:sno1' }), 'serving', 'serving CSR subject O is [acme], which does not include system:nodes');
    leavesPending(servingCsr({ subject: '/O=system:nodes/O=system:masters/CN=system:node:sno1' }), 'serving', 'serving CSR subject O includes [system:masters]');
    approves(servingCsr({ subject: '/O=system:nodes/O=acme/CN=system:node:sno1' }), 'serving');
  });
  test('usages', () => {
    const expected = 'expected exactly [digital signature, server auth] (optionally with key encipherment)';
    leavesPending(servingCsr({ usages: ['digital signature', 'client auth'] }), 'serving', expected);
    leavesPending(servingCsr({ usages: ['digital signature', 'server auth', 'client auth'] }), 'serving', expected);
    leavesPending(servingCsr({ usages: ['server auth'] }), 'serving', expected);
  });
  test('a serving request for a Node that does not exist', () => {
    leavesPending(servingCsr(), 'serving', 'but Node sno1 does not exist', { ...NODE, nodeExists: false });
  });
  test('IP SANs compare as addresses: fd00::10 = fd00:0:0:0:0:0:0:10, IPv4 = IPv4-mapped; DNS case and trailing dot', () => {
    approves(servingCsr({ sans: ['IP:fd00:0:0:0:0:0:0:10'] }), 'serving');
    approves(servingCsr({ sans: ['IP:fd00::10'] }), 'serving', { ...NODE, addresses: ['FD00:0000:0:0:0:0:0:0010'] });
    approves(servingCsr({ sans: ['IP:::ffff:192.168.42.10'] }), 'serving');
    approves(servingCsr({ sans: ['IP:192.168.42.10'] }), 'serving', { ...NODE, addresses: ['::ffff:c0a8:2a0a'] });
    approves(servingCsr({ sans: ['DNS:SNO1.Store42.example.com.'] }), 'serving');
    leavesPending(servingCsr({ sans: ['IP:fd00::1:0'] }), 'serving', 'IP SAN fd00::1:0 not among');
  });
});

describe('state and time window', () => {
  const at = (created: string | undefined, conditions?: CsrObjectOptions['conditions']) => {
    const csr = clientCsr();
    if (created === undefined) delete csr.metadata?.creationTimestamp;
    else if (csr.metadata) csr.metadata.creationTimestamp = created as unknown as Date;
    if (conditions && csr.status) csr.status.conditions = conditions as never;
    return csr;
  };
  test('already approved, denied or failed CSRs are not pending', () => {
    leavesPending(at('2025-01-01T10:05:00Z', [{ type: 'Approved', status: 'True', reason: 'X' }]), 'client', 'client CSR is already approved');
    leavesPending(at('2025-01-01T10:05:00Z', [{ type: 'Denied', status: 'True', reason: 'X' }]), 'client', 'client CSR is already denied');
    leavesPending(at('2025-01-01T10:05:00Z', [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True' }]), 'client', 'client CSR is already failed');
  });
  test('nothing is approved while the node name is unknown', () => {
    leavesPending(clientCsr(), 'client', 'the expected node name is not known yet', { ...NODE, name: '' });
  });
  test('created before notBefore', () => {
    leavesPending(at('2025-01-01T09:59:59Z'), 'client', 'CSR was created at 2025-01-01T09:59:59.000Z, before this reconfiguration started (2025-01-01T10:00:00.000Z)');
  });
  test('created in the same second as notBefore counts as after it (creationTimestamp has second precision)', () => {
    approves(at('2025-01-01T10:00:00Z'), 'client');
  });
  test('no creationTimestamp while a window is set', () => {
    leavesPending(at(undefined), 'client', 'CSR has no valid creationTimestamp');
    leavesPending(at('yesterday'), 'client', 'CSR has no valid creationTimestamp');
  });
  test('without notBefore any creation time is accepted; a Date object works as well', () => {
    approves(at('2001-01-01T00:00:00Z'), 'client', { ...NODE, notBefore: undefined });
    const csr = at('x');
    if (csr.metadata) csr.metadata.creationTimestamp = new Date('2025-01-02T00:00:00Z');
    approves(csr, 'client');
  });
});

describe('malformed and forged requests', () => {
  const withRequest = (request: string) => {
    const csr = clientCsr();
    if (csr.spec) csr.spec.request = request;
    return csr;
  };
  const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

  test('malformed PEM or DER is left pending with the parse problem', () => {
    leavesPending(withRequest(''), 'client', 'client CSR request is not a valid PKCS#10 certificate request: spec.request is empty');
    leavesPending(withRequest('!!!not base64!!!'), 'client', 'spec.request is neither PEM nor base64');
    leavesPending(withRequest(b64('hello')), 'client', 'no PEM block found');
    leavesPending(withRequest(b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')), 'client', 'PEM block is "CERTIFICATE", expected "CERTIFICATE REQUEST"');
    const good = pemToDer(opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1' }));
    leavesPending(withRequest(b64(derToPem(good.subarray(0, good.length - 10)))), 'client', /not a valid PKCS#10 certificate request: malformed PKCS#10 structure/);
    leavesPending(withRequest(b64(derToPem(Buffer.concat([good, Buffer.from([0])])))), 'client', 'trailing bytes after the CertificationRequest');
    leavesPending(withRequest(b64(derToPem(good) + derToPem(good))), 'client', '2 PEM blocks found');
    leavesPending(withRequest(b64('-----BEGIN CERTIFICATE REQUEST-----\n@@@@\n-----END CERTIFICATE REQUEST-----\n')), 'client', 'PEM body is not base64');
  });

  test('a valid-looking request whose signature does not match its content (CN altered after signing)', () => {
    const pem = opensslCsr({ subject: '/O=system:nodes/CN=system:node:snoX' });
    const der = pemToDer(pem);
    const at = der.indexOf(Buffer.from('system:node:snoX'));
    assert.ok(at > 0);
    Buffer.from('system:node:sno1').copy(der, at);
    const csr = csrObject(derToPem(der), { signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages: CLIENT_USAGES });
    leavesPending(csr, 'client', /client CSR signature is invalid: the self-signature does not verify/);
  });

  test('a corrupted signature value', () => {
    const der = pemToDer(opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1', key: 'rsa' }));
    der[der.length - 3] = (der[der.length - 3] ?? 0) ^ 0xff;
    leavesPending(csrObject(derToPem(der), { signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages: CLIENT_USAGES }), 'client', 'client CSR signature is invalid');
  });

  test('a SHA-1 signature is refused', () => {
    const pem = opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1', key: 'rsa', digest: 'sha1' });
    leavesPending(csrObject(pem, { signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages: CLIENT_USAGES }), 'client', /signature algorithm sha1WithRSAEncryption \(SHA-1 is not accepted\) is not accepted/);
  });

  test('a weak RSA key is refused', () => {
    leavesPending(clientCsr({ key: 'rsa1024' }), 'client', 'client CSR has a 1024-bit RSA key; at least 2048 bits are required');
  });

  test('a request given as PEM text instead of base64 is read the same way', () => {
    const csr = clientCsr();
    if (csr.spec) csr.spec.request = Buffer.from(csr.spec.request, 'base64').toString('utf8');
    approves(csr, 'client');
  });

  test('no mutation of a valid request throws out of evaluateCsr or gets approved', () => {
    const original = pemToDer(opensslCsr({ subject: '/O=system:nodes/CN=system:node:sno1' }));
    let seed = 42;
    const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    for (let i = 0; i < 400; i++) {
      const der = Buffer.from(original);
      const op = rand(3);
      let mutated: Buffer = der;
      if (op === 0) der[rand(der.length)] = rand(256);
      else if (op === 1) mutated = der.subarray(0, rand(der.length));
      else { const p = rand(der.length); mutated = Buffer.concat([der.subarray(0, p), Buffer.from([rand(256)]), der.subarray(p)]); }
      if (mutated.equals(original)) continue;
      const csr = csrObject(derToPem(mutated), { signerName: CLIENT, username: BOOTSTRAPPER, groups: BOOTSTRAPPER_GROUPS, usages: CLIENT_USAGES });
      const d = evaluateCsr(csr, NODE);
      assert.equal(d.approve, false, `mutation ${i} was approved`);
    }
  });
});

describe('issuedKind', () => {
  const approved = { type: 'Approved', status: 'True', reason: 'SNOReconfigureApprove' };
  test('an approved CSR of this node with a certificate counts, per kind', () => {
    const client = clientCsr();
    if (client.status) { client.status.conditions = [approved] as never; client.status.certificate = 'Y2VydA=='; }
    assert.equal(issuedKind(client, NODE), 'client');
    const serving = servingCsr();
    if (serving.status) { serving.status.conditions = [approved] as never; serving.status.certificate = 'Y2VydA=='; }
    assert.equal(issuedKind(serving, NODE), 'serving');
  });
  test('not without a certificate, not for another node, not before the window', () => {
    const noCert = clientCsr();
    if (noCert.status) noCert.status.conditions = [approved] as never;
    assert.equal(issuedKind(noCert, NODE), undefined);
    const other = clientCsr({ subject: '/O=system:nodes/CN=system:node:sno2' });
    if (other.status) { other.status.conditions = [approved] as never; other.status.certificate = 'Y2VydA=='; }
    assert.equal(issuedKind(other, NODE), undefined);
    const old = clientCsr();
    if (old.metadata) old.metadata.creationTimestamp = '2024-12-31T00:00:00Z' as unknown as Date;
    if (old.status) { old.status.conditions = [approved] as never; old.status.certificate = 'Y2VydA=='; }
    assert.equal(issuedKind(old, NODE), undefined);
  });
  // Mutation testing (issue 41): the approved-and-certified check itself was not pinned.
  test('not while pending, denied or failed beside its approval, nor for another signer; a condition counts only when True', () => {
    const withStatus = (csr: V1CertificateSigningRequest, conditions: Array<{ type: string; status?: string }>) => ({ ...csr, status: { conditions: conditions as never, certificate: 'Y2VydA==' } });
    const rows: Array<[string, V1CertificateSigningRequest, 'client' | undefined]> = [
      ['pending', withStatus(clientCsr(), []), undefined],
      ['an Approved condition that is False', withStatus(clientCsr(), [{ type: 'Approved', status: 'False' }]), undefined],
      ['denied beside its approval', withStatus(clientCsr(), [approved, { type: 'Denied', status: 'True' }]), undefined],
      ['failed beside its approval', withStatus(clientCsr(), [approved, { type: 'Failed', status: 'True' }]), undefined],
      ['a Denied condition that is False', withStatus(clientCsr(), [approved, { type: 'Denied', status: 'False' }]), 'client'],
      ['an Approved condition without a status (read as True)', withStatus(clientCsr(), [{ type: 'Approved' }]), 'client'],
      ['another signer', withStatus(clientCsr({ signerName: 'kubernetes.io/legacy-unknown' }), [approved]), undefined],
      ['a serving request under another signer', withStatus(servingCsr({ signerName: 'example.com/any' }), [approved]), undefined],
    ];
    for (const [name, csr, kind] of rows) assert.equal(issuedKind(csr, NODE), kind, name);
  });
});

describe('requests missing their parts', () => {
  test('are left pending with a reason that says what is missing, never a TypeError', () => {
    const bare = (spec: Record<string, unknown> | undefined, metadata?: Record<string, unknown>) => ({ ...(spec && { spec }), ...(metadata && { metadata }) }) as unknown as V1CertificateSigningRequest;
    leavesPending(bare(undefined), 'other', /^signer \(none\) is not a kubelet signer/);
    leavesPending(bare({ signerName: CLIENT }), 'client', /^CSR has no valid creationTimestamp/);
    const noWindow = { ...NODE, notBefore: undefined };
    leavesPending(bare({ signerName: CLIENT }), 'client', /^client CSR request is not a valid PKCS#10 certificate request: /, noWindow);
    leavesPending(bare({ signerName: SERVING, request: Buffer.from('not a request').toString('base64') }, {}), 'serving', /^serving CSR request is not a valid PKCS#10 certificate request: /, noWindow);
    const { username: _u, groups: _g, usages: _s, ...spec } = clientCsr().spec;
    leavesPending({ ...clientCsr(), spec: spec as never }, 'client', /^client CSR was requested by "\(none\)", expected the node-bootstrapper .*; client CSR usages are \[\], expected exactly \[digital signature, client auth\]/);
    const serving = servingCsr();
    leavesPending({ ...serving, spec: { ...serving.spec, username: undefined } as never }, 'serving', /^serving CSR was requested by "\(none\)", expected system:node:sno1/);
    assert.equal(issuedKind({} as V1CertificateSigningRequest, NODE), undefined);
    assert.equal(issuedKind({ spec: { signerName: CLIENT }, status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Y2VydA==' } } as never, { ...NODE, notBefore: undefined }), undefined);
  });
});
