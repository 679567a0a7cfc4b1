// The CEL rules of the openshift/api CRD schemas are compiled when the CRDs load: every rule the simulator serves can be
// evaluated, and a rule using a function the simulator does not provide stops the load, naming the file and
// the rule, instead of being skipped at write time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { compileCelRule, evaluateCelRule } from '../../sim/crd-cel';
import { loadCrds, type JsonSchema } from '../../sim/crd-schema';

function celRules(schema: JsonSchema, out: string[] = []): string[] {
  for (const r of schema['x-kubernetes-validations'] ?? []) out.push(r.rule);
  for (const s of Object.values(schema.properties ?? {})) celRules(s, out);
  if (schema.items) celRules(schema.items, out);
  if (typeof schema.additionalProperties === 'object') celRules(schema.additionalProperties, out);
  return out;
}

test('every CEL rule of the openshift/api CRD schemas compiles, including the Kubernetes library functions they use', () => {
  const rules = loadCrds().flatMap((c) => celRules(c.schema));
  assert.ok(rules.length >= 60, `${rules.length} rules`);
  for (const rule of rules) assert.doesNotThrow(() => compileCelRule(rule), rule);
  const ips = { rule: 'size(self) == 2 && isIP(self[0]) && isIP(self[1]) ? ip(self[0]).family() != ip(self[1]).family() : true' };
  assert.deepEqual(evaluateCelRule(ips, ['192.0.2.1', '2001:db8::1'], undefined, false), { ok: true });
  assert.equal(evaluateCelRule(ips, ['192.0.2.1', '192.0.2.2'], undefined, false).ok, false);
  assert.equal(evaluateCelRule({ rule: 'isCIDR(self)' }, '10.0.0.0/33', undefined, false).ok, false);
  assert.equal(evaluateCelRule({ rule: 'isCIDR(self)' }, 'fd00::/64', undefined, false).ok, true);
});

test('a CRD rule using a function the simulator lacks fails the load, naming the file and the rule', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'crd-cel-'));
  try {
    const widget = {
      kind: 'Widget',
      group: 'example.com',
      version: 'v1',
      plural: 'widgets',
      singular: 'widget',
      listKind: 'WidgetList',
      scope: 'Cluster',
      subresources: [],
      schema: { type: 'object', properties: { spec: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.frobnicate()', message: 'frob' }] } } },
    };
    writeFileSync(path.join(dir, 'widgets.example.com.yaml'), stringify(widget));
    assert.throws(() => loadCrds(dir), /widgets\.example\.com\.yaml: CEL rule "self\.frobnicate\(\)" cannot be evaluated by the simulator: found no matching overload/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
