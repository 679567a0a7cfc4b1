// The apiextensions-apiserver's naming and establishing controllers for a CustomResourceDefinition written to the
// simulator (kubernetes release-1.29 staging/src/k8s.io/apiextensions-apiserver pkg/controller/status/
// naming_controller.go, pkg/controller/establish/establishing_controller.go): the names are accepted unless
// another CRD holds the plural of that group, or metadata.name is not <plural>.<group>; then the kind is served
// (its schema validating what is stored) and the CRD is Established. Both conditions are set at once here; on
// a real cluster Established follows in well under a second. The kinds of CRDs stored before a simulator
// restart are served again at start.
import { R } from '../../../src/cluster/resources';
import type { KubeObject } from '../../../src/cluster/types';
import { servedFromCrdObject, type ResourceRegistry } from '../apiserver/resources';
import type { CrdDocument } from '../crd-schema';
import type { StoreEvent } from '../store-types';
import type { SimContext } from './context';

export class CrdEstablisher {
  constructor(
    private readonly ctx: SimContext,
    private readonly registry: ResourceRegistry,
  ) {}

  init(): void {
    for (const crd of this.ctx.store.list(R.customResourceDefinitions)) this.establish(crd);
  }

  handle(e: StoreEvent): void {
    if (e.type === 'DELETED' || e.resource.plural !== R.customResourceDefinitions.plural || e.resource.group !== R.customResourceDefinitions.group) return;
    const established = (e.object.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (!established) setImmediate(() => this.establish(e.object));
  }

  private establish(crd: KubeObject): void {
    const doc = crd as unknown as CrdDocument & KubeObject;
    const now = this.ctx.clock.iso();
    const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastTransitionTime: now });
    let conditions;
    try {
      const served = servedFromCrdObject(crd);
      this.registry.register(served);
      conditions = [cond('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'), cond('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted')];
      this.ctx.log(`apiextensions: serving ${served.type.kind} (${served.type.group}/${served.type.version})`);
    } catch (e) {
      conditions = [cond('NamesAccepted', 'False', 'InvalidName', (e as Error).message), cond('Established', 'False', 'NotAccepted', 'not all names are accepted')];
    }
    const current = this.ctx.store.get(R.customResourceDefinitions, crd.metadata?.name ?? '');
    if (!current) return;
    this.ctx.store.updateStatus(R.customResourceDefinitions, { ...current, status: { conditions, acceptedNames: doc.spec?.names ?? {}, storedVersions: [] } });
  }
}
