/**
 * Dremel record shredding for the native writer: the tree of leaves built from an Iceberg schema (`buildNode`,
 * which also records each Parquet schema element), and the walks that shred Arrow data into its leaves
 * (`visitRows`, `visit`).
 */
import type * as arrow from 'apache-arrow';
import type { NestedField, Type } from '../schema.js';
import { parsePrimitiveType } from '../types.js';
import { ParquetError } from './errors.js';
import type { CompactWriter } from './thrift-writer.js';
import { ConvertedType, physicalOf } from './physical-types.js';
import { Leaf } from './column-writer.js';

const REQUIRED = 0;
const OPTIONAL = 1;
const REPEATED = 2;

/** A node of the schema tree, mirroring the Arrow data it shreds. */
export type Node =
  | { readonly kind: 'leaf'; readonly optional: boolean; readonly leaf: Leaf; readonly leaves: readonly Leaf[] }
  | { readonly kind: 'struct'; readonly optional: boolean; readonly children: readonly Node[]; readonly leaves: readonly Leaf[] }
  | { readonly kind: 'list'; readonly optional: boolean; readonly repLevel: number; readonly element: Node; readonly leaves: readonly Leaf[]; readonly simple: boolean }
  | { readonly kind: 'map'; readonly optional: boolean; readonly repLevel: number; readonly key: Node; readonly value: Node; readonly leaves: readonly Leaf[] };

export interface SchemaBuild {
  readonly elements: ((w: CompactWriter) => void)[];
  readonly leaves: Leaf[];
}

export function buildNode(field: { name: string; id: number; required: boolean; type: Type }, path: string[], def: number, rep: number, out: SchemaBuild): Node {
  const optional = !field.required;
  const d = def + (optional ? 1 : 0);
  const repetition = optional ? OPTIONAL : REQUIRED;
  const t = field.type;
  const p = [...path, field.name];
  if (typeof t === 'string') {
    const prim = parsePrimitiveType(t);
    const phys = physicalOf(prim);
    if (phys === undefined) throw new ParquetError('UNSUPPORTED_TYPE', `the native Parquet writer has no encoding for '${t}' (column ${p.join('.')}); write the file with parquet-wasm`);
    out.elements.push((w) => {
      w.beginStruct().i32(1, phys.type);
      if (phys.typeLength !== undefined) w.i32(2, phys.typeLength);
      w.i32(3, repetition).binary(4, field.name);
      if (phys.converted !== undefined) w.i32(6, phys.converted);
      w.i32(9, field.id);
      if (phys.logical) {
        w.struct(10);
        phys.logical(w);
        w.endStruct();
      }
      w.endStruct();
    });
    const leaf = new Leaf(p, prim, d, rep);
    out.leaves.push(leaf);
    return { kind: 'leaf', optional, leaf, leaves: [leaf] };
  }
  const first = out.leaves.length;
  if (t.type === 'struct') {
    out.elements.push((w) => w.beginStruct().i32(3, repetition).binary(4, field.name).i32(5, t.fields.length).i32(9, field.id).endStruct());
    const children = t.fields.map((f: NestedField) => buildNode(f, p, d, rep, out));
    return { kind: 'struct', optional, children, leaves: out.leaves.slice(first) };
  }
  if (t.type === 'list') {
    out.elements.push((w) => w.beginStruct().i32(3, repetition).binary(4, field.name).i32(5, 1).i32(6, ConvertedType.LIST).i32(9, field.id).struct(10).struct(3).endStruct().endStruct().endStruct());
    out.elements.push((w) => w.beginStruct().i32(3, REPEATED).binary(4, 'list').i32(5, 1).endStruct());
    const element = buildNode({ name: 'element', id: t['element-id'], required: t['element-required'], type: t.element }, [...p, 'list'], d + 1, rep + 1, out);
    const leaves = out.leaves.slice(first);
    // Simple: no repetition below the element, so each element gives each leaf exactly one entry.
    return { kind: 'list', optional, repLevel: rep + 1, element, leaves, simple: leaves.every((l) => l.maxRep === rep + 1) };
  }
  out.elements.push((w) => w.beginStruct().i32(3, repetition).binary(4, field.name).i32(5, 1).i32(6, ConvertedType.MAP).i32(9, field.id).struct(10).struct(2).endStruct().endStruct().endStruct());
  out.elements.push((w) => w.beginStruct().i32(3, REPEATED).binary(4, 'key_value').i32(5, 2).endStruct());
  const kv = [...p, 'key_value'];
  const key = buildNode({ name: 'key', id: t['key-id'], required: true, type: t.key }, kv, d + 1, rep + 1, out);
  const value = buildNode({ name: 'value', id: t['value-id'], required: t['value-required'], type: t.value }, kv, d + 1, rep + 1, out);
  return { kind: 'map', optional, repLevel: rep + 1, key, value, leaves: out.leaves.slice(first) };
}

