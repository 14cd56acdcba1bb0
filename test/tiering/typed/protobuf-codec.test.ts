// The Protobuf codec against payloads other encoders wrote: @confluentinc/schemaregistry's ProtobufSerializer
// (its bytes come from @bufbuild/protobuf's toBinary) with the schema it auto-registered in Floe's registry
// (a base64 FileDescriptorProto, importing a second file through a reference and the well-known types), and
// protobufjs with the schema registered as .proto text. Each payload decodes to the expected row and
// re-encodes byte for byte; the message indexes pick nested messages. Refusals: recursion, garbage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create, createFileRegistry, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, file_google_protobuf_duration, file_google_protobuf_timestamp, file_google_protobuf_wrappers } from '@bufbuild/protobuf/wkt';
import { ProtobufSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import protobuf from 'protobufjs';
import { TypedValueError, type WriterSchema } from '../../../tiering/typed/api.js';
import { compileValueCodec } from '../../../tiering/typed/codec.js';
import { encodeWirePrefix, parseWirePrefix } from '../../../tiering/typed/wire-format.js';
import { startRegistryBroker } from '../../interop/schema-registry/registry-broker.js';
import { writerSchemaFromRegistry } from './registry-writer.js';

const T = { DOUBLE: 1, FLOAT: 2, INT64: 3, UINT64: 4, INT32: 5, FIXED64: 6, FIXED32: 7, BOOL: 8, STRING: 9, MESSAGE: 11, BYTES: 12, UINT32: 13, ENUM: 14, SFIXED32: 15, SFIXED64: 16, SINT32: 17, SINT64: 18 };
const OPTIONAL = 1;
const REPEATED = 3;
const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const field = (name: string, number: number, type: number, extra: Record<string, unknown> = {}) => ({ name, number, type, label: OPTIONAL, jsonName: camel(name), ...extra });

/** floe/header.proto */
const HEADER_PROTO = { name: 'floe/header.proto', package: 'floe.typed', syntax: 'proto3', messageType: [{ name: 'Header', field: [field('source', 1, T.STRING)] }] };

/** floe/order.proto: Tiny is message [0], Order [1], Order.Line [1, 0]. */
const ORDER_PROTO = {
  name: 'floe/order.proto',
  package: 'floe.typed',
  syntax: 'proto3',
  dependency: ['floe/header.proto', 'google/protobuf/timestamp.proto', 'google/protobuf/duration.proto', 'google/protobuf/wrappers.proto'],
  messageType: [
    { name: 'Tiny', field: [field('n', 1, T.INT32)] },
    {
      name: 'Order',
      field: [
        field('i32', 1, T.INT32),
        field('s32', 2, T.SINT32),
        field('sf32', 3, T.SFIXED32),
        field('u32', 4, T.UINT32),
        field('f32', 5, T.FIXED32),
        field('i64', 6, T.INT64),
        field('s64', 7, T.SINT64),
        field('sf64', 8, T.SFIXED64),
        field('u64', 9, T.UINT64),
        field('f64', 10, T.FIXED64),
        field('f', 11, T.FLOAT),
        field('d', 12, T.DOUBLE),
        field('b', 13, T.BOOL),
        field('s', 14, T.STRING),
        field('by', 15, T.BYTES),
        field('status', 16, T.ENUM, { typeName: '.floe.typed.Order.Status' }),
        field('lines', 17, T.MESSAGE, { label: REPEATED, typeName: '.floe.typed.Order.Line' }),
        field('counts', 18, T.MESSAGE, { label: REPEATED, typeName: '.floe.typed.Order.CountsEntry' }),
        field('name', 20, T.STRING, { oneofIndex: 0 }),
        field('number', 21, T.INT32, { oneofIndex: 0 }),
        field('line', 22, T.MESSAGE, { oneofIndex: 0, typeName: '.floe.typed.Order.Line' }),
        field('at', 23, T.MESSAGE, { typeName: '.google.protobuf.Timestamp' }),
        field('took', 24, T.MESSAGE, { typeName: '.google.protobuf.Duration' }),
        field('maybe_i', 25, T.MESSAGE, { typeName: '.google.protobuf.Int32Value' }),
        field('maybe_s', 26, T.MESSAGE, { typeName: '.google.protobuf.StringValue' }),
        field('opt', 32, T.INT32, { oneofIndex: 1, proto3Optional: true }),
        field('nums', 33, T.INT32, { label: REPEATED }),
        field('words', 34, T.STRING, { label: REPEATED }),
        field('header', 36, T.MESSAGE, { typeName: '.floe.typed.Header' }),
      ],
      nestedType: [
        { name: 'Line', field: [field('sku', 1, T.STRING), field('qty', 2, T.UINT32), field('delta', 3, T.SINT64)] },
        { name: 'CountsEntry', field: [field('key', 1, T.STRING), field('value', 2, T.INT64)], options: { mapEntry: true } },
      ],
      enumType: [{ name: 'Status', value: [{ name: 'UNKNOWN', number: 0 }, { name: 'OPEN', number: 1 }, { name: 'CLOSED', number: 2 }] }],
      oneofDecl: [{ name: 'pick' }, { name: '_opt' }],
    },
  ],
};

const LINE_STRUCT = { type: 'struct', fields: [{ name: 'sku', required: true, type: 'string' }, { name: 'qty', required: true, type: 'long' }, { name: 'delta', required: true, type: 'long' }] };

/** Field-number order; required as the presence rules say. */
const ORDER_FIELDS = [
  { name: 'i32', required: true, type: 'int' },
  { name: 's32', required: true, type: 'int' },
  { name: 'sf32', required: true, type: 'int' },
  { name: 'u32', required: true, type: 'long' },
  { name: 'f32', required: true, type: 'long' },
  { name: 'i64', required: true, type: 'long' },
  { name: 's64', required: true, type: 'long' },
  { name: 'sf64', required: true, type: 'long' },
  { name: 'u64', required: true, type: 'decimal(20,0)' },
  { name: 'f64', required: true, type: 'decimal(20,0)' },
  { name: 'f', required: true, type: 'float' },
  { name: 'd', required: true, type: 'double' },
  { name: 'b', required: true, type: 'boolean' },
  { name: 's', required: true, type: 'string' },
  { name: 'by', required: true, type: 'binary' },
  { name: 'status', required: true, type: 'string' },
  { name: 'lines', required: true, type: { type: 'list', element: LINE_STRUCT, elementRequired: true } },
  { name: 'counts', required: true, type: { type: 'map', key: 'string', value: 'long', valueRequired: true } },
  { name: 'name', required: false, type: 'string' },
  { name: 'number', required: false, type: 'int' },
  { name: 'line', required: false, type: LINE_STRUCT },
  { name: 'at', required: false, type: 'timestamptz' },
  { name: 'took', required: false, type: 'long' },
  { name: 'maybe_i', required: false, type: 'int' },
  { name: 'maybe_s', required: false, type: 'string' },
  { name: 'opt', required: false, type: 'int' },
  { name: 'nums', required: true, type: { type: 'list', element: 'int', elementRequired: true } },
  { name: 'words', required: true, type: { type: 'list', element: 'string', elementRequired: true } },
  { name: 'header', required: false, type: { type: 'struct', fields: [{ name: 'source', required: true, type: 'string' }] } },
];

/** The same schema as .proto text (for protobufjs and text registration), plus Struct, Value, Any, Empty. */
const ORDER_TEXT = `syntax = "proto3";
package floe.typed;
import "floe/header.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";

message Tiny { int32 n = 1; }
message Order {
  enum Status { UNKNOWN = 0; OPEN = 1; CLOSED = 2; }
  message Line { string sku = 1; uint32 qty = 2; sint64 delta = 3; }
  int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3; uint32 u32 = 4; fixed32 f32 = 5;
  int64 i64 = 6; sint64 s64 = 7; sfixed64 sf64 = 8; uint64 u64 = 9; fixed64 f64 = 10;
  float f = 11; double d = 12; bool b = 13; string s = 14; bytes by = 15;
  Status status = 16; repeated Line lines = 17; map<string, int64> counts = 18;
  oneof pick { string name = 20; int32 number = 21; Line line = 22; }
  google.protobuf.Timestamp at = 23; google.protobuf.Duration took = 24;
  google.protobuf.Int32Value maybe_i = 25; google.protobuf.StringValue maybe_s = 26;
  optional int32 opt = 32; repeated int32 nums = 33; repeated string words = 34;
  Header header = 36;
  google.protobuf.Struct meta = 40; google.protobuf.Value val = 41; google.protobuf.Any packed = 42;
  google.protobuf.Empty nothing = 43; repeated Status statuses = 44;
}
`;
const HEADER_TEXT = 'syntax = "proto3";\npackage floe.typed;\nmessage Header { string source = 1; }\n';

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function assertRoundTrip(codec: ReturnType<typeof compileValueCodec>, payload: Uint8Array, message: string): Record<string, unknown> {
  const row = codec.decode(payload);
  assert.equal(hex(codec.encode(row)), hex(payload), `${message}: encode(decode(p)) is p`);
  return row as Record<string, unknown>;
}

/** What every implicit-presence field of Order reads when absent. */
const ORDER_DEFAULTS = {
  i32: 0, s32: 0, sf32: 0, u32: 0n, f32: 0n, i64: 0n, s64: 0n, sf64: 0n, u64: 0n, f64: 0n, f: 0, d: 0, b: false, s: '', by: new Uint8Array(0),
  status: 'UNKNOWN', lines: [], counts: [], name: null, number: null, line: null, at: null, took: null, maybe_i: null, maybe_s: null, opt: null, nums: [], words: [], header: null,
};

test('Protobuf: @confluentinc/schemaregistry ProtobufSerializer (bufbuild toBinary) payloads, the descriptor it registered, references', { timeout: 60_000 }, async (t) => {
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  const client = new SchemaRegistryClient({ baseURLs: [broker.registryUrl] });
  const header = create(FileDescriptorProtoSchema, HEADER_PROTO as never);
  const order = create(FileDescriptorProtoSchema, ORDER_PROTO as never);
  const wkt = new Map([file_google_protobuf_timestamp, file_google_protobuf_duration, file_google_protobuf_wrappers].map((f) => [`${f.name}.proto`, f]));
  const files = createFileRegistry(order, (name) => (name === 'floe/header.proto' ? createFileRegistry(header, () => undefined).getFile('floe/header.proto') : wkt.get(name)));
  const Order = files.getMessage('floe.typed.Order') as DescMessage;
  const Line = files.getMessage('floe.typed.Order.Line') as DescMessage;
  const Tiny = files.getMessage('floe.typed.Tiny') as DescMessage;
  const ser = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: true });
  ser.registry.add(Order);
  ser.registry.add(Line);
  ser.registry.add(Tiny);

  const full = create(Order, {
    i32: -7, s32: -8, sf32: -9, u32: 4_000_000_000, f32: 4_000_000_001,
    i64: -(2n ** 62n), s64: -(2n ** 63n), sf64: 2n ** 63n - 1n, u64: 2n ** 64n - 1n, f64: 2n ** 63n,
    f: 1.5, d: -2.25, b: true, s: 'héllo', by: new Uint8Array([0, 255]),
    status: 2, lines: [{ sku: 'a', qty: 3, delta: -1n }, { sku: '', qty: 0, delta: 0n }], counts: { x: 1n, y: -2n },
    pick: { case: 'line', value: { sku: 'picked', qty: 1, delta: 5n } },
    at: { seconds: 1_700_000_000n, nanos: 123_456_000 }, took: { seconds: -3n, nanos: -500_000_000 },
    maybeI: 0, maybeS: 'w', opt: 0, nums: [1, -1, 300], words: ['p', 'q'], header: { source: 'js' },
  } as never);
  const bytes = await ser.serialize('orders', full);
  const prefix = parseWirePrefix(bytes, 'PROTOBUF');
  assert.deepEqual(prefix.messageIndexes, [1], 'Order is the second message of the file');
  assert.equal(hex(encodeWirePrefix(prefix.schemaId, 'PROTOBUF', prefix.messageIndexes)), hex(bytes.subarray(0, prefix.payloadStart)), 'the prefix rebuilds exactly');

  const writer = await writerSchemaFromRegistry(broker.registryUrl, prefix.schemaId, 'serialized');
  assert.equal(writer.references.length, 1, 'floe/header.proto is a reference; the well-known types are built in');
  assert.equal(writer.references[0]?.name, 'floe/header.proto');
  const codec = compileValueCodec(writer, { messageIndexes: prefix.messageIndexes });
  assert.equal(codec.message, 'floe.typed.Order');
  assert.deepEqual(codec.fields, ORDER_FIELDS);
  const row = assertRoundTrip(codec, bytes.subarray(prefix.payloadStart), 'a full Order');
  assert.deepEqual(row, {
    i32: -7, s32: -8, sf32: -9, u32: 4_000_000_000n, f32: 4_000_000_001n,
    i64: -(2n ** 62n), s64: -(2n ** 63n), sf64: 2n ** 63n - 1n, u64: 2n ** 64n - 1n, f64: 2n ** 63n,
    f: 1.5, d: -2.25, b: true, s: 'héllo', by: new Uint8Array([0, 255]),
    status: 'CLOSED', lines: [{ sku: 'a', qty: 3n, delta: -1n }, { sku: '', qty: 0n, delta: 0n }], counts: [['x', 1n], ['y', -2n]],
    name: null, number: null, line: { sku: 'picked', qty: 1n, delta: 5n },
    at: 1_700_000_000_123_456n, took: -3_500_000n, maybe_i: 0, maybe_s: 'w', opt: 0, nums: [1, -1, 300], words: ['p', 'q'], header: { source: 'js' },
  });

  const empty = await ser.serialize('orders', create(Order, {} as never));
  const emptyRow = assertRoundTrip(codec, empty.subarray(parseWirePrefix(empty, 'PROTOBUF').payloadStart), 'an empty Order');
  assert.deepEqual(emptyRow, ORDER_DEFAULTS, 'proto3 defaults for fields without presence, null for the others');
  const other = await ser.serialize('orders', create(Order, { pick: { case: 'number', value: 0 }, at: { seconds: -1n, nanos: 999_000_000 }, status: 1 } as never));
  const otherRow = assertRoundTrip(codec, other.subarray(parseWirePrefix(other, 'PROTOBUF').payloadStart), 'a oneof set to its default');
  assert.equal(otherRow['number'], 0, 'a oneof member set to 0 is present, not null');
  assert.equal(otherRow['at'], -1000n, 'a Timestamp before the epoch');
  assert.equal(otherRow['status'], 'OPEN');

  // A nested message: indexes [1, 0], which the prefix writes as count 2, then 1, 0 (zigzag varints).
  const lineBytes = await ser.serialize('lines', create(Line, { sku: 'n', qty: 2, delta: -3n } as never));
  const linePrefix = parseWirePrefix(lineBytes, 'PROTOBUF');
  assert.deepEqual(linePrefix.messageIndexes, [1, 0]);
  assert.equal(hex(lineBytes.subarray(5, linePrefix.payloadStart)), '040200');
  assert.equal(hex(encodeWirePrefix(linePrefix.schemaId, 'PROTOBUF', [1, 0])), hex(lineBytes.subarray(0, linePrefix.payloadStart)));
  const lineCodec = compileValueCodec(await writerSchemaFromRegistry(broker.registryUrl, linePrefix.schemaId, 'serialized'), { messageIndexes: linePrefix.messageIndexes });
  assert.equal(lineCodec.message, 'floe.typed.Order.Line');
  assert.deepEqual(assertRoundTrip(lineCodec, lineBytes.subarray(linePrefix.payloadStart), 'a Line'), { sku: 'n', qty: 2n, delta: -3n });
  // The first message: indexes [0], the single byte 0.
  const tinyBytes = await ser.serialize('tiny', create(Tiny, { n: -1 } as never));
  const tinyPrefix = parseWirePrefix(tinyBytes, 'PROTOBUF');
  assert.deepEqual(tinyPrefix.messageIndexes, [0]);
  assert.equal(tinyPrefix.payloadStart, 6);
  assert.equal(hex(encodeWirePrefix(tinyPrefix.schemaId, 'PROTOBUF', [0])), hex(tinyBytes.subarray(0, 6)));
  const tinyCodec = compileValueCodec(await writerSchemaFromRegistry(broker.registryUrl, tinyPrefix.schemaId, 'serialized'));
  assert.deepEqual(assertRoundTrip(tinyCodec, tinyBytes.subarray(6), 'Tiny -1 (a 10-byte varint)'), { n: -1 });
});

