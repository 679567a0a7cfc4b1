// Every site-config under examples/ is valid for the shipped program: the bundled CLI (dist/sno-reconfigure.cjs)
// validates each one, the signed one the way a node holding the example's public key checks it, and the
// multi-node stick picks the right file for a machine. The signing and pinning commands the examples were made
// with (docs/factory-and-site.md) are re-run here and must give the committed signature and pins, so an edit
// that forgets to re-pin or re-sign fails here, not at a store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { bareBundleEnv, ensureBundle, PROJECT_ROOT } from '../support/bundle';

const EXAMPLES = path.join(PROJECT_ROOT, 'examples');
const SIGNED = path.join(EXAMPLES, 'signed-vlan-store');
const SIGNING_KEY = path.join(EXAMPLES, 'signing-key', 'EXAMPLE-site-signing.key.pem');
const PUBLIC_KEY = path.join(EXAMPLES, 'signing-key', 'EXAMPLE-site-signing.pub.pem');

interface Problem {
  path: string;
  message: string;
}

interface Report {
  valid: boolean;
  status: string;
  source: string;
  errors: Problem[];
  warnings: Problem[];
}

let bundle = '';
let scratch = '';

function validate(location: string, args: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bundle, 'validate', location, '--json', ...args], { encoding: 'utf8', timeout: 5 * 60_000, env: bareBundleEnv() }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      try {
        resolve({ code: err ? (err.code as number) : 0, report: JSON.parse(stdout) as Report, stderr });
      } catch (e) {
        reject(new Error(`validate printed no JSON report (stderr: ${stderr}): ${(e as Error).message}`));
      }
    });
  });
}

/** A host root as a machine sees it: its identity under sys/, and the trusted keys the factory installed. */
async function hostRoot(name: string, opts: { serial?: string; macs?: Record<string, string>; trustedKeys?: string[] } = {}): Promise<string> {
  const root = path.join(scratch, name);
  await fs.mkdir(path.join(root, 'sys/class/dmi/id'), { recursive: true });
  if (opts.serial !== undefined) await fs.writeFile(path.join(root, 'sys/class/dmi/id/product_serial'), `${opts.serial}\n`);
  for (const [iface, mac] of Object.entries(opts.macs ?? {})) {
    await fs.mkdir(path.join(root, 'sys/class/net', iface), { recursive: true });
    await fs.writeFile(path.join(root, 'sys/class/net', iface, 'address'), `${mac}\n`);
  }
  if (opts.trustedKeys) {
    const dir = path.join(root, 'etc/sno-reconfigure/trusted-keys');
    await fs.mkdir(dir, { recursive: true });
    for (const key of opts.trustedKeys) await fs.copyFile(key, path.join(dir, path.basename(key)));
  }
  return root;
}

/** The example folders that are media contents: a site-config.yaml, or a site-configs/ directory. */
function exampleFolders(): string[] {
  return readdirSync(EXAMPLES, { withFileTypes: true })
    .filter((e) => e.isDirectory() && (existsSync(path.join(EXAMPLES, e.name, 'site-config.yaml')) || existsSync(path.join(EXAMPLES, e.name, 'site-configs'))))
    .map((e) => e.name)
    .sort();
}

before(async () => {
  bundle = ensureBundle();
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'sno-examples-'));
});
after(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});

test('examples/ holds the site kinds the README promises', () => {
  assert.deepEqual(exampleFolders(), ['bond', 'dhcp', 'ipv6-dual-stack', 'mirrors-and-ca', 'multi-node-stick', 'signed-vlan-store', 'static-ip', 'vlan']);
});

describe('every example validates with the bundled CLI, without errors or warnings', { concurrency: 2 }, () => {
  for (const name of exampleFolders()) {
    test(name, async () => {
      const dir = path.join(EXAMPLES, name);
      // A workstation without trusted keys: a signed example's only remark is that its signature is not checked here.
      const { code, report, stderr } = await validate(dir, ['--root', await hostRoot(`plain-${name}`)]);
      assert.equal(stderr, '');
      assert.deepEqual(report.errors, []);
      const signed = existsSync(path.join(dir, 'site-config.yaml.sig'));
      const unexpected = report.warnings.filter((w) => !(signed && w.path === 'site-config.yaml.sig' && w.message.startsWith('not verified')));
      assert.deepEqual(unexpected, []);
      assert.equal(code, 0);
      assert.equal(report.valid, true);
    });
  }
});

