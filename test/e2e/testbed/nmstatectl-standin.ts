// The nmstatectl stand-ins a testbed node can carry (README "The nmstatectl stand-in"):
// - on a node with the real NetworkManager: stand-ins/nmstatectl-nm.cjs, nmstate 2.2's rules (stand-ins/nmstate-rules.cjs)
//   through NetworkManager's D-Bus API, its checkpoints NetworkManager's own;
// - on a node with the NetworkManager model (the older option, still what the agent's e2e scenarios boot): stand-ins/
//   nmstatectl.cjs on stand-ins/nm-model.cjs, installed by newDisk (rootfs.ts).
import { cpSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { installStandIn } from './rootfs';

/** Where the rules module and the yaml package the stand-in reads states with live on the node. */
export const NMSTATE_LIB_DIR = '/usr/local/lib/testbed-nmstate';

/** Installs the nmstatectl stand-in for the real NetworkManager on a node's disk (`root`: its `/` on the host). */
export function installNmstatectlOnRealNm(root: string): void {
  installStandIn(root, 'nmstate-rules.cjs', `${NMSTATE_LIB_DIR}/nmstate-rules.cjs`);
  const yamlPackage = path.dirname(createRequire(import.meta.url).resolve('yaml/package.json'));
  const target = path.join(root, NMSTATE_LIB_DIR, 'node_modules', 'yaml');
  mkdirSync(target, { recursive: true });
  for (const part of ['package.json', 'dist']) cpSync(path.join(yamlPackage, part), path.join(target, part), { recursive: true });
  installStandIn(root, 'nmstatectl-nm.cjs', '/usr/bin/nmstatectl');
}
