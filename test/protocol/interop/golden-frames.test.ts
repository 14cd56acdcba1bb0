/**
 * Request frames captured from real clients (test/protocol/fixtures/<client>/*.json, re-captured with
 * `npx tsx scripts/capture-golden.ts`) must decode with our protocol layer, re-encode to the same bytes, and
 * carry what the client was asked to send: the records of every Produce (keys, null keys and values,
 * headers in order with duplicate keys, timestamps), the codec it was told to use, idempotent producer
 * fields, and the group, offset and fetch requests of its consumer. No client runs here.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeRequest, encodeRequest, type DecodedRequest } from '../../../protocol/index.js';
import { iterateBatches } from '../../../protocol/record-batch/batches.js';
import { BATCH_HEADER_SIZE } from '../../../protocol/record-batch/header.js';
import { decodeRecordBatch, type RecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { RecordBatchError } from '../../../protocol/record-batch/errors.js';
import type { CompressionType } from '../../../protocol/record-batch/compression.js';
import { GOLDEN_GROUP, GOLDEN_RECORDS, GOLDEN_TOPIC, KCAT_RECORDS, type GoldenRecord } from '../fixtures/golden-clients.js';

interface GoldenFrame {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly hex: string;
}

interface GoldenFixture {
  readonly client: string;
  readonly scenario: string;
  readonly frames: readonly GoldenFrame[];
}

/** The repository root (tests also run compiled from dist/test, where the fixtures are not copied). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the test file');
    dir = up;
  }
  return dir;
}

const FIXTURES = join(repoRoot(), 'test', 'protocol', 'fixtures');

function loadFixtures(): GoldenFixture[] {
  const out: GoldenFixture[] = [];
  for (const client of readdirSync(FIXTURES, { withFileTypes: true })) {
    if (!client.isDirectory()) continue;
    for (const file of readdirSync(join(FIXTURES, client.name)).sort()) {
      if (file.endsWith('.json')) out.push(JSON.parse(readFileSync(join(FIXTURES, client.name, file), 'utf8')) as GoldenFixture);
    }
  }
  return out;
}

const fixtures = loadFixtures();

/** client id each client was configured with (kcat: librdkafka's default). */
const CLIENT_IDS: Readonly<Record<string, string>> = {
  kcat: 'rdkafka',
  'kafka-python': 'kafka-python-golden',
  'confluent-kafka-python': 'confluent-golden',
  kafkajs: 'kafkajs-golden',
};

/** Codec a scenario's producer was told to use. */
function scenarioCodec(f: GoldenFixture): CompressionType {
  const m = /^produce-(none|gzip|snappy|lz4|zstd)$/.exec(f.scenario);
  if (m) return m[1] as CompressionType;
  if (f.scenario === 'produce-idempotent') return f.client === 'kcat' ? 'zstd' : f.client === 'kafkajs' ? 'gzip' : 'lz4';
  const groupCodec: Readonly<Record<string, CompressionType>> = { kcat: 'none', 'kafka-python': 'gzip', 'confluent-kafka-python': 'snappy', kafkajs: 'none' };
  if (f.scenario === 'consume') return 'gzip';
  const codec = groupCodec[f.client];
  assert.ok(codec !== undefined && f.scenario === 'group', `unknown scenario ${f.client}/${f.scenario}`);
  return codec;
}

function decoded(frame: GoldenFrame): { req: DecodedRequest; bytes: Buffer } {
  const bytes = Buffer.from(frame.hex, 'hex');
  return { req: decodeRequest(bytes), bytes };
}

type Body = Record<string, unknown>;
const get = <T>(o: unknown, k: string): T => (o as Body)[k] as T;

interface ProducedBatch {
  readonly acks: number;
  readonly transactionalId: string | null;
  readonly batch: RecordBatch;
  readonly raw: Buffer;
}

function producedBatches(f: GoldenFixture): ProducedBatch[] {
  const out: ProducedBatch[] = [];
  for (const frame of f.frames.filter((x) => x.apiKey === 0)) {
    const { req } = decoded(frame);
    for (const td of get<{ name: string; partitionData: { index: number; records: Buffer | null }[] }[]>(req.body, 'topicData')) {
      assert.equal(td.name, GOLDEN_TOPIC);
      for (const pd of td.partitionData) {
        assert.equal(pd.index, 0, 'every client was told to use partition 0');
        assert.ok(pd.records !== null, 'a Produce carries records');
        for (const bounds of iterateBatches(pd.records)) {
          const raw = pd.records.subarray(bounds.start, bounds.end);
          out.push({ acks: get<number>(req.body, 'acks'), transactionalId: get<string | null>(req.body, 'transactionalId'), batch: decodeRecordBatch(raw), raw });
        }
      }
    }
  }
  return out;
}

