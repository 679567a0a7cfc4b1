// Every input file of the node is untrusted too (issue 36): a damaged node key or journal gives a sentence on
// the console and in `status`, through the shipped bundle — never a stack trace, never an exit that systemd
// restarts into the same damaged file for ever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BANNER_PATH, DEFAULT_STATE_DIR, NODE_KEY_FILE } from '../../../src/paths';
import { generateNodeKeyPair, sealFile } from '../../../src/siteconfig/sealed';
import { ensureBundle } from '../../support/bundle';
import { signedMedia } from '../../support/signed-media';
import { signedSiteConfigFiles, siteConfigFor, startScenario } from '../../support/scenario';
import { recordRenamedIn } from '../../support/drop-dir';

const node = generateNodeKeyPair();
const DAMAGED_KEY = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n';
const SITE = `apiVersion: sno-reconfigure.io/v1
kind: SiteConfig
metadata: {name: store-0042}
spec:
  baseDomain: store42.example.com
  pullSecretFile: pull-secret.json
`;

function write(file: string, data: string | Buffer): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
}

/** lsblk and blkid that see no block device: a labelled loop device of another test on this machine is not ours. */
const NO_DEVICES = (() => {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'sno-no-devices-'));
  write(path.join(bin, 'lsblk'), '#!/bin/sh\necho \'{"blockdevices":[]}\'\n');
  write(path.join(bin, 'blkid'), '#!/bin/sh\nexit 2\n');
  chmodSync(path.join(bin, 'lsblk'), 0o755);
  chmodSync(path.join(bin, 'blkid'), 0o755);
  return bin;
})();

function cli(args: string[]): { code: number; out: string } {
  const res = spawnSync(process.execPath, [ensureBundle(), ...args], { encoding: 'utf8', timeout: 60_000, env: { PATH: `${NO_DEVICES}:${process.env.PATH ?? '/usr/bin:/bin'}` } });
  return { code: res.status ?? 1, out: `${res.stdout}${res.stderr}` };
}


/** A site-config whose pull secret is sealed to `node`, in `dir`, written a minute ago (a settled drop directory). */
function sealedSiteConfig(dir: string): void {
  write(path.join(dir, 'site-config.yaml'), SITE);
  write(path.join(dir, 'pull-secret.json.sealed'), sealFile(Buffer.from('{"auths":{}}'), 'pull-secret.json', node.publicKeyPem));
  const past = new Date(Date.now() - 60_000);
  for (const f of ['site-config.yaml', 'pull-secret.json.sealed']) utimesSync(path.join(dir, f), past, past);
}

