/**
 * @platformatic/kafka (npm, 1.x) as an interop client, in this process.
 *
 * Headers are a Map; with Buffer keys a Map keys by identity, so duplicate header keys are distinct Buffer
 * objects and keep their order. Consuming uses the client's own Fetch (`Consumer.fetch`, by topic id, no group)
 * and its own record-batch decoder; a record's offset and timestamp are its batch's base plus its deltas.
 * Compression: gzip, snappy and lz4 always; zstd only where node:zlib has it (Node 22.15+), which the library
 * reports as `available`.
 */
import { Admin, compressionsAlgorithms, Consumer, Producer } from '@platformatic/kafka';
import type { ClientCapabilities, Codec, Header, InRecord, InteropClient, OffsetQuery, ProduceOutcome, ProduceSpec } from './types.js';

const codecs: Codec[] = (['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const).filter((c) => compressionsAlgorithms[c].available);

export class PlatformaticClient implements InteropClient {
  readonly name = 'platformatic-kafka';
  readonly capabilities: ClientCapabilities = {
    codecs,
    idempotent: true,
    explicitTimestamps: true,
    admin: true,
    nullHeaderValues: true,
    emptyBytes: true,
    binaryHeaderValues: true,
    forbiddenBytes: [],
    timestampPastEnd: 'none',
  };
  private readonly admin: Admin;
  private readonly reader: Consumer;
  private readonly base: { clientId: string; bootstrapBrokers: string[]; retries: number };

  constructor(bootstrap: string) {
    this.base = { clientId: 'floe-interop-platformatic', bootstrapBrokers: [bootstrap], retries: 3 };
    this.admin = new Admin(this.base);
    this.reader = new Consumer({ ...this.base, groupId: 'floe-interop-platformatic-unused' });
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    await this.admin.createTopics({ topics: [topic], partitions, replicas: 1 });
  }

  async partitionCount(topic: string): Promise<number | undefined> {
    if (!(await this.admin.listTopics()).includes(topic)) return undefined;
    const md = await this.admin.metadata({ topics: [topic], forceUpdate: true });
    return md.topics.get(topic)?.partitionsCount;
  }

  async produce(spec: ProduceSpec): Promise<ProduceOutcome> {
    const producer = new Producer({ ...this.base, idempotent: spec.idempotent, acks: spec.acks, compression: spec.codec, autocreateTopics: false });
    try {
      const res = await producer.send({
        messages: spec.records.map((r) => ({
          topic: spec.topic,
          partition: r.partition,
          // the library's no-op serializers pass Buffers through; undefined encodes as null
          ...(r.key === null ? {} : { key: r.key }),
          ...(r.value === null ? {} : { value: r.value }),
          headers: new Map<Buffer, Buffer>(r.headers.map(([k, v]) => [Buffer.from(k), v as Buffer])),
          ...(r.timestamp === undefined ? {} : { timestamp: BigInt(r.timestamp) }),
        })),
      });
      const seen = new Map<number, number>();
      return {
        offsets: spec.records.map((r) => {
          const base = res.offsets?.find((o) => o.partition === r.partition)?.offset;
          const i = seen.get(r.partition) ?? 0;
          seen.set(r.partition, i + 1);
          return base === undefined ? null : Number(base) + i;
        }),
      };
    } finally {
      await producer.close();
    }
  }

  async consume(topic: string, partition: number, offset: number, count: number): Promise<InRecord[]> {
    const md = await this.reader.metadata({ topics: [topic], forceUpdate: true });
    const t = md.topics.get(topic);
    const leader = t?.partitions[partition]?.leader;
    if (t === undefined || leader === undefined) throw new Error(`no metadata for ${topic}[${partition}]`);
    // Fetch names topics up to v12 and identifies them by id from v13. The library writes `topicId` into the
    // topic field either way, so give it whichever the version it negotiates (the broker's highest) expects.
    const fetchTopic = (await this.fetchVersion()) >= 13 ? t.id : topic;
    const out: InRecord[] = [];
    let next = BigInt(offset);
    for (let attempt = 0; out.length < count; attempt++) {
      if (attempt > 50) throw new Error(`platformatic read ${out.length} of ${count} records of ${topic}[${partition}]`);
      const res = await this.reader.fetch({
        node: leader,
        maxWaitTime: 100,
        topics: [{ topicId: fetchTopic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: next, lastFetchedEpoch: -1, partitionMaxBytes: 1 << 20 }] }],
      });
      const p = res.responses[0]?.partitions[0];
      if (p === undefined || p.errorCode !== 0) throw new Error(`fetch ${topic}[${partition}] at ${next}: error ${p?.errorCode}`);
      for (const batch of p.records ?? []) {
        for (const r of batch.records) {
          const o = batch.firstOffset + BigInt(r.offsetDelta);
          if (o < next || out.length >= count) continue;
          const headers: Header[] = r.headers.map(([k, v]: [Buffer | null, Buffer | null]): Header => [k === null ? '' : k.toString('utf8'), v]);
          out.push({ partition, offset: Number(o), key: r.key, value: r.value, headers, timestamp: Number(batch.firstTimestamp + r.timestampDelta) });
          next = o + 1n;
        }
      }
      if (next >= p.highWatermark) break;
    }
    return out;
  }

  private async fetchVersion(): Promise<number> {
    const versions = await this.reader.listApis();
    const fetch = versions.find((a) => a.apiKey === 1);
    if (fetch === undefined) throw new Error('the broker does not advertise Fetch');
    return fetch.maxVersion;
  }

  async listOffset(topic: string, partition: number, query: OffsetQuery): Promise<number> {
    const timestamp = query === 'latest' ? -1n : query === 'earliest' ? -2n : BigInt(query.timestamp);
    const res = await this.admin.listOffsets({ topics: [{ name: topic, partitions: [{ partitionIndex: partition, timestamp }] }] });
    const p = res.find((x) => x.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
    if (p === undefined) throw new Error(`platformatic listed no offset for ${topic}[${partition}]`);
    return Number(p.offset);
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.admin.deleteTopics({ topics: [topic] });
  }

  async close(): Promise<void> {
    await Promise.all([this.admin.close(), this.reader.close()]);
  }
}
