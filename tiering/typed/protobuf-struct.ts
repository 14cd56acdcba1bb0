/**
 * google.protobuf.Struct, Value and ListValue (struct.proto) as a string column holding the value as JSON
 * text, Protobuf's JSON mapping of them: they are recursive (a Value holds Structs and lists of Values), so
 * no Iceberg struct can hold them. Decoding writes the JSON text straight from the wire, keys in wire order;
 * encoding parses it back (JSON.parse, so keys a JS object reorders, integer-like ones, and repeated keys
 * re-encode in another order: those payloads keep their raw bytes) and writes the canonical form:
 *   Value: null_value = 1 (enum), number_value = 2 (double), string_value = 3, bool_value = 4,
 *          struct_value = 5, list_value = 6 (one of them);
 *   Struct: map<string, Value> fields = 1;  ListValue: repeated Value values = 1.
 * A number that is not finite (JSON has no NaN) becomes `null` in the text, and an empty Value (no kind set)
 * `null` too: both then re-encode to other bytes.
 */
import { delimitedKind, corrupt, type Kind } from './protobuf-kind.js';
import { WIRE_FIXED64, WIRE_LEN, WIRE_VARINT, WireReader, WireWriter } from './protobuf-wire.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const MAX_DEPTH = 100;

function valueText(r: WireReader, depth: number): string {
  if (depth > MAX_DEPTH) throw corrupt(`a google.protobuf.Value nests deeper than ${MAX_DEPTH}`);
  let text = 'null';
  while (!r.done) {
    const tag = r.uint32();
    switch (tag) {
      case (1 << 3) | WIRE_VARINT:
        r.varint();
        text = 'null';
        break;
      case (2 << 3) | WIRE_FIXED64:
        text = JSON.stringify(r.double());
        break;
      case (3 << 3) | WIRE_LEN:
        text = JSON.stringify(r.string());
        break;
      case (4 << 3) | WIRE_VARINT:
        r.varint();
        text = r.lo !== 0 || r.hi !== 0 ? 'true' : 'false';
        break;
      case (5 << 3) | WIRE_LEN:
        text = structText(sub(r), depth + 1);
        break;
      case (6 << 3) | WIRE_LEN:
        text = listText(sub(r), depth + 1);
        break;
      default:
        r.skip(tag & 7, tag >>> 3);
    }
  }
  return text;
}

function sub(r: WireReader): WireReader {
  const [s, e] = r.delimited();
  return new WireReader(r.buf, s, e);
}

function structText(r: WireReader, depth: number): string {
  const parts: string[] = [];
  while (!r.done) {
    const tag = r.uint32();
    if (tag !== ((1 << 3) | WIRE_LEN)) {
      r.skip(tag & 7, tag >>> 3);
      continue;
    }
    const entry = sub(r);
    let key = '';
    let value = 'null';
    while (!entry.done) {
      const t = entry.uint32();
      if (t === ((1 << 3) | WIRE_LEN)) key = entry.string();
      else if (t === ((2 << 3) | WIRE_LEN)) value = valueText(sub(entry), depth + 1);
      else entry.skip(t & 7, t >>> 3);
    }
    parts.push(`${JSON.stringify(key)}:${value}`);
  }
  return `{${parts.join(',')}}`;
}

function listText(r: WireReader, depth: number): string {
  const parts: string[] = [];
  while (!r.done) {
    const tag = r.uint32();
    if (tag === ((1 << 3) | WIRE_LEN)) parts.push(valueText(sub(r), depth + 1));
    else r.skip(tag & 7, tag >>> 3);
  }
  return `[${parts.join(',')}]`;
}

function parse(v: unknown, what: string): Json {
  if (typeof v !== 'string') throw corrupt(`a ${what} column holds JSON text, got ${typeof v}`);
  try {
    return JSON.parse(v) as Json;
  } catch (err) {
    throw corrupt(`a ${what} column holds text that is not JSON (${(err as Error).message})`);
  }
}

function writeValue(w: WireWriter, v: Json): void {
  if (v === null) {
    w.tag(1, WIRE_VARINT);
    w.uint32(0);
  } else if (typeof v === 'number') {
    w.tag(2, WIRE_FIXED64);
    w.double(v);
  } else if (typeof v === 'string') {
    w.tag(3, WIRE_LEN);
    w.string(v);
  } else if (typeof v === 'boolean') {
    w.tag(4, WIRE_VARINT);
    w.uint32(v ? 1 : 0);
  } else if (Array.isArray(v)) {
    w.tag(6, WIRE_LEN);
    w.delimited((x) => writeList(x, v));
  } else {
    w.tag(5, WIRE_LEN);
    w.delimited((x) => writeStruct(x, v));
  }
}


function writeStruct(w: WireWriter, obj: Json): void {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw corrupt('a google.protobuf.Struct column must hold a JSON object');
  for (const [k, v] of Object.entries(obj)) {
    w.tag(1, WIRE_LEN);
    w.delimited((e) => {
      e.tag(1, WIRE_LEN);
      e.string(k);
      e.tag(2, WIRE_LEN);
      e.delimited((x) => writeValue(x, v));
    });
  }
}

function writeList(w: WireWriter, list: Json): void {
  if (!Array.isArray(list)) throw corrupt('a google.protobuf.ListValue column must hold a JSON array');
  for (const v of list) {
    w.tag(1, WIRE_LEN);
    w.delimited((x) => writeValue(x, v));
  }
}

export const STRUCT_KINDS: Readonly<Record<string, Kind>> = Object.freeze({
  'google.protobuf.Struct': delimitedKind('string', (r) => structText(r, 0), (w, v) => writeStruct(w, parse(v, 'google.protobuf.Struct'))),
  'google.protobuf.Value': delimitedKind('string', (r) => valueText(r, 0), (w, v) => writeValue(w, parse(v, 'google.protobuf.Value'))),
  'google.protobuf.ListValue': delimitedKind('string', (r) => listText(r, 0), (w, v) => writeList(w, parse(v, 'google.protobuf.ListValue'))),
});
