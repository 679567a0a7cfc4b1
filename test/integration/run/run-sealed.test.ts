// Secrets on the media sealed to the node (issue 19), through the shipped bundle: `seal` on a workstation,
// `validate` telling who a sealed file is for without a key, `validate --this-machine` and `run` opening it with
// the node's key (prepare made it) — and refusing another node's file, a damaged one, or a clear copy beside
// it. The secret itself never appears in any output, report, status or state file.
import { parse, stringify } from 'yaml';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { R } from '../../../src/cluster/resources';
import { NODE_KEY_FILE } from '../../../src/paths';
import { generateNodeKeyPair, sealFile } from '../../../src/siteconfig/sealed';
import { BUNDLE_PATH, ensureBundle } from '../../support/bundle';
import { demoSiteConfigFiles, startScenario } from '../../support/scenario';

const AUTH_USER_PASSWORD = 'store42:s3cr3t-demo';
const node = generateNodeKeyPair();
const other = generateNodeKeyPair();

function cli(args: string[], cwd?: string): { code: number; out: string } {
  const res = spawnSync(process.execPath, [ensureBundle(), ...args], { encoding: 'utf8', ...(cwd ? { cwd } : {}), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  return { code: res.status ?? 1, out: `${res.stdout}${res.stderr}` };
}

function writeTree(dir: string, files: Record<string, string | Buffer>): void {
  for (const [name, data] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), data);
  }
}

/** A node root holding `key` as the node key (or none). */
function nodeRoot(key?: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-sealed-root-'));
  if (key) writeTree(root, { [NODE_KEY_FILE.slice(1)]: key });
  return root;
}

const SITE = `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata: {name: store-0042}
spec:
  baseDomain: store42.example.com
  pullSecretFile: pull-secret.json
`;
const PULL_SECRET = JSON.stringify({ auths: { 'registry.store42.example.com:8443': { auth: Buffer.from(AUTH_USER_PASSWORD).toString('base64') } } });

