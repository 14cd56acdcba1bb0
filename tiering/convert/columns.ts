/**
 * Column builders for topic rows: typed arrays that grow by doubling, turned into Arrow data with the
 * id-carrying types of ./schema.ts without going through apache-arrow's generic builders (which box every
 * value). Int64 columns are written as two int32 halves of a BigInt64Array's buffer, so no BigInt is made
 * per row. Offsets and timestamps must be safe integers (|v| < 2^53), which every real Kafka value is.
 *
 * Bytes are appended from (buffer, start, length) ranges of the decompressed records, so no view object is
 * made per key, value or header. With `reuse`, the builder's arrays are kept across flushes: a flushed
 * batch is then only valid until the next row is added (the converter hands each batch to the Parquet
 * writer, which encodes it before asking for the next), and no fresh memory is touched per chunk.
 */
import * as arrow from 'apache-arrow';
import { topicArrowSchema } from './schema.js';

const TWO_32 = 4294967296;

class Bytes {
  buf: Uint8Array;
  len = 0;
  constructor(initial: number) {
    this.buf = new Uint8Array(Math.max(16, initial));
  }
  append(src: Uint8Array): void {
    const need = this.len + src.length;
    if (need > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < need) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    this.buf.set(src, this.len);
    this.len = need;
  }
  appendRange(src: Uint8Array, start: number, n: number): void {
    const need = this.len + n;
    if (need > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < need) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    const b = this.buf;
    if (n <= 32) {
      let p = this.len;
      for (let i = start, e = start + n; i < e; i++) b[p++] = src[i]!;
    } else {
      b.set(src.subarray(start, start + n), this.len);
    }
    this.len = need;
  }
}

class Validity {
  bits: Uint8Array;
  nulls = 0;
  constructor(rows: number) {
    this.bits = new Uint8Array(Math.max(8, (rows + 7) >> 3));
  }
  clear(rows: number): void {
    this.bits.fill(0, 0, Math.min(this.bits.length, (rows + 7) >> 3));
    this.nulls = 0;
  }
  set(i: number, valid: boolean): void {
    if (i >> 3 >= this.bits.length) {
      const next = new Uint8Array(this.bits.length * 2);
      next.set(this.bits);
      this.bits = next;
    }
    if (valid) this.bits[i >> 3]! |= 1 << (i & 7);
    else this.nulls++;
  }
}

class Int32Col {
  arr: Int32Array;
  len = 0;
  readonly validity: Validity | null;
  constructor(rows: number, nullable: boolean) {
    this.arr = new Int32Array(Math.max(8, rows));
    this.validity = nullable ? new Validity(rows) : null;
  }
  private grow(): void {
    const next = new Int32Array(this.arr.length * 2);
    next.set(this.arr);
    this.arr = next;
  }
  push(v: number): void {
    if (this.len === this.arr.length) this.grow();
    this.validity?.set(this.len, true);
    this.arr[this.len++] = v;
  }
  /** Repeats `v` up to `n` values (a non-nullable column). */
  fillTo(n: number, v: number): void {
    while (n > this.arr.length) this.grow();
    this.arr.fill(v, this.len, n);
    this.len = n;
  }
  pushNull(): void {
    if (this.len === this.arr.length) this.grow();
    this.validity!.set(this.len, false);
    this.arr[this.len++] = 0;
  }
  clear(): void {
    this.validity?.clear(this.len);
    this.len = 0;
  }
  data(type: arrow.DataType): arrow.Data {
    return arrow.makeData({
      type: type as arrow.Int32,
      length: this.len,
      nullCount: this.validity?.nulls ?? 0,
      ...(this.validity && this.validity.nulls > 0 ? { nullBitmap: this.validity.bits } : {}),
      data: this.arr.subarray(0, this.len),
    }) as arrow.Data;
  }
}

