// Watch streams as the kube-apiserver's watch cache serves them: a chunked response of JSON lines
// `{"type":..., "object":...}`. Without a resourceVersion (or with "0") the stream starts with synthetic
// ADDED events for the current state; with one it replays the event history after it, or — when that
// history was compacted away — sends a single ERROR event carrying a 410 Expired Status and ends. Objects
// moving in or out of a label/field selector appear as ADDED/DELETED (cacheWatcher.convertToWatchEvent).
// BOOKMARK events carry only the current resourceVersion. The stream ends after timeoutSeconds.
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../../src/cluster/types';
import type { StoreEvent } from '../store-types';
import { apiVersionOf, type ServedResource } from './resources';
import type { Matcher } from './selectors';
import { expired, statusBody } from './status';
import type { SimObjectStore } from './store';

export interface WatchRequest {
  res: ServerResponse;
  store: SimObjectStore;
  served: ServedResource;
  namespace?: string;
  /** Watch of a single object (GET .../<name>?watch=true). */
  name?: string;
  labels: Matcher;
  fields: Matcher;
  resourceVersion?: string;
  allowBookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutMs: number;
}

export interface ActiveWatch {
  /** Ends the stream (server shutdown or going down). */
  stop(): void;
}

export function serveWatch(w: WatchRequest): ActiveWatch {
  const { res, store, served } = w;
  const matches = (obj: KubeObject | undefined): boolean => {
    if (!obj) return false;
    if (served.type.namespaced && w.namespace !== undefined && obj.metadata?.namespace !== w.namespace) return false;
    if (w.name !== undefined && obj.metadata?.name !== w.name) return false;
    return w.labels(obj) && w.fields(obj);
  };
  const sameResource = (e: StoreEvent) => e.resource.group === served.type.group && e.resource.plural === served.type.plural;

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  const send = (type: string, object: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(`${JSON.stringify({ type, object })}\n`);
  };
  const toEvent = (e: StoreEvent): void => {
    if (!sameResource(e)) return;
    const now = matches(e.object);
    const before = e.type !== 'ADDED' && matches(e.previous);
    if (e.type === 'ADDED' && now) send('ADDED', e.object);
    else if (e.type === 'MODIFIED' && now && before) send('MODIFIED', e.object);
    else if (e.type === 'MODIFIED' && now) send('ADDED', e.object);
    else if (e.type === 'MODIFIED' && before) send('DELETED', { ...e.previous, metadata: { ...e.previous?.metadata, resourceVersion: e.object.metadata?.resourceVersion } });
    else if (e.type === 'DELETED' && (now || before)) send('DELETED', e.object);
  };

  let stopped = false;
  let unsubscribe = () => {};
  let bookmarkTimer: NodeJS.Timeout | undefined;
  const timers: { timeout?: NodeJS.Timeout } = {};
  const stop = () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    clearTimeout(bookmarkTimer);
    clearTimeout(timers.timeout);
    if (!res.writableEnded) res.end();
  };
  res.on('close', stop);

  const rv = w.resourceVersion;
  if (rv === undefined || rv === '' || rv === '0') {
    for (const obj of store.listRaw(served, served.type.namespaced ? w.namespace : undefined)) if (matches(obj)) send('ADDED', obj);
  } else {
    const from = Number(rv);
    const replay = Number.isInteger(from) && from >= 0 ? store.eventsSince(from) : undefined;
    if (!replay) {
      send('ERROR', statusBody(expired(rv, String(store.oldestResourceVersion()))));
      stop();
      return { stop };
    }
    for (const e of replay) toEvent(e);
  }
  // Subscribing in the same tick as the replay: no event can fall between the two.
  unsubscribe = store.subscribe(toEvent);

  if (w.allowBookmarks) {
    const bookmark = () => {
      send('BOOKMARK', { kind: served.type.kind, apiVersion: apiVersionOf(served.type), metadata: { resourceVersion: store.resourceVersion() } });
      bookmarkTimer = setTimeout(bookmark, w.bookmarkIntervalMs);
    };
    bookmarkTimer = setTimeout(bookmark, w.bookmarkIntervalMs);
  }
  timers.timeout = setTimeout(stop, w.timeoutMs);
  return { stop };
}
