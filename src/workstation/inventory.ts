// The inventory `media build` reads (issue 19, issue 30): rows of sites, as CSV or YAML, each with the line it
// starts on so that a message names "row 2 (line 3)"; and the nodes' own rows that `prepare` writes
// (src/factory/inventory-row.ts), joined to the sites by serial number. Every problem of every row is collected,
// so one run of the build lists them all.
import { createPublicKey } from 'node:crypto';
import { LineCounter, isMap, isSeq, parseDocument } from 'yaml';
import { INVENTORY_ROW_FILE } from '../paths';
import { controlCharIndex } from '../siteconfig/problems';

export class BuildError extends Error {
  override name = 'BuildError';
}

/** One row: its values by column, and where it is in the file (for messages). */
export interface InventoryRow {
  /** 1-based: the data row in a CSV (after the header), the list item in YAML. */
  row: number;
  /** 1-based line of the file where the row starts. */
  line: number;
  values: Record<string, string>;
}

/** `row 2 (line 3), store-0002`: how messages name a row. */
export function rowName(row: InventoryRow): string {
  return `row ${row.row} (line ${row.line})${row.values.name ? `, ${row.values.name}` : ''}`;
}

/** The one column whose value may span lines: the node's PEM public key, as `prepare` writes it (never templated). */
const PEM_COLUMN = 'nodePublicKey';
/** The columns a site row may name its node's serial number with. */
const SERIAL_COLUMNS = ['serialNumber', 'serial'] as const;
/** Line breaks beyond ASCII's (NEL, LINE and PARAGRAPH SEPARATOR): YAML 1.1 readers break lines at them too. */
const UNICODE_BREAK = /[\u0085\u2028\u2029]/;

/**
 * Why an inventory value cannot be used, or undefined: a line break or control character (a value is one line,
 * whatever the template does with it) and, in a CSV cell, a leading =, +, - or @, which a spreadsheet opening the
 * file runs as a formula (OWASP, "CSV Injection").
 */
export function cellProblem(column: string, value: string, csv: boolean): string | undefined {
  if (column === PEM_COLUMN) return undefined;
  if (controlCharIndex(value) >= 0 || UNICODE_BREAK.test(value)) return 'holds a line break or control character: a value is one line of text';
  if (csv && /^[=+\-@]/.test(value)) return `starts with '${value[0]!}', which a spreadsheet runs as a formula: write the value without it`;
  return undefined;
}

/** The rows of a file, or the problems of the file (each naming its row and line). */
export type Parsed = { rows: InventoryRow[]; problems: string[] };

