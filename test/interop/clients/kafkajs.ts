/**
 * kafkajs (npm, pure JavaScript) as an interop client, in this process.
 *
 * Its limits, which shape what the scenario asks of it:
 * - compression: only gzip is built in (snappy, lz4 and zstd need codec plugins this project does not install);
 * - headers are an object: a repeated key becomes an array of its values, so the order survives only for
 *   adjacent duplicates, and a header value cannot be null;
 * - there is no consumer without a group: consume joins a fresh group, seeks the partition to the offset and
 *   collects records from that partition only;
 * - fetchTopicOffsetsByTimestamp answers the high watermark where Kafka answers -1 (no record that late).
 */
import { randomUUID } from 'node:crypto';
import { CompressionTypes, Kafka, logLevel, type Admin, type IHeaders, type KafkaMessage } from 'kafkajs';
import type { ClientCapabilities, Header, InRecord, InteropClient, OffsetQuery, ProduceOutcome, ProduceSpec } from './types.js';

const CONSUME_TIMEOUT_MS = 20_000;

export class KafkajsClient implements InteropClient {
  readonly name = 'kafkajs';
  readonly capabilities: ClientCapabilities = {
    codecs: ['none', 'gzip'],
    idempotent: true,
    explicitTimestamps: true,
    admin: true,
    nullHeaderValues: false,
    emptyBytes: true,
    binaryHeaderValues: true,
    forbiddenBytes: [],
    timestampPastEnd: 'latest',
  };
  private readonly kafka: Kafka;
  private adminClient: Admin | undefined;

  constructor(bootstrap: string) {
    this.kafka = new Kafka({ clientId: 'floe-interop-kafkajs', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  }

  private async admin(): Promise<Admin> {
    if (this.adminClient === undefined) {
      this.adminClient = this.kafka.admin();
      await this.adminClient.connect();
    }
    return this.adminClient;
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    const created = await (await this.admin()).createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    if (!created) throw new Error(`kafkajs reports topic ${topic} was not created`);
  }

  async partitionCount(topic: string): Promise<number | undefined> {
    const admin = await this.admin();
    if (!(await admin.listTopics()).includes(topic)) return undefined;
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    return md.topics[0]?.partitions.length;
  }

  async produce(spec: ProduceSpec): Promise<ProduceOutcome> {
    const producer = this.kafka.producer({ idempotent: spec.idempotent, allowAutoTopicCreation: false, ...(spec.idempotent ? { maxInFlightRequests: 1 } : {}) });
    await producer.connect();
    try {
      const meta = await producer.send({
        topic: spec.topic,
        acks: spec.acks,
        compression: spec.codec === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
        messages: spec.records.map((r) => ({
          partition: r.partition,
          key: r.key,
          value: r.value,
          headers: toKafkajsHeaders(r.headers),
          ...(r.timestamp === undefined ? {} : { timestamp: String(r.timestamp) }),
        })),
      });
      if (spec.codec !== 'none' && spec.codec !== 'gzip') throw new Error(`kafkajs has no built-in ${spec.codec}`);
      // One batch per partition, in send order: a record's offset is its partition's base offset plus its index there.
      const seen = new Map<number, number>();
      return {
        offsets: spec.records.map((r) => {
          const base = meta.find((m) => m.partition === r.partition)?.baseOffset;
          const i = seen.get(r.partition) ?? 0;
          seen.set(r.partition, i + 1);
          return base === undefined ? null : Number(base) + i;
        }),
      };
    } finally {
      await producer.disconnect();
    }
  }

  async consume(topic: string, partition: number, offset: number, count: number): Promise<InRecord[]> {
    const consumer = this.kafka.consumer({ groupId: `interop-kafkajs-${randomUUID()}`, maxWaitTimeInMs: 100, retry: { retries: 3 } });
    await consumer.connect();
    const out: InRecord[] = [];
    let timer: NodeJS.Timeout | undefined;
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`kafkajs read ${out.length} of ${count} records of ${topic}[${partition}] within ${CONSUME_TIMEOUT_MS} ms`)), CONSUME_TIMEOUT_MS);
        if (count === 0) resolve();
        consumer
          .run({
            autoCommit: false,
            eachMessage: async ({ partition: p, message }) => {
              if (p !== partition || Number(message.offset) < offset || out.length >= count) return;
              out.push(fromKafkajs(p, message));
              if (out.length === count) resolve();
            },
          })
          .then(() => consumer.seek({ topic, partition, offset: String(offset) }), reject);
      });
    } finally {
      clearTimeout(timer);
      await consumer.disconnect();
    }
    return out;
  }

  async listOffset(topic: string, partition: number, query: OffsetQuery): Promise<number> {
    const admin = await this.admin();
    if (query === 'earliest' || query === 'latest') {
      const p = (await admin.fetchTopicOffsets(topic)).find((x) => x.partition === partition);
      if (p === undefined) throw new Error(`kafkajs listed no partition ${partition} of ${topic}`);
      return Number(query === 'earliest' ? p.low : p.high);
    }
    const p = (await admin.fetchTopicOffsetsByTimestamp(topic, query.timestamp)).find((x) => x.partition === partition);
    if (p === undefined) throw new Error(`kafkajs listed no partition ${partition} of ${topic}`);
    return Number(p.offset);
  }

  async deleteTopic(topic: string): Promise<void> {
    await (await this.admin()).deleteTopics({ topics: [topic] });
  }

  async close(): Promise<void> {
    await this.adminClient?.disconnect();
    this.adminClient = undefined;
  }
}

function toKafkajsHeaders(headers: readonly Header[]): IHeaders {
  const out: Record<string, Buffer | Buffer[]> = {};
  for (const [k, v] of headers) {
    if (v === null) throw new Error('kafkajs cannot send a null header value');
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

function fromKafkajs(partition: number, m: KafkaMessage): InRecord {
  const headers: Header[] = [];
  for (const [k, v] of Object.entries(m.headers ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) headers.push([k, one === undefined ? null : Buffer.from(one)]);
  }
  return { partition, offset: Number(m.offset), key: m.key, value: m.value, headers, timestamp: Number(m.timestamp) };
}
