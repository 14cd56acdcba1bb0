// /metrics of a broker with a tiered topic, read the way Prometheus would: the text is parsed by the official
// Python client's parser (Debian's python3-prometheus-client), every family has HELP and TYPE and a valid
// name, and the per-partition values agree with what Kafka clients see: ListOffsets from kafkajs (latest,
// earliest) and from a wire client (earliest local -4, latest tiered -5), before and after the segments go to
// the table and local retention hands them off. Request, traffic, tiering, table and remote-read families
// move with the traffic that was sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, tempDir } from '../../helpers/broker.js';
import { WireClient } from '../handlers/wire-client.js';
import { parsePrometheus, partitionValues, scrapeText, value, type Family } from './scrape.js';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Every family parsed, named validly, with HELP and TYPE in the text; counters end in _total. */
function checkExposition(text: string, families: readonly Family[]): void {
  assert.ok(families.length > 20, `many families parsed (${families.length})`);
  for (const f of families) {
    assert.match(f.name, NAME, `family name ${f.name}`);
    assert.notEqual(f.type, 'unknown', `${f.name} has a TYPE`);
    assert.ok(f.help.length > 0, `${f.name} has a HELP`);
    // The text names the family as exposed (the parser drops a counter's _total suffix).
    const exposed = f.type === 'counter' && !text.includes(`# TYPE ${f.name} counter`) ? `${f.name}_total` : f.name;
    assert.ok(text.includes(`# HELP ${exposed} `), `# HELP line for ${exposed}`);
    assert.ok(text.includes(`# TYPE ${exposed} ${f.type}`), `# TYPE line for ${exposed}`);
    if (f.name.startsWith('floe_') && f.type === 'counter') assert.ok(exposed.endsWith('_total'), `counter ${exposed} ends in _total`);
    for (const s of f.samples) for (const l of Object.keys(s.labels)) assert.match(l, LABEL, `label ${l} of ${s.name}`);
  }
}

async function listOffset(client: WireClient, topic: string, partition: number, timestamp: bigint): Promise<number> {
  const res = await client.request(2, 9, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp }] }] });
  const p = (res['topics'] as { partitions: { errorCode: number; offset: bigint }[] }[])[0]?.partitions[0];
  assert.equal(p?.errorCode, 0, `ListOffsets ${timestamp} of ${topic}-${partition}`);
  return Number(p.offset);
}