class Int64Col {
  halves: Int32Array;
  len = 0;
  readonly validity: Validity | null;
  constructor(rows: number, nullable: boolean) {
    this.halves = new Int32Array(Math.max(16, rows * 2));
    this.validity = nullable ? new Validity(rows) : null;
  }
  private grow(): void {
    const next = new Int32Array(this.halves.length * 2);
    next.set(this.halves);
    this.halves = next;
  }
  /** Repeats the safe integer `v` up to `n` values (a non-nullable column). */
  fillTo(n: number, v: number): void {
    while (n * 2 > this.halves.length) this.grow();
    const hi = Math.floor(v / TWO_32);
    const lo = (v - hi * TWO_32) | 0;
    const h = this.halves;
    for (let i = this.len; i < n; i++) {
      h[2 * i] = lo;
      h[2 * i + 1] = hi;
    }
    this.len = n;
  }
  /** A safe integer (little-endian halves: low word first). */
  push(v: number): void {
    if (this.len * 2 === this.halves.length) this.grow();
    this.validity?.set(this.len, true);
    const hi = Math.floor(v / TWO_32);
    this.halves[this.len * 2] = (v - hi * TWO_32) | 0;
    this.halves[this.len * 2 + 1] = hi;
    this.len++;
  }
  pushNull(): void {
    if (this.len * 2 === this.halves.length) this.grow();
    this.validity!.set(this.len, false);
    this.halves[this.len * 2] = 0;
    this.halves[this.len * 2 + 1] = 0;
    this.len++;
  }
  clear(): void {
    this.validity?.clear(this.len);
    this.len = 0;
  }
  data(type: arrow.DataType): arrow.Data {
    return arrow.makeData({
      type: type as arrow.Int64,
      length: this.len,
      nullCount: this.validity?.nulls ?? 0,
      ...(this.validity && this.validity.nulls > 0 ? { nullBitmap: this.validity.bits } : {}),
      data: new BigInt64Array(this.halves.buffer, 0, this.len),
    }) as arrow.Data;
  }
}

class BinaryCol {
  offsets: Int32Array;
  len = 0;
  readonly bytes: Bytes;
  readonly validity: Validity;
  constructor(rows: number, bytes: number) {
    this.offsets = new Int32Array(Math.max(8, rows + 1));
    this.bytes = new Bytes(bytes);
    this.validity = new Validity(rows);
  }
  private next(): void {
    if (this.len + 1 === this.offsets.length) {
      const n = new Int32Array(this.offsets.length * 2);
      n.set(this.offsets);
      this.offsets = n;
    }
  }
  push(v: Uint8Array | null): void {
    this.next();
    this.validity.set(this.len, v !== null);
    if (v !== null) this.bytes.append(v);
    this.offsets[++this.len] = this.bytes.len;
  }
  /** `n` bytes of `src` from `start`; n = -1 appends a null. */
  pushRange(src: Uint8Array, start: number, n: number): void {
    this.next();
    if (n < 0) {
      this.validity.set(this.len, false);
    } else {
      this.validity.set(this.len, true);
      this.bytes.appendRange(src, start, n);
    }
    this.offsets[++this.len] = this.bytes.len;
  }
  clear(): void {
    this.validity.clear(this.len);
    this.len = 0;
    this.bytes.len = 0;
  }
  data(type: arrow.DataType): arrow.Data {
    return arrow.makeData({
      type: type as arrow.Binary,
      length: this.len,
      nullCount: this.validity.nulls,
      ...(this.validity.nulls > 0 ? { nullBitmap: this.validity.bits } : {}),
      valueOffsets: this.offsets.subarray(0, this.len + 1),
      data: this.bytes.buf.subarray(0, this.bytes.len),
    }) as arrow.Data;
  }
}

/** The batch-level fields repeated on each row of the batch (the `kafka.batch` struct). */
export interface RowBatchFields {
  readonly baseOffset: number;
  readonly lastOffsetDelta: number;
  readonly partitionLeaderEpoch: number;
  readonly attributes: number;
  readonly baseTimestamp: number;
  readonly maxTimestamp: number;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly recordsCount: number;
}

function child(type: arrow.DataType, i: number): arrow.DataType {
  return (type.children[i] as arrow.Field).type;
}

/**
 * One record's fields as byte ranges of its decompressed records section: `*Len` -1 is a null key, value
 * or header value; headers are `headerCount` quadruples (key start, key length, value start, value length)
 * in `headers`; `rawLen` -1 means the typed columns rebuild the record exactly. `badKeys` lists the
 * headers whose key is not valid UTF-8: the string column gets the key as a UTF-8 decoder renders it (U+FFFD
 * for each bad sequence), and the record's exact bytes are in `raw_record` (rawLen is then set).
 */
export interface RecordRanges {
  keyStart: number;
  keyLen: number;
  valueStart: number;
  valueLen: number;
  headerCount: number;
  headers: Int32Array;
  rawStart: number;
  rawLen: number;
  badKeys: number[];
}

