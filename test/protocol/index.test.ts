/** The sans-IO entry points, including golden bytes written by two independent clients. */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { produceV9 } from '@platformatic/kafka';
import {
  createProtocol,
  decodeRequest,
  decodeRequestHeader,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  encodeResponseChunks,
  ProtocolError,
  supportedApis,
  supportedVersions,
} from '../../protocol/index.js';
import { API_SPECS } from '../../protocol/messages/index.js';
import { array, field, message, api } from '../../protocol/schema/types.js';

const require = createRequire(import.meta.url);

interface KafkajsEncoder {
  readonly buffer: Buffer;
}
type KafkajsRequest = { apiKey: number; apiVersion: number; encode: () => Promise<KafkajsEncoder> };
const kafkajsFrame = require('kafkajs/src/protocol/request.js') as (args: {
  correlationId: number;
  clientId: string;
  request: KafkajsRequest;
}) => Promise<KafkajsEncoder>;
const kafkajsProduceV3 = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (args: object) => KafkajsRequest;

function protocolError(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `expected a ProtocolError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected a ProtocolError');
}

test('golden: a Produce v3 request written by kafkajs decodes, and re-encodes to the same bytes', async () => {
  const request = kafkajsProduceV3({
    acks: -1,
    timeout: 30000,
    transactionalId: null,
    topicData: [
      { topic: 'orders', partitions: [{ partition: 0, messages: [{ key: 'k1', value: 'v1', timestamp: 1700000000000 }] }, { partition: 3, messages: [{ value: 'x', timestamp: 1700000000001 }] }] },
      { topic: 'é', partitions: [{ partition: 1, messages: [{ key: null, value: 'y', timestamp: 1700000000002 }] }] },
    ],
  });
  const sized = (await kafkajsFrame({ correlationId: 42, clientId: 'golden', request })).buffer;
  assert.equal(sized.readInt32BE(0), sized.length - 4);
  const frame = sized.subarray(4);
  const { header, body, apiKey, apiVersion } = decodeRequest(frame);
  assert.deepEqual(header, { apiKey: 0, apiVersion: 3, correlationId: 42, clientId: 'golden' });
  assert.equal(apiKey, 0);
  assert.equal(apiVersion, 3);
  assert.equal(body.transactionalId, null);
  assert.equal(body.acks, -1);
  assert.equal(body.timeoutMs, 30000);
  const topics = body.topicData as { name: string; partitionData: { index: number; records: Buffer }[] }[];
  assert.deepEqual(topics.map((t) => [t.name, t.partitionData.map((p) => p.index)]), [['orders', [0, 3]], ['é', [1]]]);
  for (const t of topics) {
    for (const p of t.partitionData) {
      // A record batch v2: magic byte 2 at offset 16, batchLength covers the rest.
      assert.equal(p.records[16], 2);
      assert.equal(p.records.readInt32BE(8), p.records.length - 12);
      assert.equal(p.records.buffer, frame.buffer, 'records are a view of the frame');
    }
  }
  assert.deepEqual(encodeRequest(header, body), sized);
});

test('golden: a flexible Produce v9 body written by @platformatic/kafka decodes and re-encodes identically', () => {
  const writer = produceV9.createRequest(1, 5000, [
    { topic: 't1', partition: 0, key: Buffer.from('k'), value: Buffer.from('hello'), timestamp: 1700000000000n },
    { topic: 't1', partition: 2, value: Buffer.from('world'), timestamp: 1700000000000n },
    { topic: 't2', partition: 0, value: Buffer.from('!'), timestamp: 1700000000000n },
  ]);
  const bodyBytes = writer.buffer;
  // Request header v2 by hand: apiKey 0, version 9, correlation id 7, clientId 'p', no tags.
  const headerBytes = Buffer.from([0, 0, 0, 9, 0, 0, 0, 7, 0, 1, 0x70, 0]);
  const frame = Buffer.concat([headerBytes, bodyBytes]);
  const decoded = decodeRequestHeader(frame);
  assert.equal(decoded.headerVersion, 2);
  assert.equal(decoded.bodyOffset, headerBytes.length);
  const { header, body } = decodeRequest(frame);
  assert.equal(body.acks, 1);
  assert.equal(body.timeoutMs, 5000);
  const topics = body.topicData as { name: string; partitionData: { index: number; records: Buffer }[] }[];
  assert.deepEqual(topics.map((t) => [t.name, t.partitionData.map((p) => p.index)]), [['t1', [0, 2]], ['t2', [0]]]);
  const sized = encodeRequest(header, body);
  assert.deepEqual(sized.subarray(4), frame);
});

test('an unknown API key is UNKNOWN_API and carries the header, so the broker can answer', () => {
  const frame = Buffer.from([0x7f, 0x00, 0, 1, 0, 0, 0, 99, 0xff, 0xff, 1, 2, 3]);
  const e = protocolError(() => decodeRequest(frame));
  assert.equal(e.code, 'UNKNOWN_API');
  assert.equal(e.header?.correlationId, 99);
  assert.equal(e.apiKey, 0x7f00);
});

test('an unsupported version is UNSUPPORTED_VERSION with the header and api key', () => {
  const frame = Buffer.from([0, 18, 0, 99, 0, 0, 0, 5, 0, 1, 0x63, 0]);
  const e = protocolError(() => decodeRequest(frame));
  assert.equal(e.code, 'UNSUPPORTED_VERSION');
  assert.equal(e.header?.correlationId, 5);
  assert.equal(e.header?.clientId, 'c');
  assert.equal(e.apiKey, 18);
  assert.equal(e.apiVersion, 99);
});

test('a body error after the header still carries the header', () => {
  const sized = encodeRequest({ apiKey: 18, apiVersion: 3, correlationId: 11, clientId: null }, { clientSoftwareName: 'x', clientSoftwareVersion: '1' });
  const cut = sized.subarray(4, sized.length - 2);
  const e = protocolError(() => decodeRequest(cut));
  assert.equal(e.code, 'TRUNCATED');
  assert.equal(e.header?.correlationId, 11);
  assert.equal(e.apiVersion, 3);
});

test('ApiVersions responses use header v0 even at flexible versions; others use v1 when flexible', () => {
  const av = encodeResponse({ correlationId: 3 }, 18, 3, { errorCode: 35, apiKeys: [] });
  assert.equal(av.readInt32BE(0), av.length - 4);
  assert.equal(av.readInt32BE(4), 3);
  assert.equal(av.readInt16BE(8), 35, 'the body starts right after the correlation id');
  assert.deepEqual(decodeResponse(18, 3, av.subarray(4)).body.errorCode, 35);

  const produce = encodeResponse({ correlationId: 4 }, 0, 9, { responses: [] });
  assert.equal(produce.readInt32BE(4), 4);
  assert.equal(produce[8], 0, 'empty tagged-field section of response header v1');
  const back = decodeResponse(0, 9, produce.subarray(4));
  assert.equal(back.header.correlationId, 4);
  assert.deepEqual(back.body.responses, []);
});

test('encodeResponse returns a fresh buffer each call', () => {
  const a = encodeResponse({ correlationId: 1 }, 18, 0, { errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 11 }] });
  const copy = Buffer.from(a);
  encodeResponse({ correlationId: 2 }, 18, 0, { errorCode: 1, apiKeys: [] });
  assert.deepEqual(a, copy);
});

test('encodeResponseChunks: the same bytes as encodeResponse at every Fetch version, with large record sets referenced, not copied', () => {
  const big = Buffer.alloc(40_000, 7);
  const small = Buffer.alloc(100, 3);
  const versions = supportedVersions(1);
  assert.ok(versions);
  for (let v = versions.minVersion; v <= versions.maxVersion; v++) {
    const partition = (partitionIndex: number, records: Buffer | null) => ({ partitionIndex, errorCode: 0, highWatermark: 10n, lastStableOffset: 10n, logStartOffset: 0n, abortedTransactions: [], preferredReadReplica: -1, records });
    const body = { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: 't', topicId: Buffer.alloc(16, 1), partitions: [partition(0, big), partition(1, small), partition(2, null), partition(3, big)] }] };
    const whole = encodeResponse({ correlationId: 9 }, 1, v, body);
    const chunks = encodeResponseChunks({ correlationId: 9 }, 1, v, body, 16 * 1024);
    assert.deepEqual(Buffer.concat(chunks), whole, `Fetch v${v}: the chunks are the frame`);
    assert.equal(chunks.filter((c) => c.buffer === big.buffer && c.byteOffset === big.byteOffset && c.length === big.length).length, 2, `Fetch v${v}: both large record sets are the caller's buffer`);
    assert.ok(!chunks.some((c) => c.buffer === small.buffer), `Fetch v${v}: a small record set is copied`);
  }
  // Nothing spliced: one buffer. And the writer forgets its references: the next frame is self-contained.
  const plain = encodeResponseChunks({ correlationId: 1 }, 18, 0, { errorCode: 0, apiKeys: [] }, 16 * 1024);
  assert.equal(plain.length, 1);
  assert.deepEqual(plain[0], encodeResponse({ correlationId: 1 }, 18, 0, { errorCode: 0, apiKeys: [] }));
});

