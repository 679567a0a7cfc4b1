// `npm run bench:bundle`: the bench's Size, Bundle by part and Startup tables alone (about 30 s; the whole
// bench takes minutes). Prints the tables and writes nothing.
//   tsx test/bench/bundle-report.ts [--skip-startup]
import { parseArgs } from 'node:util';
import { ensureBundle } from '../support/bundle';
import { bundleReport } from './report';
import { measureSize } from './size';
import { measureStartup } from './startup';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'skip-startup': { type: 'boolean' } } });
  ensureBundle();
  const size = await measureSize();
  const startup = values['skip-startup'] ? undefined : await measureStartup();
  const { availableParallelism, loadavg } = await import('node:os');
  const load = loadavg()[0]!;
  const busy = load > availableParallelism() ? ': a busy machine, the startup figures read high and noisy' : '';
  process.stdout.write(`load average ${load.toFixed(2)} on ${availableParallelism()} CPUs${busy}\n`);
  process.stdout.write(bundleReport(size, startup));
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
