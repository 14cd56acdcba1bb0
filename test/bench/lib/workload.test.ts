import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRequest } from '../../../protocol/index.js';
import { decodeRecordBatch } from '../../../protocol/record-batch/record-batch.js';
import { makeBatch, produceWorkload } from '../../../bench/lib/workload.js';

test('makeBatch fills up to the target size with valid records', () => {
  for (const target of [16 * 1024, 1024 * 1024]) {
    const { batch, records } = makeBatch(target, 512);
    assert.ok(batch.length <= target, `${batch.length} <= ${target}`);
    assert.ok(batch.length > target - 600, 'no more than one record short of the target');
    const decoded = decodeRecordBatch(batch);
    assert.equal(decoded.records.length, records);
    assert.equal(decoded.records[0]?.value?.length, 512);
  }
});

test('produce requests decode with our protocol layer and spread batches evenly over partitions', () => {
  const w = produceWorkload({ topic: 't', partitions: 8, batchBytes: 16 * 1024, acks: -1, batchesPerRequest: 3 });
  const perPartition = new Array<number>(8).fill(0);
  const ids = new Set<number>();
  for (const r of w.requests) {
    const { header, body } = decodeRequest(r.frame.subarray(4));
    assert.equal(header.apiKey, 0);
    assert.equal(header.correlationId, r.correlationId);
    ids.add(r.correlationId);
    const req = body as unknown as { acks: number; topicData: { name: string; partitionData: { index: number; records: Buffer }[] }[] };
    assert.equal(req.acks, -1);
    const parts = req.topicData[0]?.partitionData ?? [];
    assert.deepEqual(parts.map((p) => p.index), r.batches.map((b) => b.partition));
    assert.equal(new Set(parts.map((p) => p.index)).size, parts.length, 'at most one batch per partition in a request');
    for (const [i, p] of parts.entries()) {
      assert.ok(p.records.equals(r.batches[i]?.batch ?? Buffer.alloc(0)));
      perPartition[p.index]!++;
    }
    assert.equal(r.payloadBytes, parts.reduce((a, p) => a + p.records.length, 0));
  }
  assert.equal(ids.size, w.requests.length, 'correlation ids are unique in the pool');
  assert.ok(perPartition.every((n) => n === perPartition[0]), `even spread: ${perPartition.join(',')}`);
});

test('by default a request carries as many batches as fit in 1 MiB, one per partition', () => {
  assert.equal(produceWorkload({ topic: 't', partitions: 64, batchBytes: 16 * 1024, acks: 1 }).batchesPerRequest, 64);
  assert.equal(produceWorkload({ topic: 't', partitions: 8, batchBytes: 16 * 1024, acks: 1 }).batchesPerRequest, 8);
  assert.equal(produceWorkload({ topic: 't', partitions: 64, batchBytes: 1024 * 1024, acks: 1 }).batchesPerRequest, 1);
});
