// A local copy of one resource type, filled by a list and kept current by a watch, so settle reacts to an
// operator's condition change as it happens instead of polling every object every few seconds. A periodic
// re-list (the caller's) corrects anything a dropped watch may have missed (e.g. deletions during a 410 re-list).
import type { ClusterClient, KubeObject, ResourceType } from '../../cluster/types';
import type { Logger } from '../../log';

export class WatchedCache<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private running?: Promise<void>;

  constructor(
    private readonly client: ClusterClient,
    readonly type: ResourceType,
    private readonly onChange: () => void,
    private readonly log: Logger,
  ) {}

  items(): T[] {
    return [...this.objects.values()];
  }

  private static key(o: KubeObject): string {
    return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  }

  /** Replaces the content with a fresh list; returns its resourceVersion. */
  async relist(): Promise<string> {
    const list = await this.client.list<T>(this.type);
    this.objects.clear();
    for (const o of list.items) this.objects.set(WatchedCache.key(o), o);
    this.onChange();
    return list.resourceVersion;
  }

  /** Lists, then watches from the list's resourceVersion until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const resourceVersion = await this.relist();
    this.running = this.client
      .watch<T>(this.type, { signal, resourceVersion }, (event) => {
        if (event.type === 'BOOKMARK') return;
        const key = WatchedCache.key(event.object);
        if (event.type === 'DELETED') this.objects.delete(key);
        else this.objects.set(key, event.object);
        this.onChange();
      })
      .catch((e: unknown) => {
        if (!signal.aborted) this.log.warn({ resource: this.type.plural, err: (e as Error).message }, `the watch of ${this.type.plural} ended; the settle check re-reads them periodically instead`);
      });
  }

  async stopped(): Promise<void> {
    await this.running;
  }
}
