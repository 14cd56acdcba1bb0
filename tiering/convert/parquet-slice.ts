/**
 * Reading only some row groups of a remote Parquet file. parquet-wasm decodes whole files from memory, so a
 * fetch that range-reads one row group's column chunks wraps them in a small valid Parquet file of their
 * own: `PAR1`, the chunk bytes, the original footer cut down to those row groups with every file offset
 * shifted, its length and `PAR1`. Nothing is decoded or re-encoded but the footer.
 *
 * The footer is kept as a typed Thrift compact-protocol tree (field ids with their wire types), so that it
 * re-encodes byte for byte apart from the edits. Page-index and bloom-filter references are dropped from
 * the slice, since they point outside the bytes it holds.
 */
import { TType } from '../../iceberg/parquet/thrift.js';
import { TieringConvertError } from './errors.js';

// Thrift compact protocol wire types.
const { BOOL_TRUE: T_TRUE, BOOL_FALSE: T_FALSE, BYTE: T_BYTE, I16: T_I16, I32: T_I32, I64: T_I64, DOUBLE: T_DOUBLE, BINARY: T_BINARY, LIST: T_LIST, SET: T_SET, MAP: T_MAP, STRUCT: T_STRUCT } = TType;

export interface ThriftField {
  readonly id: number;
  readonly type: number;
  value: ThriftTyped;
}
export interface ThriftStructNode {
  readonly kind: 'struct';
  fields: ThriftField[];
}
export interface ThriftListNode {
  readonly kind: 'list';
  readonly elemType: number;
  readonly listType: number;
  items: ThriftTyped[];
}
export interface ThriftMapNode {
  readonly kind: 'map';
  readonly keyType: number;
  readonly valueType: number;
  readonly entries: [ThriftTyped, ThriftTyped][];
}
/** bigint for every integer type; raw bytes for doubles and binaries; a number for a bool list element. */
export type ThriftTyped = boolean | bigint | number | Uint8Array | ThriftStructNode | ThriftListNode | ThriftMapNode;

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}
  private fail(what: string): never {
    throw new TieringConvertError('INVALID_INDEX', `Parquet footer is corrupt at byte ${this.pos}: ${what}; re-tier the segment`);
  }
  byte(): number {
    if (this.pos >= this.buf.length) this.fail('unexpected end');
    return this.buf[this.pos++]!;
  }
  uvarint(): bigint {
    let r = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      r |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return r;
      shift += 7n;
      if (shift > 70n) this.fail('varint too long');
    }
  }
  zigzag(): bigint {
    const v = this.uvarint();
    return (v >> 1n) ^ -(v & 1n);
  }
  bytes(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) this.fail('value runs past the end');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  value(type: number, depth: number): ThriftTyped {
    if (depth > 64) this.fail('nested too deeply');
    switch (type) {
      case T_TRUE:
        return true;
      case T_FALSE:
        return false;
      case T_BYTE:
        return BigInt(this.byte());
      case T_I16:
      case T_I32:
      case T_I64:
        return this.zigzag();
      case T_DOUBLE:
        return this.bytes(8);
      case T_BINARY:
        return this.bytes(Number(this.uvarint()));
      case T_LIST:
      case T_SET: {
        const h = this.byte();
        let size = h >> 4;
        const elemType = h & 0x0f;
        if (size === 15) size = Number(this.uvarint());
        const items: ThriftTyped[] = [];
        for (let i = 0; i < size; i++) items.push(elemType === T_TRUE || elemType === T_FALSE ? this.byte() : this.value(elemType, depth + 1));
        return { kind: 'list', elemType, listType: type, items };
      }
      case T_MAP: {
        const size = Number(this.uvarint());
        if (size === 0) return { kind: 'map', keyType: 0, valueType: 0, entries: [] };
        const t = this.byte();
        const entries: [ThriftTyped, ThriftTyped][] = [];
        for (let i = 0; i < size; i++) entries.push([this.value(t >> 4, depth + 1), this.value(t & 0x0f, depth + 1)]);
        return { kind: 'map', keyType: t >> 4, valueType: t & 0x0f, entries };
      }
      case T_STRUCT:
        return this.struct(depth + 1);
      default:
        return this.fail(`unknown wire type ${type}`);
    }
  }
  struct(depth: number): ThriftStructNode {
    const fields: ThriftField[] = [];
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return { kind: 'struct', fields };
      const type = h & 0x0f;
      const delta = h >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      last = id;
      fields.push({ id, type, value: this.value(type, depth) });
    }
  }
}

