// A ClusterClient that changes credentials once, when the API refuses the first one (401). The agent's own
// credential is a node-kubeconfig whose client certificate can expire while the node is in storage, and the
// operator that renews it is a pod: it needs kubelet, which needs the agent to approve its CSRs. The fallback
// (src/engine/credentials.ts) breaks that circle. Everything else in the run goes on unchanged: the same
// server and trust, the same requests, retried once on the new credential.
import type { ClosableClusterClient } from './client';
import { ApiError, type ClusterClient } from './types';

export interface Fallback {
  client: ClosableClusterClient;
  /** What it is, in words, for the journal. */
  description: string;
}

function isUnauthorized(e: unknown): e is ApiError {
  return e instanceof ApiError && e.statusCode === 401;
}

/** The 401 the caller sees once no credential is left: it says what happened, not "not ready". */
function expired(e: ApiError, tried: string): ApiError {
  return new ApiError(e.statusCode, e.reason, `${e.message} (credential expired: the API refused ${tried})`, e.status);
}

/**
 * `primary` until it meets a 401; then `fallback()` (asked once; undefined = there is none) for the rest of
 * the client's life. `onSwitch` hears about the change once. `primaryNotAfter` (ISO), the expiry of the
 * primary's client certificate: with no fallback and that date past, a 401 on /readyz is final.
 */
export function withCredentialFallback(
  primary: ClosableClusterClient,
  primaryDescription: string,
  fallback: () => Promise<Fallback | undefined>,
  onSwitch: (fallback: Fallback) => void,
  primaryNotAfter?: string,
): ClosableClusterClient {
  let current = primary;
  let tried = primaryDescription;
  let switching: Promise<boolean> | undefined;
  const switchFrom = (failed: ClusterClient): Promise<boolean> => {
    if (current !== failed) return Promise.resolve(true);
    switching ??= fallback().then((f) => {
      if (!f) return false;
      current = f.client;
      tried = `${primaryDescription} and ${f.description}`;
      onSwitch(f);
      return true;
    });
    return switching;
  };
  const use = async <T>(call: (c: ClusterClient) => Promise<T>): Promise<T> => {
    const c = current;
    try {
      return await call(c);
    } catch (e) {
      if (!isUnauthorized(e)) throw e;
      if (!(await switchFrom(c))) throw expired(e, tried);
      try {
        return await call(current);
      } catch (again) {
        throw isUnauthorized(again) ? expired(again, tried) : again;
      }
    }
  };
  return {
    get server() {
      return current.server;
    },
    async readyz(o) {
      const c = current;
      const first = await c.readyz(o);
      if (!first.unauthorized) return first;
      const answer = (await switchFrom(c)) ? await current.readyz(o) : first;
      if (!answer.unauthorized) return answer;
      // A certificate past its NotAfter is refused by every kube-apiserver, however long it is given.
      if (current === primary && primaryNotAfter && Date.parse(primaryNotAfter) <= Date.now()) {
        return { ...answer, refusedForGood: true, detail: `credential expired: the API refused ${tried}, which expired on ${primaryNotAfter.slice(0, 10)} (${answer.detail})` };
      }
      return { ...answer, detail: `credential expired: the API refused ${tried} (${answer.detail})` };
    },
    get: (type, name, namespace, o) => use((c) => c.get(type, name, namespace, o)),
    list: (type, o) => use((c) => c.list(type, o)),
    create: (type, obj, o) => use((c) => c.create(type, obj, o)),
    update: (type, obj, o) => use((c) => c.update(type, obj, o)),
    patch: (type, name, patch, patchType, namespace, o) => use((c) => c.patch(type, name, patch, patchType, namespace, o)),
    delete: (type, name, namespace, o) => use((c) => c.delete(type, name, namespace, o)),
    watch: (type, o, onEvent) => use((c) => c.watch(type, o, onEvent)),
    approveCsr: (name, reason, message) => use((c) => c.approveCsr(name, reason, message)),
    resourceTypes: (apiVersion, o) => use((c) => c.resourceTypes(apiVersion, o)),
    close() {
      primary.close();
      if (current !== primary) current.close();
    },
  };
}
