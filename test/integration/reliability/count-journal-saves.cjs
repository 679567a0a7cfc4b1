// Preloaded (NODE_OPTIONS=--require) into an agent run to count its journal saves: every rename onto
// <state dir>/journal.json is one (src/host/host.ts writeFileAtomicAt). The crash test uses the count to
// choose its crash points (SNO_RECONFIGURE_CRASH_AT_SAVE). The count is written to
// $SNO_COUNT_JOURNAL_SAVES_FILE when the process exits, only by processes that saved a journal (the
// stand-in host tools inherit the preload and save none).
const fs = require('node:fs');
const path = require('node:path');

const out = process.env.SNO_COUNT_JOURNAL_SAVES_FILE;
if (out) {
  let saves = 0;
  const isJournal = (target) => path.basename(String(target)) === 'journal.json';
  const original = fs.promises.rename;
  fs.promises.rename = async function rename(from, to) {
    const result = await original.call(this, from, to);
    if (isJournal(to)) saves += 1;
    return result;
  };
  process.on('exit', () => {
    if (saves > 0) fs.writeFileSync(out, `${saves}\n`);
  });
}