const assertNoTrace = (out: string) => {
  assert.doesNotMatch(out, /internal error|\n\s+at .*\(|DECODER routines|Unexpected end of JSON/, out);
};

test('a damaged node key: validate and run say so in a sentence, the banner and status show it, no stack trace', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-damaged-key-'));
  try {
    write(path.join(root, NODE_KEY_FILE), DAMAGED_KEY);
    const media = path.join(root, 'media');
    sealedSiteConfig(media);
    const validate = cli(['validate', media, '--this-machine', '--root', root]);
    assert.equal(validate.code, 1, validate.out);
    assertNoTrace(validate.out);
    assert.match(validate.out, /spec\.pullSecretFile: 'pull-secret\.json\.sealed' cannot be opened: this node's own key for sealed files \(node-key\.pem, made by sno-reconfigure prepare at the factory\) is damaged/);

    const drop = path.join(root, 'etc/sno-reconfigure/site-config.d');
    sealedSiteConfig(drop);
    recordRenamedIn(root, ['site-config.yaml', 'pull-secret.json.sealed']);
    const run = cli(['run', '--root', root, '--once']);
    assert.equal(run.code, 1, run.out);
    assertNoTrace(run.out);
    assert.match(run.out, /the site-config on the drop directory \S+ is invalid — nothing was changed/);
    const banner = readFileSync(path.join(root, BANNER_PATH), 'utf8');
    assert.match(banner, /ACTION NEEDED|is invalid/);
    assert.match(banner.replace(/\s+/g, ' '), /node's own key for sealed files .* is damaged/);
    assert.doesNotMatch(banner, /waiting for the site-config/);
    const status = cli(['status', '--root', root]);
    assert.equal(status.code, 1, status.out);
    assert.match(status.out, /node's own key for sealed files \(node-key\.pem, made by sno-reconfigure prepare at the factory\) is damaged/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a damaged journal: status says so in a sentence; run keeps a copy, starts a new journal and says so on the banner and in status', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-damaged-journal-'));
  try {
    const journal = path.join(root, DEFAULT_STATE_DIR, 'journal.json');
    write(journal, '{"version":1,"steps":');
    const before = cli(['status', '--root', root]);
    assert.equal(before.code, 1, before.out);
    assertNoTrace(before.out);
    assert.match(before.out, /the agent's journal \/var\/lib\/sno-reconfigure\/journal\.json is damaged \(it is not complete JSON\), so the progress it recorded cannot be read\. The agent keeps a copy of it and starts a new journal at its next start/);

    const run = cli(['run', '--root', root, '--once']);
    assertNoTrace(run.out);
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /a copy was kept as journal\.json\.corrupt and a new journal started/);
    assert.equal(readFileSync(`${journal}.corrupt`, 'utf8'), '{"version":1,"steps":');
    assert.match(readFileSync(path.join(root, BANNER_PATH), 'utf8').replace(/\s+/g, ' '), /Note: the agent's journal \S+ is damaged/);

    // The next start (systemd's restart) reads the new journal: no loop on the damaged file.
    const after = cli(['status', '--root', root]);
    assert.match(after.out, /Warnings:\n {2}- the agent's journal \S+ is damaged \(it is not complete JSON\)/);
    const again = cli(['run', '--root', root, '--once']);
    assert.equal(again.code, 0, again.out);
    assert.doesNotMatch(again.out, /is damaged/);
    assert.ok(existsSync(journal));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a journal of the wrong shape (valid JSON, not a journal) is damaged too, not an internal error', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-damaged-journal-'));
  try {
    write(path.join(root, DEFAULT_STATE_DIR, 'journal.json'), '{"version":1,"steps":{},"facts":null}');
    const status = cli(['status', '--root', root]);
    assert.equal(status.code, 1);
    assert.match(status.out, /is damaged \(it is not a journal of this agent version\)/);
    const run = cli(['run', '--root', root, '--once']);
    assertNoTrace(run.out);
    assert.equal(run.code, 0, run.out);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// Issue 36, finding 2 and C3: a truncated record once read as "none" (older signed media were taken again), and a
// folder in its place crashed the run with EISDIR.
test('a damaged or misplaced last-issued.json refuses signed media in a sentence, on the banner and in status, never a crash', () => {
  for (const [what, damage, said] of [
    ['truncated', (f: string) => write(f, '{"issued": "2026-11-20T00:00:00Z"'), 'is damaged (it is not complete JSON)'],
    ['a folder', (f: string) => mkdirSync(f, { recursive: true }), 'is a folder, not a file'],
  ] as const) {
    const root = mkdtempSync(path.join(os.tmpdir(), 'sno-damaged-last-issued-'));
    try {
      damage(path.join(root, DEFAULT_STATE_DIR, 'last-issued.json'));
      const drop = path.join(root, 'etc/sno-reconfigure/site-config.d');
      const files = signedMedia(root, { 'site-config.yaml': 'apiVersion: sno-reconfigure.io/v1\nkind: SiteConfig\nmetadata: {name: store-0042}\nspec:\n  baseDomain: store42.example.com\n' }, [], { issued: '2026-10-01T00:00:00Z' });
      const past = new Date(Date.now() - 60_000);
      for (const [name, text] of Object.entries(files)) {
        write(path.join(drop, name), text);
        utimesSync(path.join(drop, name), past, past);
      }
      const sentence = `metadata.issued: cannot be checked: this node's record of the last signed config it took (last-issued.json in its state directory) ${said}, so the node cannot tell whether these media are older than that config and takes no signed media: call the office`;
      const run = cli(['run', '--root', root, '--once']);
      assert.equal(run.code, 1, `${what}: ${run.out}`);
      assertNoTrace(run.out);
      assert.ok(run.out.includes(sentence), `${what}: ${run.out}`);
      assert.ok(readFileSync(path.join(root, BANNER_PATH), 'utf8').replace(/\s+/g, ' ').includes(`record of the last signed config it took (last-issued.json in its state directory) ${said}`), what);
      const status = cli(['status', '--root', root]);
      assert.ok(status.out.replace(/\s+/g, ' ').includes(`record of the last signed config it took (last-issued.json in its state directory) ${said}`), `${what}: ${status.out}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

// Issue 36, C1: a folder where the journal belongs crashed every start (EISDIR writing the new journal) after
// saying a copy was kept; it is moved aside as the copy, and the next start is clean.
test('a folder where the journal belongs is moved aside as its copy: a sentence, a new journal, no crash loop', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-journal-dir-'));
  try {
    const journal = path.join(root, DEFAULT_STATE_DIR, 'journal.json');
    mkdirSync(journal, { recursive: true });
    const before = cli(['status', '--root', root]);
    assertNoTrace(before.out);
    assert.match(before.out, /the agent's journal \/var\/lib\/sno-reconfigure\/journal\.json is damaged \(it is a folder, not a file\)/);
    const run = cli(['run', '--root', root, '--once']);
    assertNoTrace(run.out);
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /is damaged \(it is a folder, not a file\), so the progress it recorded cannot be read; a copy was kept as journal\.json\.corrupt and a new journal started/);
    assert.ok(statSync(`${journal}.corrupt`).isDirectory(), 'the folder was kept aside');
    assert.ok(statSync(journal).isFile(), 'a new journal was written');
    const again = cli(['run', '--root', root, '--once']);
    assert.equal(again.code, 0, again.out);
    assert.doesNotMatch(again.out, /is damaged/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// Issue 36, C2 and C5: a file where the state directory or the drop directory belongs was an "internal error"
// (EEXIST) at every start; now a sentence and exit 1 (systemd starts the agent again after RestartSec=), and the
// next start after the file is moved aside goes on.
test('a file where the state directory or the drop directory belongs: a sentence (journal, console, status) and exit 1, then a clean start once moved aside', () => {
  for (const [dir, said] of [
    [DEFAULT_STATE_DIR, "the agent's state directory /var/lib/sno-reconfigure is a file, not a folder: the agent can keep no record of its work, so it changes nothing"],
    ['/etc/sno-reconfigure/site-config.d', 'the drop directory /etc/sno-reconfigure/site-config.d is a file, not a folder: no site-config can be dropped there, so the agent does not start'],
  ] as const) {
    const root = mkdtempSync(path.join(os.tmpdir(), 'sno-dir-is-file-'));
    try {
      write(path.join(root, dir), 'x');
      const run = cli(['run', '--root', root, '--once']);
      assertNoTrace(run.out);
      assert.equal(run.code, 1, run.out);
      assert.ok(run.out.includes(said), run.out);
      assert.ok(run.out.includes(`What to do: Move it aside (mv ${dir} ${dir}.bad)`), run.out);
      // The technician's two screens say the same (the agent stops before it has a journal).
      const banner = readFileSync(path.join(root, BANNER_PATH), 'utf8').replace(/\s+/g, ' ');
      assert.ok(banner.includes(said), banner);
      assert.ok(banner.includes(`What to do: Move it aside (mv ${dir} ${dir}.bad)`), banner);
      const status = cli(['status', '--root', root]);
      assert.equal(status.code, 1, status.out);
      assertNoTrace(status.out);
      assert.ok(status.out.includes(said), status.out);
      assert.doesNotMatch(status.out, /journal/, 'not "the journal is damaged": a restart does not fix this');
      renameSync(path.join(root, dir), path.join(root, `${dir}.bad`));
      const again = cli(['run', '--root', root, '--once']);
      assert.equal(again.code, 0, again.out);
      assertNoTrace(again.out);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

// The hostile re-test of issue 36 (C2): a named pipe where the journal, the node key or a trusted key belongs made
// run, status and validate wait for a writer for ever (SIGTERM unheard). Each now answers at once, in a sentence.
test('a named pipe where the journal, the node key or a trusted key belongs: run, status and validate answer at once, in a sentence', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-fifo-'));
  try {
    const journal = path.join(root, DEFAULT_STATE_DIR, 'journal.json');
    mkdirSync(path.dirname(journal), { recursive: true });
    spawnSync('mkfifo', [journal]);
    const status = cli(['status', '--root', root]);
    assertNoTrace(status.out);
    assert.match(status.out, /the agent's journal \/var\/lib\/sno-reconfigure\/journal\.json is damaged \(it is a named pipe \(FIFO\), not a file\)/);
    const run = cli(['run', '--root', root, '--once']);
    assertNoTrace(run.out);
    assert.equal(run.code, 0, run.out);
    assert.match(run.out, /is damaged \(it is a named pipe \(FIFO\), not a file\), so the progress it recorded cannot be read; a copy was kept as journal\.json\.corrupt/);

    mkdirSync(path.dirname(path.join(root, NODE_KEY_FILE)), { recursive: true });
    spawnSync('mkfifo', [path.join(root, NODE_KEY_FILE)]);
    const media = path.join(root, 'media');
    sealedSiteConfig(media);
    const sealed = cli(['validate', media, '--this-machine', '--root', root]);
    assert.equal(sealed.code, 1, sealed.out);
    assertNoTrace(sealed.out);
    assert.match(sealed.out, /spec\.pullSecretFile: 'pull-secret\.json\.sealed' cannot be opened: this node's own key for sealed files \(node-key\.pem, made by sno-reconfigure prepare at the factory\) cannot be read \(it is a named pipe \(FIFO\), not a file\)/);

    const trustedDir = path.join(root, 'etc/sno-reconfigure/trusted-keys');
    mkdirSync(trustedDir, { recursive: true });
    spawnSync('mkfifo', [path.join(trustedDir, 'zz.pem')]);
    const trusted = cli(['validate', media, '--this-machine', '--root', root]);
    assert.equal(trusted.code, 1, trusted.out);
    assertNoTrace(trusted.out);
    assert.match(trusted.out, /zz\.pem: trusted key cannot be read/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// The hostile re-test of issue 36 (C1): a folder where one of the agent's records belongs (or a file where its
// backups folder does), met in the middle of a run, was an "internal error" at every restart.
test('a folder where a record of the agent belongs, or a file where its backups folder belongs: the run stops in a sentence naming it, with the way out, on the banner and in status', async () => {
  for (const [setUp, said] of [
    [(state: string) => mkdirSync(path.join(state, 'rollouts.json', 'x'), { recursive: true }), '/var/lib/sno-reconfigure/rollouts.json is a folder where the agent needs a file, so the agent stopped there'],
    [(state: string) => write(path.join(state, 'backups'), 'x'), '/var/lib/sno-reconfigure/backups is a file where the agent needs a folder, so the agent stopped there'],
  ] as const) {
    const s = await startScenario();
    try {
      setUp(path.join(s.node.root, DEFAULT_STATE_DIR));
      s.node.attachVolume('sdb1', 'SITE-CONFIG', signedSiteConfigFiles(s.node.root, { 'site-config.yaml': siteConfigFor(s.sim, { extraSpec: { timeouts: { settleStability: '2s' } } }) }));
      const res = await s.run(['--once'], { timeoutMs: 10 * 60_000 });
      assert.equal(res.code, 1, res.stdout.slice(-3000));
      assertNoTrace(`${res.stdout}${res.stderr}`);
      const failure = res.logs.find((l) => l.level === 'error' && String(l.msg).includes(said));
      assert.ok(failure, res.stdout.slice(-3000));
      const remedy = `Move it aside (mv ${said.split(' ')[0]} ${said.split(' ')[0]}.bad)`;
      assert.ok(readFileSync(path.join(s.node.root, BANNER_PATH), 'utf8').replace(/\s+/g, ' ').includes(remedy));
      const status = cli(['status', '--root', s.node.root]);
      assertNoTrace(status.out);
      assert.ok(status.out.includes(said), status.out);
    } finally {
      await s.cleanup();
    }
  }
});

// The tenth hostile re-test of issue 36 (C1, C2): `null`, a named pipe, a folder or a field of the wrong type in the
// factory's record stopped run and plan with an internal error at every start.
test('a damaged factory record (baseline.json): run and plan say so in a sentence and go on without it, no stack trace', () => {
  const damages: [string, (file: string) => void][] = [
    ['null', (f) => write(f, 'null')],
    ['not JSON', (f) => write(f, '{"clusterName": "sno1"')],
    ['a named pipe', (f) => { mkdirSync(path.dirname(f), { recursive: true }); spawnSync('mkfifo', [f]); }],
    ['a folder', (f) => mkdirSync(f, { recursive: true })],
    ['internal addresses of the wrong type', (f) => write(f, '{"internalAddresses": {"a": 1}}')],
    ['a cluster name of the wrong type', (f) => write(f, '{"clusterName": ["a"]}')],
  ];
  const why: Record<string, string> = {
    null: 'it holds no record of the node',
    'not JSON': 'it is not complete JSON',
    'a named pipe': 'it is a named pipe (FIFO), not a file',
    'a folder': 'it is a folder, not a file',
    'internal addresses of the wrong type': 'its internalAddresses is not what prepare writes',
    'a cluster name of the wrong type': 'its clusterName is not what prepare writes',
  };
  for (const [name, damage] of damages) {
    const root = mkdtempSync(path.join(os.tmpdir(), 'sno-baseline-'));
    try {
      damage(path.join(root, 'etc/sno-reconfigure/baseline.json'));
      const run = cli(['run', '--root', root, '--once']);
      assertNoTrace(run.out);
      assert.equal(run.code, 0, `${name}: ${run.out}`);
      assert.ok(run.out.includes(`the factory's record of this node (baseline.json) cannot be used: ${why[name]}. The agent goes on without it`), `${name}: ${run.out}`);
      const media = path.join(root, 'media');
      write(path.join(media, 'site-config.yaml'), SITE);
      write(path.join(media, 'pull-secret.json'), '{"auths":{"registry.store42.example.com":{"auth":"dTpw"}}}');
      const plan = cli(['plan', media, '--root', root]);
      assertNoTrace(plan.out);
      assert.ok(plan.out.includes(`cannot be used: ${why[name]}`), `${name}: ${plan.out}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

// The thirteenth hostile re-test of issue 36 (N3): on a node reconfigured already (its done marker there), a file where
// the state directory belongs was an internal error: the journal was opened before the agent's folders were looked at.
test('a file where the state directory belongs on a node reconfigured already: the same sentence, no stack trace', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sno-done-state-'));
  try {
    write(path.join(root, 'etc/sno-reconfigure/done'), JSON.stringify({ finishedAt: '2026-11-27T00:00:00Z', siteConfig: 'store-0042', digest: 'a'.repeat(64) }));
    write(path.join(root, DEFAULT_STATE_DIR), 'not a folder');
    const run = cli(['run', '--root', root, '--once']);
    assertNoTrace(run.out);
    assert.equal(run.code, 1, run.out);
    assert.match(run.out, /the agent's state directory \/var\/lib\/sno-reconfigure is a file, not a folder: the agent can keep no record of its work, so it changes nothing/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
