/**
 * Typed values (rows by the conventions of ./api.ts) to Arrow data and back, by Iceberg type:
 *
 * - `buildColumn(type, values)`: one column's Arrow data for a chunk of rows, with the Arrow type
 *   iceberg/parquet/arrow-schema.ts gives that Iceberg type (so the Parquet writer accepts and stamps it).
 *   A value held by a wider column than its writer's type (an int in a column promoted to long, a float in a
 *   double column) is widened here.
 * - `readValue(data, type, i)`: row i of Arrow data read back from a data file (the parquet-wasm reader),
 *   as a value by the same conventions (int64-based values stay exact: they are read from the raw buffers).
 *
 * Nulls: a null or undefined value is a null slot (every typed column is optional in the table).
 * Indexing follows Arrow JS: value and offset buffers are sliced with the data (indexed by row), validity
 * bitmaps and boolean values are not (indexed by `offset + row`).
 */
import * as arrow from 'apache-arrow';
import type { Type } from '../../iceberg/schema.js';
import { icebergTypeToArrow } from '../../iceberg/parquet/arrow-schema.js';
import { parsePrimitiveType, type ParsedPrimitive } from '../../iceberg/types.js';
import { TypedValueError } from './api.js';

const dec = new TextDecoder('utf-8', { fatal: false });

function validity(values: readonly unknown[]): { bitmap: Uint8Array | undefined; nulls: number } {
  let nulls = 0;
  for (const v of values) if (v === null || v === undefined) nulls++;
  if (nulls === 0) return { bitmap: undefined, nulls };
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) bitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { bitmap, nulls };
}

function bad(what: string, v: unknown): never {
  throw new TypedValueError('CORRUPT_PAYLOAD', `a ${what} column cannot hold ${typeof v === 'bigint' ? `${v}n` : JSON.stringify(v)}`);
}

function toBigInt(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return bad(what, v);
}

function uuidBytes(v: unknown): Uint8Array {
  if (typeof v !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v)) return bad('uuid', v);
  return Buffer.from(v.replace(/-/g, ''), 'hex');
}

function bytesOf(v: unknown, what: string): Uint8Array {
  if (v instanceof Uint8Array) return v;
  return bad(what, v);
}

function base(type: arrow.DataType, length: number, nulls: number, bitmap: Uint8Array | undefined) {
  return { type, length, nullCount: nulls, ...(bitmap ? { nullBitmap: bitmap } : {}) };
}

function variableWidth(type: arrow.DataType, values: readonly unknown[], toBytes: (v: unknown) => Uint8Array): arrow.Data {
  const { bitmap, nulls } = validity(values);
  const parts: Uint8Array[] = [];
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) {
      const b = toBytes(v);
      parts.push(b);
      total += b.length;
    }
    offsets[i + 1] = total;
  });
  const data = new Uint8Array(total);
  let p = 0;
  for (const b of parts) {
    data.set(b, p);
    p += b.length;
  }
  return arrow.makeData({ ...base(type, values.length, nulls, bitmap), valueOffsets: offsets, data } as never) as arrow.Data;
}

/** Utf8 data: every string written straight into one buffer (no per-value array). */
function strings(type: arrow.DataType, values: readonly unknown[]): arrow.Data {
  const { bitmap, nulls } = validity(values);
  let total = 0;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string') bad('string', v);
    total += Buffer.byteLength(v, 'utf8');
  }
  const data = Buffer.allocUnsafe(total);
  const offsets = new Int32Array(values.length + 1);
  let p = 0;
  values.forEach((v, i) => {
    if (typeof v === 'string') p += data.write(v, p, 'utf8');
    offsets[i + 1] = p;
  });
  return arrow.makeData({ ...base(type, values.length, nulls, bitmap), valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, p) } as never) as arrow.Data;
}

