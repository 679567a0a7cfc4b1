// The schema stage: the document against the site-config schema (src/siteconfig/schema.ts: every field, its type
// and its own rules, unknown fields with a "did you mean"), and whether spec.match can be read from it.
import { checkSchema, matchSchema, validValue } from '../schema';
import { unknownFieldMessage } from '../suggest';
import type { Findings } from '../problems';
import type { MachineMatch } from '../types';
import { get } from './context';

export interface CheckedDocument {
  schema: ReturnType<typeof checkSchema>;
  spec: unknown;
  /** spec.match when well-formed, and whether the file was read far enough to know it (decided on the schema's findings alone). */
  known: { match?: MachineMatch; matchKnown: boolean };
}

export function checkDocument(f: Findings, document: unknown): CheckedDocument {
  const schema = checkSchema(document, unknownFieldMessage);
  for (const p of schema.problems) f.error(p.path, p.message);
  const spec = get(document, 'spec');
  const matchKnown = !f.errors.some((e) => e.path === 'spec' || e.path.startsWith('spec.match') || e.path === '(document)');
  const match = matchKnown ? validValue(matchSchema, get(spec, 'match')) : undefined;
  return { schema, spec, known: { ...(match ? { match } : {}), matchKnown } };
}
