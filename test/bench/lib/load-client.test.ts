import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadClient } from '../../../bench/lib/load-client.js';
import { spawnBaseline } from '../../../bench/lib/processes.js';
import { produceWorkload } from '../../../bench/lib/workload.js';

const workload = () => produceWorkload({ topic: 't', partitions: 4, batchBytes: 16 * 1024, acks: 1, batchesPerRequest: 2 });

test('closed loop against the ingest baseline: every answered batch is in its files, CRC-checked', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = await spawnBaseline('ingest', dir);
  t.after(() => server.stop());
  const client = await LoadClient.connect(server.port, 3);
  t.after(() => client.close());
  const w = workload();
  const r = await client.closedLoop(w.requests, { window: 4, durationMs: 200 });
  assert.ok(r.completed >= 12, 'at least the first window of every connection was answered');
  assert.equal(r.perRequest.reduce((a, b) => a + b, 0), r.completed);
  // The files hold exactly the batches of the answered requests.
  let expected = 0;
  r.perRequest.forEach((n, i) => (expected += n * (w.requests[i]?.payloadBytes ?? 0)));
  let stored = 0;
  for (const name of await readdir(dir)) stored += (await readFile(join(dir, name))).length;
  assert.equal(stored, expected);
});

test('the ingest baseline closes the connection on a corrupt batch, and the run fails', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = await spawnBaseline('ingest', dir);
  t.after(() => server.stop());
  const client = await LoadClient.connect(server.port, 1);
  t.after(() => client.close());
  const w = workload();
  const first = w.requests[0];
  assert.ok(first);
  const corrupt = Buffer.from(first.frame);
  corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 10) ^ 0xff, corrupt.length - 10); // inside the last batch's records, covered by its CRC
  await assert.rejects(client.closedLoop([{ frame: corrupt, correlationId: first.correlationId }], { window: 1, durationMs: 100 }), /closed/);
  assert.match(server.output(), /corrupt batch for t-\d/);
});

test('open loop sends every scheduled request and times each response', async (t) => {
  const server = await spawnBaseline('sink');
  t.after(() => server.stop());
  const client = await LoadClient.connect(server.port, 2);
  t.after(() => client.close());
  const r = await client.openLoop(workload().requests, { ratePerSec: 400, durationMs: 100 });
  assert.equal(r.sent, 40);
  assert.equal(r.completed, 40);
  assert.equal(r.fromScheduleMs.length, 40);
  for (let i = 0; i < 40; i++) {
    assert.ok((r.fromScheduleMs[i] as number) >= (r.fromSendMs[i] as number), 'the schedule is never later than the send');
    assert.ok((r.fromSendMs[i] as number) > 0);
  }
});

test('a client runs many open-loop phases without piling listeners on its sockets', async (t) => {
  const server = await spawnBaseline('sink');
  t.after(() => server.stop());
  const client = await LoadClient.connect(server.port, 1);
  t.after(() => client.close());
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  // Node warns at the eleventh listener of one event on one emitter.
  for (let phase = 0; phase < 12; phase++) assert.equal((await client.openLoop(workload().requests, { ratePerSec: 400, durationMs: 10 })).completed, 4);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(warnings.map((w) => w.name), []);
});

test('responses out of order are detected by correlation id', async (t) => {
  const server = await spawnBaseline('sink');
  t.after(() => server.stop());
  const client = await LoadClient.connect(server.port, 1);
  t.after(() => client.close());
  const frame = workload().requests[0]?.frame;
  assert.ok(frame);
  // Claim a different correlation id than the frame carries: the check must fire.
  await assert.rejects(client.closedLoop([{ frame, correlationId: 999 }], { window: 1, durationMs: 50 }), /correlation id \d+, expected 999/);
});
