// The agent's own objects stay its own (issue 36, finding 3): src/siteconfig/agent-objects.ts lists what an extra
// manifest may not write because a step writes it during the run. The list is written by hand (siteconfig sits
// below the steps); this holds it to what a whole relocation with everything a site-config can carry really
// writes, as the simulator's API server logged it — a step that starts writing a new object fails here until the
// list names it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { R } from '../../../src/cluster/resources';
import { agentObjectProblem } from '../../../src/siteconfig/agent-objects';
import { startScenario } from '../../support/scenario';
import { fullSiteConfigFiles } from '../../support/site-configs';
import { signedMedia } from '../../support/signed-media';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What a write's path names: API group, resource, namespace and name (undefined for a collection or a subresource the list has no row for). */
function objectOf(p: string): { group: string; resource: string; namespace?: string; name?: string; subresource?: string } | undefined {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/.exec(p);
  if (!m) return undefined;
  return { group: m[1] ?? '', resource: m[3]!, ...(m[2] ? { namespace: m[2] } : {}), ...(m[4] ? { name: m[4] } : {}), ...(m[5] ? { subresource: m[5] } : {}) };
}

test('every object a full relocation writes is one extra manifests may not write, or one they cannot reach', async () => {
  const s = await startScenario();
  try {
    const files = fullSiteConfigFiles(s.sim, s.node.root);
    const doc = parse(files['site-config.yaml']!) as { spec: Record<string, unknown> };
    doc.spec.imageDigestMirrors = [{ source: 'quay.io/store/pos', mirrors: ['registry.store42.example.com:8443/store/pos'] }];
    doc.spec.imageTagMirrors = [{ source: 'quay.io/store/tools', mirrors: ['registry.store42.example.com:8443/store/tools'] }];
    delete files['site-config.yaml.sig'];
    const signed = signedMedia(s.node.root, { ...files, 'site-config.yaml': stringify(doc) }, Object.keys(files).filter((f) => f !== 'site-config.yaml'));
    s.node.attachVolume('sdb1', 'SITE-CONFIG', signed);
    s.sim.api.clearRequests();
    const res = await s.run(['--once'], { timeoutMs: 15 * 60_000 });
    assert.equal(res.code, 0, res.stdout.slice(-3000));
    const kinds = new Map(Object.values(R).map((r) => [`${r.group}/${r.plural}`, r]));
    // The extra manifests' own objects are written by the agent too: they are what the list is not about.
    const manifestObjects = new Set(Object.entries(signed).filter(([f]) => f.startsWith('extra-manifests/') && !f.endsWith('.sig')).flatMap(([, text]) => text.split(/^---$/m).map((d) => parse(d) as { kind: string; metadata: { name: string; namespace?: string } }).map((m) => `${m.kind} ${m.metadata.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata.name}`)));
    assert.ok(manifestObjects.size >= 3, [...manifestObjects].join(', '));
    const written = new Set<string>();
    for (const r of s.sim.api.requests) {
      if (!WRITES.has(r.method) || r.status >= 400 || r.user !== 'system:admin') continue;
      written.add(r.createdName === undefined ? r.path : `${r.path}/${r.createdName}`);
    }
    const uncovered: string[] = [];
    for (const p of written) {
      const o = objectOf(p);
      const r = o && kinds.get(`${o.group}/${o.resource}`);
      if (!o?.name || !r) { uncovered.push(`${p} (not an object of a known resource)`); continue; }
      const label = `${r.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
      // Not for the list: a CSR's approval is the approver's own (a manifest cannot approve); the node is the
      // cluster's (labels from spec.nodeLabels); the site's routes are moved to the new apps domain before the
      // manifests are applied, so a manifest that carries one undoes nothing.
      if (o.subresource === 'approval' || r.kind === 'Node' || manifestObjects.has(label)) continue;
      if (r.kind === 'Route' && !['openshift-console', 'openshift-authentication', 'openshift-config'].includes(o.namespace ?? '')) continue;
      const apiVersion = r.group === '' ? r.version : `${r.group}/${r.version}`;
      if (agentObjectProblem({ apiVersion, kind: r.kind, metadata: { name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) } }) === undefined) uncovered.push(`${label} (${p})`);
    }
    assert.deepEqual(uncovered, [], `written by the run, not in src/siteconfig/agent-objects.ts:\n${uncovered.join('\n')}\nall writes:\n${[...written].join('\n')}`);
  } finally {
    await s.cleanup();
  }
});
