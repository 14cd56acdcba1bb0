/**
 * The Confluent wire format that the registry's serializers put in front of every value:
 *
 *   byte 0      magic byte, always 0
 *   bytes 1..4  the schema's global id, a big-endian int32
 *   Protobuf only: the message indexes, the path from the schema file to the message the payload is (index
 *               of a top-level message, then of a nested message inside it, ...), written as zigzag varints:
 *               the count, then each index. The common case, the first top-level message ([0]), is written
 *               as the single byte 0 (a count of 0 means [0]).
 *   then the payload (Avro binary, JSON text, Protobuf binary).
 *
 * This is what @confluentinc/schemaregistry's SchemaId.fromBytes / idToBytes read and write (serde.js,
 * readMessageIndexes / writeMessageIndexes) and what Confluent's Java and Python serializers write.
 * `encodeWirePrefix` gives those canonical bytes, so conversion can check that a record's prefix rebuilds
 * exactly. (Confluent's newer magic byte 1, a 16-byte schema GUID, is not a Floe registry id: MISSING_PREFIX.)
 */
import { TypedValueError, type WriterSchemaType } from './api.js';

export interface WirePrefix {
  readonly schemaId: number;
  /** Protobuf: the message path (at least one index); [] for Avro and JSON Schema. */
  readonly messageIndexes: readonly number[];
  /** Where the payload starts in the bytes the prefix was parsed from. */
  readonly payloadStart: number;
}

/** The magic byte of the wire format (Confluent's MAGIC_BYTE_V0). */
export const WIRE_MAGIC_BYTE = 0;
/** Magic byte plus schema id. */
export const WIRE_ID_PREFIX_BYTES = 5;

/** Reads the prefix of a record value; throws TypedValueError('MISSING_PREFIX') when it is not there. */
export function parseWirePrefix(bytes: Uint8Array, format: WriterSchemaType): WirePrefix {
  if (bytes.length < WIRE_ID_PREFIX_BYTES) throw missing(`the value has ${bytes.length} bytes, fewer than the 5 of the prefix (magic byte 0 and a 4-byte schema id)`);
  if (bytes[0] !== WIRE_MAGIC_BYTE) throw missing(`the value starts with byte ${bytes[0]}, not the magic byte 0`);
  const schemaId = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(1, false);
  if (format !== 'PROTOBUF') return { schemaId, messageIndexes: [], payloadStart: WIRE_ID_PREFIX_BYTES };
  const reader = { pos: WIRE_ID_PREFIX_BYTES };
  const count = readZigzagVarint(bytes, reader, 'the message index count');
  if (count === 0) return { schemaId, messageIndexes: [0], payloadStart: reader.pos };
  if (count < 0) throw missing(`the Protobuf message index count is negative (${count}): the message indexes are absent or malformed`);
  if (count > bytes.length - reader.pos) throw missing(`the Protobuf message index count (${count}) is larger than the bytes left: the message indexes are malformed`);
  const messageIndexes: number[] = [];
  for (let i = 0; i < count; i++) {
    const index = readZigzagVarint(bytes, reader, `message index ${i}`);
    if (index < 0) throw missing(`Protobuf message index ${i} is negative (${index}): the message indexes are malformed`);
    messageIndexes.push(index);
  }
  return { schemaId, messageIndexes, payloadStart: reader.pos };
}

/**
 * The canonical prefix Confluent's serializers write for `schemaId` (and, for Protobuf, the message path;
 * [] or [0] both give the single byte 0). `messageIndexes` is ignored for Avro and JSON Schema.
 */
export function encodeWirePrefix(schemaId: number, format: WriterSchemaType, messageIndexes: readonly number[] = []): Uint8Array {
  if (!Number.isInteger(schemaId) || schemaId < -0x80000000 || schemaId > 0x7fffffff) throw new RangeError(`schema id ${schemaId} is not an int32`);
  const out: number[] = [WIRE_MAGIC_BYTE, (schemaId >>> 24) & 0xff, (schemaId >>> 16) & 0xff, (schemaId >>> 8) & 0xff, schemaId & 0xff];
  if (format === 'PROTOBUF') {
    if (messageIndexes.length === 0 || (messageIndexes.length === 1 && messageIndexes[0] === 0)) out.push(0);
    else {
      writeZigzagVarint(out, messageIndexes.length);
      for (const index of messageIndexes) {
        if (!Number.isInteger(index) || index < 0 || index > 0x7fffffff) throw new RangeError(`message index ${index} is not a non-negative int32`);
        writeZigzagVarint(out, index);
      }
    }
  }
  return Uint8Array.from(out);
}

function missing(why: string): TypedValueError {
  return new TypedValueError('MISSING_PREFIX', `no Confluent wire-format prefix: ${why}; produce with a registry serializer, or use the table mode value_schema_latest for values without a prefix`);
}

/** A zigzag varint of at most 5 bytes (an int32), as Confluent writes message indexes. */
function readZigzagVarint(bytes: Uint8Array, reader: { pos: number }, what: string): number {
  let n = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    const b = bytes[reader.pos];
    if (b === undefined) throw missing(`the bytes end inside ${what}`);
    reader.pos++;
    n += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) {
      if (n > 0xffffffff) throw missing(`${what} does not fit an int32`);
      return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
    }
  }
  throw missing(`${what} is a varint longer than 5 bytes`);
}

function writeZigzagVarint(out: number[], value: number): void {
  let n = value >= 0 ? value * 2 : -value * 2 - 1;
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}
