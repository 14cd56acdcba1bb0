// Protobuf compatibility by field number, in both schema forms clients send (.proto text and a base64
// FileDescriptorProto).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import descriptorNamespace from 'protobufjs/ext/descriptor/index.js';
import { PROTOBUF_FORMAT } from '../../../../broker/schema-registry/formats/protobuf.js';
import { RegistryError } from '../../../../broker/schema-registry/errors.js';

const p = (body: string, pkg = 'floe.t') => PROTOBUF_FORMAT.parse(`syntax = "proto3";\npackage ${pkg};\n${body}`, []);
const canRead = (reader: string, writer: string) => PROTOBUF_FORMAT.readerIncompatibilities(p(reader), p(writer));

test('added, removed and renamed fields are fine', () => {
  const w = 'message M { int32 a = 1; string b = 2; }';
  assert.deepEqual(canRead('message M { int32 a = 1; string b = 2; bool c = 3; }', w), []);
  assert.deepEqual(canRead('message M { int32 a = 1; }', w), []);
  assert.deepEqual(canRead('message M { int32 renamed = 1; string b = 2; }', w), []);
});

test('type changes: only within a wire-compatible group', () => {
  assert.deepEqual(canRead('message M { int64 a = 1; }', 'message M { int32 a = 1; }'), [], 'int32 to int64');
  assert.deepEqual(canRead('message M { bytes a = 1; }', 'message M { string a = 1; }'), [], 'string to bytes');
  assert.match(canRead('message M { string a = 1; }', 'message M { int32 a = 1; }').join(), /field 1 changed type from int32 to string/);
  assert.match(canRead('message M { sint32 a = 1; }', 'message M { int32 a = 1; }').join(), /changed type/);
  assert.match(canRead('message M { N a = 1; } message N { int32 x = 1; } message O { int32 x = 1; }', 'message M { O a = 1; } message N { int32 x = 1; } message O { int32 x = 1; }').join(), /changed type from floe.t.O to floe.t.N/);
  assert.match(canRead('message M { map<string, int32> a = 1; }', 'message M { string a = 1; }').join(), /changed kind from scalar/);
  assert.match(canRead('message M { map<string, string> a = 1; }', 'message M { map<string, int32> a = 1; }').join(), /map value/);
  assert.deepEqual(canRead('message M { repeated int32 a = 1; }', 'message M { int32 a = 1; }'), [], 'labels are not compared, as in Confluent');
  assert.deepEqual(canRead('message M { E a = 1; } enum E { Z = 0; }', 'message M { int32 a = 1; }'), [], 'an enum is an int32 on the wire');
  assert.deepEqual(canRead('message M { F a = 1; } enum E { Z = 0; } enum F { Y = 0; }', 'message M { E a = 1; } enum E { Z = 0; } enum F { Y = 0; }'), [], 'one enum for another');
});

test('removed messages, package changes, oneofs and proto2 required fields', () => {
  assert.match(canRead('message M { int32 a = 1; }', 'message M { int32 a = 1; } message N { int32 b = 1; }').join(), /message floe.t.N removed/);
  assert.match(PROTOBUF_FORMAT.readerIncompatibilities(p('message M { int32 a = 1; }', 'floe.other'), p('message M { int32 a = 1; }')).join(), /package changed/);
  assert.match(canRead('message M { oneof o { int32 a = 1; string b = 2; } }', 'message M { oneof o { string b = 2; } int32 a = 1; }').join(), /moved into the existing oneof o/);
  assert.match(canRead('message M { oneof o { int32 a = 1; string b = 2; } }', 'message M { int32 a = 1; string b = 2; }').join(), /several fields moved into the oneof o/);
  assert.match(canRead('message M { oneof o { int32 a = 1; } }', 'message M { oneof o { int32 a = 1; string b = 2; } }').join(), /field b \(2\) removed from oneof o/);
  assert.deepEqual(canRead('message M { int32 a = 1; }', 'message M { oneof o { int32 a = 1; string b = 2; } }'), [], 'a whole oneof removed');
  assert.deepEqual(canRead('message M { optional string a = 1; }', 'message M { string a = 1; }'), [], 'proto3 optional is no oneof');
  assert.deepEqual(canRead('message M { oneof o { int32 a = 1; } }', 'message M { int32 a = 1; }'), [], 'one field into a new oneof is fine');
  const p2 = (body: string) => PROTOBUF_FORMAT.parse(`syntax = "proto2";\npackage floe.t;\n${body}`, []);
  assert.match(PROTOBUF_FORMAT.readerIncompatibilities(p2('message M { optional int32 a = 1; required int32 b = 2; }'), p2('message M { optional int32 a = 1; }')).join(), /required field b \(2\) added/);
  assert.match(PROTOBUF_FORMAT.readerIncompatibilities(p2('message M { optional int32 a = 1; }'), p2('message M { optional int32 a = 1; required int32 b = 2; }')).join(), /required field b \(2\) removed/);
});