function textWriter(): WriterSchema {
  return { id: 9, schemaType: 'PROTOBUF', schema: ORDER_TEXT, references: [{ name: 'floe/header.proto', schema: HEADER_TEXT }] };
}

function protobufjsOrder(): protobuf.Type {
  const root = new protobuf.Root();
  for (const f of ['timestamp', 'duration', 'wrappers', 'struct', 'any', 'empty']) {
    root.addJSON((protobuf.common.get(`google/protobuf/${f}.proto`) as { nested: Record<string, protobuf.AnyNestedObject> }).nested);
  }
  protobuf.parse(HEADER_TEXT, root, { keepCase: true });
  protobuf.parse(ORDER_TEXT, root, { keepCase: true });
  root.resolveAll();
  return root.lookupType('floe.typed.Order');
}

test('Protobuf: protobufjs payloads with the schema as .proto text: Struct, Value, Any, Empty, unknown enum numbers', () => {
  const codec = compileValueCodec(textWriter(), { messageIndexes: [1] });
  assert.deepEqual(codec.fields.slice(0, ORDER_FIELDS.length), ORDER_FIELDS, 'the text form maps as the descriptor form does');
  assert.deepEqual(codec.fields.slice(ORDER_FIELDS.length), [
    { name: 'meta', required: false, type: 'string' },
    { name: 'val', required: false, type: 'string' },
    { name: 'packed', required: false, type: { type: 'struct', fields: [{ name: 'type_url', required: true, type: 'string' }, { name: 'value', required: true, type: 'binary' }] } },
    { name: 'nothing', required: false, type: 'boolean' },
    { name: 'statuses', required: true, type: { type: 'list', element: 'string', elementRequired: true } },
  ]);
  const Order = protobufjsOrder();
  const payload = Order.encode(
    Order.fromObject({
      i64: '-5',
      u64: '18446744073709551615',
      status: 7,
      lines: [{ sku: 'z', qty: 4294967295 }],
      name: 'chosen',
      meta: { fields: { a: { numberValue: 1.5 }, b: { listValue: { values: [{ stringValue: 'q' }, { nullValue: 0 }, { boolValue: true }] } }, c: { structValue: { fields: { d: { stringValue: 'e' } } } } } },
      val: { nullValue: 0 },
      packed: { type_url: 'type.googleapis.com/floe.typed.Tiny', value: Buffer.from([8, 1]) },
      nothing: {},
      statuses: [1, 9, 0],
    }),
  ).finish();
  const row = assertRoundTrip(codec, payload, 'protobufjs Order');
  assert.equal(row['i64'], -5n);
  assert.equal(row['u64'], 2n ** 64n - 1n);
  assert.equal(row['status'], '7', 'an enum number the schema does not define is kept as its digits');
  assert.deepEqual(row['lines'], [{ sku: 'z', qty: 4294967295n, delta: 0n }]);
  assert.equal(row['name'], 'chosen');
  assert.equal(row['meta'], '{"a":1.5,"b":["q",null,true],"c":{"d":"e"}}', 'a Struct as JSON text');
  assert.equal(row['val'], 'null', 'a Value holding null is the JSON text null, not an absent value');
  assert.deepEqual(row['packed'], { type_url: 'type.googleapis.com/floe.typed.Tiny', value: new Uint8Array([8, 1]) });
  assert.equal(row['nothing'], true, 'an Empty that is present');
  assert.deepEqual(row['statuses'], ['OPEN', '9', 'UNKNOWN']);
  assert.equal(row['header'], null);
});

