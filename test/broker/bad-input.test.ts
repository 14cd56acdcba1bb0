/**
 * Bad input against a running broker: malformed and oversized frames, unknown APIs and versions, truncated
 * bodies, random garbage, corrupt batches and invalid names each get Kafka's error code or a closed
 * connection, while another client keeps producing on its own connection and nothing it had acknowledged
 * is lost.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { encodeRequest } from '../../protocol/index.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { startBroker } from '../helpers/broker.js';
import { WireClient, batchOf, fetchBody, fetchPartitions, firstPartition, produceBody } from './handlers/wire-client.js';
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';

const MAX_FRAME = 1024 * 1024;

function frame(payload: Buffer): Buffer {
  const b = Buffer.alloc(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  payload.copy(b, 4);
  return b;
}

/** Sends raw bytes on a fresh connection; resolves with what came back before the broker closed it (or timeout). */
async function sendRaw(port: number, bytes: Buffer, waitMs = 2000): Promise<{ closed: boolean; data: Buffer }> {
  const sock: Socket = connect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await once(sock, 'connect');
  const chunks: Buffer[] = [];
  sock.on('data', (c: Buffer) => chunks.push(c));
  sock.write(bytes);
  const closed = await Promise.race([once(sock, 'close').then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), waitMs))]);
  sock.destroy();
  return { closed, data: Buffer.concat(chunks) };
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('the broker answers bad input with error codes or a closed connection and keeps serving', async (t) => {
  const b = await startBroker([`--socket.request.max.bytes=${MAX_FRAME}`, '--num.partitions=1']);
  t.after(() => b.stop());
  const good = await WireClient.connect(b.port);
  t.after(() => good.close());

  // A well-behaved client producing the whole time on its own connection.
  const acked = new Map<bigint, string>();
  let producing = true;
  let seq = 0;
  const producer = (async () => {
    while (producing) {
      const value = `v${seq++}`;
      const res = firstPartition(await good.request(0, 9, produceBody('steady', 0, batchOf([value]))));
      if (res.errorCode === ErrorCode.NONE) acked.set(res.baseOffset, value);
    }
  })();
  while (acked.size < 5) await new Promise((r) => setTimeout(r, 10));

  const header = (apiKey: number, version: number, correlationId = 1) => {
    const h = Buffer.alloc(10);
    h.writeInt16BE(apiKey, 0);
    h.writeInt16BE(version, 2);
    h.writeInt32BE(correlationId, 4);
    h.writeInt16BE(-1, 8); // null client id
    return h;
  };

  // Frames the broker cannot read: it closes the connection without answering.
  const oversized = Buffer.alloc(4);
  oversized.writeInt32BE(MAX_FRAME + 1);
  const negative = Buffer.alloc(4);
  negative.writeInt32BE(-7);
  const produceV9 = encodeRequest({ apiKey: 0, apiVersion: 9, correlationId: 3, clientId: 'x' }, produceBody('steady', 0, batchOf(['x'])));
  const truncated = frame(produceV9.subarray(4, produceV9.length - 20));
  const closes: [string, Buffer][] = [
    ['a frame larger than socket.request.max.bytes', oversized],
    ['a negative frame size', negative],
    ['an unknown API key', frame(Buffer.concat([header(9999, 0), Buffer.alloc(8)]))],
    ['an unsupported Metadata version', frame(Buffer.concat([header(3, 99), Buffer.alloc(8)]))],
    ['a Fetch version below the served range', frame(encodeRequest({ apiKey: 1, apiVersion: 3, correlationId: 1, clientId: null }, fetchBody('steady', [{ partition: 0, fetchOffset: 0n }])).subarray(4))],
    ['a truncated Produce body', truncated],
    ['a header cut short', frame(Buffer.from([0, 3]))],
  ];
  for (const [what, bytes] of closes) {
    const res = await sendRaw(b.port, bytes);
    assert.ok(res.closed, `${what}: the connection should close`);
    assert.equal(res.data.length, 0, `${what}: nothing is answered`);
  }

  // ApiVersions at a version from the future: answered in v0 with UNSUPPORTED_VERSION so clients can fall back.
  const av = await sendRaw(b.port, frame(Buffer.concat([header(18, 77, 42), Buffer.alloc(4)])), 300);
  assert.ok(av.data.length >= 10, 'ApiVersions gets an answer');
  assert.equal(av.data.readInt32BE(4), 42, 'correlation id echoed');
  assert.equal(av.data.readInt16BE(8), ErrorCode.UNSUPPORTED_VERSION);

  // Random garbage, framed and unframed: the broker survives every one of them.
  const rand = rng(7);
  for (let i = 0; i < 60; i++) {
    const junk = Buffer.alloc(1 + Math.floor(rand() * 200));
    for (let j = 0; j < junk.length; j++) junk[j] = Math.floor(rand() * 256);
    await sendRaw(b.port, i % 2 === 0 ? frame(junk) : junk, 50);
  }

  // Well-formed requests with bad content get Kafka's error codes on a connection that stays open.
  const bad = await WireClient.connect(b.port);
  t.after(() => bad.close());
  const corrupt = batchOf(['will be corrupted']);
  corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1);
  assert.equal(firstPartition(await bad.request(0, 9, produceBody('steady', 0, corrupt))).errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.equal(firstPartition(await bad.request(0, 9, produceBody('bad name!', 0, batchOf(['x'])))).errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  assert.equal(firstPartition(await bad.request(0, 9, produceBody('steady', 5, batchOf(['x'])))).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(firstPartition(await bad.request(0, 2, produceBody('steady', 0, batchOf(['x'])))).errorCode, ErrorCode.UNSUPPORTED_VERSION);
  const created = await bad.request(19, 5, { topics: [{ name: '..', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }, { name: 'ok-topic', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }, { name: 'cfg', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: 'forever' }] }], timeoutMs: 1000, validateOnly: false });
  assert.deepEqual(
    (created.topics as { errorCode: number }[]).map((x) => x.errorCode),
    [ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_REPLICATION_FACTOR, ErrorCode.INVALID_CONFIG],
  );
  const offsets = await bad.request(2, 5, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'steady', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] });
  assert.equal((offsets.topics as { partitions: { errorCode: number }[] }[])[0]?.partitions[0]?.errorCode, ErrorCode.NONE);

  // The steady producer was never disturbed, and everything it had acknowledged is in the log.
  producing = false;
  await producer;
  assert.ok(acked.size > 5);
  const stored = new Map<bigint, string>();
  let next = 0n;
  for (;;) {
    const [p] = fetchPartitions(await good.request(1, 11, fetchBody('steady', [{ partition: 0, fetchOffset: next, partitionMaxBytes: 1 << 20 }], { maxWaitMs: 0 })));
    if (!p || p.records === null || p.records.length === 0) break;
    for (const { start, end } of iterateBatches(p.records)) {
      const batch = decodeRecordBatch(p.records.subarray(start, end));
      for (const r of batch.records) stored.set(batch.baseOffset + BigInt(r.offsetDelta), r.value?.toString() ?? '');
      next = batch.baseOffset + BigInt(batch.lastOffsetDelta) + 1n;
    }
  }
  for (const [offset, value] of acked) assert.equal(stored.get(offset), value, `acknowledged offset ${offset}`);
});

