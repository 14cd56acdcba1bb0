/**
 * The interop scenario every client runs, and the record model both it and the cross-client test check
 * against: which records a client is asked to send (shaped by what it can send), the offsets and timestamps
 * they must get, and a byte-exact comparison of what a client reads back.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { storedBatches, type StoredBatch } from './broker-view.js';
import type { ClientCapabilities, Codec, Header, InRecord, InteropClient, OutRecord } from './types.js';

export const PARTITIONS = 3;

/** Deterministic bytes covering the whole byte range except what the client cannot carry. */
export function bytesOf(seed: number, length: number, forbidden: readonly number[]): Buffer {
  const out = Buffer.alloc(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    do {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
    } while (forbidden.includes(x & 0xff));
    out[i] = x & 0xff;
  }
  // Always include the awkward ones: NUL, 0xff, newline.
  if (length >= 3) out.set([0x00, 0xff, 0x0a], 0);
  return out;
}

const text = (s: string): Buffer => Buffer.from(s, 'utf8');

/**
 * The records of one produce call: binary and text keys and values, null keys, null values (tombstones),
 * empty bytes, duplicate header keys (kept adjacent: kafkajs returns headers as an object of arrays, which
 * keeps the order only of adjacent duplicates), a null header value, a compressible record so compression is
 * really exercised, and explicit timestamps, one of them older than the record before it.
 * `readers` narrows header values to text when some reader can only print text.
 */
export function recordsFor(caps: ClientCapabilities, seed: number, readersBinaryHeaders = true): OutRecord[] {
  const base = 1_700_000_000_000 + seed * 10_000;
  const f = caps.forbiddenBytes;
  const ts = (d: number): { timestamp?: number } => (caps.explicitTimestamps ? { timestamp: base + d } : {});
  const binHeader = caps.binaryHeaderValues && readersBinaryHeaders ? bytesOf(seed + 7, 12, f) : text(`binary-unsupported-${seed}`);
  const rs: OutRecord[] = [
    { partition: 0, key: bytesOf(seed, 16, f), value: bytesOf(seed + 1, 64, f), headers: [['trace-id', text(`trace-${seed}`)], ['dup', text('1')], ['dup', text('2')]], ...ts(10) },
    { partition: 1, key: null, value: text(`no key ünïcödé ✓ ${seed}`), headers: [], ...ts(20) },
    { partition: 2, key: text(`tombstone-${seed}`), value: null, headers: [['tombstone', text('yes')]], ...ts(30) },
    { partition: 0, key: text(`big-${seed}`), value: text(`lorem ipsum dolor sit amet ${seed} `.repeat(120)), headers: [['h', text('x')]], ...ts(-5_000) },
    { partition: 2, key: text(`bin-${seed}`), value: bytesOf(seed + 3, 300, f), headers: [['bin', binHeader], ['n', caps.nullHeaderValues ? null : text('not-null')]], ...ts(40) },
    { partition: 0, key: text('k'), value: text('v'), headers: [['dup', text('a')], ['dup', text('b')], ['other', text('c')]], ...ts(50) },
  ];
  if (caps.emptyBytes) rs.push({ partition: 1, key: Buffer.alloc(0), value: Buffer.alloc(0), headers: [['empty', Buffer.alloc(0)]], ...ts(60) });
  return rs;
}

/** A record as it must be read back: what was sent, at its offset, with its timestamp. */
export interface Expected extends InRecord {
  /** When the client could not set the timestamp: the window the producer's clock must have put it in. */
  readonly timestampWindow?: readonly [number, number];
}

/** Tracks the next offset of every partition of a topic, starting from an empty topic. */
export class TopicModel {
  readonly partitions: Expected[][] = Array.from({ length: PARTITIONS }, () => []);

  /** Assigns offsets to records produced in order; `window` bounds client-clock timestamps. */
  add(records: readonly OutRecord[], window: readonly [number, number]): Expected[] {
    return records.map((r) => {
      const list = this.partitions[r.partition];
      if (list === undefined) throw new Error(`partition ${r.partition} out of range`);
      const e: Expected = { partition: r.partition, offset: list.length, key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp ?? -1, ...(r.timestamp === undefined ? { timestampWindow: window } : {}) };
      list.push(e);
      return e;
    });
  }

