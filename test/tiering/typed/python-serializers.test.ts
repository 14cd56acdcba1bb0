// The codecs against confluent-kafka-python's serializers (python/serialize_values.py, peers venv): Avro
// through fastavro (Python's own datetime, Decimal and UUID values for the logical types), JSON Schema
// through its compact JSON codec, Protobuf through google.protobuf (protoc's encoding). Each serializer
// registers its schema in Floe's registry; each payload must decode to the expected row and re-encode byte
// for byte, except Python's `2.0`, which JSON.stringify writes as `2` (so conversion keeps those raw).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WriterSchemaType } from '../../../tiering/typed/api.js';
import { compileValueCodec } from '../../../tiering/typed/codec.js';
import { encodeWirePrefix, parseWirePrefix } from '../../../tiering/typed/wire-format.js';
import { venvPython } from '../../helpers/peers.js';
import { startRegistryBroker } from '../../interop/schema-registry/registry-broker.js';
import { EVENT, EVENT_FIELDS, READING, READING_FIELDS } from './fixtures.js';
import { writerSchemaFromRegistry } from './registry-writer.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./python/serialize_values.py', import.meta.url));

test('confluent-kafka-python serializers: Avro (fastavro), JSON Schema, Protobuf (upb) payloads', { timeout: 180_000 }, async (t) => {
  const broker = await startRegistryBroker();
  t.after(() => broker.stop());
  const { stdout } = await run(venvPython(), [SCRIPT, broker.registryUrl, JSON.stringify(READING), JSON.stringify(EVENT)], { timeout: 150_000 });
  const cases = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, { id: number; hex: string }>;

  const open = async (name: string, format: WriterSchemaType) => {
    const c = cases[name];
    assert.ok(c, `the script produced ${name}`);
    const bytes = Buffer.from(c.hex, 'hex');
    const prefix = parseWirePrefix(bytes, format);
    assert.equal(prefix.schemaId, c.id);
    assert.equal(Buffer.from(encodeWirePrefix(prefix.schemaId, format, prefix.messageIndexes)).toString('hex'), bytes.subarray(0, prefix.payloadStart).toString('hex'), `${name}: the prefix rebuilds`);
    const writer = await writerSchemaFromRegistry(broker.registryUrl, prefix.schemaId, format === 'PROTOBUF' ? 'serialized' : undefined);
    const codec = compileValueCodec(writer, { messageIndexes: prefix.messageIndexes });
    const payload = bytes.subarray(prefix.payloadStart);
    const row = codec.decode(payload) as Record<string, unknown>;
    const again = Buffer.from(codec.encode(row));
    return { codec, row, payload, again, indexes: prefix.messageIndexes };
  };

  await t.test('Avro through fastavro, with Python values for every logical type', async () => {
    const { codec, row, payload, again } = await open('avro', 'AVRO');
    assert.deepEqual(codec.fields, READING_FIELDS);
    assert.equal(again.toString('hex'), payload.toString('hex'), 'encode(decode(p)) is p');
    assert.deepEqual(row, {
      id: 2n ** 62n + 1n,
      score: 1.5,
      ratio: -0.1,
      ok: true,
      label: 'py é',
      blob: new Uint8Array([0, 1]),
      hash: new Uint8Array(Buffer.from('abcd')),
      kind: 'B',
      price: -1234n,
      fprice: 999_999_999_999_999_999n,
      day: -1,
      tmillis: 86_399_999_000n,
      tmicros: 1n,
      tsmillis: BigInt(Date.UTC(2024, 1, 29, 12, 0, 0, 5)) * 1000n,
      tsmicros: BigInt(Date.UTC(1960, 0, 1)) * 1000n + 1n,
      local: BigInt(Date.UTC(2024, 0, 1)) * 1000n + 123_456n,
      uid: '123e4567-e89b-12d3-a456-426614174000',
      note: null,
      note2: 'n2',
      choice: { tag: 2, field0: null, field1: null, field2: { x: 1, y: 2 } },
      either: { tag: 0, field0: -5n, field1: null },
      tags: ['a'],
      points: [{ x: -1, y: 0 }],
      attrs: [
        ['k', null],
        ['l', -(2n ** 63n)],
      ],
      nested: { deep: { v: 0.5 } },
    });
    const other = await open('avro_other', 'AVRO');
    assert.equal(other.again.toString('hex'), other.payload.toString('hex'));
    assert.equal(other.row['note'], '');
    assert.deepEqual(other.row['choice'], { tag: 1, field0: null, field1: 'text', field2: null });
    assert.deepEqual(other.row['either'], { tag: 1, field0: null, field1: 's' });
  });

  await t.test('JSON Schema through the Python JSON codec', async () => {
    const { codec, row, payload, again } = await open('json', 'JSON');
    assert.deepEqual(codec.fields, EVENT_FIELDS);
    assert.equal(again.toString(), payload.toString(), 'compact, non-ASCII kept: the same text JSON.stringify writes');
    assert.deepEqual(
      Object.entries(row).filter(([, v]) => v !== null),
      [
        ['id', 7n],
        ['score', 2.5],
        ['ok', true],
        ['when', BigInt(Date.UTC(2024, 1, 29, 12, 0, 0, 5)) * 1000n],
        ['day', 19_782],
        ['uid', '123e4567-e89b-12d3-a456-426614174000'],
        ['tags', ['é', '\n']],
        ['attrs', [['a', 1n]]],
        ['home', { city: 'Oslo', zip: null }],
        ['pick', { option0: null, option1: 3n, option2: null }],
      ],
    );
    const float = await open('json_float', 'JSON');
    assert.equal(float.row['score'], 2);
    assert.match(float.payload.toString(), /"score":2\.0/);
    assert.notEqual(float.again.toString(), float.payload.toString(), 'Python writes 2.0 where JSON.stringify writes 2: kept raw');
  });

  await t.test('Protobuf through google.protobuf', async () => {
    const { codec, row, payload, again, indexes } = await open('protobuf', 'PROTOBUF');
    assert.deepEqual(indexes, [0]);
    assert.equal(codec.message, 'floe.py.Event');
    assert.equal(again.toString('hex'), payload.toString('hex'), 'encode(decode(p)) is p (map entries in wire order)');
    // upb writes map entries in its own order; the row keeps the wire order.
    const attrs = [...(row['attrs'] as [string, bigint][])].sort((a, b) => a[0].localeCompare(b[0]));
    assert.deepEqual({ ...row, attrs }, {
      id: -3n,
      neg: -1,
      big: 2n ** 64n - 1n,
      color: 'RED',
      nums: [1, -2, 3],
      inners: [{ label: 'i1' }, { label: '' }],
      attrs: [
        ['a', -(2n ** 63n)],
        ['b', 0n],
      ],
      text: null,
      inner: { label: 'chosen' },
      at: 1_700_000_000_000_001n,
      ratio: 0.25,
    });
    const empty = await open('protobuf_empty', 'PROTOBUF');
    assert.equal(empty.payload.length, 0);
    assert.equal(empty.again.length, 0);
    assert.deepEqual(empty.row, { id: 0n, neg: 0, big: 0n, color: 'NONE', nums: [], inners: [], attrs: [], text: null, inner: null, at: null, ratio: 0 });
    const nested = await open('protobuf_nested', 'PROTOBUF');
    assert.deepEqual(nested.indexes, [0, 0]);
    assert.equal(nested.codec.message, 'floe.py.Event.Inner');
    assert.equal(nested.again.toString('hex'), nested.payload.toString('hex'));
    assert.deepEqual(nested.row, { label: 'nested' });
  });
});
