/**
 * One live run per real client against the capture broker (which speaks through our protocol layer): the
 * client must finish without errors, and the batches it produced must decode, with our record-batch
 * decoder, to exactly what it was asked to send. kcat, kafka-python and confluent-kafka-python are Debian
 * packages (installed by .ci/run); kafkajs is a dev dependency.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { startCaptureBroker, type CaptureBroker } from '../../helpers/capture-broker.js';
import { decodeRecordBatch, type RecordBatch } from '../../../protocol/record-batch/record-batch.js';
import {
  GOLDEN_RECORDS,
  GOLDEN_TOPIC,
  KCAT_RECORDS,
  confluentRun,
  kafkaPythonRun,
  kafkajsRun,
  kcatConsume,
  kcatProduce,
  type ClientRun,
} from '../fixtures/golden-clients.js';

async function broker(t: TestContext): Promise<CaptureBroker> {
  const b = await startCaptureBroker({ topics: { [GOLDEN_TOPIC]: 1 } });
  t.after(() => b.close());
  return b;
}

function killOnExit(t: TestContext, run: ClientRun): Promise<string> {
  t.after(() => {
    if (run.child !== null && run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  });
  return run.done;
}

function stored(b: CaptureBroker): RecordBatch[] {
  assert.deepEqual(b.errors, [], 'the capture broker answered every request');
  return b.batches(GOLDEN_TOPIC, 0).map((raw) => decodeRecordBatch(raw));
}

const utf8 = (x: Buffer | null): string | null => (x === null ? null : x.toString('utf8'));

function records(batches: readonly RecordBatch[]): { key: string | null; value: string | null; headers: [string, string | null][]; timestamp: bigint }[] {
  return batches.flatMap((b) =>
    b.records.map((r) => ({
      key: utf8(r.key),
      value: utf8(r.value),
      headers: r.headers.map((h): [string, string | null] => [h.key, utf8(h.value)]),
      timestamp: b.baseTimestamp + BigInt(r.timestampDelta),
    })),
  );
}

const expectedGolden = GOLDEN_RECORDS.map((r) => ({ key: r.key, value: r.value, headers: r.headers.map(([k, v]): [string, string | null] => [k, v]), timestamp: BigInt(r.timestamp) }));

test('kcat (librdkafka) produces zstd batches that decode to its input lines, and reads them back', async (t) => {
  const b = await broker(t);
  await killOnExit(t, kcatProduce(b.bootstrap, 'zstd'));
  // Reading back goes through our ListOffsets and Fetch response encoders.
  const out = await killOnExit(t, kcatConsume(b.bootstrap));
  assert.deepEqual(
    out.split('\n').filter((l) => l.includes('=')),
    KCAT_RECORDS.map((r) => `${r.key}=${r.value ?? ''}`),
  );
  const batches = stored(b);
  assert.ok(batches.length > 0, 'kcat produced');
  assert.deepEqual(new Set(batches.map((x) => x.compression)), new Set(['zstd']));
  assert.deepEqual(
    records(batches).map(({ timestamp: _t, ...r }) => r),
    KCAT_RECORDS.map((r) => ({ key: r.key, value: r.value, headers: r.headers.map(([k, v]): [string, string | null] => [k, v]) })),
  );
});

test('kafka-python produces gzip batches with keys, null values, headers and timestamps, and consumes them in a group', async (t) => {
  const b = await broker(t);
  const out = await killOnExit(t, kafkaPythonRun(b.bootstrap, { codec: 'gzip', consume: true }));
  assert.match(out, new RegExp(`consumed ${GOLDEN_RECORDS.length}`), 'the group consumer read every record through our responses');
  const batches = stored(b);
  assert.deepEqual(new Set(batches.map((x) => x.compression)), new Set(['gzip']));
  assert.deepEqual(records(batches), expectedGolden);
});

test('confluent-kafka-python produces idempotent lz4 batches that decode to what was sent', async (t) => {
  const b = await broker(t);
  await killOnExit(t, confluentRun(b.bootstrap, { codec: 'lz4', idempotent: true }));
  const batches = stored(b);
  assert.deepEqual(new Set(batches.map((x) => x.compression)), new Set(['lz4']));
  assert.ok(batches.every((x) => x.isIdempotent && x.producerId === 1000n), 'stamped with the id from InitProducerId');
  assert.ok(b.requests.some((r) => r.apiKey === 22), 'InitProducerId was sent');
  assert.deepEqual(records(batches), expectedGolden);
});

test('kafkajs produces gzip batches that decode to what was sent', async (t) => {
  const b = await broker(t);
  await kafkajsRun(b.bootstrap, { codec: 'gzip' });
  const batches = stored(b);
  assert.deepEqual(new Set(batches.map((x) => x.compression)), new Set(['gzip']));
  assert.deepEqual(records(batches), expectedGolden);
});