function primitive(p: ParsedPrimitive, type: arrow.DataType, values: readonly unknown[]): arrow.Data {
  const n = values.length;
  const { bitmap, nulls } = validity(values);
  const make = (data: ArrayBufferView): arrow.Data => arrow.makeData({ ...base(type, n, nulls, bitmap), data } as never) as arrow.Data;
  switch (p.kind) {
    case 'boolean': {
      const bits = new Uint8Array((n + 7) >> 3);
      values.forEach((v, i) => {
        if (v === true) bits[i >> 3]! |= 1 << (i & 7);
        else if (v !== false && v !== null && v !== undefined) bad('boolean', v);
      });
      return make(bits);
    }
    case 'int':
    case 'date': {
      const a = new Int32Array(n);
      values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) bad(p.kind, v);
        a[i] = v;
      });
      return make(a);
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const a = new BigInt64Array(n);
      values.forEach((v, i) => {
        if (v !== null && v !== undefined) a[i] = BigInt.asIntN(64, toBigInt(v, p.kind));
      });
      return make(a);
    }
    case 'float':
    case 'double': {
      const a = p.kind === 'float' ? new Float32Array(n) : new Float64Array(n);
      values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        if (typeof v !== 'number') bad(p.kind, v);
        a[i] = v;
      });
      return make(a);
    }
    case 'decimal': {
      // 128-bit two's complement, little-endian 32-bit words.
      const a = new Uint32Array(4 * n);
      values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        let x = BigInt.asUintN(128, toBigInt(v, 'decimal'));
        for (let w = 0; w < 4; w++) {
          a[4 * i + w] = Number(x & 0xffffffffn);
          x >>= 32n;
        }
      });
      return make(a);
    }
    case 'string':
      return strings(type, values);
    case 'binary':
      return variableWidth(type, values, (v) => bytesOf(v, 'binary'));
    case 'uuid':
    case 'fixed': {
      const width = p.kind === 'fixed' ? p.length : 16;
      const a = new Uint8Array(width * n);
      values.forEach((v, i) => {
        if (v === null || v === undefined) return;
        const b = p.kind === 'uuid' ? uuidBytes(v) : bytesOf(v, `fixed[${width}]`);
        if (b.length !== width) bad(`fixed[${width}]`, `${b.length} bytes`);
        a.set(b, i * width);
      });
      return make(a);
    }
    default:
      throw new TypedValueError('UNSUPPORTED_SCHEMA', `typed columns of Iceberg type ${p.kind} are not written`);
  }
}

/** One column of typed values as Arrow data of `type`'s Arrow type (see the module comment). */
export function buildColumn(type: Type, values: readonly unknown[]): arrow.Data {
  return buildWith(type, icebergTypeToArrow(type), values);
}

function buildWith(type: Type, at: arrow.DataType, values: readonly unknown[]): arrow.Data {
  if (typeof type === 'string') return primitive(parsePrimitiveType(type), at, values);
  const { bitmap, nulls } = validity(values);
  const n = values.length;
  switch (type.type) {
    case 'struct': {
      const st = at as arrow.Struct;
      const children = type.fields.map((f, k) => {
        const column = values.map((v) => (v === null || v === undefined ? null : (v as Record<string, unknown>)[f.name]));
        return buildWith(f.type, st.children[k]!.type, column);
      });
      for (const v of values) if (v !== null && v !== undefined && (typeof v !== 'object' || Array.isArray(v))) bad('struct', v);
      return arrow.makeData({ ...base(at, n, nulls, bitmap), children } as never) as arrow.Data;
    }
    case 'list': {
      const lt = at as arrow.List;
      const offsets = new Int32Array(n + 1);
      const flat: unknown[] = [];
      values.forEach((v, i) => {
        if (v !== null && v !== undefined) {
          if (!Array.isArray(v)) bad('list', v);
          for (const e of v) flat.push(e);
        }
        offsets[i + 1] = flat.length;
      });
      const child = buildWith(type.element, lt.children[0]!.type, flat);
      return arrow.makeData({ ...base(at, n, nulls, bitmap), valueOffsets: offsets, child } as never) as arrow.Data;
    }
    case 'map': {
      const mt = at as arrow.Map_;
      const entriesType = mt.children[0]!.type as arrow.Struct;
      const offsets = new Int32Array(n + 1);
      const keys: unknown[] = [];
      const vals: unknown[] = [];
      values.forEach((v, i) => {
        if (v !== null && v !== undefined) {
          if (!Array.isArray(v)) bad('map', v);
          for (const e of v) {
            if (!Array.isArray(e) || e.length !== 2 || e[0] === null || e[0] === undefined) bad('map entry', e);
            keys.push(e[0]);
            vals.push(e[1]);
          }
        }
        offsets[i + 1] = keys.length;
      });
      const entries = arrow.makeData({
        type: entriesType,
        length: keys.length,
        nullCount: 0,
        children: [buildWith(type.key, entriesType.children[0]!.type, keys), buildWith(type.value, entriesType.children[1]!.type, vals)],
      } as never) as arrow.Data;
      return arrow.makeData({ ...base(at, n, nulls, bitmap), valueOffsets: offsets, child: entries } as never) as arrow.Data;
    }
  }
}

