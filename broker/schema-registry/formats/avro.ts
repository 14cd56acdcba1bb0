/**
 * Avro schemas: parsed by avsc (names, namespaces, defaults and references checked), canonicalised as
 * Avro's Schema.toString() writes them (avro-canonical.ts), and checked for compatibility by Avro's schema resolution rules (the specification's
 * "Schema Resolution"), as Apache Avro's SchemaCompatibility applies them:
 *
 * - records: names must match (or a reader alias names the writer); each reader field is matched to the
 *   writer field of that name or one of its aliases and checked recursively; a reader field the writer lacks
 *   needs a default; writer fields the reader lacks are skipped;
 * - promotions: int to long, float or double; long to float or double; float to double; string and bytes
 *   either way;
 * - enums: names match, every writer symbol must be a reader symbol unless the reader has a default;
 * - fixed: names and sizes match; arrays and maps: items and values recursively;
 * - unions: every writer branch must be readable by the reader (a reader union by one of its branches);
 *   a writer non-union must be readable by some branch of a reader union;
 * - named types are resolved through references and recursion is followed once per (reader, writer) pair.
 */
import avro from 'avsc';
import { invalidSchema } from '../errors.js';
import { avroCanonical } from './avro-canonical.js';
import type { ParsedSchema, ResolvedReference, SchemaFormat } from './format.js';

/** The parts of an avsc Type the checker reads. */
interface AvroType {
  readonly typeName: string;
  readonly name?: string;
  readonly aliases?: readonly string[];
  readonly fields?: readonly AvroField[];
  readonly symbols?: readonly string[];
  readonly default?: string;
  readonly size?: number;
  readonly itemsType?: AvroType;
  readonly valuesType?: AvroType;
  readonly types?: readonly AvroType[];
  readonly underlyingType?: AvroType;
}

interface AvroField {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly type: AvroType;
  defaultValue(): unknown;
}

export interface ParsedAvro extends ParsedSchema {
  readonly schemaType: 'AVRO';
  readonly type: AvroType;
}

const PROMOTIONS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  int: ['long', 'float', 'double'],
  long: ['float', 'double'],
  float: ['double'],
  string: ['bytes'],
  bytes: ['string'],
});

export const AVRO_FORMAT: SchemaFormat<ParsedAvro> = {
  schemaType: 'AVRO',
  parse(schema: string, references: readonly ResolvedReference[]): ParsedAvro {
    const registry: Record<string, unknown> = {};
    for (const ref of references) {
      if (ref.schemaType !== 'AVRO') throw invalidSchema(`reference '${ref.name}' is a ${ref.schemaType} schema; an Avro schema can only reference Avro schemas`);
      forSchema(parseJson(ref.schema, `reference '${ref.name}'`), registry, `reference '${ref.name}'`);
    }
    const json = parseJson(schema, 'the schema');
    const type = forSchema(json, registry, 'the schema');
    return { schemaType: 'AVRO', canonical: avroCanonical(json as Parameters<typeof avroCanonical>[0]), type };
  },
  readerIncompatibilities(reader: ParsedAvro, writer: ParsedAvro): string[] {
    const problems: string[] = [];
    check(reader.type, writer.type, '', problems, new Set());
    return problems;
  },
};

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw invalidSchema(`${what} is not valid JSON (${(err as Error).message})`);
  }
}

function forSchema(json: unknown, registry: Record<string, unknown>, what: string): AvroType {
  try {
    return avro.Type.forSchema(json as avro.Schema, { registry: registry as Record<string, avro.Type> }) as unknown as AvroType;
  } catch (err) {
    throw invalidSchema(`${what} is not a valid Avro schema (${(err as Error).message})`);
  }
}

/** The kind the rules work on: logical types by their underlying type, both union spellings as 'union'. */
function kind(t: AvroType): string {
  if (t.typeName.startsWith('union')) return 'union';
  return t.typeName;
}

function unwrap(t: AvroType): AvroType {
  let cur = t;
  while (cur.typeName.startsWith('logical') && cur.underlyingType !== undefined) cur = cur.underlyingType;
  return cur;
}

function shortName(name: string | undefined): string {
  if (name === undefined) return '';
  const i = name.lastIndexOf('.');
  return i < 0 ? name : name.slice(i + 1);
}