test('a flood of garbage frames is logged as a handful of warnings that count the rest, and the broker keeps serving', async (t) => {
  const warnings: string[] = [];
  const b = await startBroker(['--num.partitions=1'], { warnings });
  t.after(() => b.stop());
  const negative = Buffer.alloc(4);
  negative.writeInt32BE(-7);
  const garbage = [negative, frame(Buffer.from([0, 3])), frame(Buffer.from('GET / HTTP/1.1\r\n\r\n'))];
  const flood = 600;
  for (let i = 0; i < flood; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => sendRaw(b.port, garbage[(i + j) % garbage.length] ?? negative, 1000)));
  }
  await new Promise((r) => setTimeout(r, 1100));
  await sendRaw(b.port, negative, 1000);
  const lines = warnings.map((l) => JSON.parse(l) as { msg: string; suppressed?: number });
  assert.ok(lines.length >= 2 && lines.length < 40, `${flood + 1} bad frames made ${lines.length} warning lines`);
  const counted = lines.reduce((n, l) => n + (l.suppressed ?? 0), 0);
  assert.ok(counted > 0, 'a later line says how many were not logged');
  assert.ok(lines.length + counted <= flood + 1, `lines (${lines.length}) and the counts they carry (${counted}) are at most the bad frames`);
  const c = await WireClient.connect(b.port);
  t.after(() => c.close());
  assert.equal(firstPartition(await c.request(0, 9, produceBody('after-flood', 0, batchOf(['still here'])))).errorCode, ErrorCode.NONE);
});
