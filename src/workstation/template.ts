// `media build`'s templating (issue 36, finding 5): every `${column}` of the template becomes a YAML scalar of its
// field's type, never raw text. The template is parsed with a placeholder token standing in for each `${…}`, then
// each scalar holding a token gets the row's value as its value, and the YAML library writes it (quoting it when
// it must): a value cannot end its scalar, open a mapping or add a key to the config the build then signs,
// whatever it holds. Values with control characters or line breaks are refused before (inventory.ts).
import { randomBytes } from 'node:crypto';
import { isPair, isScalar, parseAllDocuments, visit, type Document } from 'yaml';
import { BuildError, type InventoryRow } from './inventory';

export const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g;

/**
 * Where a placeholder that is the whole (plain) scalar takes a number or boolean when the value is one: `typed`
 * says it for a field's path. Elsewhere the value is a string, as the site-config schema types its fields.
 */
export type TypedAt = (path: readonly string[]) => boolean;

/** The site-config template: strings everywhere, except inside the nmstate state and an inline pull secret. */
export const SITE_CONFIG_TYPES: TypedAt = (p) => (p[0] === 'spec' && p[1] === 'network' && p[2] === 'nmstate') || (p[0] === 'spec' && p[1] === 'pullSecret');
/** nmstate files and extra manifests: their own schemas, so the template's author says it (prefix-length: ${prefix}). */
export const ANY_TYPES: TypedAt = () => true;

const INTEGER = /^(0|[1-9][0-9]{0,14})$/;

function typedValue(value: string): string | number | boolean {
  if (INTEGER.test(value)) return Number(value);
  if (value === 'true' || value === 'false') return value === 'true';
  return value;
}

/** The keys leading to a node, from `visit`'s ancestors (sequence items count as no key). */
function keysOf(ancestors: readonly unknown[]): string[] {
  const keys: string[] = [];
  for (const a of ancestors) if (isPair(a) && isScalar(a.key)) keys.push(String(a.key.value));
  return keys;
}

/**
 * `template` (YAML, one or more documents) with every `${column}` replaced by the row's value as a YAML scalar.
 * A placeholder the row lacks is an error; so is one in a comment-free spot the YAML cannot hold (a template
 * that is not YAML once each placeholder is a plain word).
 */
export function fillTemplate(template: string, row: InventoryRow, typed: TypedAt = SITE_CONFIG_TYPES): string {
  const missing = new Set<string>();
  for (const [, key] of template.matchAll(PLACEHOLDER)) if (!row.values[key!]) missing.add(key!);
  if (missing.size > 0) throw new BuildError(`the template needs ${[...missing].map((k) => `\${${k}}`).join(', ')}, which this row does not give`);
  const nonce = randomBytes(6).toString('hex');
  const keys: string[] = [];
  const tokenized = template.replace(PLACEHOLDER, (_, key: string) => `sno${nonce}p${keys.push(key) - 1}x`);
  const token = new RegExp(`sno${nonce}p(\\d+)x`, 'g');
  const valueOf = (i: string) => row.values[keys[Number(i)]!]!;
  const docs = parseAllDocuments(tokenized, { prettyErrors: false }) as Document[] | { empty: true };
  if (!Array.isArray(docs)) return template;
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new BuildError(`the template is not YAML (${doc.errors[0]!.message.split('\n')[0]!.replace(token, (_, i: string) => `\${${keys[Number(i)]!}}`)})`);
    visit(doc, {
      Scalar(_, node, ancestors) {
        if (typeof node.value !== 'string' || !node.value.includes(`sno${nonce}p`)) return;
        const whole = new RegExp(`^sno${nonce}p(\\d+)x$`).exec(node.value);
        const plain = node.type === 'PLAIN' || node.type === undefined;
        node.value = whole && plain && typed(keysOf(ancestors)) ? typedValue(valueOf(whole[1]!)) : node.value.replace(token, (_m, i: string) => valueOf(i));
        // The library picks the style that reads back as this value (quoted when plain would not).
        if (plain) delete node.type;
      },
    });
  }
  // A placeholder left in a comment is written back as it was: comments take no values.
  return docs.map((d) => d.toString()).join('').replace(token, (_, i: string) => `\${${keys[Number(i)]!}}`);
}
