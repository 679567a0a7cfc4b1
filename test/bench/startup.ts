// Startup: wall time of `node dist/sno-reconfigure.cjs --version` against an empty Node script, median of
// RUNS after WARMUP runs each (page cache and Node's compile cache warm), and the ratio between the two.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { BUNDLE_PATH } from '../support/bundle';

const RUNS = 20;
const WARMUP = 3;

export interface StartupResults {
  runs: number;
  bundleVersionMedianMs: number;
  emptyNodeMedianMs: number;
  ratio: number;
  bundleVersionMs: number[];
  emptyNodeMs: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function timeRuns(args: string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t = process.hrtime.bigint();
    const res = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (res.status !== 0) throw new Error(`node ${args.join(' ')} exited ${res.status}: ${res.stderr.toString()}`);
    if (i >= WARMUP) out.push(Math.round(ms * 10) / 10);
  }
  return out;
}

export function measureStartup(): StartupResults {
  const dir = mkdtempSync(path.join(tmpdir(), 'sno-bench-startup-'));
  try {
    const empty = path.join(dir, 'empty.js');
    writeFileSync(empty, '');
    // Interleaved blocks would be fairer under load; both run back to back on an otherwise idle machine.
    const emptyNodeMs = timeRuns([empty]);
    const bundleVersionMs = timeRuns([BUNDLE_PATH, '--version']);
    const b = median(bundleVersionMs);
    const e = median(emptyNodeMs);
    return { runs: RUNS, bundleVersionMedianMs: b, emptyNodeMedianMs: e, ratio: Math.round((b / e) * 100) / 100, bundleVersionMs, emptyNodeMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
