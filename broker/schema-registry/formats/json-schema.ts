/**
 * JSON Schema: parsed as JSON, checked against its meta-schema and compiled by Ajv (draft-06/07 by
 * default, 2019-09 and 2020-12 when `$schema` names them; other drafts are checked as draft-07), with
 * references added under their names so `$ref`s to them resolve. Canonical text is compact JSON.
 *
 * Compatibility ("can a reader schema accept every document the writer schema accepts?"), the main rules
 * Confluent applies:
 * - `type`: the reader must allow every writer type (integer widens to number); narrowing or changing fails;
 * - objects: a property the writer may produce but the reader lacks is fine under an open reader
 *   (additionalProperties absent or true) and fails under a closed one; a property the reader adds is fine
 *   when the writer is closed and fails when the writer is open (old documents may carry it with any value),
 *   unless the reader's property accepts anything; newly required properties fail unless they have a
 *   default; closing an open content model fails, opening a closed one is fine;
 * - strings, numbers, arrays: tighter maxLength/minLength, maximum/minimum, maxItems/minItems,
 *   maxProperties/minProperties, a new or changed pattern or multipleOf, uniqueItems added, and `enum`
 *   values removed fail; array items are checked recursively;
 * - `oneOf`/`anyOf`: every writer branch must be readable by some reader branch;
 * - `$ref`s inside the document (`#/definitions/…`, `#/$defs/…`) are followed; other references compare
 *   by their text.
 */
import { Ajv, type AnySchema } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { invalidSchema } from '../errors.js';
import type { ParsedSchema, ResolvedReference, SchemaFormat } from './format.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

export interface ParsedJsonSchema extends ParsedSchema {
  readonly schemaType: 'JSON';
  readonly root: Json;
}

export const JSON_SCHEMA_FORMAT: SchemaFormat<ParsedJsonSchema> = {
  schemaType: 'JSON',
  parse(schema: string, references: readonly ResolvedReference[]): ParsedJsonSchema {
    const root = parseJson(schema, 'the schema');
    if (typeof root !== 'boolean' && !isObject(root)) throw invalidSchema('a JSON Schema must be a JSON object or a boolean');
    const ajv = ajvFor(root);
    for (const ref of references) {
      if (ref.schemaType !== 'JSON') throw invalidSchema(`reference '${ref.name}' is a ${ref.schemaType} schema; a JSON Schema can only reference JSON Schemas`);
      const refRoot = parseJson(ref.schema, `reference '${ref.name}'`);
      try {
        ajv.addSchema(withoutUnknownDraft(refRoot) as AnySchema, ref.name);
      } catch (err) {
        throw invalidSchema(`reference '${ref.name}' is not a valid JSON Schema (${(err as Error).message})`);
      }
    }
    try {
      ajv.compile(withoutUnknownDraft(root) as AnySchema);
    } catch (err) {
      throw invalidSchema(`not a valid JSON Schema (${(err as Error).message})`);
    }
    return { schemaType: 'JSON', canonical: JSON.stringify(root), root };
  },
  readerIncompatibilities(reader: ParsedJsonSchema, writer: ParsedJsonSchema): string[] {
    const problems: string[] = [];
    new Checker(reader.root, writer.root, problems).check(reader.root, writer.root, '#');
    return problems;
  },
};

const KNOWN_DRAFTS = /json-schema\.org\/(draft-0[67]|draft\/2019-09|draft\/2020-12)\/schema/;

function ajvFor(root: Json): Ajv {
  const draft = isObject(root) && typeof root['$schema'] === 'string' ? root['$schema'] : '';
  const options = { strict: false, validateFormats: false, allErrors: false } as const;
  if (draft.includes('2020-12')) return new Ajv2020(options) as unknown as Ajv;
  if (draft.includes('2019-09')) return new Ajv2019(options) as unknown as Ajv;
  return new Ajv(options);
}

/** Drafts Ajv has no meta-schema for (draft-04 and older) are checked as draft-07. */
function withoutUnknownDraft(root: Json): Json {
  if (!isObject(root) || typeof root['$schema'] !== 'string' || KNOWN_DRAFTS.test(root['$schema'])) return root;
  const { $schema: _dropped, ...rest } = root;
  return rest;
}

