// `npm run mutation:recheck -- <module>`: the mutants that survived the module's last Stryker run
// (reports/mutation/<module>.report.json) tested again, one at a time, against the module's tests as they are now.
// After tests are added, Stryker's incremental mode keeps the old results (its command runner reports one result for
// all of a module's tests, so it cannot tell that a test changed) and `--force` tests every mutant again; this tests
// only the survivors. Each is written into its file (its replacement at its place in the source the run mutated), in
// a copy of the project (a kill leaves the working tree as it was), the module's tests run, and the file is put back.
// Prints the module's score with the survivors tested again and lists each that still survives.
// SNO_MUTATION_CONCURRENCY=2 tests two at a time, each in a copy of its own.
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KILLED, MUTATION_MODULES, NOT_KILLED, scoreOf } from './mutation-modules.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2];
const module = MUTATION_MODULES[name];
if (!module) {
  console.error(`usage: npm run mutation:recheck -- <module>, one of ${Object.keys(MUTATION_MODULES).join(', ')}`);
  process.exit(2);
}
if (module.build) {
  console.error(`${name}: its tests run the built agent, which holds every mutant of a Stryker run; run \`npm run mutation -- ${name} --force\` instead`);
  process.exit(2);
}
const reportFile = join(ROOT, 'reports', 'mutation', `${name}.report.json`);
if (!existsSync(reportFile)) {
  console.error(`${name}: no report of an earlier run (${reportFile}); run \`npm run mutation -- ${name}\` first`);
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8'));
const mutants = Object.entries(report.files).flatMap(([file, f]) => f.mutants.map((m) => ({ ...m, file, source: f.source })));
const survivors = mutants.filter((m) => NOT_KILLED.includes(m.status));
for (const [file, f] of Object.entries(report.files)) {
  if (readFileSync(join(ROOT, file), 'utf8') !== f.source) console.error(`note: ${file} changed since the run; its survivors are tested in the source the run mutated`);
}

/** A copy of the project's tracked files as they are in the working tree, with node_modules linked. */
function projectCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'sno-mutation-'));
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** The source with the mutant's replacement at its place (Stryker's locations: 1-based lines and columns, end excluded). */
function mutated(m) {
  const lines = m.source.split('\n');
  const offset = (loc) => lines.slice(0, loc.line - 1).reduce((n, l) => n + l.length + 1, 0) + loc.column - 1;
  return m.source.slice(0, offset(m.location.start)) + m.replacement + m.source.slice(offset(m.location.end));
}

function killedIn(dir, m) {
  writeFileSync(join(dir, m.file), mutated(m));
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-force-exit', '--test-reporter=dot', '--test-timeout=300000', ...module.tests], { cwd: dir, stdio: 'ignore' });
    child.on('close', (code) => {
      writeFileSync(join(dir, m.file), readFileSync(join(ROOT, m.file)));
      done(code !== 0);
    });
  });
}

const workers = Math.max(1, Number(process.env.SNO_MUTATION_CONCURRENCY ?? 1));
const copies = Array.from({ length: Math.min(workers, survivors.length) }, projectCopy);
const stillSurviving = [];
let next = 0;
try {
  await Promise.all(
    copies.map(async (dir) => {
      for (let m = survivors[next++]; m !== undefined; m = survivors[next++]) {
        if (!(await killedIn(dir, m))) stillSurviving.push(m);
        process.stdout.write(`\r${name}: ${next > survivors.length ? survivors.length : next} of ${survivors.length} survivors tested again`);
      }
    }),
  );
} finally {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
}
const valid = mutants.filter((m) => KILLED.includes(m.status) || NOT_KILLED.includes(m.status)).length;
const killed = valid - stillSurviving.length;
console.log(`\n\n${name}: ${scoreOf(killed, valid)} % (${killed} of ${valid} mutants killed; ${survivors.length - stillSurviving.length} of the run's ${survivors.length} survivors killed by the tests as they are now)`);
for (const m of stillSurviving.sort((a, b) => a.file.localeCompare(b.file) || a.location.start.line - b.location.start.line)) {
  console.log(`  survives: ${m.file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} → ${JSON.stringify(m.replacement).slice(0, 100)}`);
}
