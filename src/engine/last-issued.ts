// The issue date of the last signed site-config this node took (DESIGN.md section 4, "Signed means bound"): a
// signed config issued before it is refused, so last month's media never apply again. It lives in the state
// directory beside the journal, and `prepare` — which clears the journal and the config copy to re-arm the node
// for its next relocation — leaves it alone: the record outlives every relocation of the node.
// A record that is there but cannot be read is not "no record" (issue 36, finding 2: truncated JSON turned replay
// protection off): it is reported as damaged, and no signed config is taken until it is dealt with.
import { pathKindInWords, whyUnreadable, type Host } from '../host/host';
import { STATE_FILES } from '../paths';
import type { LastIssued } from '../siteconfig/validation/context';

const fileIn = (stateDir: string) => `${stateDir}/${STATE_FILES.lastIssued}`;

/** The recorded date (RFC 3339); undefined when none was ever recorded; `{ damaged }` saying what is wrong with it. */
export async function readLastIssued(host: Host, stateDir: string): Promise<LastIssued | undefined> {
  let text: string;
  try {
    const info = await host.stat(fileIn(stateDir));
    if (info === undefined) return undefined;
    if (info.kind !== 'file') return { damaged: `is ${pathKindInWords(info)}, not a file` };
    text = await host.readText(fileIn(stateDir));
  } catch (e) {
    return { damaged: `cannot be read (${whyUnreadable(e)})` };
  }
  let issued: unknown;
  try {
    issued = (JSON.parse(text) as { issued?: unknown } | null)?.issued;
  } catch {
    return { damaged: 'is damaged (it is not complete JSON)' };
  }
  return typeof issued === 'string' && !Number.isNaN(Date.parse(issued)) ? issued : { damaged: 'is damaged (it holds no issue date)' };
}

/** Records `issued` of the config being taken, unless a later one is recorded already (a damaged record is replaced). */
export async function recordIssued(host: Host, stateDir: string, issued: string, config: string): Promise<void> {
  const last = await readLastIssued(host, stateDir);
  if (typeof last === 'string' && Date.parse(last) >= Date.parse(issued)) return;
  await host.writeFileAtomic(fileIn(stateDir), `${JSON.stringify({ issued, config })}\n`, 0o644);
}