/** Accumulates topic rows and hands them out as Arrow record batches of the topic schema. */
export class TopicRowBuilder {
  rows = 0;
  /** Key, value and header bytes appended so far (the figure row groups are sized by). */
  payloadBytes = 0;
  private partition!: Int32Col;
  private offset!: Int64Col;
  private timestamp!: Int64Col;
  private timestampType!: Int32Col;
  private key!: BinaryCol;
  private headerOffsets!: Int32Array;
  private headerCount = 0;
  private headerKey!: BinaryCol;
  private headerValue!: BinaryCol;
  private batchCols!: Int64Col[];
  private batchInts!: Int32Col[];
  private recordAttributes!: Int32Col;
  private timestampDelta!: Int64Col;
  private rawRecord!: BinaryCol;
  private value!: BinaryCol;
  private flushed = false;
  // The batch whose rows are being added: its fields fill the constant columns in runs, not per row.
  private current: { partition: number; timestampType: number; batch: RowBatchFields } | null = null;
  private filled = 0;

  /**
   * @param reuse keep the arrays across flushes (see the module comment): a flushed batch is valid only
   * until the next row is added.
   */
  constructor(
    private readonly expectedRows = 4096,
    private readonly expectedBytes = 1 << 20,
    private readonly reuse = false,
  ) {
    this.reset();
  }

  private reset(): void {
    const r = this.expectedRows;
    this.rows = 0;
    this.payloadBytes = 0;
    this.headerCount = 0;
    this.flushed = false;
    this.filled = 0;
    if (this.reuse && this.value !== undefined) {
      for (const c of [this.partition, this.offset, this.timestamp, this.timestampType, this.key, this.headerKey, this.headerValue, this.recordAttributes, this.timestampDelta, this.rawRecord, this.value, ...this.batchCols, ...this.batchInts]) c.clear();
      return;
    }
    this.partition = new Int32Col(r, false);
    this.offset = new Int64Col(r, false);
    this.timestamp = new Int64Col(r, false);
    this.timestampType = new Int32Col(r, false);
    this.key = new BinaryCol(r, 1024);
    this.headerOffsets = new Int32Array(r + 1);
    this.headerKey = new BinaryCol(64, 1024);
    this.headerValue = new BinaryCol(64, 1024);
    // base_offset, base_timestamp, max_timestamp, producer_id
    this.batchCols = [0, 1, 2, 3].map(() => new Int64Col(r, false));
    // last_offset_delta, partition_leader_epoch, attributes, producer_epoch, base_sequence, records_count
    this.batchInts = [0, 1, 2, 3, 4, 5].map(() => new Int32Col(r, false));
    this.recordAttributes = new Int32Col(r, true);
    this.timestampDelta = new Int64Col(r, true);
    this.rawRecord = new BinaryCol(r, 16);
    this.value = new BinaryCol(r, this.expectedBytes);
  }

  /** The record batch (and partition, timestamp type) of the rows added next, until the next call. */
  beginBatch(partition: number, timestampType: number, batch: RowBatchFields): void {
    this.fillConstants();
    this.current = { partition, timestampType, batch };
  }

  /** Writes the current batch's fields into the constant columns for the rows added since the last fill. */
  private fillConstants(): void {
    const c = this.current;
    const n = this.rows;
    if (c === null || this.filled === n) return;
    const b = c.batch;
    this.partition.fillTo(n, c.partition);
    this.timestampType.fillTo(n, c.timestampType);
    const [bo, bts, mts, pid] = this.batchCols as [Int64Col, Int64Col, Int64Col, Int64Col];
    bo.fillTo(n, b.baseOffset);
    bts.fillTo(n, b.baseTimestamp);
    mts.fillTo(n, b.maxTimestamp);
    pid.fillTo(n, b.producerId);
    const [lod, ple, attrs, pep, bseq, cnt] = this.batchInts as [Int32Col, Int32Col, Int32Col, Int32Col, Int32Col, Int32Col];
    lod.fillTo(n, b.lastOffsetDelta);
    ple.fillTo(n, b.partitionLeaderEpoch);
    attrs.fillTo(n, b.attributes);
    pep.fillTo(n, b.producerEpoch);
    bseq.fillTo(n, b.baseSequence);
    cnt.fillTo(n, b.recordsCount);
    this.filled = n;
  }