class Writer {
  private buf = new Uint8Array(4096);
  len = 0;
  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b & 0xff;
  }
  uvarint(v: bigint): void {
    let x = v;
    for (;;) {
      if (x < 0x80n) {
        this.byte(Number(x));
        return;
      }
      this.byte(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
  }
  zigzag(v: bigint): void {
    this.uvarint(v >= 0n ? v << 1n : ((-v) << 1n) - 1n);
  }
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  value(type: number, v: ThriftTyped): void {
    switch (type) {
      case T_TRUE:
      case T_FALSE:
        return; // carried by the field header
      case T_BYTE:
        this.byte(Number(v as bigint));
        return;
      case T_I16:
      case T_I32:
      case T_I64:
        this.zigzag(v as bigint);
        return;
      case T_DOUBLE:
        this.raw(v as Uint8Array);
        return;
      case T_BINARY: {
        const b = v as Uint8Array;
        this.uvarint(BigInt(b.length));
        this.raw(b);
        return;
      }
      case T_LIST:
      case T_SET: {
        const l = v as ThriftListNode;
        if (l.items.length < 15) this.byte((l.items.length << 4) | l.elemType);
        else {
          this.byte(0xf0 | l.elemType);
          this.uvarint(BigInt(l.items.length));
        }
        for (const it of l.items) {
          if (l.elemType === T_TRUE || l.elemType === T_FALSE) this.byte(it as number);
          else this.value(l.elemType, it);
        }
        return;
      }
      case T_MAP: {
        const m = v as ThriftMapNode;
        this.uvarint(BigInt(m.entries.length));
        if (m.entries.length === 0) return;
        this.byte((m.keyType << 4) | m.valueType);
        for (const [k, x] of m.entries) {
          this.value(m.keyType, k);
          this.value(m.valueType, x);
        }
        return;
      }
      case T_STRUCT:
        this.struct(v as ThriftStructNode);
        return;
    }
  }
  struct(s: ThriftStructNode): void {
    let last = 0;
    for (const f of s.fields) {
      const type = f.type === T_TRUE || f.type === T_FALSE ? (f.value === true ? T_TRUE : T_FALSE) : f.type;
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(f.id));
      }
      last = f.id;
      this.value(type, f.value);
    }
    this.byte(0);
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** Decodes thrift-encoded Parquet FileMetaData into a typed tree. */
export function decodeFooterTree(meta: Uint8Array): ThriftStructNode {
  return new Reader(meta).struct(0);
}

export function encodeFooterTree(tree: ThriftStructNode): Uint8Array {
  const w = new Writer();
  w.struct(tree);
  return w.bytes();
}

function field(s: ThriftStructNode, id: number): ThriftField | undefined {
  return s.fields.find((f) => f.id === id);
}

function shifted(s: ThriftStructNode, ids: readonly number[], delta: bigint, drop: readonly number[]): ThriftStructNode {
  const fields: ThriftField[] = [];
  for (const f of s.fields) {
    if (drop.includes(f.id)) continue;
    if (ids.includes(f.id) && typeof f.value === 'bigint') {
      const v = f.value + delta;
      fields.push({ ...f, value: v < 0n ? 0n : v });
    } else fields.push({ ...f });
  }
  return { kind: 'struct', fields };
}

/** Approximate in-memory cost of a footer tree (for cache budgets): its encoded size times four. */
export function footerTreeCost(metaLength: number): number {
  return metaLength * 4 + 256;
}

/**
 * A standalone Parquet file holding row groups [first, last] of the file whose footer is `footer`, given
 * `span`: that file's bytes from `spanStart` covering all those row groups' column chunks.
 */
export function sliceParquetFile(footer: ThriftStructNode, first: number, last: number, span: Uint8Array, spanStart: number): Uint8Array {
  const rgList = field(footer, 4)?.value;
  if (!rgList || typeof rgList !== 'object' || !('kind' in rgList) || rgList.kind !== 'list') {
    throw new TieringConvertError('INVALID_INDEX', 'Parquet footer has no row groups; the data file is damaged, re-tier the segment');
  }
  const selected = rgList.items.slice(first, last + 1) as ThriftStructNode[];
  if (selected.length !== last - first + 1) {
    throw new TieringConvertError('INDEX_MISMATCH', `Parquet file has ${rgList.items.length} row groups, the index asks for ${first}..${last}; rebuild the index`);
  }
  const delta = BigInt(4 - spanStart);
  let rows = 0n;
  const rowGroups = selected.map((rg) => {
    const numRows = field(rg, 3)?.value;
    if (typeof numRows === 'bigint') rows += numRows;
    const out = shifted(rg, [5], delta, []);
    const cols = field(out, 1);
    if (cols && typeof cols.value === 'object' && 'kind' in cols.value && cols.value.kind === 'list') {
      const list = cols.value;
      const newCols = list.items.map((c) => {
        const cc = shifted(c as ThriftStructNode, [2], delta, [4, 5, 6, 7]);
        const md = field(cc, 3);
        if (md && typeof md.value === 'object' && 'kind' in md.value && md.value.kind === 'struct') {
          md.value = shifted(md.value, [9, 10, 11], delta, [14, 15]);
        }
        return cc;
      });
      const idx = out.fields.indexOf(cols);
      out.fields[idx] = { ...cols, value: { ...list, items: newCols } };
    }
    return out;
  });
  const meta: ThriftStructNode = {
    kind: 'struct',
    fields: footer.fields.map((f) => {
      if (f.id === 3) return { ...f, value: rows };
      if (f.id === 4) return { ...f, value: { ...rgList, items: rowGroups } };
      return f;
    }),
  };
  const metaBytes = encodeFooterTree(meta);
  const out = new Uint8Array(4 + span.length + metaBytes.length + 8);
  const magic = [0x50, 0x41, 0x52, 0x31];
  out.set(magic, 0);
  out.set(span, 4);
  out.set(metaBytes, 4 + span.length);
  const p = 4 + span.length + metaBytes.length;
  new DataView(out.buffer, out.byteOffset, out.length).setUint32(p, metaBytes.length, true);
  out.set(magic, p + 4);
  return out;
}
