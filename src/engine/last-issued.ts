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

/** The recorded date (RFC 3339) and digest; undefined when none was ever recorded; `{ damaged }` saying what is wrong with it. */
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
  let record: { issued?: unknown; digest?: unknown; finished?: unknown } | null;
  try {
    record = JSON.parse(text) as { issued?: unknown; digest?: unknown; finished?: unknown } | null;
  } catch {
    return { damaged: 'is damaged (it is not complete JSON)' };
  }
  const issued = record?.issued;
  if (typeof issued !== 'string' || Number.isNaN(Date.parse(issued))) return { damaged: 'is damaged (it holds no issue date)' };
  const digest = record?.digest;
  if (digest !== undefined && (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest))) return { damaged: 'is damaged (its config digest is not a sha256)' };
  const finished = record?.finished;
  if (finished !== undefined && finished !== true) return { damaged: 'is damaged (its finished mark is not true)' };
  return { issued, ...(digest !== undefined && { digest }), ...(finished === true && { finished }) };
}

/**
 * Records `issued` and the digest of the config being taken, unless a later one is recorded already, or this one (a
 * damaged record is replaced; a record without a digest gets this config's).
 */
export async function recordIssued(host: Host, stateDir: string, issued: string, config: string, digest: string): Promise<void> {
  const last = await readLastIssued(host, stateDir);
  if (last !== undefined && 'issued' in last && (Date.parse(last.issued) > Date.parse(issued) || (Date.parse(last.issued) === Date.parse(issued) && last.digest === digest))) return;
  await host.writeFileAtomic(fileIn(stateDir), `${JSON.stringify({ issued, config, digest })}\n`, 0o644);
}

/**
 * Marks the recorded config's relocation finished (`prepare`'s re-arm for the next relocation): from then on a config issued at that moment — the same media again — is refused like older ones. Before,
 * a restart resuming the run, or a re-run of the same config, takes it again (trust.ts sameIssueProblem); after, the
 * next relocation must not (the tenth hostile re-test of issue 36 replayed last relocation's stick after a re-arm).
 * Returns whether it marked anything.
 */
export async function closeLastIssued(host: Host, stateDir: string): Promise<boolean> {
  const last = await readLastIssued(host, stateDir);
  if (last === undefined || !('issued' in last) || last.finished) return false;
  const kept = JSON.parse(await host.readText(fileIn(stateDir))) as Record<string, unknown>;
  await host.writeFileAtomic(fileIn(stateDir), `${JSON.stringify({ ...kept, finished: true })}\n`, 0o644);
  return true;
}
