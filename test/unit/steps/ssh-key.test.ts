// The pure parts of spec.ssh: key-line checks, the installer's multi-line key entries, replace and keep.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { desiredKeys, keyLines } from '../../../src/steps/ssh-key';
import { selectorQuery } from '../../../src/steps/rollouts';
import { parseLabelSelector } from '../../sim/apiserver/selectors';
import { distinctKeys, sshPublicKeyProblem } from '../../../src/siteconfig/ssh-keys';

/** An OpenSSH ed25519 public key line, built from a real key (RFC 8709: string "ssh-ed25519", string key). */
function ed25519Line(comment: string): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(raw)]).toString('base64')} ${comment}`;
}

test('key lines: a real key passes; wrong type, options, truncation and private keys are named', () => {
  const key = ed25519Line('ops@example.com');
  assert.equal(sshPublicKeyProblem(key), undefined);
  assert.equal(sshPublicKeyProblem(key.replace('ops@example.com', '')), undefined, 'the comment is optional');
  const rows: [string, RegExp][] = [
    [key.replace(/^ssh-ed25519/, 'ssh-rsa'), /says 'ssh-rsa' but holds a key of type 'ssh-ed25519'/],
    [`command="/bin/true" ${key}`, /has options before the key type/],
    ['ssh-ed25519 AAAA', /is not a complete ssh-ed25519 key/],
    ['ssh-ed25519 not*base64', /is not a complete ssh-ed25519 key/],
    ['-----BEGIN OPENSSH PRIVATE KEY-----', /is a PRIVATE key/],
    ['ssh-dss AAAAB3NzaC1kc3M=', /does not start with an SSH public key type/],
  ];
  for (const [line, message] of rows) assert.match(sshPublicKeyProblem(line) ?? '', message, line);
});

test('a key whose embedded type is damaged is named with its bytes escaped, never as raw bytes', () => {
  // "ssh-r" then two bytes that are not text, as a mangled copy leaves them; then a backslash and the rest.
  const blob = Buffer.concat([Buffer.from([0, 0, 0, 9]), Buffer.from('ssh-r'), Buffer.from([0xd4, 0xb2, 0x5c, 0x00]), Buffer.alloc(20, 1)]);
  const problem = sshPublicKeyProblem(`ssh-rsa ${blob.toString('base64')} ops@example.com`) ?? '';
  assert.ok(problem.includes("holds a key of type 'ssh-r\\xd4\\xb2\\x5c\\x00'"), problem);
  assert.match(problem, /^[\x20-\x7e]*$/, 'printable ASCII only');
});

test("the installer's one entry with several lines counts as several keys; comments and blank lines are not keys", () => {
  const [a, b] = [ed25519Line('a'), ed25519Line('b')];
  assert.deepEqual(keyLines([`${a}\n${b}\n`, '# comment', '']), [a, b]);
  assert.deepEqual(keyLines(undefined), []);
  // Another MachineConfig's passwd is read too, whatever shape it has (the eighteenth hostile re-test: a crash).
  assert.deepEqual(keyLines(a as never), []);
  assert.deepEqual(keyLines([5, null, a] as never), [a]);
});

test("replace keeps only the site keys; keep adds them after the factory's; a key is never there twice", () => {
  const [factory, site, other] = [ed25519Line('factory'), ed25519Line('site'), ed25519Line('other')];
  assert.deepEqual(desiredKeys([factory], [site, other], 'replace'), [site, other]);
  assert.deepEqual(desiredKeys([factory], [site], 'keep'), [factory, site]);
  assert.deepEqual(desiredKeys([factory, site], [site], 'keep'), [factory, site]);
  // The same key with another comment is the same key.
  assert.deepEqual(distinctKeys([site, site.replace(/ site$/, ' renamed')]), [site]);
});

// The MachineConfigs the pool merges are the ones its machineConfigSelector selects, role label or not (the seventeenth
// hostile re-test of issue 36, Q3): the selector goes to the API as its query, every operator of a LabelSelector kept.
test("a pool's machineConfigSelector becomes the API's label query, each operator kept", () => {
  const role = 'machineconfiguration.openshift.io/role';
  assert.equal(selectorQuery({ matchLabels: { [role]: 'master' } }), `${role}=master`);
  const query = selectorQuery({ matchExpressions: [{ key: role, operator: 'In', values: ['master', 'store'] }, { key: 'tier', operator: 'NotIn', values: ['lab'] }, { key: 'site', operator: 'Exists' }, { key: 'lab', operator: 'DoesNotExist' }] });
  assert.equal(query, `${role} in (master,store),tier notin (lab),site,!lab`);
  const selects = parseLabelSelector(query);
  const mc = (labels: Record<string, string>) => ({ metadata: { name: 'x', labels } });
  assert.equal(selects(mc({ [role]: 'store', site: 'a' })), true);
  assert.equal(selects(mc({ [role]: 'master', site: 'a', lab: 'y' })), false);
  assert.equal(selects(mc({ [role]: 'worker', site: 'a' })), false);
  assert.equal(selectorQuery({}), '', 'an empty selector selects every MachineConfig');
});