test('Protobuf: payloads that decode but are not in canonical form re-encode to other bytes', () => {
  const codec = compileValueCodec(textWriter(), { messageIndexes: [1] });
  // i32 = 1 (field 1) after s = "x" (field 14): out of field-number order.
  const outOfOrder = Buffer.from([0x72, 0x01, 0x78, 0x08, 0x01]);
  const row = codec.decode(outOfOrder);
  assert.equal(row['i32'], 1);
  assert.equal(row['s'], 'x');
  assert.equal(hex(codec.encode(row)), '0801720178');
  // nums = [1, 2] unpacked (proto3 packs them), and an unknown field 99.
  const unpacked = Buffer.from([0x88, 0x02, 0x01, 0x88, 0x02, 0x02, 0x98, 0x06, 0x05]);
  const r2 = codec.decode(unpacked);
  assert.deepEqual(r2['nums'], [1, 2]);
  assert.equal(hex(codec.encode(r2)), '8a02020102');
  // i32 = 0 written explicitly: proto3 leaves defaults out.
  assert.equal(hex(codec.encode(codec.decode(Buffer.from([0x08, 0x00])))), '');
});

test('Protobuf: refusals and corrupt payloads', () => {
  const recursive = 'syntax = "proto3";\npackage floe.t;\nmessage Tree { string v = 1; repeated Tree children = 2; }\n';
  assert.throws(() => compileValueCodec({ id: 1, schemaType: 'PROTOBUF', schema: recursive, references: [] }), (e: TypedValueError) => e.code === 'UNSUPPORTED_SCHEMA' && e.message.includes('floe.t.Tree') && /recursive/.test(e.message));
  const mutual = 'syntax = "proto3";\nmessage A { B b = 1; }\nmessage B { optional A a = 1; }\n';
  assert.throws(() => compileValueCodec({ id: 1, schemaType: 'PROTOBUF', schema: mutual, references: [] }), (e: TypedValueError) => e.code === 'UNSUPPORTED_SCHEMA' && e.message.includes('A → B → A'));
  assert.throws(() => compileValueCodec({ id: 1, schemaType: 'PROTOBUF', schema: 'message {', references: [] }), (e: TypedValueError) => e.code === 'INVALID_SCHEMA');
  assert.throws(() => compileValueCodec({ id: 1, schemaType: 'PROTOBUF', schema: ORDER_TEXT, references: [] }), (e: TypedValueError) => e.code === 'INVALID_SCHEMA' && /resolve/.test(e.message), 'floe/header.proto not given');
  assert.throws(() => compileValueCodec(textWriter(), { messageIndexes: [5] }), (e: TypedValueError) => e.code === 'INVALID_SCHEMA' && /index 5/.test(e.message));
  const codec = compileValueCodec(textWriter(), { messageIndexes: [1] });
  const garbage = [
    Buffer.from([0x08]), // a varint cut short
    Buffer.from([0x72, 0x05, 0x61]), // a string longer than the payload
    Buffer.from([0x00, 0x01]), // field number 0
    Buffer.from([0x0f]), // wire type 7
    Buffer.from('ff'.repeat(11), 'hex'), // a varint longer than 10 bytes
  ];
  for (const g of garbage) assert.throws(() => codec.decode(g), (e: TypedValueError) => e instanceof TypedValueError && e.code === 'CORRUPT_PAYLOAD', `garbage ${hex(g)}`);
});

