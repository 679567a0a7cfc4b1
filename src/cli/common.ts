// Options shared by the commands that act on a node: the host root, the state directory, the kubeconfig.
import { LocalHost } from '../host/host';
import { createLogger, type Logger } from '../log';
import { DEFAULT_KUBECONFIG, DEFAULT_STATE_DIR } from '../paths';
import type { Endpoint } from '../engine/step';
import { UsageError, stringOpt, type CliIo, type OptionSpec, type ParsedArgs } from './command';

export const NODE_OPTIONS: OptionSpec = {
  root: { type: 'string' },
  'state-dir': { type: 'string' },
  kubeconfig: { type: 'string' },
  'host-tools': { type: 'string' },
};

export const NODE_OPTIONS_HELP = `  --root DIR          host root the agent works under (default /; the podman runtime uses /host)
  --state-dir DIR     state directory, a node path under the root (default ${DEFAULT_STATE_DIR})
  --kubeconfig PATH   node-local admin kubeconfig, a node path under the root
                      (default ${DEFAULT_KUBECONFIG})
  --host-tools MODE   how host tools are run: path (default) or chroot (chroot into --root; podman runtime)`;

export function hostFrom(args: ParsedArgs, io: CliIo): LocalHost {
  const mode = stringOpt(args, 'host-tools') ?? io.env.SNO_RECONFIGURE_HOST_TOOLS ?? 'path';
  if (mode !== 'path' && mode !== 'chroot') throw new UsageError(`--host-tools must be "path" or "chroot", not "${mode}"`);
  return new LocalHost({ root: stringOpt(args, 'root') ?? '/', tools: mode, env: io.env });
}

export function stateDirFrom(args: ParsedArgs): string {
  return stringOpt(args, 'state-dir') ?? DEFAULT_STATE_DIR;
}

export function kubeconfigFrom(args: ParsedArgs): string {
  return stringOpt(args, 'kubeconfig') ?? DEFAULT_KUBECONFIG;
}

export function endpointFrom(args: ParsedArgs, name: string): Endpoint | undefined {
  const text = stringOpt(args, name);
  if (text === undefined) return undefined;
  const m = text.match(/^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new UsageError(`--${name} must be HOST:PORT (e.g. 127.0.0.1:443 or [fd00::10]:443), not "${text}"`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

export function loggerFor(io: CliIo, opts: { level?: string } = {}): Logger {
  return createLogger({ env: io.env, ...(opts.level ? { level: opts.level } : {}), write: (s) => io.out(s) });
}