  /** Replaces client-clock placeholders with the timestamps a reader saw (after checking the window). */
  settleTimestamps(partition: number, read: readonly InRecord[]): void {
    const list = this.partitions[partition] ?? [];
    for (const r of read) {
      const e = list[r.offset];
      if (e?.timestampWindow === undefined) continue;
      const [lo, hi] = e.timestampWindow;
      assert.ok(r.timestamp >= lo && r.timestamp <= hi, `offset ${r.offset}: timestamp ${r.timestamp} is outside the produce call [${lo}, ${hi}]`);
      list[r.offset] = { ...e, timestamp: r.timestamp, timestampWindow: undefined };
    }
  }

  /** The earliest offset whose timestamp is at or after `ts` (Kafka's ListOffsets by timestamp), or -1. */
  offsetForTimestamp(partition: number, ts: number): number {
    return (this.partitions[partition] ?? []).find((e) => e.timestamp >= ts)?.offset ?? -1;
  }
}

const hex = (b: Buffer | null): string | null => (b === null ? null : b.toString('hex'));
const headersView = (hs: readonly Header[]): (string | null)[][] => hs.map(([k, v]) => [k, hex(v)]);

/** Comparable form: bytes as hex so a mismatch shows where. */
export function view(r: InRecord): Record<string, unknown> {
  return { partition: r.partition, offset: r.offset, key: hex(r.key), value: hex(r.value), headers: headersView(r.headers), timestamp: r.timestamp };
}

/** Asserts that `reader` reads exactly `expected` (one partition, from expected[0].offset). */
export async function assertReads(reader: InteropClient, topic: string, partition: number, expected: readonly Expected[], label: string): Promise<InRecord[]> {
  const from = expected[0]?.offset ?? 0;
  const got = await reader.consume(topic, partition, from, expected.length);
  const unsettled = expected.filter((e) => e.timestampWindow !== undefined);
  const want = expected.map((e) => view(e.timestampWindow === undefined ? e : { ...e, timestamp: got.find((g) => g.offset === e.offset)?.timestamp ?? -1 }));
  assert.deepEqual(got.map(view), want, `${reader.name} reading ${label} ${topic}[${partition}] from offset ${from}`);
  if (unsettled.length > 0) for (const e of unsettled) {
    const [lo, hi] = e.timestampWindow ?? [0, 0];
    const g = got.find((x) => x.offset === e.offset);
    assert.ok(g && g.timestamp >= lo && g.timestamp <= hi, `${reader.name}: offset ${e.offset} timestamp ${g?.timestamp} outside [${lo}, ${hi}]`);
  }
  return got;
}

export interface ProduceCase {
  readonly codec: Codec;
  readonly acks: 1 | -1;
  readonly idempotent: boolean;
}

/** Every codec with acks=1 and acks=all, then every codec idempotently (acks=all) where the client can. */
export function produceCases(caps: ClientCapabilities): ProduceCase[] {
  const cases: ProduceCase[] = [];
  for (const codec of caps.codecs) for (const acks of [1, -1] as const) cases.push({ codec, acks, idempotent: false });
  if (caps.idempotent) for (const codec of caps.codecs) cases.push({ codec, acks: -1, idempotent: true });
  return cases;
}

/** What the broker stored for one produce case: the batches holding its offsets. */
export function batchesOf(all: readonly StoredBatch[], offsets: readonly number[]): StoredBatch[] {
  return all.filter((b) => offsets.some((o) => o >= b.baseOffset && o <= b.lastOffset));
}

export interface SuiteOptions {
  readonly port: number;
  /** For a client without an admin API (kcat): the client that deletes its topic. */
  readonly admin?: InteropClient;
}

/**
 * The per-client suite: create a 3-partition topic, produce every case, read every partition back from the
 * start and from the middle, check the codecs and producer ids the broker stored, list offsets (earliest,
 * latest, by timestamp), delete the topic.
 */
