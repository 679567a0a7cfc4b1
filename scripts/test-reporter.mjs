// The test reporter of `npm test`: Node's spec reporter, plus the ten slowest test files with their wall times,
// printed just before the runner's closing counts (# tests / # pass / # fail), which stay where CI reads them.
// Node 20 runs each file in its own process and reports it as a top-level test named by its path
// (`test:complete`, nesting 0, name === file) whose duration is that process's wall time. Files run three at
// a time (scripts/run-tests.mjs), so the times overlap: they say where the suite's minutes go, not how they add up.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { spec } from 'node:test/reporters';
import { sourceOfCompiled } from './test-build.mjs';

const SHOWN = 10;
// node:test/reporters exports a lazy factory that constructs the spec reporter; its class is the instance's.
const SpecReporter = Object.getPrototypeOf(new spec()).constructor;

export default class SpecWithSlowestFiles extends SpecReporter {
  /** file → wall time of its process. */
  #files = new Map();
  /** file → sum of its top-level tests: the fallback for a runner that does not report files as tests. */
  #summed = new Map();
  #printed = false;

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
      // SNO_TEST_TIMES=<file>: every file's wall time as JSON, for ordering the run and for the README's figures.
      if (process.env.SNO_TEST_TIMES) writeFileSync(process.env.SNO_TEST_TIMES, JSON.stringify(Object.fromEntries([...this.#files].map(([f, ms]) => [relative(process.cwd(), f), Math.round(ms)])), null, 1));
    }
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
