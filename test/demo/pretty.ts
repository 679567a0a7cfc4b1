// Turns the agent's JSON log lines into what a person watching the demo wants to read.
const LEVEL_TAG: Record<string, string> = { fatal: 'FATAL', error: 'ERROR', warn: 'WARN ', info: 'INFO ', debug: 'DEBUG', trace: 'TRACE' };
const COLOR: Record<string, string> = { fatal: '\x1b[31m', error: '\x1b[31m', warn: '\x1b[33m', info: '', debug: '\x1b[2m', trace: '\x1b[2m' };

export function prettyLogLine(line: string, color: boolean): string | undefined {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trim() ? line : undefined;
  }
  const level = String(rec.level ?? 'info');
  const time = typeof rec.time === 'string' ? rec.time.slice(11, 19) : '';
  const scope = [rec.step, rec.component].filter(Boolean).join('/');
  const extras = Object.entries(rec)
    .filter(([k]) => !['level', 'time', 'msg', 'step', 'component', 'phase'].includes(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const text = `${time} ${LEVEL_TAG[level] ?? level} ${scope ? `[${scope}] ` : ''}${String(rec.msg ?? '')}${extras ? `  (${extras})` : ''}`;
  return color && COLOR[level] ? `${COLOR[level]}${text}\x1b[0m` : text;
}