test('seal on a workstation, validate without a key says who it is for; --this-machine opens it with the node key', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sno-sealed-'));
  try {
    writeTree(dir, { 'site-config.yaml': SITE, 'pull-secret.json': PULL_SECRET, 'node.pub.pem': node.publicKeyPem });
    const sealed = cli(['seal', '--to', 'node.pub.pem', '--label', 'store-0042 node', 'pull-secret.json'], dir);
    assert.equal(sealed.code, 0, sealed.out);
    assert.equal(sealed.out, `pull-secret.json.sealed: sealed as pull-secret.json for node ${node.fingerprint} (store-0042 node); remove pull-secret.json from the media\n`);

    // Both on the media: ambiguous, refused.
    const both = cli(['validate', dir]);
    assert.equal(both.code, 1);
    assert.match(both.out, /spec\.pullSecretFile: both 'pull-secret\.json' and 'pull-secret\.json\.sealed' are on the media: keep only one of them/);
    rmSync(path.join(dir, 'pull-secret.json'));

    const workstation = cli(['validate', dir, '--json']);
    assert.equal(workstation.code, 0, workstation.out);
    const report = JSON.parse(workstation.out) as { valid: boolean; warnings: { path: string; message: string }[]; notes: { path: string; message: string }[] };
    // Who a sealed file is for is information, not a warning: a clean batch reads clean (issue 30).
    assert.ok(report.notes.some((w) => w.path === 'spec.pullSecretFile' && w.message === `'pull-secret.json.sealed' is encrypted for node ${node.fingerprint} (store-0042 node); its content is checked on that node`), workstation.out);
    assert.ok(!report.warnings.some((w) => w.path === 'spec.pullSecretFile'), workstation.out);

    const onNode = cli(['validate', dir, '--this-machine', '--root', nodeRoot(node.privateKeyPem)]);
    assert.equal(onNode.code, 0, onNode.out);
    const otherNode = cli(['validate', dir, '--this-machine', '--root', nodeRoot(other.privateKeyPem)]);
    assert.equal(otherNode.code, 1);
    assert.ok(otherNode.out.includes(`spec.pullSecretFile: 'pull-secret.json.sealed' is sealed for the node key ${node.fingerprint} (store-0042 node), and this node's key is ${other.fingerprint}: it was made for another node`), otherNode.out);
    const noKey = cli(['validate', dir, '--this-machine', '--root', nodeRoot()]);
    assert.equal(noKey.code, 1);
    assert.match(noKey.out, /is encrypted for node SHA256:\S+ \(store-0042 node\), and this node has no key of its own: run sno-reconfigure prepare at the factory/);

    // What is sealed is validated like a clear file once opened: a broken pull secret is found on the node.
    writeFileSync(path.join(dir, 'pull-secret.json.sealed'), sealFile(Buffer.from('{"auths": 5}'), 'pull-secret.json', node.publicKeyPem));
    const broken = cli(['validate', dir, '--this-machine', '--root', nodeRoot(node.privateKeyPem)]);
    assert.equal(broken.code, 1);
    assert.match(broken.out, /spec\.pullSecret/);
    // A damaged container is refused.
    const text = readFileSync(path.join(dir, 'pull-secret.json.sealed'), 'utf8').replace(/"ciphertext": "(.)/, (_, c: string) => `"ciphertext": "${c === 'A' ? 'B' : 'A'}`);
    writeFileSync(path.join(dir, 'pull-secret.json.sealed'), text);
    assert.match(cli(['validate', dir, '--this-machine', '--root', nodeRoot(node.privateKeyPem)]).out, /could not be opened with this node's key: it was changed after it was sealed/);
    for (const out of [sealed.out, both.out, workstation.out, onNode.out, otherNode.out, noKey.out, broken.out]) assert.ok(!out.includes(AUTH_USER_PASSWORD) && !out.includes(Buffer.from(AUTH_USER_PASSWORD).toString('base64')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run with the pull secret sealed to the node applies it, and the secret reaches no output, report, status or state file', async () => {
  const s = await startScenario();
  try {
    writeTree(s.node.root, { [NODE_KEY_FILE.slice(1)]: node.privateKeyPem });
    // Unsigned media: the demo's tag mirrors and registry CA need signed media (src/siteconfig/trust.ts), so they are left out.
    const files: Record<string, string | Buffer> = demoSiteConfigFiles(s.sim);
    const doc = parse(files['site-config.yaml'] as string) as { spec: Record<string, unknown> };
    delete doc.spec.imageTagMirrors;
    delete doc.spec.additionalTrustBundleFile;
    files['site-config.yaml'] = stringify(doc);
    delete files['registry-ca.pem'];
    const clear = files['pull-secret.json'] as string;
    assert.ok(clear.includes(Buffer.from(AUTH_USER_PASSWORD).toString('base64')), 'the demo pull secret carries the auth the test looks for');
    delete files['pull-secret.json'];
    files['pull-secret.json.sealed'] = sealFile(Buffer.from(clear), 'pull-secret.json', node.publicKeyPem);
    s.node.attachVolume('sdb1', 'SITE-CONFIG', files);
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));

    const secret = s.sim.store.get(R.secrets, 'pull-secret', 'openshift-config') as { data: Record<string, string> };
    const applied = Buffer.from(secret.data['.dockerconfigjson']!, 'base64').toString();
    assert.ok(applied.includes('registry.store42.example.com:8443'), 'the sealed pull secret was merged into the cluster');

    const needles = [AUTH_USER_PASSWORD, Buffer.from(AUTH_USER_PASSWORD).toString('base64')];
    const status = execFileSync(process.execPath, [BUNDLE_PATH, 'status', '--json', '--root', s.node.root], { encoding: 'utf8' });
    const stateDir = path.join(s.node.root, 'var/lib/sno-reconfigure');
    const stateFiles = (function walk(dir: string): string[] {
      return readdirSync(dir).flatMap((n) => (statSync(path.join(dir, n)).isDirectory() ? walk(path.join(dir, n)) : [path.join(dir, n)]));
    })(stateDir);
    const texts = { stdout: res.stdout, stderr: res.stderr, status, banner: readFileSync(path.join(s.node.root, 'etc/issue.d/50-sno-reconfigure.issue'), 'utf8'), ...Object.fromEntries(stateFiles.map((f) => [path.relative(stateDir, f), readFileSync(f, 'latin1')])) };
    for (const [where, text] of Object.entries(texts)) for (const n of needles) assert.ok(!text.includes(n), `the secret is not in ${where}`);
    assert.ok(stateFiles.some((f) => f.endsWith('pull-secret.json.sealed')), 'the copy of record keeps the file sealed');
  } finally {
    await s.cleanup();
  }
});
