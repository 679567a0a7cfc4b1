// The test reporter of `npm test`: Node's spec reporter, plus the ten slowest test files with their wall times,
// printed just before the runner's closing counts (# tests / # pass / # fail), which stay where CI reads them.
// Node 20 runs each file in its own process and reports it as a top-level test named by its path
// (`test:complete`, nesting 0, name === file) whose duration is that process's wall time. Files run three at
// a time (scripts/run-tests.mjs), so the times overlap: they say where the suite's minutes go, not how they add up.
import { writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { spec } from 'node:test/reporters';
import { sourceOfCompiled } from './test-build.mjs';
import { FILE_END_LINE } from './test-file-end.mjs';

const SHOWN = 10;
/** A file's end line (./test-file-end.mjs) and its own count of its tests. */
const END_LINE = new RegExp(`\\n?${FILE_END_LINE} (\\d*)\\n?`);
// node:test/reporters exports a lazy factory that constructs the spec reporter; its class is the instance's.
const SpecReporter = Object.getPrototypeOf(new spec()).constructor;

export default class SpecWithSlowestFiles extends SpecReporter {
  /** file → wall time of its process. */
  #files = new Map();
  /** file → sum of its top-level tests: the fallback for a runner that does not report files as tests. */
  #summed = new Map();
  #printed = false;
  /** Each file's own count of its tests, from the end line its process wrote after its whole report (./test-file-end.mjs). */
  #counted = new Map();
  /** The verdicts that reached the runner, by file. */
  #verdicts = new Map();
  /** Files whose report was cut short: each is counted as one more failure in the closing counts. */
  #cutShort = [];

  _transform(event, encoding, callback) {
    const data = event.data ?? {};
    // Files run compiled (./test-build.mjs): each is named by its source.
    if (data.file) {
      const absolute = sourceOfCompiled(data.file);
      const inProject = relative(process.cwd(), absolute);
      const source = absolute === data.file || inProject.startsWith('..') ? absolute : inProject;
      if (data.name === data.file) data.name = source;
      data.file = source;
    }
    const end = event.type === 'test:stdout' && data.file ? END_LINE.exec(data.message ?? '') : null;
    if (end) {
      this.#counted.set(resolve(data.file), Number(end[1] || 0));
      data.message = data.message.replace(end[0], '');
      if (data.message.trim() === '') return callback();
    }
    // Every test's verdict (suites and the file itself aside), against the file's own count in its end line.
    if ((event.type === 'test:pass' || event.type === 'test:fail') && data.file && data.name !== data.file && data.details?.type !== 'suite') this.#verdicts.set(resolve(data.file), (this.#verdicts.get(resolve(data.file)) ?? 0) + 1);
    const ms = data.details?.duration_ms;
    if (data.nesting === 0 && data.file && typeof ms === 'number') {
      // A file's process: test:complete (and test:fail when it failed as a whole); its tests: pass or fail once each.
      if (data.name === data.file) this.#files.set(data.file, ms);
      else if (event.type === 'test:pass' || event.type === 'test:fail') this.#summed.set(data.file, (this.#summed.get(data.file) ?? 0) + ms);
    }
    // The closing counts are the run's own diagnostics: no file, top level, "tests N" first.
    if (!this.#printed && event.type === 'test:diagnostic' && data.file === undefined && data.nesting === 0 && /^tests \d+$/.test(data.message ?? '')) {
      this.#printed = true;
      this.push(this.#slowest());
      // (A test's events name its file by the source's absolute path, the file's own by the path shown: both resolved.)
      this.#cutShort = [...this.#files.keys()].filter((file) => !this.#counted.has(resolve(file)) || (this.#verdicts.get(resolve(file)) ?? 0) < this.#counted.get(resolve(file)));
      if (this.#cutShort.length > 0) {
        process.exitCode = 1;
        this.push(`\n✖ ${this.#cutShort.length} test file(s) ended before their whole report reached the runner, so some of their tests are missing from the counts below (a test that called process.exit, or nodejs/node#64833; scripts/test-file-end.mjs):\n${this.#cutShort.map((f) => `  ${relative(process.cwd(), f)}`).join('\n')}\n\n`);
      }
      // SNO_TEST_TIMES=<file>: every file's wall time as JSON, for ordering the run and for the README's figures.
      if (process.env.SNO_TEST_TIMES) writeFileSync(process.env.SNO_TEST_TIMES, JSON.stringify(Object.fromEntries([...this.#files].map(([f, ms]) => [relative(process.cwd(), f), Math.round(ms)])), null, 1));
    }
    // Each file cut short counts as one more test, failed.
    const closingCount = event.type === 'test:diagnostic' && data.file === undefined && data.nesting === 0 && /^(tests|fail) \d+$/.exec(data.message ?? '');
    if (this.#cutShort.length > 0 && closingCount) data.message = `${closingCount[1]} ${Number(data.message.split(' ')[1]) + this.#cutShort.length}`;
    super._transform(event, encoding, callback);
  }

  #slowest() {
    const byProcess = this.#files.size > 0;
    const times = byProcess ? this.#files : this.#summed;
    const rows = [...times].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
    if (rows.length === 0) return '';
    const width = Math.max(...rows.map(([, ms]) => (ms / 1000).toFixed(1).length));
    const lines = rows.map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(width)} s  ${relative(process.cwd(), file)}`);
    const what = byProcess ? "wall time of each file's process" : 'the sum of each file\'s top-level tests';
    return `\nThe ${rows.length} slowest test files (${what}, ${times.size} files):\n${lines.join('\n')}\n\n`;
  }
}
