// The issue date of the last signed site-config this node took (DESIGN.md section 4, "Signed means bound"): a
// signed config issued before it is refused, so last month's media never apply again. It lives in the state
// directory beside the journal, and `prepare` — which clears the journal and the config copy to re-arm the node
// for its next relocation — leaves it alone: the record outlives every relocation of the node.
import type { Host } from '../host/host';
import { STATE_FILES } from '../paths';

const fileIn = (stateDir: string) => `${stateDir}/${STATE_FILES.lastIssued}`;

/** The recorded date (RFC 3339), or undefined when none was recorded (or the file is not one of ours). */
export async function readLastIssued(host: Host, stateDir: string): Promise<string | undefined> {
  const text = await host.readTextIfExists(fileIn(stateDir)).catch(() => undefined);
  try {
    const issued = (JSON.parse(text ?? 'null') as { issued?: unknown } | null)?.issued;
    return typeof issued === 'string' && !Number.isNaN(Date.parse(issued)) ? issued : undefined;
  } catch {
    return undefined;
  }
}

/** Records `issued` of the config being taken, unless a later one is recorded already. */
export async function recordIssued(host: Host, stateDir: string, issued: string, config: string): Promise<void> {
  const last = await readLastIssued(host, stateDir);
  if (last !== undefined && Date.parse(last) >= Date.parse(issued)) return;
  await host.writeFileAtomic(fileIn(stateDir), `${JSON.stringify({ issued, config })}\n`, 0o644);
}