function parseJson(text: string, what: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw invalidSchema(`${what} is not valid JSON (${(err as Error).message})`);
  }
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const ALL_TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'];

class Checker {
  private readonly seen = new Set<string>();

  constructor(
    private readonly readerRoot: Json,
    private readonly writerRoot: Json,
    private readonly problems: string[],
  ) {}

  check(readerIn: Json, writerIn: Json, path: string): void {
    const reader = this.deref(readerIn, this.readerRoot);
    const writer = this.deref(writerIn, this.writerRoot);
    const key = `${path}|${JSON.stringify(reader)}|${JSON.stringify(writer)}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    if (reader === true || (isObject(reader) && Object.keys(reader).length === 0)) return; // accepts anything
    if (writer === false) return; // the writer produces nothing
    if (reader === false) {
      this.problems.push(`${path}: the reader accepts nothing (false) where the writer produces documents`);
      return;
    }
    if (writer === true || !isObject(writer) || !isObject(reader)) {
      if (JSON.stringify(reader) !== JSON.stringify(writer)) this.problems.push(`${path}: the reader is narrower than the writer, which accepts any document`);
      return;
    }
    const rBranches = branches(reader);
    const wBranches = branches(writer);
    if (wBranches !== undefined) {
      wBranches.forEach((wb, i) => {
        const readers = rBranches ?? [reader];
        if (!readers.some((rb) => this.quiet(rb, wb, `${path}/oneOf/${i}`))) this.problems.push(`${path}: no reader branch accepts the writer's branch ${i}`);
      });
      return;
    }
    if (rBranches !== undefined) {
      if (!rBranches.some((rb) => this.quiet(rb, writer, path))) this.problems.push(`${path}: no branch of the reader's oneOf/anyOf accepts the writer's schema`);
      return;
    }
    this.checkTypes(reader, writer, path);
    this.checkEnum(reader, writer, path);
    this.checkBounds(reader, writer, path);
    if (typesOf(writer).includes('object') || writer['properties'] !== undefined) this.checkObject(reader, writer, path);
    if (typesOf(writer).includes('array') || writer['items'] !== undefined) {
      const ri = reader['items'];
      const wi = writer['items'];
      if (ri !== undefined && !Array.isArray(ri)) this.check(ri, wi === undefined || Array.isArray(wi) ? true : wi, `${path}/items`);
    }
  }

  private quiet(reader: Json, writer: Json, path: string): boolean {
    const probe: string[] = [];
    const c = new Checker(this.readerRoot, this.writerRoot, probe);
    c.check(reader, writer, path);
    return probe.length === 0;
  }

  private deref(s: Json, root: Json): Json {
    let cur = s;
    for (let i = 0; i < 32 && isObject(cur) && typeof cur['$ref'] === 'string' && cur['$ref'].startsWith('#'); i++) {
      const target = pointer(root, cur['$ref']);
      if (target === undefined) return cur;
      cur = target;
    }
    return cur;
  }

  private checkTypes(reader: JsonObject, writer: JsonObject, path: string): void {
    if (reader['type'] === undefined) return;
    const rt = typesOf(reader);
    const wt = writer['type'] === undefined ? ALL_TYPES : typesOf(writer);
    const lost = wt.filter((t) => !rt.includes(t) && !(t === 'integer' && rt.includes('number')));
    if (lost.length === 0) return;
    const kind = lost.length < wt.length ? 'narrowed' : 'changed';
    this.problems.push(`${path}: type ${kind} from ${JSON.stringify(writer['type'] ?? 'any')} to ${JSON.stringify(reader['type'])}`);
  }

  private checkEnum(reader: JsonObject, writer: JsonObject, path: string): void {
    const re = reader['enum'];
    if (!Array.isArray(re)) return;
    const we = writer['enum'];
    if (!Array.isArray(we)) {
      this.problems.push(`${path}: the reader adds an enum the writer did not have`);
      return;
    }
    const missing = we.filter((v) => !re.some((r) => JSON.stringify(r) === JSON.stringify(v)));
    if (missing.length > 0) this.problems.push(`${path}: enum values removed: ${JSON.stringify(missing)}`);
  }

  private checkBounds(reader: JsonObject, writer: JsonObject, path: string): void {
    const tighter = (key: string, dir: 'max' | 'min') => {
      const r = reader[key];
      if (typeof r !== 'number') return;
      const w = writer[key];
      if (typeof w !== 'number' || (dir === 'max' ? r < w : r > w)) this.problems.push(`${path}: ${key} ${typeof w === 'number' ? `changed from ${w} to ${r}` : `${r} added`}`);
    };
    for (const k of ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties']) tighter(k, 'max');
    for (const k of ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties']) tighter(k, 'min');
    if (reader['pattern'] !== undefined && reader['pattern'] !== writer['pattern']) this.problems.push(`${path}: pattern ${writer['pattern'] === undefined ? 'added' : 'changed'}`);
    if (reader['uniqueItems'] === true && writer['uniqueItems'] !== true) this.problems.push(`${path}: uniqueItems added`);
    if (reader['multipleOf'] !== undefined && reader['multipleOf'] !== writer['multipleOf']) this.problems.push(`${path}: multipleOf ${writer['multipleOf'] === undefined ? 'added' : 'changed'}`);
  }

  private checkObject(reader: JsonObject, writer: JsonObject, path: string): void {
    const rp = isObject(reader['properties']) ? reader['properties'] : {};
    const wp = isObject(writer['properties']) ? writer['properties'] : {};
    const rAdditional = reader['additionalProperties'] ?? true;
    const wAdditional = writer['additionalProperties'] ?? true;
    const closed = (a: Json) => a === false;
    for (const [name, ws] of Object.entries(wp)) {
      const rs = rp[name];
      if (rs !== undefined) this.check(rs, ws, `${path}/properties/${name}`);
      else if (ws === false) continue; // the writer never produced it
      else if (closed(rAdditional)) this.problems.push(`${path}/properties/${name}: property removed from a closed content model`);
      else if (rAdditional !== true) this.check(rAdditional, ws, `${path}/properties/${name}`);
    }
    for (const [name, rs] of Object.entries(rp)) {
      if (wp[name] !== undefined) continue;
      if (closed(wAdditional)) continue; // the writer never produced it
      const anything = rs === true || (isObject(rs) && Object.keys(rs).length === 0);
      if (!anything) {
        if (wAdditional === true) this.problems.push(`${path}/properties/${name}: property added to an open content model (old documents may hold '${name}' with any value)`);
        else this.check(rs, wAdditional, `${path}/properties/${name}`);
      }
    }
    if (closed(rAdditional) && !closed(wAdditional)) this.problems.push(`${path}: additionalProperties removed (the content model was closed)`);
    else if (isObject(rAdditional) && !closed(wAdditional)) this.check(rAdditional, wAdditional, `${path}/additionalProperties`);
    const rReq = Array.isArray(reader['required']) ? reader['required'] : [];
    const wReq = Array.isArray(writer['required']) ? writer['required'] : [];
    for (const name of rReq) {
      // A newly required property with a default is fine (Confluent's REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED).
      const rs = typeof name === 'string' ? rp[name] : undefined;
      if (!wReq.includes(name) && !(isObject(rs) && rs['default'] !== undefined)) this.problems.push(`${path}: required property '${String(name)}' added`);
    }
  }
}

function branches(s: JsonObject): Json[] | undefined {
  const b = s['oneOf'] ?? s['anyOf'];
  return Array.isArray(b) ? b : undefined;
}

function typesOf(s: JsonObject): string[] {
  const t = s['type'];
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return [];
}

function pointer(root: Json, ref: string): Json | undefined {
  const parts = ref.replace(/^#\/?/, '').split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'));
  let cur: Json | undefined = root;
  for (const p of parts) {
    if (Array.isArray(cur)) cur = cur[Number(p)];
    else if (isObject(cur)) cur = cur[p];
    else return undefined;
  }
  return cur;
}
