// spec.extraManifestFiles: Kubernetes objects the site adds to the cluster, in YAML (several `---`
// documents) or JSON files, a `List` holding several — what image-based install applies from its
// extra-manifests folder (openshift-kni/lifecycle-agent main, lca-cli/postpivot applyManifests; the
// `lca.openshift.io/apply-type` and `lca.openshift.io/apply-wave` annotations, internal/common/consts.go).
// Checked offline: every object names apiVersion, kind and metadata.name; what the agent itself owns, and
// what would break the node or go around the site-config's own fields, is refused by name.
import { namespaceNameProblem, objectNameProblem } from './object-names';
import { parseYamlDocuments } from './parse-text';
import { MANIFEST_FILE } from './media-names';

export const APPLY_TYPE = 'lca.openshift.io/apply-type';
export const APPLY_WAVE = 'lca.openshift.io/apply-wave';
export { MANIFEST_FILE };
/** More objects than a site adds; a bound on the run's work. */
export const MAX_MANIFEST_OBJECTS = 500;

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

/** Where the site-config has a field of its own for it, or why the object is never the site's to set. */
const REFUSED: Record<string, string> = {
  Node: 'the node is registered by kubelet; use spec.nodeLabels for its labels',
  CertificateSigningRequest: 'certificate requests are the kubelet\'s, approved by the agent\'s own policy',
  'config.openshift.io/APIServer': 'the agent sets the API certificates (spec.certificates)',
  'config.openshift.io/Ingress': 'the agent sets the apps domain (spec.baseDomain)',
  'config.openshift.io/DNS': 'the cluster\'s domain moves with spec.baseDomain',
  'config.openshift.io/Infrastructure': 'it is the installer\'s record of the cluster',
  'config.openshift.io/Network': 'the cluster network cannot change at the site',
  'config.openshift.io/Proxy': 'use spec.proxy',
  'config.openshift.io/ClusterVersion': 'updates are not part of a relocation',
  'config.openshift.io/Image': 'use imageDigestMirrors, imageTagMirrors and additionalTrustBundle',
};

/** Objects of the cluster the agent writes itself: named so a manifest cannot silently fight a step. */
const OWNED: Record<string, string> = {
  'Secret openshift-config/pull-secret': 'use spec.pullSecret',
  'Secret kube-system/kubeadmin': 'use spec.kubeadminPassword',
  'MachineConfig 99-master-ssh': 'use spec.ssh',
  'MachineConfig 99-master-chrony': 'use spec.ntp',
};

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

function refusal(o: ManifestObject): string | undefined {
  // Own properties only (issue 36, C7): a manifest of kind `constructor` read Object's own through the prototype.
  const own = (table: Record<string, string>, key: string) => (Object.hasOwn(table, key) ? table[key] : undefined);
  const why = own(REFUSED, o.kind) ?? own(REFUSED, `${groupOf(o.apiVersion)}/${o.kind}`) ?? own(OWNED, `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`);
  return why && `${o.kind} ${o.metadata.name} is not applied from extra manifests: ${why}`;
}

function objectProblem(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'is not an object (a mapping with apiVersion, kind and metadata)';
  const o = v as Record<string, unknown>;
  const md = o.metadata as Record<string, unknown> | undefined;
  if (typeof o.apiVersion !== 'string' || !/^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/.test(o.apiVersion)) return "has no apiVersion like 'v1' or 'group/v1'";
  if (typeof o.kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(o.kind)) return "has no kind like 'ConfigMap'";
  if (typeof md?.name !== 'string' || md.name === '') return `${o.kind} has no usable metadata.name`;
  const nameProblem = objectNameProblem(o.apiVersion, o.kind, md.name);
  if (nameProblem) return nameProblem;
  if (md.namespace !== undefined && typeof md.namespace !== 'string') return `${o.kind} ${md.name}: metadata.namespace must be a namespace name`;
  const namespaceProblem = md.namespace === undefined ? undefined : namespaceNameProblem(o.kind, md.name, md.namespace);
  if (namespaceProblem) return namespaceProblem;
  if (md.generateName !== undefined || md.resourceVersion !== undefined || md.uid !== undefined) return `${o.kind} ${md.name}: metadata must not hold generateName, resourceVersion or uid (an object exported from a cluster: keep only what you set)`;
  const ann = (md.annotations ?? {}) as Record<string, unknown>;
  if (ann[APPLY_TYPE] !== undefined && ann[APPLY_TYPE] !== 'replace' && ann[APPLY_TYPE] !== 'merge') return `${o.kind} ${md.name}: annotation ${APPLY_TYPE} must be 'replace' or 'merge'`;
  if (ann[APPLY_WAVE] !== undefined && !/^-?\d{1,9}$/.test(String(ann[APPLY_WAVE]))) return `${o.kind} ${md.name}: annotation ${APPLY_WAVE} must be a whole number`;
  return undefined;
}

/** The objects of one manifest file (its text), or the problems that refuse it (each a sentence about the file). */
export function parseManifestFile(text: string): { objects: ManifestObject[]; problems: string[] } {
  const parsed = parseYamlDocuments(text);
  if (!parsed.ok) return { objects: [], problems: parsed.messages };
  const objects: ManifestObject[] = [];
  const problems: string[] = [];
  parsed.values.forEach((doc, i) => {
    const where = parsed.values.length > 1 ? `document ${i + 1}` : 'the document';
    const list = doc as { kind?: unknown; items?: unknown };
    const items = typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items) ? list.items : [doc];
    items.forEach((item, j) => {
      const at = items.length > 1 || item !== doc ? `${where}, item ${j + 1}` : where;
      // A List is unpacked one level deep: one inside it (or one without items) would reach the API as an object of
      // kind List, refused there mid-run after the other steps changed the node (the hostile re-test of issue 36).
      const kind = (item as { kind?: unknown } | null)?.kind;
      if (typeof kind === 'string' && kind.endsWith('List')) {
        problems.push(`${at}: ${item === doc ? `a ${kind} without a list of items` : `a ${kind} inside a list`}: the agent applies the objects a list holds one level deep, so put them in the outer list or in documents of their own`);
        return;
      }
      const p = objectProblem(item) ?? refusal(item as ManifestObject);
      if (p) problems.push(`${at}: ${p}`);
      else objects.push(item as ManifestObject);
    });
  });
  return { objects, problems };
}

/** `kind namespace/name` for messages and duplicate checks. */
export const objectLabel = (o: ManifestObject): string => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
