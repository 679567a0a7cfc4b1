// Builds the noarch RPM from dist/sno-reconfigure.cjs with rpmbuild (`npm run rpm`, after `npm run build`).
// On Debian (no systemd-rpm-macros, empty rpmdb) it loads rpm/debian-stand-in.macros and passes --nodeps;
// on RHEL/Fedora the distribution's macros are used. Output: build/rpm/RPMS/noarch/*.rpm.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderAgentUnit, renderKubeletHoldDropin } from '../src/render/unit';
import { KUBELET_HOLD_DROPIN } from '../src/render/layout';
import { UNIT_NAME } from '../src/paths';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SPEC = path.join(PROJECT_ROOT, 'rpm', 'sno-reconfigure.spec');
const STAND_IN_MACROS = path.join(PROJECT_ROOT, 'rpm', 'debian-stand-in.macros');

export interface BuildRpmOptions {
  /** rpmbuild's _topdir (default build/rpm). */
  topdir?: string;
  bundle?: string;
  /** %{dist}; Debian's rpm has none. */
  dist?: string;
}

export interface BuiltRpm {
  rpm: string;
  /** The spec as built (with its version). */
  spec: string;
  version: string;
  usedStandInMacros: boolean;
}

function presetFile(): string {
  return [
    '# sno-reconfigure is armed by `sno-reconfigure prepare` at the factory, right before the node is shut down',
    '# for shipping. Installing the package, or an image that contains it, must not start it.',
    `disable ${UNIT_NAME}`,
    '',
  ].join('\n');
}

function distributionHasSystemdMacros(): boolean {
  return execFileSync('rpm', ['--eval', '%{?_unitdir}'], { encoding: 'utf8' }).trim() !== '';
}

export function buildRpm(opts: BuildRpmOptions = {}): BuiltRpm {
  const topdir = path.resolve(opts.topdir ?? path.join(PROJECT_ROOT, 'build', 'rpm'));
  const bundle = opts.bundle ?? path.join(PROJECT_ROOT, 'dist', 'sno-reconfigure.cjs');
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run \`npm run build\` first`);
  const version = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  rmSync(topdir, { recursive: true, force: true });
  for (const d of ['SOURCES', 'SPECS', 'BUILD', 'BUILDROOT', 'RPMS', 'SRPMS']) mkdirSync(path.join(topdir, d), { recursive: true });
  const sources = path.join(topdir, 'SOURCES');
  copyFileSync(bundle, path.join(sources, 'sno-reconfigure.cjs'));
  writeFileSync(path.join(sources, 'sno-reconfigure.service'), renderAgentUnit('rpm'));
  writeFileSync(path.join(sources, KUBELET_HOLD_DROPIN), renderKubeletHoldDropin());
  writeFileSync(path.join(sources, '50-sno-reconfigure.preset'), presetFile());
  // The spec copy that gets built carries its version, so it is self-contained (and rpmlint can read it).
  const spec = path.join(topdir, 'SPECS', 'sno-reconfigure.spec');
  writeFileSync(spec, `%global sno_version ${version}\n${readFileSync(SPEC, 'utf8')}`);

  const standIn = !distributionHasSystemdMacros();
  const args = [
    '-bb',
    '--define', `_topdir ${topdir}`,
    '--define', `dist ${opts.dist ?? '.el9'}`,
    // Reproducible timestamps in the payload and header (rpm >= 4.14 honours SOURCE_DATE_EPOCH with these).
    '--define', 'use_source_date_epoch_as_buildtime 1',
    '--define', 'clamp_mtime_to_source_date_epoch 1',
    ...(standIn ? ['--load', STAND_IN_MACROS, '--nodeps'] : []),
    spec,
  ];
  execFileSync('rpmbuild', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SOURCE_DATE_EPOCH: '1763337600' } });
  const dir = path.join(topdir, 'RPMS', 'noarch');
  const rpm = readdirSync(dir).find((f) => f.endsWith('.noarch.rpm'));
  if (!rpm) throw new Error(`rpmbuild produced no noarch RPM in ${dir}`);
  return { rpm: path.join(dir, rpm), spec, version, usedStandInMacros: standIn };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const built = buildRpm();
    console.log(`${path.relative(PROJECT_ROOT, built.rpm)}${built.usedStandInMacros ? ' (built with rpm/debian-stand-in.macros: use a RHEL/UBI 9 build for releases)' : ''}`);
  } catch (e) {
    const err = e as Error & { stderr?: Buffer | string };
    console.error(`build-rpm: ${err.message}${err.stderr ? `\n${err.stderr.toString()}` : ''}`);
    process.exit(1);
  }
}