export async function runClientSuite(t: TestContext, client: InteropClient, options: SuiteOptions): Promise<void> {
  const topic = `interop-${client.name}`;
  const model = new TopicModel();
  const caps = client.capabilities;
  const cases = produceCases(caps);
  const produced: { c: ProduceCase; offsets: Expected[] }[] = [];

  await t.test('creates a topic with 3 partitions', async () => {
    await client.createTopic(topic, PARTITIONS);
    assert.equal(await client.partitionCount(topic), PARTITIONS);
  });

  await t.test(`produces with codecs ${caps.codecs.join(',')}, acks 1 and all${caps.idempotent ? ', and idempotently' : ''}`, async () => {
    for (const [i, c] of cases.entries()) {
      const records = recordsFor(caps, i);
      const before = Date.now();
      const outcome = await client.produce({ topic, acks: c.acks, codec: c.codec, idempotent: c.idempotent, records });
      const expected = model.add(records, [before, Date.now()]);
      assert.equal(outcome.offsets.length, records.length);
      outcome.offsets.forEach((o, j) => {
        if (o !== null) assert.equal(o, expected[j]?.offset, `${client.name} case ${JSON.stringify(c)} record ${j}: reported offset`);
      });
      produced.push({ c, offsets: expected });
    }
  });

  await t.test('reads every record back by partition and offset, byte for byte', async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const all = model.partitions[p] ?? [];
      assert.ok(all.length > 0);
      const got = await assertReads(client, topic, p, all, 'from the start');
      model.settleTimestamps(p, got);
      const mid = Math.floor(all.length / 2);
      await assertReads(client, topic, p, (model.partitions[p] ?? []).slice(mid, mid + 5), 'from the middle');
    }
  });

  await t.test('the broker stored each case with the codec and producer ids the client was asked for', async (tt) => {
    assert.equal(produced.length, cases.length, 'every produce case ran');
    const stored = await Promise.all([0, 1, 2].map((p) => storedBatches(options.port, topic, p)));
    const seen = new Set<Codec>();
    for (const { c, offsets } of produced) {
      const batches = offsets.flatMap((e) => batchesOf(stored[e.partition] ?? [], [e.offset]));
      const codecs = new Set(batches.map((b) => b.codec));
      for (const k of codecs) seen.add(k);
      // A client may leave a batch that compression would not shrink uncompressed, never use another codec.
      assert.ok(codecs.has(c.codec), `${client.name} ${JSON.stringify(c)}: stored codecs ${[...codecs].join(',')}`);
      assert.ok([...codecs].every((k) => k === c.codec || k === 'none'), `${client.name} ${JSON.stringify(c)}: stored codecs ${[...codecs].join(',')}`);
      for (const b of batches) {
        if (c.idempotent) {
          assert.ok(b.producerId >= 0n && b.baseSequence >= 0, `${client.name} idempotent batch at ${b.baseOffset} has producer id ${b.producerId}, sequence ${b.baseSequence}`);
        } else {
          assert.equal(b.producerId, -1n, `${client.name} non-idempotent batch at ${b.baseOffset}`);
        }
      }
    }
    tt.diagnostic(`${client.name} really compressed with: ${[...seen].sort().join(', ')}; idempotent: ${caps.idempotent}`);
  });

  await t.test('lists offsets: earliest, latest and by timestamp', async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const n = model.partitions[p]?.length ?? 0;
      assert.equal(await client.listOffset(topic, p, 'earliest'), 0, `earliest of partition ${p}`);
      assert.equal(await client.listOffset(topic, p, 'latest'), n, `latest of partition ${p}`);
    }
    const list = model.partitions[0] ?? [];
    const probes = [list[1]?.timestamp ?? 0, (list.at(-2)?.timestamp ?? 0) - 1];
    for (const ts of probes) assert.equal(await client.listOffset(topic, 0, { timestamp: ts }), model.offsetForTimestamp(0, ts), `offset for timestamp ${ts}`);
    const max = Math.max(...list.map((e) => e.timestamp));
    const pastEnd = caps.timestampPastEnd === 'latest' ? list.length : -1;
    assert.equal(await client.listOffset(topic, 0, { timestamp: max + 1 }), pastEnd, 'no record at or after a timestamp past the last');
  });

  await t.test('deletes the topic', async () => {
    const admin = caps.admin ? client : options.admin;
    assert.ok(admin, `${client.name} has no admin API and no other client was given to delete with`);
    await admin.deleteTopic(topic);
    assert.equal(await client.partitionCount(topic), undefined);
  });
}
