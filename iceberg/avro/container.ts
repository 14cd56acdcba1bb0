/**
 * Avro object container files (Avro spec, "Object Container Files") in memory: header with metadata and
 * the writer schema exactly as given (so Iceberg's `field-id`, `element-id` and `logicalType: map` survive),
 * blocks compressed with deflate or stored as-is. Record encoding is avsc's, with `long` backed by bigint
 * so 64-bit snapshot ids and sizes are exact.
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { AvroError } from './errors.js';

export type AvroCodec = 'null' | 'deflate';

/** avsc's long, but as bigint in both directions: every 64-bit value survives. */
export const BigIntLongType = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (v: unknown) => BigInt(v as string | number | bigint),
  toJSON: (n: bigint) => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString()),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/** An avsc type for an Avro schema (JSON), with bigint longs. */
export function avroType(schema: object | string): avro.Type {
  try {
    return avro.Type.forSchema(schema as avro.Schema, { registry: { long: BigIntLongType } });
  } catch (err) {
    throw new AvroError('INVALID_AVRO', `Invalid Avro schema: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]); // "Obj" 1
const HEADER_TYPE = avro.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: 16 } },
  ],
});
const LONG = avro.Type.forSchema('long');

export interface ContainerWriteOptions {
  readonly codec?: AvroCodec;
  /** Records per block; default 4096. */
  readonly blockRecords?: number;
}

/** Encodes records as an Avro object container file with `schema` written verbatim into the header. */
export function writeContainer(schema: object | string, records: Iterable<unknown>, metadata: Readonly<Record<string, string>>, options: ContainerWriteOptions = {}): Buffer {
  const type = avroType(schema);
  const codec = options.codec ?? 'deflate';
  const perBlock = options.blockRecords ?? 4096;
  const sync = randomBytes(16);
  const meta: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(metadata)) meta[k] = Buffer.from(v, 'utf8');
  meta['avro.schema'] = Buffer.from(JSON.stringify(schema), 'utf8');
  meta['avro.codec'] = Buffer.from(codec, 'utf8');
  const parts: Buffer[] = [HEADER_TYPE.toBuffer({ magic: MAGIC, meta, sync })];
  let block: Buffer[] = [];
  const flush = (): void => {
    if (block.length === 0) return;
    const raw = Buffer.concat(block);
    const data = codec === 'deflate' ? deflateRawSync(raw) : raw;
    parts.push(LONG.toBuffer(block.length), LONG.toBuffer(data.length), data, sync);
    block = [];
  };
  let i = 0;
  for (const r of records) {
    try {
      block.push(type.toBuffer(r));
    } catch (err) {
      const paths: string[] = [];
      type.isValid(r, { errorHook: (path: string[]) => paths.push(path.join('.')) });
      throw new AvroError('INVALID_AVRO', `Record ${i} does not match the Avro schema${paths.length ? ` at ${paths.join(', ')}` : ''}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    i++;
    if (block.length >= perBlock) flush();
  }
  flush();
  return Buffer.concat(parts);
}

export interface Container<T = unknown> {
  /** The writer schema as stored in the header. */
  readonly schema: object;
  /** Header metadata other than `avro.*`, as UTF-8 strings. */
  readonly metadata: ReadonlyMap<string, string>;
  readonly records: T[];
}

/** Decodes an Avro object container file written by any Avro writer (codecs null and deflate). */
export function readContainer(file: Uint8Array): Container {
  const buf = Buffer.isBuffer(file) ? file : Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const fail = (what: string, cause?: unknown): never => {
    throw new AvroError('INVALID_AVRO', `Not a readable Avro container file: ${what}`, cause === undefined ? undefined : { cause });
  };
  if (buf.length < 4 || !buf.subarray(0, 4).equals(MAGIC)) fail('magic bytes Obj\\x01 missing');
  const h = HEADER_TYPE.decode(buf, 0);
  if (h.offset < 0) fail('truncated header');
  const header = h.value as { meta: Record<string, Buffer>; sync: Buffer };
  const schemaText = header.meta['avro.schema']?.toString('utf8');
  if (!schemaText) return fail('header has no avro.schema');
  const codec = header.meta['avro.codec']?.toString('utf8') ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') fail(`codec '${codec}' is not supported; use null or deflate`);
  let schema: object;
  try {
    schema = JSON.parse(schemaText) as object;
  } catch (err) {
    return fail('avro.schema is not JSON', err);
  }
  const type = avroType(schema);
  const metadata = new Map<string, string>();
  for (const [k, v] of Object.entries(header.meta)) if (!k.startsWith('avro.')) metadata.set(k, v.toString('utf8'));
  const records: unknown[] = [];
  let pos = h.offset;
  while (pos < buf.length) {
    const count = LONG.decode(buf, pos);
    if (count.offset < 0) fail('truncated block header');
    const size = LONG.decode(buf, count.offset);
    if (size.offset < 0) fail('truncated block header');
    const start = size.offset;
    const end = start + Number(size.value);
    if (end + 16 > buf.length) fail('truncated block');
    if (!buf.subarray(end, end + 16).equals(header.sync)) fail('sync marker mismatch');
    let data: Buffer = buf.subarray(start, end);
    if (codec === 'deflate') {
      try {
        data = inflateRawSync(data);
      } catch (err) {
        fail('corrupt deflate block', err);
      }
    }
    let p = 0;
    for (let n = 0; n < Number(count.value); n++) {
      const r = type.decode(data, p);
      if (r.offset < 0) fail('record runs past its block');
      records.push(r.value);
      p = r.offset;
    }
    pos = end + 16;
  }
  return { schema, metadata, records };
}