test('/metrics parses with prometheus_client and its partition values match ListOffsets', { timeout: 120_000 }, async (t) => {
  const root = await tempDir('floe-metrics-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const b = await startBroker(['--remote.log.storage.system.enable=true', `--iceberg.warehouse=${join(root, 'wh')}`, '--iceberg.rest.port=-1', '--log.retention.check.interval.ms=3600000']);
  cleanups.push(() => b.stop());
  const adminUrl = b.adminUrl;
  assert.ok(adminUrl, 'the admin port runs');
  assert.equal(adminUrl, `http://127.0.0.1:${b.broker.adminPort}`);

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'floe-metrics-test', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  cleanups.push(() => admin.disconnect());
  await admin.createTopics({
    topics: [{ topic: 'm', numPartitions: 2, configEntries: [
      { name: 'remote.storage.enable', value: 'true' },
      // One segment per partition until the test rolls it: no segment closes (and none is committed) by itself.
      { name: 'internal.segment.bytes', value: '1048576' },
      { name: 'local.retention.bytes', value: '0' },
      { name: 'iceberg.commit.interval.ms', value: '3600000' },
    ] }],
  });
  await admin.createTopics({ topics: [{ topic: 'plain', numPartitions: 1, configEntries: [{ name: 'iceberg.enabled', value: 'false' }] }] });
  const producer = kafka.producer();
  await producer.connect();
  cleanups.push(() => producer.disconnect());
  const sends = 12;
  for (let i = 0; i < sends; i++) {
    await producer.send({ topic: 'm', acks: -1, messages: Array.from({ length: 5 }, (_, j) => ({ partition: i % 2, key: `k${i}`, value: `v${i}-${j}-${'x'.repeat(60)}` })) });
  }
  await producer.send({ topic: 'plain', acks: -1, messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] });
  const wire = await WireClient.connect(b.port);
  cleanups.push(async () => wire.close());

  const first = await scrapeText(adminUrl);
  assert.equal(first.contentType, 'text/plain; version=0.0.4; charset=utf-8');
  let families = await parsePrometheus(first.text);
  checkExposition(first.text, families);

  const offsets = await admin.fetchTopicOffsets('m');
  for (const p of [0, 1]) {
    const m = partitionValues(families, 'm', p);
    const k = offsets.find((o) => o.partition === p);
    assert.equal(m.logEndOffset, Number(k?.high), `m-${p} log end offset = ListOffsets latest`);
    assert.equal(m.highWatermark, Number(k?.high), `m-${p} high watermark = ListOffsets latest`);
    assert.equal(m.logEndOffset, 30, `m-${p} holds 6 sends of 5 records`);
    assert.equal(m.localLogStartOffset, await listOffset(wire, 'm', p, -4n), `m-${p} local log start = ListOffsets -4`);
    assert.equal(m.committedOffset, -1, `m-${p}: nothing committed yet`);
    assert.equal(m.committedOffset, await listOffset(wire, 'm', p, -5n), `m-${p} committed = ListOffsets -5`);
    assert.equal(m.remoteLogStartOffset, undefined, `m-${p}: no remote data yet`);
    assert.equal(m.lagRecords, 30, `m-${p}: every record waits for the table`);
    assert.ok((m.lagSeconds ?? 0) > 0, `m-${p}: the oldest waiting record has an age`);
  }
  const plain = partitionValues(families, 'plain', 0);
  assert.equal(plain.logEndOffset, 3);
  assert.equal(plain.committedOffset, undefined, 'an untiered topic has no table metrics');
  assert.equal(plain.lagRecords, undefined);
  assert.ok((value(families, 'floe_requests_total', { api: 'Produce' }) ?? 0) >= sends + 1, 'every Produce request is counted');
  assert.equal(value(families, 'floe_request_duration_seconds_count', { api: 'Produce' }), value(families, 'floe_requests_total', { api: 'Produce' }), 'one latency observation per answered request');
  assert.ok((value(families, 'floe_requests_total', { api: 'Metadata' }) ?? 0) >= 1);
  assert.ok((value(families, 'floe_network_received_bytes_total') ?? 0) > 12 * 5 * 60, 'the produced bytes came in');
  assert.ok((value(families, 'floe_network_sent_bytes_total') ?? 0) > 0);
  assert.ok((value(families, 'floe_connections') ?? 0) >= 2, 'kafkajs and the wire client are connected');
  assert.ok((value(families, 'process_resident_memory_bytes') ?? 0) > 0, 'process metrics');
  assert.ok(value(families, 'nodejs_eventloop_lag_p99_seconds') !== undefined, 'event-loop delay');

  // To the table, then local retention hands the segments off: the local start moves, the remote start is 0.
  const tiering = b.broker.services.tiering;
  assert.ok(tiering);
  for (const p of [0, 1]) await b.broker.services.logs.get('m', p)?.roll();
  await tiering.drain();
  for (const p of [0, 1]) await b.broker.services.logs.get('m', p)?.enforceRetention();
  families = await parsePrometheus((await scrapeText(adminUrl)).text);
  for (const p of [0, 1]) {
    const m = partitionValues(families, 'm', p);
    assert.equal(m.committedOffset, 29, `m-${p} is in the table`);
    assert.equal(m.committedOffset, await listOffset(wire, 'm', p, -5n), `m-${p} committed = ListOffsets -5`);
    assert.equal(m.localLogStartOffset, await listOffset(wire, 'm', p, -4n), `m-${p} local log start = ListOffsets -4`);
    assert.equal(m.localLogStartOffset, 30, `m-${p}: local segments were handed off`);
    assert.equal(m.remoteLogStartOffset, 0);
    assert.equal(m.remoteLogStartOffset, await listOffset(wire, 'm', p, -2n), `m-${p} remote log start = ListOffsets earliest`);
    assert.equal(m.lagRecords, 0, `m-${p}: caught up`);
    assert.equal(m.lagSeconds, 0, `m-${p}: caught up`);
  }
  assert.equal(value(families, 'floe_table_info', { topic: 'm', table: 'kafka.m' }), 1);
  assert.ok((value(families, 'floe_table_commits_total', { topic: 'm' }) ?? 0) >= 1);
  assert.equal(value(families, 'floe_table_commit_failures_total', { topic: 'm' }), undefined, 'no commit failed');
  const dataFiles = value(families, 'floe_table_data_files', { topic: 'm' }) ?? 0;
  assert.ok(dataFiles >= 2, `a data file per partition at least (${dataFiles})`);
  assert.equal(value(families, 'floe_table_records', { topic: 'm' }), 60);
  const bytes = value(families, 'floe_table_data_file_bytes', { topic: 'm' }) ?? 0;
  assert.equal(value(families, 'floe_table_data_file_average_bytes', { topic: 'm' }), bytes / dataFiles);
  assert.ok((value(families, 'floe_table_snapshots', { topic: 'm' }) ?? 0) >= 1);
  assert.ok((value(families, 'floe_table_manifests', { topic: 'm' }) ?? 0) >= 1);
  assert.ok((value(families, 'floe_table_last_commit_timestamp_seconds', { topic: 'm' }) ?? 0) > 1_700_000_000);
  const segments = value(families, 'floe_tiering_copied_segments_total', { topic: 'm' }) ?? 0;
  assert.ok(segments >= 2, `segments copied (${segments})`);
  assert.equal(value(families, 'floe_tiering_copy_duration_seconds_count'), segments);
  assert.ok((value(families, 'floe_tiering_copied_bytes_total', { topic: 'm' }) ?? 0) > 30 * 60);

  // A consumer from offset 0 now reads from the table: remote fetch counters and cache misses move.
  const consumer = kafka.consumer({ groupId: 'metrics-test' });
  await consumer.connect();
  cleanups.push(() => consumer.disconnect());
  await consumer.subscribe({ topic: 'm', fromBeginning: true });
  let seen = 0;
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachMessage: async () => {
          if (++seen === 60) resolve();
        },
      })
      .catch(reject);
  });
  families = await parsePrometheus((await scrapeText(adminUrl)).text);
  assert.ok((value(families, 'floe_remote_fetches_total') ?? 0) >= 2, 'both partitions were read from the table');
  assert.ok((value(families, 'floe_remote_fetch_bytes_total') ?? 0) > 60 * 60);
  assert.ok((value(families, 'floe_cache_misses_total', { cache: 'offset_indexes' }) ?? 0) >= 1, 'the offset index was loaded');
  assert.ok((value(families, 'floe_requests_total', { api: 'Fetch' }) ?? 0) >= 1);

  // DeleteRecords inside the first tiered batch hides its first rows with a position delete file: the data
  // files (and their bytes) stay as they were, the delete file is counted apart, and one more snapshot.
  const snapshots = value(families, 'floe_table_snapshots', { topic: 'm' }) ?? 0;
  await admin.deleteTopicRecords({ topic: 'm', partitions: [{ partition: 0, offset: '3' }] });
  families = await parsePrometheus((await scrapeText(adminUrl)).text);
  assert.equal(value(families, 'floe_table_delete_files', { topic: 'm' }), 1, 'one position delete file');
  assert.equal(value(families, 'floe_table_data_files', { topic: 'm' }), dataFiles, 'the data files stay');
  assert.equal(value(families, 'floe_table_data_file_bytes', { topic: 'm' }), bytes, 'data file bytes do not count the delete file');
  assert.equal(value(families, 'floe_table_records', { topic: 'm' }), 60, 'rows before deletes');
  assert.equal(value(families, 'floe_table_snapshots', { topic: 'm' }), snapshots + 1);
  assert.equal(partitionValues(families, 'm', 0).remoteLogStartOffset, 3, 'the remote log start moved');
  assert.equal(partitionValues(families, 'm', 0).remoteLogStartOffset, await listOffset(wire, 'm', 0, -2n));
});