const utf8 = (b: Buffer | null): string | null => (b === null ? null : b.toString('utf8'));

interface SeenRecord extends Omit<GoldenRecord, 'timestamp'> {
  readonly timestamp: bigint;
}

function recordsOf(batches: readonly ProducedBatch[]): SeenRecord[] {
  return batches.flatMap(({ batch }) =>
    batch.records.map((r) => ({
      key: utf8(r.key),
      value: utf8(r.value),
      headers: r.headers.map((h) => [h.key, utf8(h.value) ?? '<null>'] as const),
      timestamp: batch.baseTimestamp + BigInt(r.timestampDelta),
    })),
  );
}

/** Leading bytes of the compressed records section, per codec; snappy depends on the framing. */
const CODEC_MAGIC: Readonly<Record<string, string>> = {
  gzip: '1f8b',
  lz4: '04224d18',
  zstd: '28b52ffd',
  'snappy-xerial': '82534e4150505900',
};

test('fixtures from every client are present', () => {
  const clients = new Set(fixtures.map((f) => f.client));
  assert.deepEqual([...clients].sort(), ['confluent-kafka-python', 'kafka-python', 'kafkajs', 'kcat']);
  assert.ok(fixtures.length >= 20, `only ${fixtures.length} fixtures`);
});

for (const f of fixtures) {
  test(`${f.client}/${f.scenario}: every frame decodes and re-encodes to the client's bytes`, () => {
    assert.ok(f.frames.length > 0, 'the fixture has frames');
    for (const frame of f.frames) {
      const { req, bytes } = decoded(frame);
      assert.equal(req.apiKey, frame.apiKey);
      assert.equal(req.apiVersion, frame.apiVersion);
      assert.equal(req.header.clientId, CLIENT_IDS[f.client], 'client id');
      const again = encodeRequest(req.header, req.body);
      assert.deepEqual(again.subarray(4), bytes, `${frame.apiKey}v${frame.apiVersion} re-encodes byte for byte`);
    }
  });

  test(`${f.client}/${f.scenario}: ApiVersions and Metadata say what the client asked`, () => {
    const apiVersions = f.frames.find((x) => x.apiKey === 18);
    assert.ok(apiVersions, 'every client starts with ApiVersions');
    const av = decoded(apiVersions).req;
    if (av.apiVersion >= 3) {
      // librdkafka names itself unless the wrapper does (confluent-kafka-python appends the librdkafka version).
      const expected = f.client === 'confluent-kafka-python' ? ['confluent-kafka-python', /^\d+\.\d+\.\d+-rdkafka-2\.\d+\.\d+$/] : ['librdkafka', /^2\.\d+\.\d+$/];
      assert.equal(get<string>(av.body, 'clientSoftwareName'), expected[0]);
      assert.match(get<string>(av.body, 'clientSoftwareVersion'), expected[1] as RegExp);
    } else {
      assert.notEqual(f.client, 'kcat', 'librdkafka 2 sends ApiVersions v3');
      assert.notEqual(f.client, 'confluent-kafka-python', 'librdkafka 2 sends ApiVersions v3');
    }
    const asked = f.frames.filter((x) => x.apiKey === 3).map((frame) => get<{ name: string | null }[] | null>(decoded(frame).req.body, 'topics'));
    assert.ok(asked.length > 0, 'Metadata was sent');
    for (const topics of asked) {
      // null: all topics; []: brokers only (librdkafka asks that first); else the topic the client uses.
      if (topics !== null && topics.length > 0) assert.deepEqual(topics.map((t) => t.name), [GOLDEN_TOPIC]);
    }
    if (f.scenario === 'metadata') assert.ok(asked.some((t) => t === null), 'kcat -L asks for all topics (null)');
  });

  if (f.scenario === 'metadata') continue;

  test(`${f.client}/${f.scenario}: produced batches decode to the records that were sent`, () => {
    const batches = producedBatches(f);
    assert.ok(batches.length > 0, 'at least one batch');
    const codec = scenarioCodec(f);
    for (const { batch, raw, acks } of batches) {
      if (f.scenario === 'group' && f.client === 'confluent-kafka-python' && batch.compression === 'none') {
        // librdkafka sends a batch uncompressed when the codec does not shrink it (here: single small records).
        assert.equal(batch.records.length, 1);
      } else {
        assert.equal(batch.compression, codec, 'codec of the batch');
      }
      assert.equal(batch.timestampType, 'create');
      assert.equal(batch.isControl, false);
      assert.equal(acks, f.client === 'kafka-python' ? 1 : -1, 'acks (kafka-python defaults to 1, librdkafka to all, kafkajs was told all)');
      if (codec !== 'none' && codec !== 'snappy') assert.equal(raw.subarray(BATCH_HEADER_SIZE, BATCH_HEADER_SIZE + CODEC_MAGIC[codec]!.length / 2).toString('hex'), CODEC_MAGIC[codec]);
      if (codec === 'snappy') {
        const xerial = raw.subarray(BATCH_HEADER_SIZE, BATCH_HEADER_SIZE + 8).toString('hex') === CODEC_MAGIC['snappy-xerial'];
        assert.equal(xerial, f.client === 'kafka-python', 'kafka-python frames snappy the xerial way; librdkafka sends raw snappy');
      }
    }
    const seen = recordsOf(batches);
    if (f.client === 'kcat') {
      assert.deepEqual(seen.map(({ timestamp: _t, ...r }) => r), KCAT_RECORDS.map((r) => ({ ...r, headers: r.headers.map(([k, v]) => [k, v] as const) })));
      const ts = seen.map((r) => r.timestamp);
      assert.ok(ts.every((t, i) => t > 1_600_000_000_000n && (i === 0 || t >= ts[i - 1]!)), 'producer clock timestamps, in order');
    } else {
      assert.deepEqual(
        seen,
        GOLDEN_RECORDS.map((r) => ({ ...r, headers: r.headers.map(([k, v]) => [k, v] as const), timestamp: BigInt(r.timestamp) })),
      );
    }
    let next = 0;
    for (const { batch } of batches) {
      batch.records.forEach((r, i) => assert.equal(r.offsetDelta, i, 'offset deltas count from 0 in each batch'));
      assert.equal(batch.lastOffsetDelta, batch.records.length - 1);
      next += batch.records.length;
    }
    assert.equal(next, seen.length);
  });

  if (f.scenario === 'produce-idempotent') {
    test(`${f.client}/${f.scenario}: the idempotent producer asks for an id and stamps its batches`, () => {
      const init = f.frames.find((x) => x.apiKey === 22);
      assert.ok(init, 'InitProducerId was sent');
      const body = decoded(init).req.body;
      assert.equal(get<string | null>(body, 'transactionalId'), null);
      const batches = producedBatches(f);
      let sequence = 0;
      for (const { batch, acks } of batches) {
        assert.equal(batch.isIdempotent, true);
        assert.equal(batch.producerId, 1000n, 'the id the capture broker handed out');
        assert.equal(batch.producerEpoch, 0);
        assert.equal(batch.baseSequence, sequence);
        assert.equal(batch.isTransactional, false);
        assert.equal(acks, -1, 'idempotence requires acks=all');
        sequence += batch.records.length;
      }
    });
  } else if (f.scenario.startsWith('produce-')) {
    test(`${f.client}/${f.scenario}: a plain producer leaves the producer fields unset`, () => {
      for (const { batch } of producedBatches(f)) {
        assert.equal(batch.isIdempotent, false);
        assert.equal(batch.producerId, -1n);
        // kafkajs writes baseSequence 0 even without idempotence, so a broker must go by producerId alone.
        assert.equal(batch.baseSequence, f.client === 'kafkajs' ? 0 : -1);
      }
    });
  }

  if (f.scenario === 'consume' || f.scenario === 'group') {
    test(`${f.client}/${f.scenario}: ListOffsets and Fetch ask for the produced partition from the start`, () => {
      const list = f.frames.find((x) => x.apiKey === 2);
      assert.ok(list, 'ListOffsets was sent');
      const lt = get<{ name: string; partitions: { partitionIndex: number; timestamp: bigint }[] }[]>(decoded(list).req.body, 'topics');
      assert.deepEqual(lt.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.timestamp])]), [[GOLDEN_TOPIC, [[0, -2n]]]], 'earliest offset of golden/0');
      const fetch = f.frames.find((x) => x.apiKey === 1);
      assert.ok(fetch, 'Fetch was sent');
      const ft = get<{ topic: string; partitions: { partition: number; fetchOffset: bigint; partitionMaxBytes: number }[] }[]>(decoded(fetch).req.body, 'topics');
      assert.equal(ft.length, 1);
      assert.equal(ft[0]?.topic, GOLDEN_TOPIC);
      assert.equal(ft[0]?.partitions[0]?.partition, 0);
      assert.equal(ft[0]?.partitions[0]?.fetchOffset, 0n);
      assert.ok((ft[0]?.partitions[0]?.partitionMaxBytes ?? 0) > 0, 'a positive partition max bytes');
    });
  }

  if (f.scenario === 'group') {
    test(`${f.client}/${f.scenario}: the group protocol names the group, its members and the committed offsets`, () => {
      const byKey = (k: number): Body => {
        const frame = f.frames.find((x) => x.apiKey === k);
        assert.ok(frame, `API ${k} was sent`);
        return decoded(frame).req.body;
      };
      const fc = f.frames.find((x) => x.apiKey === 10);
      assert.ok(fc, 'FindCoordinator was sent');
      const fcReq = decoded(fc).req;
      assert.deepEqual(fcReq.apiVersion >= 4 ? get<string[]>(fcReq.body, 'coordinatorKeys') : [get<string>(fcReq.body, 'key')], [GOLDEN_GROUP]);
      const join = byKey(11);
      assert.equal(get<string>(join, 'groupId'), GOLDEN_GROUP);
      assert.equal(get<string>(join, 'protocolType'), 'consumer');
      const protocols = get<{ name: string; metadata: Buffer }[]>(join, 'protocols');
      assert.ok(protocols.length > 0, 'at least one assignor');
      for (const p of protocols) {
        // ConsumerProtocolSubscription: version int16, topics [string]; the topic name must be in it.
        assert.ok(p.metadata.includes(Buffer.from(GOLDEN_TOPIC)), `subscription ${p.name} names the topic`);
      }
      const syncs = f.frames.filter((x) => x.apiKey === 14).map((x) => decoded(x).req.body);
      assert.ok(syncs.length > 0, 'SyncGroup was sent');
      for (const sync of syncs) {
        assert.equal(get<string>(sync, 'groupId'), GOLDEN_GROUP);
        assert.equal(get<number>(sync, 'generationId'), 1);
        assert.equal(get<unknown[]>(sync, 'assignments').length, 1, 'the only member is the leader and assigns to itself');
      }
      // kafka-python's first SyncGroup may assign nothing (its metadata is not in yet); a later one assigns the topic.
      const assigned = syncs.some((sync) => get<{ assignment: Buffer }[]>(sync, 'assignments')[0]?.assignment.includes(Buffer.from(GOLDEN_TOPIC)) === true);
      assert.ok(assigned, 'a SyncGroup assigns the golden topic');
      const commit = byKey(8);
      assert.equal(get<string>(commit, 'groupId'), GOLDEN_GROUP);
      const ct = get<{ name: string; partitions: { partitionIndex: number; committedOffset: bigint }[] }[]>(commit, 'topics');
      assert.deepEqual(ct.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.committedOffset])]), [[GOLDEN_TOPIC, [[0, BigInt(GOLDEN_RECORDS.length)]]]]);
      const leave = f.frames.find((x) => x.apiKey === 13);
      assert.ok(leave, 'LeaveGroup was sent');
      assert.equal(get<string>(decoded(leave).req.body, 'groupId'), GOLDEN_GROUP);
    });
  }
}

