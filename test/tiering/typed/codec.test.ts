// compileValueCodec picks the codec by the schema's format and passes the Protobuf message indexes on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TypedValueError, type WriterSchema } from '../../../tiering/typed/api.js';
import { compileValueCodec } from '../../../tiering/typed/codec.js';

test('compileValueCodec: one codec per format, the Protobuf message by its indexes', () => {
  const avro = compileValueCodec({ id: 1, schemaType: 'AVRO', schema: '{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]}', references: [] });
  assert.deepEqual(avro.fields, [{ name: 'a', required: true, type: 'int' }]);
  assert.deepEqual(avro.decode(Uint8Array.from([0x54])), { a: 42 });
  const json = compileValueCodec({ id: 2, schemaType: 'JSON', schema: '{"type":"object","properties":{"a":{"type":"integer"}}}', references: [] });
  assert.deepEqual(json.decode(new TextEncoder().encode('{"a":42}')), { a: 42n });
  const proto: WriterSchema = { id: 3, schemaType: 'PROTOBUF', schema: 'syntax = "proto3";\nmessage A { int32 a = 1; message B { string b = 1; } }\nmessage C { bool c = 1; }\n', references: [] };
  assert.equal(compileValueCodec(proto).message, 'A', 'default: the first message');
  assert.equal(compileValueCodec(proto, { messageIndexes: [0, 0] }).message, 'A.B');
  const c = compileValueCodec(proto, { messageIndexes: [1] });
  assert.equal(c.message, 'C');
  assert.deepEqual(c.decode(Uint8Array.from([0x08, 0x01])), { c: true });
  assert.throws(
    () => compileValueCodec({ id: 4, schemaType: 'XML' as never, schema: '<a/>', references: [] }),
    (e: TypedValueError) => e.code === 'INVALID_SCHEMA' && e.message.includes('XML'),
  );
});