describe('the signed example', () => {
  test('verifies on a node that holds the example public key, as every signed example does', async () => {
    const root = await hostRoot('trusting', { trustedKeys: [PUBLIC_KEY] });
    for (const dir of [SIGNED, path.join(EXAMPLES, 'mirrors-and-ca')]) {
      const { code, report } = await validate(dir, ['--root', root]);
      assert.deepEqual(report.errors, [], dir);
      assert.deepEqual(report.warnings, [], dir);
      assert.equal(code, 0, dir);
    }
  });

  test('is refused by that node after any edit, of the site-config or of a pinned file', async () => {
    const root = await hostRoot('trusting-edits', { trustedKeys: [PUBLIC_KEY] });
    const edits = [
      { file: 'site-config.yaml', refusedAt: 'site-config.yaml.sig', because: /does not verify site-config\.yaml/ },
      { file: 'network.yaml', refusedAt: 'spec.network.nmstateFile', because: /but spec\.sha256 pins/ },
    ];
    for (const edit of edits) {
      const copy = path.join(scratch, `edited-${edit.file}`);
      await fs.cp(SIGNED, copy, { recursive: true });
      await fs.appendFile(path.join(copy, edit.file), '# edited after signing\n');
      const { code, report } = await validate(copy, ['--root', root]);
      assert.equal(code, 1, edit.file);
      assert.deepEqual(report.errors.map((e) => e.path), [edit.refusedAt]);
      assert.match(report.errors[0]!.message, edit.because);
    }
  });

  test('its pins are sha256sum of the referenced files, and its signature is what the documented openssl command gives', () => {
    const doc = parse(readFileSync(path.join(SIGNED, 'site-config.yaml'), 'utf8')) as { spec: { sha256: Record<string, string> } };
    const pinned = Object.keys(doc.spec.sha256).sort();
    assert.deepEqual(pinned, ['network.yaml', 'pull-secret.json', 'registry-ca.crt']);
    const sums = execFileSync('sha256sum', pinned, { cwd: SIGNED, encoding: 'utf8' });
    for (const line of sums.trim().split('\n')) {
      const [digest, file] = line.split(/\s+/);
      assert.equal(doc.spec.sha256[file!], digest, `pin of ${file}`);
      assert.equal(digest, createHash('sha256').update(readFileSync(path.join(SIGNED, file!))).digest('hex'));
    }
    // Ed25519 signatures are deterministic (RFC 8032): signing the same bytes again gives the same signature.
    const signature = execFileSync('bash', ['-c', 'openssl pkeyutl -sign -rawin -inkey "$1" -in site-config.yaml | base64 -w0', 'sign', SIGNING_KEY], { cwd: SIGNED, encoding: 'utf8' });
    assert.equal(signature, readFileSync(path.join(SIGNED, 'site-config.yaml.sig'), 'utf8'));
  });
});

describe('the multi-node stick picks the file meant for the machine', () => {
  const cases: Array<{ machine: string; identity: { serial?: string; macs?: Record<string, string> }; picks: string }> = [
    { machine: 'serial number 7XK2M93', identity: { serial: '7XK2M93' }, picks: 'store-0421.yaml' },
    { machine: 'an interface with MAC B8:CA:3A:61:2F:40', identity: { serial: 'OTHER', macs: { eno1: 'B8:CA:3A:61:2F:40' } }, picks: 'store-0422.yaml' },
  ];
  for (const c of cases) {
    test(`${c.machine} → ${c.picks}`, async () => {
      const root = await hostRoot(`machine-${c.picks}`, c.identity);
      const { code, report } = await validate(path.join(EXAMPLES, 'multi-node-stick'), ['--this-machine', '--root', root]);
      assert.deepEqual(report.errors, []);
      assert.equal(code, 0);
      assert.equal(path.basename(report.source), c.picks);
    });
  }

  test('a machine none of the files is for is told so', async () => {
    const root = await hostRoot('machine-none', { serial: 'NOT-IN-THE-BATCH', macs: { eno1: '52:54:00:00:00:01' } });
    const { code, report } = await validate(path.join(EXAMPLES, 'multi-node-stick'), ['--this-machine', '--root', root]);
    assert.equal(code, 1);
    assert.equal(report.status, 'not-for-this-machine');
  });
});
