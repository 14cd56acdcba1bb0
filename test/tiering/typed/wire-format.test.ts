// The Confluent wire-format prefix: parse and canonical encode against the bytes Confluent's own
// JavaScript SchemaId class writes (the class its serializers use), and the prefixes that are not one.
// (The serializers' real output, nested Protobuf messages included, is checked in protobuf-codec.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SchemaId } from '@confluentinc/schemaregistry';
import { TypedValueError } from '../../../tiering/typed/api.js';
import { encodeWirePrefix, parseWirePrefix } from '../../../tiering/typed/wire-format.js';

function confluentPrefix(type: 'AVRO' | 'JSON' | 'PROTOBUF', id: number, indexes?: number[]): Buffer {
  return new SchemaId(type, id, undefined, indexes).idToBytes();
}

test('wire prefix: Avro and JSON are magic byte 0 and a big-endian id', () => {
  for (const id of [1, 255, 256, 70_000, 2 ** 31 - 1]) {
    for (const format of ['AVRO', 'JSON'] as const) {
      const bytes = Buffer.concat([confluentPrefix(format, id), Buffer.from([9, 9])]);
      assert.deepEqual(parseWirePrefix(bytes, format), { schemaId: id, messageIndexes: [], payloadStart: 5 });
      assert.equal(Buffer.from(encodeWirePrefix(id, format)).toString('hex'), confluentPrefix(format, id).toString('hex'));
    }
  }
});

test('wire prefix: Protobuf message indexes, [0] as a single zero byte, the rest as zigzag varints', () => {
  for (const indexes of [[0], [1], [1, 0], [0, 2, 3], [64], [5000, 0, 70_000]]) {
    const prefix = confluentPrefix('PROTOBUF', 42, indexes);
    const parsed = parseWirePrefix(Buffer.concat([prefix, Buffer.from([0x08, 0x01])]), 'PROTOBUF');
    assert.deepEqual(parsed, { schemaId: 42, messageIndexes: indexes, payloadStart: prefix.length }, `indexes ${indexes}`);
    assert.equal(Buffer.from(encodeWirePrefix(42, 'PROTOBUF', indexes)).toString('hex'), prefix.toString('hex'), `encode ${indexes}`);
  }
  assert.equal(confluentPrefix('PROTOBUF', 1, [0]).length, 6);
  assert.equal(Buffer.from(encodeWirePrefix(1, 'PROTOBUF', [])).toString('hex'), '000000000100', '[] is the first message too');
  assert.equal(Buffer.from(encodeWirePrefix(1, 'PROTOBUF', [1, 0])).toString('hex'), '0000000001040200');
  // The long form of [0] (count 1, index 0) is legal and reads as [0], but is not what serializers write.
  const longForm = Buffer.from('00000000010200', 'hex');
  assert.deepEqual(parseWirePrefix(longForm, 'PROTOBUF'), { schemaId: 1, messageIndexes: [0], payloadStart: 7 });
  assert.notEqual(Buffer.from(encodeWirePrefix(1, 'PROTOBUF', [0])).toString('hex'), longForm.toString('hex'));
});

test('wire prefix: what is not one is MISSING_PREFIX', () => {
  const missing = (bytes: Buffer, format: 'AVRO' | 'JSON' | 'PROTOBUF', why: RegExp) =>
    assert.throws(() => parseWirePrefix(bytes, format), (e: TypedValueError) => e instanceof TypedValueError && e.code === 'MISSING_PREFIX' && why.test(e.message), bytes.toString('hex'));
  missing(Buffer.from([]), 'AVRO', /fewer than the 5/);
  missing(Buffer.from([0, 0, 0, 1]), 'JSON', /fewer than the 5/);
  missing(Buffer.from('{"a":1}'), 'JSON', /not the magic byte 0/);
  missing(Buffer.from([1, 0, 0, 0, 1, 0]), 'AVRO', /not the magic byte 0/);
  missing(Buffer.from([0, 0, 0, 0, 1]), 'PROTOBUF', /end inside the message index count/);
  missing(Buffer.from([0, 0, 0, 0, 1, 0x01]), 'PROTOBUF', /negative/); // count -1
  missing(Buffer.from([0, 0, 0, 0, 1, 0x04, 0x02]), 'PROTOBUF', /larger than the bytes left|end inside/); // 2 indexes, 1 byte
  missing(Buffer.from([0, 0, 0, 0, 1, 0x02, 0x03]), 'PROTOBUF', /negative/); // index -2
  missing(Buffer.from([0, 0, 0, 0, 1, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), 'PROTOBUF', /longer than 5 bytes/);
});