/** YAML (`sites:` list of maps, or a bare list) or CSV (a header row, then one row per site). */
export function parseInventory(text: string, fileName: string): Parsed {
  if (/\.csv$/i.test(fileName)) return parseCsv(text, fileName);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0) throw new BuildError(`${fileName} is not YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const top = doc.contents;
  const list = isSeq(top) ? top : isMap(top) ? top.get('sites', true) : undefined;
  if (!isSeq(list)) throw new BuildError(`${fileName}: expected a list of rows (or "sites:" with a list), one map of values per row`);
  const rows: InventoryRow[] = [];
  const problems: string[] = [];
  list.items.forEach((item, i) => {
    const line = lines.linePos((item as unknown as { range?: number[] } | null)?.range?.[0] ?? 0).line;
    const at = `${fileName}: row ${i + 1} (line ${line})`;
    if (!isMap(item)) {
      problems.push(`${at} is not a map of values`);
      return;
    }
    const values: Record<string, string> = {};
    let usable = true;
    for (const [k, v] of Object.entries(item.toJSON() as Record<string, unknown>)) {
      const problem = v !== null && typeof v === 'object' ? `a value must be a string or a number, not a ${Array.isArray(v) ? 'list' : 'map'}` : cellProblem(k, String(v ?? ''), false);
      if (problem) {
        problems.push(`${at}, ${k}: ${problem}`);
        usable = false;
      } else values[k] = String(v ?? '');
    }
    if (usable) rows.push({ row: i + 1, line, values });
  });
  return { rows, problems };
}

/**
 * A header with both serial columns: joinNodes takes serialNumber's value and reads serial's only where that is
 * blank, so a row could name one node in each and be built for the first unseen.
 */
function refuseBothSerialColumns(names: string[], fileName: string): void {
  const [first, second] = SERIAL_COLUMNS.map((c) => names.indexOf(c) + 1);
  if (first! > 0 && second! > 0) {
    throw new BuildError(`${fileName}: the header names both ${SERIAL_COLUMNS[0]} (column ${first!}) and ${SERIAL_COLUMNS[1]} (column ${second!}), two columns for the one serial number: keep one`);
  }
}

/** RFC 4180 CSV: commas, double-quoted fields with "" for a quote (a quoted field may span lines: a PEM), CRLF or LF. */
function parseCsv(text: string, fileName: string): Parsed {
  const records: { line: number; fields: string[] }[] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let line = 1;
  let start = 1;
  const end = () => {
    record.push(field);
    if (record.some((f) => f !== '')) records.push({ line: start, fields: record });
    record = [];
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') {
        i++;
        line++;
      }
      end();
      start = line;
    } else field += c;
  }
  end();
  const [header, ...rows] = records;
  if (!header) throw new BuildError(`${fileName} is empty: a CSV inventory needs a header row (name,…) and one row per site`);
  // A column named twice: the later one would win unseen, and the build signs it (the hostile re-test of issue 36).
  const names = header.fields.map((h) => h.trim());
  const twice = names.flatMap((h, j) => (names.indexOf(h) !== j ? [`${h === '' ? '(no name)' : h} (columns ${names.indexOf(h) + 1} and ${j + 1})`] : []));
  if (twice.length > 0) throw new BuildError(`${fileName}: the header names ${twice.join(', ')} twice: give each column once`);
  refuseBothSerialColumns(names, fileName);
  const problems: string[] = [];
  const out: InventoryRow[] = [];
  rows.forEach((r, i) => {
    if (r.fields.length !== header.fields.length) {
      problems.push(`${fileName}: row ${i + 1} (line ${r.line}): ${r.fields.length} columns, but the header has ${header.fields.length}`);
      return;
    }
    const values = Object.fromEntries(header.fields.map((h, j) => [h.trim(), r.fields[j]!.trim()]));
    const bad = header.fields.map((h, j) => [j, h.trim(), cellProblem(h.trim(), values[h.trim()]!, true)] as const).filter(([, , p]) => p !== undefined);
    for (const [j, h, p] of bad) problems.push(`${fileName}: row ${i + 1} (line ${r.line}), column ${j + 1} (${h}): ${p!}`);
    if (bad.length === 0) out.push({ row: i + 1, line: r.line, values });
  });
  return { rows: out, problems };
}

/**
 * Each site row with its node's row (from `prepare`) merged in, joined by serial number. A site's own value wins
 * over the node's, except the names the node was installed with, which a site cannot change: a different one is
 * a problem of that row.
 */
export function joinNodes(sites: InventoryRow[], nodes: InventoryRow[], nodesFile: string): Parsed {
  const problems: string[] = [];
  const bySerial = new Map<string, InventoryRow>();
  for (const n of nodes) {
    const serial = n.values.serialNumber;
    if (!serial) problems.push(`${nodesFile}: row ${n.row} (line ${n.line}) has no serialNumber to join it to a site by`);
    else if (bySerial.has(serial)) problems.push(`${nodesFile}: row ${n.row} (line ${n.line}): serial number ${serial} is also in row ${bySerial.get(serial)!.row}`);
    else bySerial.set(serial, n);
  }
  const rows: InventoryRow[] = [];
  for (const site of sites) {
    const column = SERIAL_COLUMNS.find((c) => site.values[c]);
    const serial = column ? site.values[column]! : undefined;
    const node = serial === undefined ? undefined : bySerial.get(serial);
    if (!node) {
      problems.push(`${rowName(site)}: ${serial === undefined ? 'gives no serialNumber (or serial) column' : `serial number ${serial} is in no row of ${nodesFile}`}: run prepare on that node and add its row (${INVENTORY_ROW_FILE})`);
      continue;
    }
    const mismatch = (['clusterName', 'hostname'] as const).filter((k) => site.values[k] && node.values[k] && site.values[k] !== node.values[k]);
    for (const k of mismatch) problems.push(`${rowName(site)}: ${k} ${site.values[k]}, but the node with serial number ${serial} was installed with ${k} ${node.values[k]}, which cannot change`);
    // An empty cell of the site row (a CSV column left blank) is the node's value.
    rows.push({ ...site, values: { ...node.values, ...Object.fromEntries(Object.entries(site.values).filter(([, v]) => v !== '')) } });
  }
  return { rows, problems };
}

/**
 * A row's nodePublicKey: the PEM text itself (as `prepare` writes it into the row) or a file beside the
 * inventory. `read` returns undefined for a file that cannot be read. The problem names what was expected.
 */
export async function nodeKeyOf(value: string, read: (file: string) => Promise<string | undefined>): Promise<{ pem: string } | { problem: string }> {
  const text = value.includes('-----BEGIN') ? value : await read(value);
  const shown = value.includes('-----BEGIN') ? 'the PEM text given' : `'${value}'`;
  if (text === undefined) return { problem: `nodePublicKey ${shown} is neither PEM text (-----BEGIN PUBLIC KEY-----) nor a file beside the inventory: give the key prepare wrote into the node's row, or the path of a file holding it` };
  try {
    const key = createPublicKey(text);
    if (key.asymmetricKeyType !== 'x25519') return { problem: `nodePublicKey ${shown} is a ${key.asymmetricKeyType ?? 'non-asymmetric'} key, not the node's X25519 key that prepare makes` };
  } catch {
    return { problem: `nodePublicKey ${shown} holds no PEM public key: give the key prepare wrote into the node's row (nodePublicKey), or the path of a file holding it` };
  }
  return { pem: text };
}