function valid(d: arrow.Data, i: number): boolean {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return true;
  const j = d.offset + i;
  return (d.nullBitmap[j >> 3]! & (1 << (j & 7))) !== 0;
}

function slice(d: arrow.Data, i: number): Uint8Array {
  const offs = d.valueOffsets as Int32Array | BigInt64Array;
  const s = Number(offs[i]!);
  const e = Number(offs[i + 1]!);
  const v = d.values as Uint8Array;
  return v.subarray(s, e);
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

/** Row `i` of `d` (Arrow data read from a data file) as a value of Iceberg type `type`, null when null. */
export function readValue(d: arrow.Data, type: Type, i: number): unknown {
  if (!valid(d, i)) return null;
  if (d.typeId === arrow.Type.Dictionary) {
    const idx = Number((d.values as ArrayLike<number | bigint>)[i]!);
    return readValue(d.dictionary!.data[0]!, type, idx);
  }
  if (typeof type !== 'string') {
    switch (type.type) {
      case 'struct': {
        const out: Record<string, unknown> = {};
        type.fields.forEach((f, k) => {
          out[f.name] = readValue(d.children[k]!, f.type, i);
        });
        return out;
      }
      case 'list': {
        const offs = d.valueOffsets as Int32Array;
        const s = Number(offs[i]!);
        const e = Number(offs[i + 1]!);
        const child = d.children[0]!;
        const out: unknown[] = [];
        for (let k = s; k < e; k++) out.push(readValue(child, type.element, k));
        return out;
      }
      case 'map': {
        const offs = d.valueOffsets as Int32Array;
        const s = Number(offs[i]!);
        const e = Number(offs[i + 1]!);
        const entries = d.children[0]!;
        const out: [unknown, unknown][] = [];
        for (let k = s; k < e; k++) out.push([readValue(entries.children[0]!, type.key, k), readValue(entries.children[1]!, type.value, k)]);
        return out;
      }
    }
  }
  const p = parsePrimitiveType(type);
  // Arrow JS slices value and offset buffers (index them by row) but not bitmaps (index by offset + row).
  const j = i;
  switch (p.kind) {
    case 'boolean': {
      const b = d.offset + i;
      return ((d.values as Uint8Array)[b >> 3]! & (1 << (b & 7))) !== 0;
    }
    case 'int':
    case 'date':
      return (d.values as Int32Array)[j]!;
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const v = d.values as BigInt64Array | Int32Array;
      // Some readers give a time column as 32-bit milliseconds or int64 words: read what is there.
      return v instanceof BigInt64Array ? v[j]! : BigInt(v[j]!);
    }
    case 'float':
    case 'double':
      return (d.values as Float32Array | Float64Array)[j]!;
    case 'decimal': {
      const w = d.values as Uint32Array;
      let x = 0n;
      for (let k = 3; k >= 0; k--) x = (x << 32n) | BigInt(w[4 * j + k]!);
      return BigInt.asIntN(128, x);
    }
    case 'string':
      return dec.decode(slice(d, i));
    case 'binary':
      return Uint8Array.from(slice(d, i));
    case 'uuid':
    case 'fixed': {
      const width = (d.type as arrow.FixedSizeBinary).byteWidth;
      const b = Uint8Array.from((d.values as Uint8Array).subarray(j * width, (j + 1) * width));
      if (p.kind === 'fixed') return b;
      const h = hex(b);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    default:
      throw new TypedValueError('UNSUPPORTED_SCHEMA', `typed columns of Iceberg type ${p.kind} are not read`);
  }
}