function isValid(data: arrow.Data, i: number): boolean {
  if (data.nullCount === 0) return true;
  const bm = data.nullBitmap;
  // Nulls but no bitmap: arrow-js's all-null column (what writeParquet makes for a missing optional field).
  if (!bm || bm.length === 0) return false;
  const j = data.offset + i;
  return (bm[j >> 3]! & (1 << (j & 7))) !== 0;
}

/** Shreds value `i` of `data` into the leaves under `node` (Dremel record shredding). */
function visit(node: Node, data: arrow.Data, i: number, def: number, rep: number): void {
  if (node.optional) {
    if (!isValid(data, i)) {
      for (const l of node.leaves) l.pushNull(rep, def);
      return;
    }
    def++;
  }
  switch (node.kind) {
    case 'leaf':
      node.leaf.pushValue(rep, data, i);
      return;
    case 'struct':
      for (let c = 0; c < node.children.length; c++) visit(node.children[c]!, data.children[c]!, i, def, rep);
      return;
    case 'list':
    case 'map': {
      const offs = data.valueOffsets as Int32Array;
      const s = offs[i]!;
      const e = offs[i + 1]!;
      if (s === e) {
        for (const l of node.leaves) l.pushNull(rep, def);
        return;
      }
      const child = data.children[0]!;
      for (let k = s; k < e; k++) {
        const r = k === s ? rep : node.repLevel;
        if (node.kind === 'list') visit(node.element, child, k, def + 1, r);
        else {
          visit(node.key, child.children[0]!, k, def + 1, r);
          visit(node.value, child.children[1]!, k, def + 1, r);
        }
      }
      return;
    }
  }
}

/**
 * Shreds rows [start, end) of a column outside any repetition (every entry starts a record, rep 0). Leaves
 * are independent streams, so structs are shredded child by child over the whole range and runs of
 * non-null values go in bulk; lists whose elements hold no further repetition go in bulk per run of
 * non-empty rows. Anything deeper falls back to value-by-value shredding.
 */
export function visitRows(node: Node, data: arrow.Data, start: number, end: number, def: number): void {
  if (node.kind === 'map' || (node.kind === 'list' && !node.simple)) {
    for (let i = start; i < end; i++) visit(node, data, i, def, 0);
    return;
  }
  if (node.optional && data.nullCount !== 0) {
    // Runs of valid rows go in bulk; null rows as one run of null entries.
    let i = start;
    while (i < end) {
      let j = i + 1;
      if (!isValid(data, i)) {
        while (j < end && !isValid(data, j)) j++;
        for (const l of node.leaves) l.pushNulls(j - i, def);
      } else {
        while (j < end && isValid(data, j)) j++;
        visitDefined(node, data, i, j, def + 1);
      }
      i = j;
    }
    return;
  }
  visitDefined(node, data, start, end, node.optional ? def + 1 : def);
}

/** Rows [start, end) of a node whose own value is present in each of them (`def` already counts it). */
function visitDefined(node: Node, data: arrow.Data, start: number, end: number, def: number): void {
  switch (node.kind) {
    case 'leaf':
      node.leaf.pushValues(data, start, end);
      return;
    case 'struct':
      for (let c = 0; c < node.children.length; c++) visitRows(node.children[c]!, data.children[c]!, start, end, def);
      return;
    case 'list': {
      const offs = data.valueOffsets as Int32Array;
      const child = data.children[0]!;
      let i = start;
      while (i < end) {
        if (offs[i] === offs[i + 1]) {
          // An empty list: one entry per leaf, defined down to the list itself.
          for (const l of node.leaves) l.pushNulls(1, def);
          i++;
          continue;
        }
        let j = i + 1;
        while (j < end && offs[j] !== offs[j + 1]) j++;
        const s = offs[i]!;
        const e = offs[j]!;
        const marks = node.leaves.map((l) => l.entries);
        visitRows(node.element, child, s, e, def + 1);
        // Each element gave every leaf exactly one entry; all but each row's first repeat the list.
        node.leaves.forEach((l, k) => {
          const base = marks[k]!;
          l.reps.fill(node.repLevel, base, base + (e - s));
          for (let r = i; r < j; r++) l.reps[base + offs[r]! - s] = 0;
        });
        i = j;
      }
      return;
    }
    case 'map':
      throw new ParquetError('WRITE_FAILED', 'maps are shredded row by row');
  }
}
