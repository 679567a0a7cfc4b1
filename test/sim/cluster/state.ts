// The simulator's own memory beside the object store: the timeline, the ports kubeconfigs point at, where
// each operator is in its rollout, whether kubelet was enabled. Persisted (temp file + rename) so a
// simulator killed at any moment and started again continues like a rebooted node, as etcd plus the
// operators' own state would.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ClockEpoch } from './clock';

export interface RolloutRecord {
  /** The operator key that owns it; one rollout per owner at a time. */
  owner: string;
  /** Simulated ms. */
  startedAt: number;
  endsAt: number;
  /** Named points in time (simulated ms) the owner reacts to, fired in order; 'done' is implicit at endsAt. */
  milestones: { name: string; at: number; fired?: boolean }[];
  data: Record<string, unknown>;
}

export interface OperatorRecord {
  /** Hash and config of what is rolled out and served. */
  current?: { hash: string; config: unknown };
  /** Hash and config being rolled out. */
  target?: { hash: string; config: unknown };
  /** A monotonically growing generation/revision number for messages. */
  generation: number;
}

export interface SimState {
  format: 1;
  clock: ClockEpoch;
  ports: { api?: number; apiEndpoint?: number; ingress?: number; control?: number };
  kubeletEnabled: boolean;
  operators: Record<string, OperatorRecord>;
  rollouts: RolloutRecord[];
  /** Degradations injected by a test: operator name → reason/message. */
  injectedDegraded: Record<string, { reason: string; message: string }>;
  faults: { kubeletFilesNoCsrs: boolean; apiNeverUp: boolean };
  /** Who this cluster is (fixed at its first start; a restart must not change it). */
  identity?: ClusterIdentity;
}

export interface ClusterIdentity {
  clusterName: string;
  baseDomain: string;
  nodeName: string;
  nodeIPs: string[];
  version: string;
  /** Absent in state written before the option existed: then it is `version`. */
  installedVersion?: string;
}

export function newState(clock: ClockEpoch): SimState {
  return {
    format: 1,
    clock,
    ports: {},
    kubeletEnabled: false,
    operators: {},
    rollouts: [],
    injectedDegraded: {},
    faults: { kubeletFilesNoCsrs: false, apiNeverUp: false },
  };
}

export class StateFile {
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly path: string | undefined,
    readonly state: SimState,
    readonly restored: boolean,
  ) {}

  /** Loads the state at `path` when it exists (restored = true), else starts a new one. No path = memory only. */
  static open(path: string | undefined, fresh: () => SimState): StateFile {
    if (path && existsSync(path)) {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as SimState;
      if (parsed.format !== 1) throw new Error(`${path}: unknown simulator state format ${String(parsed.format)}`);
      return new StateFile(path, parsed, true);
    }
    return new StateFile(path, fresh(), false);
  }

  /** Saves soon (coalescing bursts of changes into one write). */
  save(): void {
    if (!this.path || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, 2);
  }

  /** Writes now: temp file, fsync, rename — a power cut leaves the old or the new file, never half of one. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.path) return;
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(this.state, null, 1));
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
  }
}
