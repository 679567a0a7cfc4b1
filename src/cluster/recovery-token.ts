// Where the localhost-recovery-client service-account token lives on the node: every kube-apiserver revision
// copies it to <STATIC_POD_RESOURCES_DIR>/kube-apiserver-pod-<revision>/secrets/localhost-recovery-client-token/token
// for its cert-regeneration controller (cluster-kube-apiserver-operator bindata/assets/kube-apiserver/kubeconfig-cm.yaml,
// tokenFile). The newest revision's copy is the one the running kube-apiserver was installed with.
import * as path from 'node:path';
import { STATIC_POD_RESOURCES_DIR } from '../paths';

/** The two file operations needed, as the host seam provides them (node paths). */
export interface NodeFiles {
  listDir(nodePath: string): Promise<string[]>;
  exists(nodePath: string): Promise<boolean>;
}

const REVISION_DIR = /^kube-apiserver-pod-(\d+)$/;
const TOKEN_IN_REVISION = 'secrets/localhost-recovery-client-token/token';

/** Node path of the recovery token of the highest kube-apiserver revision on the node, if any. */
export async function findRecoveryToken(files: NodeFiles): Promise<string | undefined> {
  let entries: string[];
  try {
    entries = await files.listDir(STATIC_POD_RESOURCES_DIR);
  } catch {
    return undefined;
  }
  const revisions = entries.map((e) => REVISION_DIR.exec(e)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1])).sort((a, b) => b - a);
  for (const revision of revisions) {
    const token = path.posix.join(STATIC_POD_RESOURCES_DIR, `kube-apiserver-pod-${revision}`, TOKEN_IN_REVISION);
    if (await files.exists(token)) return token;
  }
  return undefined;
}
