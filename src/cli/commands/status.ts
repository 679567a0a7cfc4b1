import { readStatus, renderStatus, statusExitCode, statusJson, STATUS_EXIT_PENDING } from '../../engine/status';
import { JournalUnreadableError } from '../../engine/journal';
import { misplacedFolder } from '../../engine/agent-folders';
import { DEFAULT_DROP_DIR, DONE_MARKER } from '../../paths';
import { remedyLines } from '../../util/remedy';
import { STEPS } from '../../steps/index';
import { EXIT_FAILURE, boolOpt, type Command } from '../command';
import { hostFrom, stateDirFrom } from '../common';
import { STATUS_SUMMARY } from './summaries';

export const statusCommand: Command = {
  name: 'status',
  summary: STATUS_SUMMARY,
  help: `Usage: sno-reconfigure status [--json] [--root DIR] [--state-dir DIR]

Shows the phase (waiting, running, failed, succeeded), each step with its state and duration, what the
agent is doing or waiting for now, the last error with what to do about it, and where the report is.

Options:
  --json            machine-readable output
  --root DIR        host root (default /)
  --state-dir DIR   state directory (default /var/lib/sno-reconfigure)

Read-only: it changes nothing on the node.

Exit status: 0 done (this node was reconfigured), 1 the last run failed, its site-config was refused, the
media found cannot be used, or the state cannot be read, ${STATUS_EXIT_PENDING} not finished yet (waiting for a
site-config with none found so far, or a run in progress).
`,
  options: { json: { type: 'boolean' }, root: { type: 'string' }, 'state-dir': { type: 'string' } },
  async run(args, io) {
    const host = hostFrom(args, io);
    // A file where the agent's folders belong stops it before it has a journal: say that, not "the journal is damaged".
    const misplaced = await misplacedFolder(host, stateDirFrom(args), DEFAULT_DROP_DIR);
    if (misplaced) {
      io.err(`sno-reconfigure status: ${misplaced.message}.\n${remedyLines(misplaced.remedy, misplaced.office).join('\n')}\n`);
      return EXIT_FAILURE;
    }
    let view;
    try {
      view = await readStatus(host, stateDirFrom(args), DONE_MARKER, STEPS, io.env);
    } catch (e) {
      // A damaged journal: say so and what happens next, never a parser's text (issue 36).
      const next = e instanceof JournalUnreadableError ? ' The agent keeps a copy of it and starts a new journal at its next start (`systemctl restart sno-reconfigure`); if the node was reconfigured already, nothing more is needed.' : '';
      io.err(`sno-reconfigure status: ${(e as Error).message}.${next}\n`);
      return EXIT_FAILURE;
    }
    io.out(boolOpt(args, 'json') ? statusJson(view) : renderStatus(view));
    return statusExitCode(view.phase, view.lastError);
  },
};
