/**
 * The canonical text of an Avro schema, as Apache Avro's `Schema.toString()` writes it (what Confluent's
 * registry stores and compares): attributes in Avro's order, names written relative to the enclosing
 * namespace, a primitive without attributes as a bare string, and other attributes (logicalType, custom
 * properties) kept after the standard ones. Two spellings of one schema (key order, `"int"` versus
 * `{"type":"int"}`, a full name versus name plus namespace) get the same text, so they share an id.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);
const NAMED = new Set(['record', 'error', 'enum', 'fixed']);

export function avroCanonical(schema: Json): string {
  return JSON.stringify(canonical(schema, ''));
}

function isObj(v: Json | undefined): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Splits a name into its namespace and short name, given the enclosing namespace. */
function fullName(name: string, namespace: Json | undefined, enclosing: string): { space: string; short: string } {
  const dot = name.lastIndexOf('.');
  if (dot >= 0) return { space: name.slice(0, dot), short: name.slice(dot + 1) };
  return { space: typeof namespace === 'string' ? namespace : enclosing, short: name };
}

/** A reference to a named type, written the way Avro writes it: short when in the enclosing namespace. */
function reference(name: string, enclosing: string): string {
  const dot = name.lastIndexOf('.');
  if (dot >= 0 && name.slice(0, dot) === enclosing) return name.slice(dot + 1);
  return name;
}

function rest(o: { [k: string]: Json }, known: readonly string[]): [string, Json][] {
  return Object.entries(o).filter(([k]) => !known.includes(k));
}

function canonical(s: Json, ns: string): Json {
  if (typeof s === 'string') return PRIMITIVES.has(s) ? s : reference(s, ns);
  if (Array.isArray(s)) return s.map((b) => canonical(b, ns));
  if (!isObj(s)) return s;
  const type = s['type'];
  if (typeof type === 'string' && NAMED.has(type) && typeof s['name'] === 'string') {
    const { space, short } = fullName(s['name'], s['namespace'], ns);
    const out: [string, Json][] = [['type', type], ['name', short]];
    if (space !== ns) out.push(['namespace', space]); // as Avro: only where it differs from the enclosing one
    if (s['doc'] !== undefined) out.push(['doc', s['doc']]);
    if (type === 'record' || type === 'error') {
      const fields = Array.isArray(s['fields']) ? s['fields'] : [];
      out.push(['fields', fields.map((f) => field(f, space))]);
    } else if (type === 'enum') {
      out.push(['symbols', s['symbols'] ?? []]);
      if (s['default'] !== undefined) out.push(['default', s['default']]);
    } else {
      out.push(['size', s['size'] ?? 0]);
    }
    out.push(...rest(s, ['type', 'name', 'namespace', 'doc', 'fields', 'symbols', 'default', 'size', 'aliases']));
    if (s['aliases'] !== undefined) out.push(['aliases', s['aliases']]);
    return Object.fromEntries(out);
  }
  if (type === 'array') return Object.fromEntries([['type', 'array'], ['items', canonical(s['items'] ?? null, ns)], ...rest(s, ['type', 'items'])]);
  if (type === 'map') return Object.fromEntries([['type', 'map'], ['values', canonical(s['values'] ?? null, ns)], ...rest(s, ['type', 'values'])]);
  if (typeof type === 'string' || Array.isArray(type) || isObj(type)) {
    const extra = rest(s, ['type']);
    const inner = canonical(type, ns);
    if (extra.length === 0) return inner; // {"type":"int"} is "int"; {"type":{...}} is the inner schema
    return Object.fromEntries([['type', inner], ...extra]);
  }
  return s;
}

function field(f: Json, ns: string): Json {
  if (!isObj(f)) return f;
  const out: [string, Json][] = [['name', f['name'] ?? '']];
  out.push(['type', canonical(f['type'] ?? null, ns)]);
  if (f['doc'] !== undefined) out.push(['doc', f['doc']]);
  if (f['default'] !== undefined) out.push(['default', f['default']]);
  if (f['order'] !== undefined && f['order'] !== 'ascending') out.push(['order', f['order']]);
  if (f['aliases'] !== undefined) out.push(['aliases', f['aliases']]);
  out.push(...rest(f, ['name', 'type', 'doc', 'default', 'order', 'aliases']));
  return Object.fromEntries(out);
}
