// The artefact under test: dist/sno-reconfigure.cjs. `npm test` builds it before the tests run; a test
// started on its own builds it when it is missing.
import type { BuildOptions, BuildResult } from 'esbuild';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';
import { MC_BUNDLE_PATH, MC_PAYLOAD_PATH } from '../../src/render/layout';
import { ignitionFromMachineConfig } from './ignition';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BUNDLE_PATH = path.join(PROJECT_ROOT, 'dist', 'sno-reconfigure.cjs');

/**
 * The variables scripts/run-tests.mjs gives every Node process of the suite for its preloads: V8's code cache for the
 * bundle and RSA keys from a pool. They change how the bundle is compiled and where its RSA keys come from, not what
 * it does.
 */
const SUITE_PRELOADS = ['NODE_OPTIONS', 'SNO_BUNDLE_CODE_CACHE', 'SNO_TEST_RSA_POOL', 'SNO_TEST_RSA_POOL_CACHE'] as const;

/** The environment for a bundle run that inherits nothing: PATH only, and the suite's preloads when it runs under them. */
export function bareBundleEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const name of SUITE_PRELOADS) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

/** This process's environment without the suite's preloads: for a run as a user's (a fresh clone, a plain start). */
export function withoutSuitePreloads(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of SUITE_PRELOADS) delete env[name];
  return env;
}

export function ensureBundle(): string {
  if (!existsSync(BUNDLE_PATH)) {
    execFileSync(process.execPath, ['esbuild.config.mjs'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  }
  return BUNDLE_PATH;
}

/** The node bundle built in memory with esbuild.config.mjs's own options: its output files and metafile. */
export async function buildBundleInMemory(): Promise<{ outfile: string; result: BuildResult<{ write: false; metafile: true }> }> {
  const { bundleOptions } = (await import(path.join(PROJECT_ROOT, 'esbuild.config.mjs'))) as { bundleOptions: BuildOptions & { outfile: string } };
  const { build } = await import('esbuild');
  const result = await build({ ...bundleOptions, absWorkingDir: PROJECT_ROOT, write: false, metafile: true, logLevel: 'silent' });
  return { outfile: bundleOptions.outfile, result };
}

/**
 * What a rendered MachineConfig carries for the agent, in base64 characters of its data: URLs: the brotli
 * payload (MC_PAYLOAD_PATH) and the loader that runs it (MC_BUNDLE_PATH). The bundle budget applies to the total.
 */
export function agentInMachineConfig(machineConfigYaml: string): { payloadBytes: number; loaderBytes: number; totalBytes: number } {
  const files = ignitionFromMachineConfig(machineConfigYaml).storage?.files ?? [];
  const base64Of = (nodePath: string): number => {
    const source = files.find((f) => f.path === nodePath)?.contents?.source;
    const m = source === undefined ? null : /^data:[^,]*;base64,(.*)$/s.exec(source);
    if (!m) throw new Error(`the MachineConfig has no base64 data: URL for ${nodePath}`);
    return m[1]!.length;
  };
  const payloadBytes = base64Of(MC_PAYLOAD_PATH);
  const loaderBytes = base64Of(MC_BUNDLE_PATH);
  return { payloadBytes, loaderBytes, totalBytes: payloadBytes + loaderBytes };
}
