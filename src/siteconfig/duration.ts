// Go-style durations (time.ParseDuration): a sequence of decimal numbers, each with a unit, e.g. 30m, 1h30m,
// 90s, 1.5h, 500ms. Timeouts of the site-config (spec.timeouts) use them, like OpenShift's own APIs.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
const HINT = 'expected a number followed by a unit (h, m, s or ms), e.g. 30m, 1h30m or 90s';

/** Milliseconds for a Go-style duration. Throws an Error with a message naming what is wrong. */
export function parseDuration(text: string): number {
  if (typeof text !== 'string') throw new Error(`invalid duration: ${HINT}`);
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  let rest = text.trim();
  if (rest === '') throw new Error(`invalid duration '': ${HINT}`);
  if (rest.startsWith('-')) throw new Error(`invalid duration '${shown}': a duration cannot be negative`);
  if (rest.startsWith('+')) rest = rest.slice(1);
  // Go accepts a bare "0"; anything else needs a unit.
  if (rest === '0') return 0;
  let total = 0;
  while (rest !== '') {
    const m = PART.exec(rest);
    if (!m) {
      if (/^\d+(?:\.\d*)?$/.test(rest)) throw new Error(`invalid duration '${shown}': missing unit after ${rest} (${HINT})`);
      throw new Error(`invalid duration '${shown}': ${HINT}`);
    }
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  if (!Number.isFinite(total) || total > Number.MAX_SAFE_INTEGER) throw new Error(`invalid duration '${shown}': too large`);
  return Math.round(total);
}

/** Compact rendering for messages: 5400000 → "1h30m". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}