test('a base64 FileDescriptorProto parses and compares like its .proto text', () => {
  const text = 'syntax = "proto3";\npackage floe.t;\nimport "google/protobuf/timestamp.proto";\nmessage M { int32 a = 1; google.protobuf.Timestamp at = 2; }\n';
  const descriptor = descriptorNamespace as unknown as { FileDescriptorProto: protobuf.Type };
  const file = {
    name: 'floe/t.proto',
    package: 'floe.t',
    syntax: 'proto3',
    dependency: ['google/protobuf/timestamp.proto'],
    messageType: [
      {
        name: 'M',
        field: [
          { name: 'a', number: 1, type: 'TYPE_INT32', label: 'LABEL_OPTIONAL' },
          { name: 'at', number: 2, type: 'TYPE_MESSAGE', typeName: '.google.protobuf.Timestamp', label: 'LABEL_OPTIONAL' },
        ],
      },
    ],
  };
  const b64 = Buffer.from(descriptor.FileDescriptorProto.encode(descriptor.FileDescriptorProto.fromObject(file)).finish()).toString('base64');
  const fromB64 = PROTOBUF_FORMAT.parse(b64, []);
  const fromText = PROTOBUF_FORMAT.parse(text, []);
  assert.deepEqual(fromB64.messages, ['floe.t.M']);
  assert.deepEqual(PROTOBUF_FORMAT.readerIncompatibilities(fromB64, fromText), []);
  assert.deepEqual(PROTOBUF_FORMAT.readerIncompatibilities(fromText, fromB64), []);
  assert.equal(fromB64.canonical, b64, 'stored as sent');
});

test('invalid schemas are refused with 42201', () => {
  for (const bad of ['syntax = "proto3"; message {', 'syntax = "proto3"; message M { Nope a = 1; }', 'syntax = "proto3"; import "other.proto"; message M { other.T a = 1; }']) {
    assert.throws(() => PROTOBUF_FORMAT.parse(bad, []), (e: unknown) => e instanceof RegistryError && e.errorCode === 42201, bad);
  }
});

test('each form renders as the other and parses back to the same schema', () => {
  const text = 'syntax = "proto3";\npackage floe.r;\nimport "google/protobuf/timestamp.proto";\nmessage Outer {\n  message Inner { int32 x = 1; }\n  enum Kind { A = 0; B = 1; }\n  Inner inner = 1;\n  Kind kind = 2;\n  map<string, int64> counts = 3;\n  oneof choice { string s = 4; int32 i = 5; }\n  optional string maybe = 6;\n  repeated google.protobuf.Timestamp at = 7;\n}\nenum Top { T0 = 0; }\n';
  const fromText = PROTOBUF_FORMAT.parse(text, []);
  assert.equal(PROTOBUF_FORMAT.render?.(fromText, undefined), text.trim(), 'text is served as registered');
  const serialized = PROTOBUF_FORMAT.render?.(fromText, 'serialized') ?? '';
  const fromSerialized = PROTOBUF_FORMAT.parse(serialized, []);
  assert.deepEqual([...fromSerialized.messages].sort(), [...fromText.messages].sort());
  assert.deepEqual(PROTOBUF_FORMAT.readerIncompatibilities(fromSerialized, fromText), []);
  assert.deepEqual(PROTOBUF_FORMAT.readerIncompatibilities(fromText, fromSerialized), []);
  const printed = PROTOBUF_FORMAT.render?.(fromSerialized, undefined) ?? '';
  assert.match(printed, /^syntax = "proto3";\npackage floe\.r;\nimport "google\/protobuf\/timestamp\.proto";/);
  const reparsed = PROTOBUF_FORMAT.parse(printed, []);
  assert.deepEqual(PROTOBUF_FORMAT.readerIncompatibilities(reparsed, fromText), [], `the printed text is the same schema:\n${printed}`);
  assert.deepEqual(PROTOBUF_FORMAT.readerIncompatibilities(fromText, reparsed), []);
  assert.match(printed, /optional string maybe = 6;/);
  assert.match(printed, /oneof choice \{/);
  assert.equal(PROTOBUF_FORMAT.render?.(fromSerialized, 'serialized'), serialized, 'serialized is served as registered');
});
