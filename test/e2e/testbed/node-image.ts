// The podman runtime's Node image for the end-to-end test, built offline: the testbed's Node 24 binary (the major of
// the documented ubi9/nodejs-24-minimal: testbed/node-runtime.ts) and the libraries it loads, plus chroot and sh, in
// one uncompressed OCI layer, laid out as a registry serves it
// (blobs by digest, a tag naming the manifest). Like ubi9/nodejs-24-minimal it has no systemd-notify, runs as
// uid 1001 and works in /opt/app-root/src; the launcher overrides the user. stand-ins/registry.cjs serves it on
// the node, so `sno-reconfigure-podman prepare` pulls it the way a factory pulls from its registry mirror.
// Its PATH has no sbin directories (ubi's has): the launcher must set the PATH host tools are found with.
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, createReadStream, mkdirSync, mkdtempSync, realpathSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerDir, unregisterDir, TEMP_PREFIX } from './cleanup';
import { runOk } from './proc';
import { testbedNodeBinary } from './node-runtime';

export interface NodeImage {
  /** Host directory the registry stand-in serves: blobs/sha256/<hex>, tags/<tag>. */
  dir: string;
  /** Repository path within the registry, e.g. sno/nodejs-24-minimal. */
  repository: string;
  tag: string;
  /** sha256:<hex> of the manifest: what NAME@DIGEST pins. */
  digest: string;
  /** The image ID podman reports: the config's sha256 (hex). */
  id: string;
}

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Libraries a binary loads, as ldd names them (the dynamic loader included). */
async function libraries(binary: string): Promise<string[]> {
  const out = await runOk(['ldd', binary]);
  return out.split('\n').flatMap((line) => {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    return m?.[1] ? [m[1]] : [];
  });
}

let built: Promise<NodeImage> | undefined;

/** The image, built once per test process (about 100 MB, a few seconds). */
export function nodeImage(): Promise<NodeImage> {
  built ??= buildNodeImage();
  return built;
}

/** Deletes the built image (after the machines that bound it are gone). */
export async function removeNodeImage(): Promise<void> {
  const image = await built?.catch(() => undefined);
  built = undefined;
  if (!image) return;
  await runOk(['rm', '-rf', '--one-file-system', image.dir], { timeoutMs: 60_000 });
  unregisterDir(image.dir);
}

async function buildNodeImage(): Promise<NodeImage> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${TEMP_PREFIX}${process.pid}-image-`));
  registerDir(dir);
  const rootfs = path.join(dir, 'rootfs');
  mkdirSync(path.join(rootfs, 'usr/bin'), { recursive: true });
  // merged /usr, as in UBI
  for (const d of ['bin', 'lib', 'lib64']) {
    mkdirSync(path.join(rootfs, 'usr', d), { recursive: true });
    symlinkSync(`usr/${d}`, path.join(rootfs, d));
  }
  const tools = { node: await testbedNodeBinary(), chroot: realpathSync((await runOk(['bash', '-c', 'command -v chroot'])).trim()), sh: realpathSync('/bin/sh') };
  const libs = new Set<string>();
  for (const [name, binary] of Object.entries(tools)) {
    copyFileSync(binary, path.join(rootfs, 'usr/bin', name));
    chmodSync(path.join(rootfs, 'usr/bin', name), 0o755);
    for (const lib of await libraries(binary)) libs.add(lib);
  }
  for (const lib of libs) {
    mkdirSync(path.dirname(path.join(rootfs, lib)), { recursive: true });
    copyFileSync(realpathSync(lib), path.join(rootfs, lib));
  }
  mkdirSync(path.join(rootfs, 'etc'));
  writeFileSync(path.join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\ndefault:x:1001:0:Default Application User:/opt/app-root/src:/sbin/nologin\n');
  writeFileSync(path.join(rootfs, 'etc/group'), 'root:x:0:\n');
  mkdirSync(path.join(rootfs, 'opt/app-root/src'), { recursive: true });
  mkdirSync(path.join(rootfs, 'tmp'));
  chmodSync(path.join(rootfs, 'tmp'), 0o1777);

  const blobs = path.join(dir, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  const layer = path.join(dir, 'layer.tar');
  await runOk(['tar', '-C', rootfs, '--numeric-owner', '--owner=0', '--group=0', '--mtime=@0', '--sort=name', '-cf', layer, '.'], { timeoutMs: 120_000 });
  await runOk(['rm', '-rf', '--one-file-system', rootfs], { timeoutMs: 60_000 });
  const layerHex = await sha256OfFile(layer);
  const layerSize = statSync(layer).size;
  renameSync(layer, path.join(blobs, layerHex));

  const blob = (text: string) => {
    const hex = createHash('sha256').update(text).digest('hex');
    writeFileSync(path.join(blobs, hex), text);
    return { hex, size: Buffer.byteLength(text) };
  };
  const config = blob(
    JSON.stringify({
      architecture: process.arch === 'x64' ? 'amd64' : process.arch,
      os: 'linux',
      config: { Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/opt/app-root/src'], User: '1001', WorkingDir: '/opt/app-root/src', Cmd: ['node'] },
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerHex}`] },
    }),
  );
  const manifest = blob(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${config.hex}`, size: config.size },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: `sha256:${layerHex}`, size: layerSize }],
    }),
  );
  const tag = '24-minimal';
  mkdirSync(path.join(dir, 'tags'));
  writeFileSync(path.join(dir, 'tags', tag), `sha256:${manifest.hex}`);
  return { dir, repository: 'sno/nodejs-24-minimal', tag, digest: `sha256:${manifest.hex}`, id: config.hex };
}
