// Installs node_modules with `npm ci` when missing or stale, so `npm test` and `npm run demo` work on a
// clean clone. Stale = package-lock.json changed since the last install (npm keeps a copy of the lock
// it installed in node_modules/.package-lock.json; we compare a digest we stamp after installing).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

const lock = readFileSync('package-lock.json');
const digest = createHash('sha256').update(lock).digest('hex');
const stamp = 'node_modules/.sno-reconfigure-lock.sha256';
if (!existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== digest) {
  console.error('[deps] node_modules missing or stale: running npm ci');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: ['ignore', 'inherit', 'inherit'] });
  writeFileSync(stamp, `${digest}\n`);
}