test('encode errors are ProtocolErrors naming the API and field', () => {
  const e = protocolError(() => encodeResponse({ correlationId: 1 }, 18, 0, { errorCode: 'bad' }));
  assert.equal(e.code, 'INVALID_VALUE');
  assert.equal(e.field, 'errorCode');
  assert.equal(e.apiKey, 18);
  assert.equal(protocolError(() => encodeResponse({ correlationId: 1 }, 18, 99, {})).code, 'UNSUPPORTED_VERSION');
});

test('supported versions come from the registry', () => {
  const all = supportedApis();
  assert.equal(all.length, API_SPECS.size);
  assert.deepEqual(all.map((a) => a.apiKey), [...API_SPECS.keys()].sort((a, b) => a - b));
  const produce = supportedVersions(0);
  assert.ok(produce !== undefined);
  assert.equal(produce.name, 'Produce');
  assert.ok(produce.minVersion <= produce.maxVersion);
  assert.equal(supportedVersions(0x7fff), undefined);
});

test('createProtocol works over any registry, and bytes after a request body are ignored and counted, as Kafka ignores them', () => {
  const echo = api(
    message({ apiKey: 500, name: 'Echo', type: 'request', validVersions: '0-1', flexibleVersions: '1+', fields: [field('words', array('string'), '0+')] }),
    message({ apiKey: 500, name: 'Echo', type: 'response', validVersions: '0-1', flexibleVersions: '1+', fields: [field('count', 'int32', '0+')] }),
  );
  const p = createProtocol(new Map([[500, echo]]));
  assert.deepEqual(p.supportedApis(), [{ apiKey: 500, name: 'Echo', minVersion: 0, maxVersion: 1 }]);
  for (const version of [0, 1]) {
    const sized = p.encodeRequest({ apiKey: 500, apiVersion: version, correlationId: 1, clientId: 'x' }, { words: ['a', 'b'] });
    const exact = p.decodeRequest(sized.subarray(4));
    assert.deepEqual(exact.body, { words: ['a', 'b'] });
    assert.equal(exact.trailingBytes, 0);
    const extra = p.decodeRequest(Buffer.concat([sized.subarray(4), Buffer.from([0, 0, 0])]));
    assert.deepEqual(extra.body, { words: ['a', 'b'] });
    assert.equal(extra.trailingBytes, 3);
    // A body cut short is still an error: only bytes AFTER a complete body are forgiven.
    assert.equal(protocolError(() => p.decodeRequest(sized.subarray(4, sized.length - 1))).code, 'TRUNCATED');
  }
  assert.throws(() => createProtocol(new Map([[500, api({ ...echo.request, validVersions: '0+' }, { ...echo.response, validVersions: '0+' })]])), /bounded/);
});

test('a frame larger than the retained writer size is encoded whole, and later frames still encode', () => {
  const records = Buffer.alloc(9 * 1024 * 1024, 1);
  const header = { apiKey: 0, apiVersion: 9, correlationId: 8, clientId: null };
  const big = encodeRequest(header, { acks: 1, timeoutMs: 1, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] });
  const small = encodeRequest({ ...header, correlationId: 9 }, { acks: 1, timeoutMs: 1, topicData: [] });
  const bigBody = decodeRequest(big.subarray(4)).body as { topicData: { partitionData: { records: Buffer }[] }[] };
  assert.ok(bigBody.topicData[0]?.partitionData[0]?.records.equals(records));
  assert.equal(decodeRequest(small.subarray(4)).header.correlationId, 9);
});
