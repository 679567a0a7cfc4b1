// The one way the agent reads YAML: YAML 1.2's core schema whatever a document's %YAML directive says, explicit
// tags (!!binary, !!set, !!timestamp, …) left unresolved, no `<<` merge keys. That is all its inputs need
// (site-configs, kubeconfigs, the install-config: JSON-like data), and it is what lets the node bundle leave
// out the yaml package's YAML 1.1 types (esbuild.config.mjs, yaml11StandIn): yaml reaches them only through
// schema 'yaml-1.1' (an option, or a %YAML 1.1 directive when no schema is given) or resolveKnownTags, and
// every parse here pins both. eslint.config.mjs keeps yaml's parse functions out of the rest of the node code.
import { parse, parseAllDocuments, type Document, type DocumentOptions, type EmptyStream, type ParseOptions, type SchemaOptions } from 'yaml';

/** Last in every options object, so no caller can undo them. logLevel 'error': warnings are the caller's to read. */
export const YAML_CORE = { version: '1.2', schema: 'core', resolveKnownTags: false, merge: false, logLevel: 'error' } as const;

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/** One document into plain data; throws yaml's error on a syntax error. */
export function parseYamlCore(text: string): unknown {
  return parse(text, YAML_CORE);
}

/** Every document of `text`, with the caller's parser options (line counter, strictness) under YAML_CORE. */
export function parseAllYamlCore(text: string, options: Omit<Options, keyof typeof YAML_CORE>): Document.Parsed[] | EmptyStream {
  return parseAllDocuments(text, { ...options, ...YAML_CORE });
}
