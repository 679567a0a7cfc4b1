// The sample ACM policy (examples/fleet/report-policy.yaml, quoted in docs/fleet.md) is a valid ConfigurationPolicy
// by the schema of ACM's ConfigurationPolicy (test/fixtures/acm: facts of config-policy-controller at d63122c), and its object template tells a succeeded outcome from a failed or refused one as the
// agent writes them (fleetReportObjects), so a policy copied from docs/fleet.md works on the ConfigMap as it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { fleetReportObjects, type FleetResult } from '../../../src/engine/fleet-report';
import type { Report } from '../../../src/engine/report';
import { PROJECT_ROOT } from '../../support/bundle';
import { loadCrds, validateAgainstSchema } from '../../sim/crd-schema';

const POLICY_FILE = path.join(PROJECT_ROOT, 'examples', 'fleet', 'report-policy.yaml');
const ACM_SCHEMAS = path.join(PROJECT_ROOT, 'test', 'fixtures', 'acm');

interface ConfigurationPolicy {
  kind: string;
  spec: { 'object-templates': { complianceType: string; objectDefinition: Record<string, unknown> }[] };
}

function samplePolicy(): ConfigurationPolicy {
  const policy = parse(readFileSync(POLICY_FILE, 'utf8')) as { spec: { 'policy-templates': { objectDefinition: ConfigurationPolicy }[] } };
  return policy.spec['policy-templates'][0]!.objectDefinition;
}

/**
 * config-policy-controller's `musthave`: every field the template names is on the object with the same value,
 * maps compared field by field (extra fields on the object are fine). Lists do not occur in this template.
 */
function mustHave(template: unknown, actual: unknown): boolean {
  if (template && typeof template === 'object' && !Array.isArray(template)) {
    if (!actual || typeof actual !== 'object') return false;
    return Object.entries(template).every(([k, v]) => mustHave(v, (actual as Record<string, unknown>)[k]));
  }
  return template === actual;
}

const report = (result: Report['result']): Report => ({ result, siteConfig: { name: 'store-0042', digest: 'a'.repeat(64) }, starts: 1, node: { name: 'sno1-node' }, cluster: {}, steps: [], changes: [], warnings: [] });

test('the sample policy is a valid ConfigurationPolicy by the schema of config-policy-controller', () => {
  const v1 = loadCrds(ACM_SCHEMAS).find((c) => c.kind === 'ConfigurationPolicy' && c.version === 'v1');
  assert.ok(v1, 'test/fixtures/acm states ConfigurationPolicy v1');
  const policy = samplePolicy();
  assert.equal(policy.kind, 'ConfigurationPolicy');
  const result = validateAgainstSchema(v1.schema, policy);
  assert.deepEqual(result.errors, [], JSON.stringify(result.errors));
  // The schema is strict enough to catch a typo in the sample (a failing check proves it is being applied).
  const broken = structuredClone(policy);
  broken.spec['object-templates'][0]!.complianceType = 'mustbe';
  assert.notDeepEqual(validateAgainstSchema(v1.schema, broken).errors, []);
});

test('the sample policy is compliant for a succeeded outcome and not for a failed or refused one', () => {
  const template = samplePolicy().spec['object-templates'][0]!;
  assert.equal(template.complianceType, 'musthave');
  const cases: [FleetResult, Report['result'], boolean][] = [
    ['succeeded', 'succeeded', true],
    ['failed', 'failed', false],
    ['refused', 'in-progress', false],
  ];
  for (const [result, reportResult, compliant] of cases) {
    const { configMap } = fleetReportObjects(report(reportResult), result, new Date());
    assert.equal(mustHave(template.objectDefinition, configMap), compliant, `${result}: compliant ${compliant}`);
  }
});

test('docs/fleet.md quotes the sample policy as it is in examples/fleet', () => {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'docs', 'fleet.md'), 'utf8');
  const body = readFileSync(POLICY_FILE, 'utf8').split('\n').filter((l) => !l.startsWith('#')).join('\n').trim();
  assert.ok(readme.includes(body), 'docs/fleet.md "Reading the outcome from a fleet" shows examples/fleet/report-policy.yaml (without its comment lines)');
});
