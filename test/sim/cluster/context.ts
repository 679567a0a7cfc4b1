// What every part of the simulated cluster shares.
import type { NodeNames } from './names';
import type { EventEmitter } from 'node:events';
import type { SimStore } from '../store-types';
import type { ApiAvailability } from './availability';
import type { SimClock } from './clock';
import type { ResolvedOptions } from './options';
import type { Rollouts } from './rollouts';
import type { StateFile } from './state';

export interface SimContext {
  readonly store: SimStore;
  readonly clock: SimClock;
  readonly opts: ResolvedOptions;
  readonly file: StateFile;
  readonly rollouts: Rollouts;
  readonly availability: ApiAvailability;
  /** What the node resolves (its own names may not, at a site without local DNS). */
  readonly names: NodeNames;
  /**
   * Simulator events for tests and the demo: 'log' (string), 'rollout' ({operator, phase}),
   * 'reboot' ({phase: 'down' | 'up'}), 'kubelet' ({phase}), 'api' ({up}).
   */
  readonly events: EventEmitter;
  log(message: string): void;
}
