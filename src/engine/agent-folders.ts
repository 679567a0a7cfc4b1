// The folders the agent needs before it can do anything: its state directory and the drop directory. A file in
// the place of either (issue 36, C2 and C5) stops the agent before it has a journal, so the sentence that says so
// is made here once, for the run (journal line and console banner) and for `status`, which would otherwise find
// only an unreadable journal and promise that a restart fixes it.
import { fileWhereFolderBelongs, pathKindInWords, WrongKindError, type Host } from '../host/host';
import { writeBanner } from '../host/banner';
import type { Logger } from '../log';
import { remedyLines } from '../util/remedy';

export interface FolderProblem {
  message: string;
  remedy: string;
  office: string;
}

interface AgentFolder {
  dir: string;
  what: string;
  consequence: string;
}

/** The office's part when something stands where the agent's own file or folder belongs. */
const SOMETHING_WRITES_IT = 'if it comes back, something on the node writes it, and they must find what';

function agentFolders(stateDir: string, dropDir: string): AgentFolder[] {
  return [
    { dir: stateDir, what: "the agent's state directory", consequence: 'the agent can keep no record of its work, so it changes nothing' },
    { dir: dropDir, what: 'the drop directory', consequence: 'no site-config can be dropped there, so the agent does not start' },
  ];
}

/** `at`: what stands in the way — the folder itself, or an entry on the way to it — and `found`: what it is. */
function notAFolder(f: AgentFolder, at = f.dir, found = 'a file'): FolderProblem {
  return {
    message: at === f.dir ? `${f.what} ${f.dir} is ${found}, not a folder: ${f.consequence}` : `${f.what} ${f.dir} cannot be made: ${at} is ${found}, not a folder: ${f.consequence}`,
    remedy: `Move it aside (mv ${at} ${at}.bad); the agent tries again by itself within a minute.`,
    office: SOMETHING_WRITES_IT,
  };
}

/** What stands where a folder of the agent belongs, for `status` (read-only): undefined when both are folders or missing. */
export async function misplacedFolder(host: Host, stateDir: string, dropDir: string): Promise<FolderProblem | undefined> {
  for (const f of agentFolders(stateDir, dropDir)) {
    const info = await host.stat(f.dir).catch(() => undefined);
    if (info !== undefined && info.kind !== 'directory') return notAFolder(f, f.dir, pathKindInWords(info));
  }
  return undefined;
}

/**
 * Makes the agent's folders when missing. A file in the place of one is said in the journal and on the console, and
 * false is returned: the run exits 1, systemd starts it again after RestartSec=, and it goes on once the file is
 * moved aside.
 */
export async function agentFoldersInPlace(host: Host, log: Logger, stateDir: string, dropDir: string): Promise<boolean> {
  for (const f of agentFolders(stateDir, dropDir)) {
    try {
      await host.mkdirp(f.dir, 0o700);
    } catch (e) {
      if (!fileWhereFolderBelongs(e)) throw e;
      const problem = e instanceof WrongKindError ? notAFolder(f, e.nodePath, e.found) : notAFolder(f);
      log.error({ path: f.dir, remedy: problem.remedy, office: problem.office }, problem.message);
      // Best effort: the banner's own folder may be the trouble too.
      await writeBanner(host, { tone: 'error', headline: problem.message, lines: remedyLines(problem.remedy, problem.office) }).catch(() => undefined);
      return false;
    }
  }
  return true;
}

/**
 * A folder, named pipe or device where one of the agent's files belongs (or a file where a folder does), met in the
 * middle of a run (the hostile re-test of issue 36, C1/C2): the path and the way out, as a sentence, not an internal error.
 */
export function wrongKindProblem(e: WrongKindError): FolderProblem {
  return {
    message: `${e.message}, so the agent stopped there`,
    remedy: `Move it aside (mv ${e.nodePath} ${e.nodePath}.bad); the agent tries again by itself after its restart.`,
    office: SOMETHING_WRITES_IT,
  };
}
