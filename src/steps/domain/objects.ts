// The domain step's own secrets: the kubernetes.io/tls secrets it serves its certificates from.
import { b64, isManagedByUs, MANAGED_BY, MANAGED_BY_LABEL, sameJson, type EnsureResult, type Secret } from '../../cluster/objects';
import { retryOnConflict } from '../../cluster/retry';
import type { ClusterClient } from '../../cluster/types';
import { R } from '../../cluster/resources';

export function tlsSecret(namespace: string, name: string, certPem: string, keyPem: string): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(certPem), 'tls.key': b64(keyPem) },
  };
}

/**
 * Creates `desired` or updates the existing secret's type/data/our label (re-read on every 409). A secret of
 * another type cannot be changed in place (type is immutable): it is deleted and re-created.
 */
export async function ensureSecret(client: ClusterClient, desired: Secret): Promise<EnsureResult> {
  const ns = desired.metadata?.namespace ?? '';
  const name = desired.metadata?.name ?? '';
  return retryOnConflict(async () => {
    const current = await client.get<Secret>(R.secrets, name, ns);
    if (!current) {
      await client.create(R.secrets, desired);
      return 'created';
    }
    if (current.type !== desired.type) {
      await client.delete(R.secrets, name, ns);
      await client.create(R.secrets, desired);
      return 'updated';
    }
    if (sameJson(current.data ?? {}, desired.data ?? {}) && isManagedByUs(current)) return 'unchanged';
    await client.update(R.secrets, {
      ...current,
      metadata: { ...current.metadata, labels: { ...current.metadata?.labels, [MANAGED_BY_LABEL]: MANAGED_BY } },
      data: desired.data,
    });
    return 'updated';
  });
}
