// Whether the kube-apiserver answers. On SNO it is down for several independent reasons at once —
// kubelet not started yet (static pods not running), a new kube-apiserver revision replacing the only
// static pod, a node reboot — and it is up only when none holds.
export type DownReason = 'kubelet-not-started' | 'api-starting' | 'kube-apiserver-restart' | 'node-reboot';

export class ApiAvailability {
  private readonly reasons = new Set<DownReason>();
  private readonly listeners = new Set<(up: boolean) => void>();

  constructor(private readonly apply: (up: boolean) => void) {}

  block(reason: DownReason): void {
    const wasUp = this.up();
    this.reasons.add(reason);
    if (wasUp) this.changed();
  }

  unblock(reason: DownReason): void {
    if (!this.reasons.delete(reason)) return;
    if (this.up()) this.changed();
  }

  up(): boolean {
    return this.reasons.size === 0;
  }

  downReasons(): DownReason[] {
    return [...this.reasons];
  }

  onChange(listener: (up: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    const up = this.up();
    this.apply(up);
    for (const l of this.listeners) l(up);
  }
}