/** Avro's name check: full names equal, or unqualified names equal, or a reader alias names the writer. */
function namesMatch(reader: AvroType, writer: AvroType): boolean {
  if (reader.name === writer.name || shortName(reader.name) === shortName(writer.name)) return true;
  return (reader.aliases ?? []).some((a) => a === writer.name || shortName(a) === shortName(writer.name));
}

function describe(t: AvroType): string {
  const u = unwrap(t);
  return u.name !== undefined ? `${kind(u)} ${u.name}` : kind(u);
}

/** Whether `writer` data resolves against `reader` without adding messages (for union branch selection). */
function readable(reader: AvroType, writer: AvroType, seen: Set<string>): boolean {
  const probe: string[] = [];
  check(reader, writer, '', probe, new Set(seen));
  return probe.length === 0;
}

function check(readerIn: AvroType, writerIn: AvroType, path: string, problems: string[], seen: Set<string>): void {
  const reader = unwrap(readerIn);
  const writer = unwrap(writerIn);
  const at = path === '' ? '/' : path;
  const rk = kind(reader);
  const wk = kind(writer);

  if (wk === 'union') {
    (writer.types ?? []).forEach((branch, i) => {
      if (rk === 'union') {
        if (!(reader.types ?? []).some((r) => readable(r, branch, seen))) problems.push(`${at}: the reader's union has no branch that can read the writer's ${describe(branch)} (union branch ${i})`);
      } else {
        check(reader, branch, `${path}/${i}`, problems, seen);
      }
    });
    return;
  }
  if (rk === 'union') {
    if (!(reader.types ?? []).some((r) => readable(r, writer, seen))) problems.push(`${at}: the reader's union has no branch that can read the writer's ${describe(writer)}`);
    return;
  }
  if (rk !== wk) {
    if (!(PROMOTIONS[wk] ?? []).includes(rk)) problems.push(`${at}: the reader's type ${describe(reader)} cannot read the writer's ${describe(writer)}`);
    return;
  }
  switch (rk) {
    case 'record':
    case 'error': {
      if (!namesMatch(reader, writer)) {
        problems.push(`${at}: the reader's record name ${reader.name} does not match the writer's ${writer.name}`);
        return;
      }
      const pair = `${reader.name}<-${writer.name}`;
      if (seen.has(pair)) return; // a recursive type: this pair is being checked further up
      seen.add(pair);
      const byName = new Map((writer.fields ?? []).map((f) => [f.name, f]));
      for (const rf of reader.fields ?? []) {
        const wf = byName.get(rf.name) ?? rf.aliases.map((a) => byName.get(a)).find((f) => f !== undefined);
        if (wf !== undefined) check(rf.type, wf.type, `${path}/fields/${rf.name}`, problems, seen);
        else if (rf.defaultValue() === undefined) problems.push(`${path}/fields/${rf.name}: the reader's field '${rf.name}' has no default value and the writer's record ${writer.name} has no such field`);
      }
      seen.delete(pair);
      return;
    }
    case 'enum': {
      if (!namesMatch(reader, writer)) {
        problems.push(`${at}: the reader's enum name ${reader.name} does not match the writer's ${writer.name}`);
        return;
      }
      if (reader.default !== undefined) return;
      const missing = (writer.symbols ?? []).filter((s) => !(reader.symbols ?? []).includes(s));
      if (missing.length > 0) problems.push(`${at}: the reader's enum ${reader.name} lacks the writer's symbols [${missing.join(', ')}] and has no default`);
      return;
    }
    case 'fixed':
      if (!namesMatch(reader, writer)) problems.push(`${at}: the reader's fixed name ${reader.name} does not match the writer's ${writer.name}`);
      else if (reader.size !== writer.size) problems.push(`${at}: the reader's fixed ${reader.name} has size ${reader.size}, the writer's ${writer.size}`);
      return;
    case 'array':
      if (reader.itemsType && writer.itemsType) check(reader.itemsType, writer.itemsType, `${path}/items`, problems, seen);
      return;
    case 'map':
      if (reader.valuesType && writer.valuesType) check(reader.valuesType, writer.valuesType, `${path}/values`, problems, seen);
      return;
    default:
      return; // the same primitive
  }
}