test('every codec was seen from a real client, and both snappy framings', () => {
  const seen = new Set<string>();
  for (const f of fixtures) {
    for (const { batch, raw } of producedBatches(f)) {
      seen.add(batch.compression);
      if (batch.compression === 'snappy') {
        seen.add(raw.subarray(BATCH_HEADER_SIZE, BATCH_HEADER_SIZE + 8).toString('hex') === CODEC_MAGIC['snappy-xerial'] ? 'snappy-xerial' : 'snappy-raw');
      }
    }
  }
  assert.deepEqual([...seen].sort(), ['gzip', 'lz4', 'none', 'snappy', 'snappy-raw', 'snappy-xerial', 'zstd']);
});

test('a real client batch with one flipped byte fails its CRC, and a cut one is reported truncated', () => {
  let checked = 0;
  for (const f of fixtures) {
    for (const { raw } of producedBatches(f)) {
      const flipped = Buffer.from(raw);
      const at = BATCH_HEADER_SIZE + ((raw.length - BATCH_HEADER_SIZE) >> 1);
      flipped[at] = flipped[at]! ^ 0x01;
      assert.throws(() => decodeRecordBatch(flipped), (e: unknown) => e instanceof RecordBatchError && e.code === 'CRC_MISMATCH', `${f.client}/${f.scenario}: flipped byte`);
      const cut = Buffer.from(raw.subarray(0, raw.length - 1));
      assert.throws(() => decodeRecordBatch(cut), (e: unknown) => e instanceof RecordBatchError && e.code === 'TRUNCATED', `${f.client}/${f.scenario}: one byte short`);
      checked++;
    }
  }
  assert.ok(checked >= 20, `only ${checked} batches checked`);
});