  /** Adds one record's row of the current batch (beginBatch): its own fields, and its bytes as ranges of `data`. */
  addRecord(offset: number, timestampMicros: number, data: Uint8Array, rec: RecordRanges, recordAttributes: number, timestampDelta: number | null): void {
    if (this.flushed) this.reset();
    if (this.current === null) throw new Error('TopicRowBuilder.addRecord before beginBatch');
    this.offset.push(offset);
    this.timestamp.push(timestampMicros);
    this.key.pushRange(data, rec.keyStart, rec.keyLen);
    this.value.pushRange(data, rec.valueStart, rec.valueLen);
    let payload = Math.max(0, rec.keyLen) + Math.max(0, rec.valueLen);
    const hs = rec.headers;
    for (let h = 0; h < rec.headerCount; h++) {
      const kLen = hs[4 * h + 1]!;
      const vLen = hs[4 * h + 3]!;
      if (rec.badKeys.length > 0 && rec.badKeys.includes(h)) {
        const shown = Buffer.from(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8', hs[4 * h]!, hs[4 * h]! + kLen));
        this.headerKey.pushRange(shown, 0, shown.length);
      } else {
        this.headerKey.pushRange(data, hs[4 * h]!, kLen);
      }
      this.headerValue.pushRange(data, hs[4 * h + 2]!, vLen);
      payload += kLen + Math.max(0, vLen);
    }
    this.headerCount += rec.headerCount;
    if (this.rows + 1 >= this.headerOffsets.length) {
      const n = new Int32Array(this.headerOffsets.length * 2);
      n.set(this.headerOffsets);
      this.headerOffsets = n;
    }
    this.headerOffsets[this.rows + 1] = this.headerCount;
    if (recordAttributes === 0) this.recordAttributes.pushNull();
    else this.recordAttributes.push(recordAttributes);
    if (timestampDelta === null) this.timestampDelta.pushNull();
    else this.timestampDelta.push(timestampDelta);
    this.rawRecord.pushRange(data, rec.rawStart, rec.rawLen);
    this.rows++;
    this.payloadBytes += payload;
  }

  /** The rows added since the last flush as one Arrow record batch; the builder starts over. */
  flush(): arrow.RecordBatch {
    this.fillConstants();
    const schema = topicArrowSchema();
    const kafkaType = (schema.fields[0] as arrow.Field).type as arrow.Struct;
    const valueType = (schema.fields[1] as arrow.Field).type;
    const headersType = child(kafkaType, 5) as arrow.List;
    const headerStruct = child(headersType, 0) as arrow.Struct;
    const batchType = child(kafkaType, 6) as arrow.Struct;
    const n = this.rows;
    const [bo, bts, mts, pid] = this.batchCols as [Int64Col, Int64Col, Int64Col, Int64Col];
    const [lod, ple, attrs, pep, bseq, cnt] = this.batchInts as [Int32Col, Int32Col, Int32Col, Int32Col, Int32Col, Int32Col];
    const batchData = arrow.makeData({
      type: batchType,
      length: n,
      nullCount: 0,
      children: [
        bo.data(child(batchType, 0)),
        lod.data(child(batchType, 1)),
        ple.data(child(batchType, 2)),
        attrs.data(child(batchType, 3)),
        bts.data(child(batchType, 4)),
        mts.data(child(batchType, 5)),
        pid.data(child(batchType, 6)),
        pep.data(child(batchType, 7)),
        bseq.data(child(batchType, 8)),
        cnt.data(child(batchType, 9)),
      ],
    });
    const headerElems = arrow.makeData({
      type: headerStruct,
      length: this.headerCount,
      nullCount: 0,
      children: [this.headerKey.data(child(headerStruct, 0)), this.headerValue.data(child(headerStruct, 1))],
    });
    const headers = arrow.makeData({ type: headersType, length: n, nullCount: 0, valueOffsets: this.headerOffsets.subarray(0, n + 1), child: headerElems });
    const kafka = arrow.makeData({
      type: kafkaType,
      length: n,
      nullCount: 0,
      children: [
        this.partition.data(child(kafkaType, 0)),
        this.offset.data(child(kafkaType, 1)),
        this.timestamp.data(child(kafkaType, 2)),
        this.timestampType.data(child(kafkaType, 3)),
        this.key.data(child(kafkaType, 4)),
        headers as arrow.Data,
        batchData as arrow.Data,
        this.recordAttributes.data(child(kafkaType, 7)),
        this.timestampDelta.data(child(kafkaType, 8)),
        this.rawRecord.data(child(kafkaType, 9)),
      ],
    });
    const root = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children: [kafka as arrow.Data, this.value.data(valueType)] });
    const out = new arrow.RecordBatch(schema, root);
    if (this.reuse) {
      // The arrays stay as they are until the next row (the batch reads them); the counts start over.
      this.flushed = true;
      this.rows = 0;
      this.filled = 0;
      this.payloadBytes = 0;
    } else {
      this.reset();
    }
    return out;
  }
}
