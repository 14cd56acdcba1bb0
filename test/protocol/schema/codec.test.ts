/** The codec engine on small specs of its own, one property per test. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError } from '../../../protocol/protocol-error.js';
import { Reader, resolveLimits } from '../../../protocol/reader.js';
import { decodeMessage, encodeMessage, messageCodec } from '../../../protocol/schema/codec.js';
import { array, field, message, struct } from '../../../protocol/schema/types.js';
import { Writer } from '../../../protocol/writer.js';

const POINT = struct([field('x', 'int32', '0+'), field('y', 'int32', '0+')]);

const SPEC = message({
  apiKey: 1000,
  name: 'Sample',
  type: 'request',
  validVersions: '0-3',
  flexibleVersions: '2+',
  fields: [
    field('id', 'int64', '0+'),
    field('name', 'string', '0+', { nullableVersions: '1+' }),
    field('timeoutMs', 'int32', '1+', { default: -1 }),
    field('items', array([field('key', 'string', '0+'), field('value', 'bytes', '0+', { nullableVersions: '0+' })]), '0+'),
    field('origin', POINT, '0+', { nullableVersions: '3+' }),
    field('note', 'string', '2+', { taggedVersions: '2+', tag: 0, nullableVersions: '2+', default: null }),
    field('tags', array('int32'), '2+', { taggedVersions: '2+', tag: 3 }),
    field('legacy', 'bool', '0', { ignorable: true }),
    field('strict', 'int16', '0-1'),
  ],
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `expected a ProtocolError, got ${String(e)}`);
    return e.code;
  }
  return undefined;
}

test('v0 wire layout is classic: int16 strings, int32 array and bytes lengths, no tagged fields', () => {
  const bytes = encodeMessage(SPEC, 0, { id: 1n, name: 'ab', items: [{ key: 'k', value: Buffer.from([5]) }], origin: { x: 2, y: 3 }, strict: 4 });
  const expected = Buffer.from([
    0, 0, 0, 0, 0, 0, 0, 1, // id
    0, 2, 0x61, 0x62, // name
    0, 0, 0, 1, 0, 1, 0x6b, 0, 0, 0, 1, 5, // items
    0, 0, 0, 2, 0, 0, 0, 3, // origin
    0, // legacy
    0, 4, // strict
  ]);
  assert.deepEqual([...bytes], [...expected]);
});

test('flexible versions use compact lengths and a tagged-field section in every struct', () => {
  const bytes = encodeMessage(SPEC, 2, { id: 1n, name: 'ab', items: [{ key: 'k', value: null }], origin: { x: 2, y: 3 } });
  const expected = Buffer.from([
    0, 0, 0, 0, 0, 0, 0, 1, // id
    3, 0x61, 0x62, // compact name
    0, 0, 0, 0xff - 0, // timeoutMs placeholder, patched below
    2, 2, 0x6b, 0, 0, // items: compact length 1+1, key, null value, element tags
    0, 0, 0, 2, 0, 0, 0, 3, 0, // origin and its tags
    0, // top-level tags: note and tags are default, so not written
  ]);
  expected.writeInt32BE(-1, 11);
  assert.deepEqual([...bytes], [...expected]);
});

test('fields absent from a version decode to their defaults, and every decoded object has every key', () => {
  const body = decodeMessage(SPEC, 0, encodeMessage(SPEC, 0, { id: 5n }));
  assert.deepEqual(body, {
    id: 5n,
    name: '',
    timeoutMs: -1,
    items: [],
    origin: { x: 0, y: 0 },
    note: null,
    tags: [],
    legacy: false,
    strict: 0,
  });
  const v3 = decodeMessage(SPEC, 3, encodeMessage(SPEC, 3, { id: 5n, origin: null }));
  assert.equal(v3.origin, null);
  assert.equal(v3.strict, 0);
  assert.equal(v3.legacy, false);
});

test('tagged fields are written only when not default and decode back', () => {
  const plain = encodeMessage(SPEC, 2, { id: 1n });
  const tagged = encodeMessage(SPEC, 2, { id: 1n, note: 'hi', tags: [7] });
  assert.ok(tagged.length > plain.length);
  // Explicitly passing the defaults writes the same bytes as omitting them.
  assert.deepEqual(encodeMessage(SPEC, 2, { id: 1n, note: null, tags: [] }), plain);
  const body = decodeMessage(SPEC, 2, tagged);
  assert.equal(body.note, 'hi');
  assert.deepEqual(body.tags, [7]);
  // The section at the end: 2 fields; tag 0 (3 bytes: compact 'hi'), tag 3 (5 bytes: compact [7]).
  assert.deepEqual([...tagged.subarray(tagged.length - 13)], [2, 0, 3, 3, 0x68, 0x69, 3, 5, 2, 0, 0, 0, 7]);
});

test('unknown tags are skipped on decode', () => {
  const known = encodeMessage(SPEC, 2, { id: 9n, note: 'n' });
  // Rewrite the top-level section to add tag 2 (unknown) between the known tags 0 and 3.
  const head = known.subarray(0, known.length - 5); // section was [1, 0, 2, 2, 0x6e]
  assert.deepEqual([...known.subarray(known.length - 5)], [1, 0, 2, 2, 0x6e]);
  const withUnknown = Buffer.concat([head, Buffer.from([2, 0, 2, 2, 0x6e, 2, 3, 0xaa, 0xbb, 0xcc])]);
  const body = decodeMessage(SPEC, 2, withUnknown);
  assert.equal(body.id, 9n);
  assert.equal(body.note, 'n');
});

test('a tagged field whose value does not fill its declared size is rejected', () => {
  const known = encodeMessage(SPEC, 2, { id: 9n, note: 'n' });
  const head = known.subarray(0, known.length - 5);
  const padded = Buffer.concat([head, Buffer.from([1, 0, 3, 2, 0x6e, 0])]);
  assert.equal(codeOf(() => decodeMessage(SPEC, 2, padded)), 'INVALID_LENGTH');
});

test('nullability follows the version', () => {
  assert.equal(codeOf(() => encodeMessage(SPEC, 0, { id: 1n, name: null })), 'INVALID_VALUE');
  assert.equal(decodeMessage(SPEC, 1, encodeMessage(SPEC, 1, { id: 1n, name: null })).name, null);
  assert.equal(codeOf(() => encodeMessage(SPEC, 2, { id: 1n, origin: null })), 'INVALID_VALUE');
  // A null string on the wire where v0 does not allow it.
  const v0 = encodeMessage(SPEC, 0, { id: 1n });
  v0.writeInt16BE(-1, 8);
  assert.equal(codeOf(() => decodeMessage(SPEC, 0, v0)), 'INVALID_VALUE');
});

test('in a request, a non-default value in an absent, non-ignorable field is an error; ignorable ones are dropped', () => {
  const err = (() => {
    try {
      encodeMessage(SPEC, 2, { id: 1n, strict: 3 });
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.ok(err instanceof ProtocolError);
  assert.equal(err.code, 'INVALID_VALUE');
  assert.equal(err.field, 'strict');
  // At its default the absent field is fine.
  encodeMessage(SPEC, 2, { id: 1n, strict: 0 });
  // An ignorable field is silently left out.
  assert.deepEqual(encodeMessage(SPEC, 1, { id: 1n, legacy: true }), encodeMessage(SPEC, 1, { id: 1n }));
});

test('in a response, fields a version lacks are left out, at any depth (DescribeConfigs v1 has no isDefault)', () => {
  const RESPONSE = message({ ...SPEC, type: 'response' });
  // Nested too: a struct inside an array inside the response.
  const NESTED = message({
    apiKey: 1001,
    name: 'Nested',
    type: 'response',
    validVersions: '0-1',
    flexibleVersions: 'none',
    fields: [field('results', array([field('name', 'string', '0+'), field('isDefault', 'bool', '0'), field('source', 'int8', '1+', { default: -1 })]), '0+')],
  });
  assert.deepEqual(encodeMessage(RESPONSE, 2, { id: 1n, strict: 3 }), encodeMessage(RESPONSE, 2, { id: 1n }));
  const body = { results: [{ name: 'retention.ms', isDefault: true, source: 5 }] };
  assert.deepEqual(decodeMessage(NESTED, 1, encodeMessage(NESTED, 1, body)), { results: [{ name: 'retention.ms', isDefault: false, source: 5 }] });
  assert.deepEqual(decodeMessage(NESTED, 0, encodeMessage(NESTED, 0, body)), { results: [{ name: 'retention.ms', isDefault: true, source: -1 }] });
});

test('encode errors name the field path', () => {
  try {
    encodeMessage(SPEC, 0, { id: 1n, items: [{ key: 'a' }, { key: 7 }] });
    assert.fail('expected an error');
  } catch (e) {
    assert.ok(e instanceof ProtocolError);
    assert.equal(e.field, 'items[1].key');
  }
  assert.equal(codeOf(() => encodeMessage(SPEC, 0, { id: 'x' })), 'INVALID_VALUE');
  assert.equal(codeOf(() => encodeMessage(SPEC, 0, { id: 1n, origin: 3 })), 'INVALID_VALUE');
  assert.equal(codeOf(() => encodeMessage(SPEC, 0, { id: 1n, items: {} })), 'INVALID_VALUE');
});

test('int64 fields accept safe-integer numbers on encode and decode to bigint', () => {
  assert.equal(decodeMessage(SPEC, 0, encodeMessage(SPEC, 0, { id: 42 })).id, 42n);
});

test('codecs are compiled once per (message, version) and cached', () => {
  assert.equal(messageCodec(SPEC, 1), messageCodec(SPEC, 1));
  assert.notEqual(messageCodec(SPEC, 1), messageCodec(SPEC, 2));
  assert.equal(messageCodec(SPEC, 2).flexible, true);
  assert.equal(messageCodec(SPEC, 1).flexible, false);
});

test('a version outside validVersions is UNSUPPORTED_VERSION with the api key', () => {
  try {
    messageCodec(SPEC, 4);
    assert.fail('expected an error');
  } catch (e) {
    assert.ok(e instanceof ProtocolError);
    assert.equal(e.code, 'UNSUPPORTED_VERSION');
    assert.equal(e.apiKey, 1000);
    assert.equal(e.apiVersion, 4);
  }
});

test('records are returned as a slice of the frame, without a copy', () => {
  const RECS = message({
    apiKey: 1001,
    name: 'Recs',
    type: 'request',
    validVersions: '0-1',
    flexibleVersions: '1+',
    fields: [field('records', 'records', '0+', { nullableVersions: '0+' })],
  });
  for (const version of [0, 1]) {
    const payload = Buffer.alloc(1000, 0x5a);
    const frame = encodeMessage(RECS, version, { records: payload });
    const body = decodeMessage(RECS, version, frame);
    const records = body.records as Buffer;
    assert.ok(records.equals(payload));
    assert.equal(records.buffer, frame.buffer);
    assert.equal(decodeMessage(RECS, version, encodeMessage(RECS, version, { records: null })).records, null);
  }
});

test('trailing bytes after a message are rejected', () => {
  const bytes = Buffer.concat([encodeMessage(SPEC, 0, { id: 1n }), Buffer.from([0])]);
  assert.equal(codeOf(() => decodeMessage(SPEC, 0, bytes)), 'INVALID_LENGTH');
});

test('nesting deeper than maxDepth is LIMIT_EXCEEDED', () => {
  const DEEP = message({
    apiKey: 1002,
    name: 'Deep',
    type: 'request',
    validVersions: '0',
    flexibleVersions: 'none',
    fields: [field('a', struct([field('b', struct([field('c', 'int8', '0+')]), '0+')]), '0+')],
  });
  const bytes = encodeMessage(DEEP, 0, { a: { b: { c: 1 } } });
  assert.deepEqual(decodeMessage(DEEP, 0, bytes), { a: { b: { c: 1 } } });
  assert.equal(codeOf(() => decodeMessage(DEEP, 0, bytes, resolveLimits({ maxDepth: 2 }))), 'LIMIT_EXCEEDED');
});

test('an array count too large for the remaining bytes is refused before decoding any element', () => {
  const bytes = new Writer().int64(1n).string('').int32(0x7fffffff).toBuffer();
  assert.equal(codeOf(() => decodeMessage(SPEC, 0, bytes)), 'LIMIT_EXCEEDED');
  const bytes2 = new Writer().int64(1n).string('').int32(1000).int8(0).toBuffer();
  assert.equal(codeOf(() => messageCodec(SPEC, 0).decode(new Reader(bytes2))), 'TRUNCATED');
});

test('declared defaults are coerced to the field type', () => {
  const D = message({
    apiKey: 1003,
    name: 'Defaults',
    type: 'response',
    validVersions: '0-1',
    flexibleVersions: 'none',
    fields: [field('offset', 'int64', '1+', { default: -1 }), field('flag', 'bool', '1+', { default: 'true' })],
  });
  assert.deepEqual(decodeMessage(D, 0, Buffer.alloc(0)), { offset: -1n, flag: true });
});
