// Startup: wall time of `node sno-reconfigure.cjs --version` against an empty Node script, median of RUNS after
// WARMUP runs each (page cache warm), and the ratio between the two; for the bundle as the RPM installs it
// (dist/sno-reconfigure.cjs itself) and as the MachineConfig installs it (the loader that decompresses the
// brotli payload beside it: src/render/payload.ts). The three alternate run by run, so load hits them alike.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { compressBundle, renderLoader } from '../../src/render/payload';
import { BUNDLE_PATH } from '../support/bundle';

/** README "Measured": `--version` within 1.5× a bare Node start. */
export const STARTUP_RATIO_BUDGET = 1.5;
const RUNS = 20;
const WARMUP = 3;

export interface StartupResults {
  runs: number;
  /** dist/sno-reconfigure.cjs run directly (the RPM, a workstation). */
  bundleVersionMedianMs: number;
  /** The MachineConfig's loader and brotli payload. */
  loaderVersionMedianMs: number;
  emptyNodeMedianMs: number;
  ratio: number;
  loaderRatio: number;
  bundleVersionMs: number[];
  loaderVersionMs: number[];
  emptyNodeMs: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function timeOnce(args: string[]): number {
  const t = process.hrtime.bigint();
  const res = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (res.status !== 0) throw new Error(`node ${args.join(' ')} exited ${res.status}: ${res.stderr.toString()}`);
  return Math.round(ms * 10) / 10;
}

export function measureStartup(): StartupResults {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-bench-startup-'));
  try {
    const empty = path.join(dir, 'empty.js');
    writeFileSync(empty, '');
    const loader = path.join(dir, 'sno-reconfigure.cjs');
    writeFileSync(loader, renderLoader(), { mode: 0o755 });
    writeFileSync(`${loader}.br`, compressBundle(readFileSync(BUNDLE_PATH)));
    const cases = { emptyNodeMs: [empty], bundleVersionMs: [BUNDLE_PATH, '--version'], loaderVersionMs: [loader, '--version'] };
    const times = { emptyNodeMs: [] as number[], bundleVersionMs: [] as number[], loaderVersionMs: [] as number[] };
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const [k, args] of Object.entries(cases) as [keyof typeof cases, string[]][]) {
        const ms = timeOnce(args);
        if (i >= WARMUP) times[k].push(ms);
      }
    }
    const e = median(times.emptyNodeMs);
    const b = median(times.bundleVersionMs);
    const l = median(times.loaderVersionMs);
    const ratio = (x: number) => Math.round((x / e) * 100) / 100;
    return { runs: RUNS, bundleVersionMedianMs: b, loaderVersionMedianMs: l, emptyNodeMedianMs: e, ratio: ratio(b), loaderRatio: ratio(l), ...times };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
