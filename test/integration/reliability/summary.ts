// One summary line per reliability category (issue #8), printed to the test output so that a run of
// `npm test` shows what the matrix tried: cases tried, how many the agent survived, data lost (must be 0).
export interface Tally {
  tried: number;
  survived: number;
  dataLost: number;
}

export function summaryLine(category: string, t: Tally, detail = ''): string {
  const line = `reliability ${category}: tried ${t.tried}, survived ${t.survived}, data lost ${t.dataLost}${detail ? ` — ${detail}` : ''}`;
  console.log(line);
  return line;
}
