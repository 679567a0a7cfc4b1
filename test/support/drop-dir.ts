// The drop directory's record of renames (src/engine/detect.ts watchRenamesIn): what an earlier start of the agent
// kept of names it saw renamed in, for tests that put a config in place while no agent watched (a `run --once`, a
// `waitForSiteConfig({ once: true })`) and test something else than the rename rule.
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_STATE_DIR, STATE_FILES } from '../../src/paths';

const DROP_DIR = '/etc/sno-reconfigure/site-config.d';

/** Records `names` (at the top of the node's drop directory) as renamed in, as they are now. */
export function recordRenamedIn(root: string, names: readonly string[], dropDir = DROP_DIR): void {
  const record = Object.fromEntries(names.map((name) => {
    const st = statSync(path.join(root, dropDir, name));
    return [name, { ino: st.ino, ctimeMs: st.ctimeMs }];
  }));
  mkdirSync(path.join(root, DEFAULT_STATE_DIR), { recursive: true });
  writeFileSync(path.join(root, DEFAULT_STATE_DIR, STATE_FILES.dropDirRenames), JSON.stringify(record));
}
