// The subset of Ignition spec 3.2.0 the MachineConfig uses (coreos/ignition docs/configuration-v3_2.md).
// Only storage.files and systemd.units: the MCD refuses directories, links and `append` on a running cluster
// (machine-config-operator pkg/daemon/update.go, reconcilable(): "ignition links section contains changes").
import { gzipSync } from 'node:zlib';

export const IGNITION_VERSION = '3.2.0';

export interface IgnitionFile {
  path: string;
  /** Decimal, as Ignition JSON carries it (0o755 = 493). */
  mode: number;
  overwrite: true;
  contents: { source: string; compression?: 'gzip' };
}

export interface IgnitionDropin {
  name: string;
  contents: string;
}

export interface IgnitionUnit {
  name: string;
  enabled?: boolean;
  mask?: boolean;
  contents?: string;
  dropins?: IgnitionDropin[];
}

export interface IgnitionConfig {
  ignition: { version: string };
  storage?: { files: IgnitionFile[] };
  systemd?: { units: IgnitionUnit[] };
}

export interface FileOptions {
  mode?: number;
  /** gzip the contents (`compression: gzip`, decompressed by the MCO since OCP 4.10, MCO PR #2820). */
  gzip?: boolean;
}

/**
 * A file as a `data:` URL. gzip level 9 with Node's zlib: same input, same bytes (the header carries no
 * timestamp), so rendered MachineConfigs can be regenerated and compared.
 */
export function ignitionFile(nodePath: string, data: string | Buffer, opts: FileOptions = {}): IgnitionFile {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const payload = opts.gzip ? gzipSync(bytes, { level: 9 }) : bytes;
  return {
    path: nodePath,
    mode: opts.mode ?? 0o644,
    overwrite: true,
    contents: { source: `data:;base64,${payload.toString('base64')}`, ...(opts.gzip ? { compression: 'gzip' as const } : {}) },
  };
}