test('Protobuf: proto2 presence, required, [packed=true] and unpacked repeated fields (protobufjs payloads)', () => {
  const text = `syntax = "proto2";
package floe.p2;
message Legacy {
  message Sub { optional bool flag = 1; }
  enum Kind { A = 1; B = 2; }
  required int32 id = 1;
  optional string name = 2 [default = "x"];
  optional int32 count = 3;
  repeated int32 plain = 4;
  repeated int32 packed = 5 [packed = true];
  optional Sub sub = 6;
  optional Kind kind = 7;
}
`;
  const codec = compileValueCodec({ id: 1, schemaType: 'PROTOBUF', schema: text, references: [] });
  assert.deepEqual(codec.fields, [
    { name: 'id', required: true, type: 'int' },
    { name: 'name', required: false, type: 'string' },
    { name: 'count', required: false, type: 'int' },
    { name: 'plain', required: true, type: { type: 'list', element: 'int', elementRequired: true } },
    { name: 'packed', required: true, type: { type: 'list', element: 'int', elementRequired: true } },
    { name: 'sub', required: false, type: { type: 'struct', fields: [{ name: 'flag', required: false, type: 'boolean' }] } },
    { name: 'kind', required: false, type: 'string' },
  ]);
  const Legacy = protobuf.parse(text, { keepCase: true }).root.lookupType('floe.p2.Legacy');
  const payload = Legacy.encode(Legacy.fromObject({ id: 0, count: 0, plain: [1, 2], packed: [3, 4], sub: {}, kind: 2 })).finish();
  assert.equal(hex(payload.subarray(0, 4)), '08001800', 'proto2 writes a set 0');
  const row = assertRoundTrip(codec, payload, 'proto2 Legacy');
  assert.deepEqual(row, { id: 0, name: null, count: 0, plain: [1, 2], packed: [3, 4], sub: { flag: null }, kind: 'B' }, 'explicit presence: a set 0 is 0, an unset field null (not its [default])');
});

test('Protobuf: long strings and nested messages whose length prefixes take several bytes', () => {
  const codec = compileValueCodec(textWriter(), { messageIndexes: [1] });
  const Order = protobufjsOrder();
  for (const size of [40, 43, 127, 128, 300, 20_000]) {
    const text = 'é'.repeat(size / 2) + 'x'.repeat(size % 2);
    const payload = Order.encode(
      Order.fromObject({
        s: text,
        words: [text, 'a'.repeat(size)],
        lines: [{ sku: text, qty: 1 }],
        line: { sku: 'b'.repeat(size) },
        meta: { fields: { [text]: { stringValue: text } } },
        header: { source: '€'.repeat(size) },
      }),
    ).finish();
    const row = assertRoundTrip(codec, payload, `strings of ${size} UTF-16 units`);
    assert.equal(row['s'], text);
    assert.equal((row['header'] as { source: string }).source.length, size);
  }
});
