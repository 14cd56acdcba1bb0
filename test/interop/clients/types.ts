/**
 * The common shape of the interoperability drivers: every independent Kafka client (kcat, confluent-kafka-python,
 * kafka-python, kafkajs, @platformatic/kafka) is driven through this interface, so one scenario checks them all
 * and what one client wrote can be read back by every other. Keys, values and header values are Buffers and are
 * carried across process boundaries as base64, so comparisons are byte-exact.
 */

export type Codec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export const ALL_CODECS: readonly Codec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export type Header = readonly [key: string, value: Buffer | null];

/** A record a test asks a client to produce. */
export interface OutRecord {
  readonly partition: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** In order; duplicate keys allowed. */
  readonly headers: readonly Header[];
  /** CreateTime in ms; absent when the client cannot set it (then the client's clock decides). */
  readonly timestamp?: number;
}

export interface ProduceSpec {
  readonly topic: string;
  readonly acks: 1 | -1;
  readonly codec: Codec;
  readonly idempotent: boolean;
  /** Sent in this order; a driver must keep the order within each partition. */
  readonly records: readonly OutRecord[];
}

/** What the client reported per record (same order as `records`): its offset, or null if the client does not say. */
export interface ProduceOutcome {
  readonly offsets: readonly (number | null)[];
}

/** A record as a client read it back. */
export interface InRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly Header[];
  readonly timestamp: number;
}

export type OffsetQuery = 'earliest' | 'latest' | { readonly timestamp: number };

export interface ClientCapabilities {
  /** Codecs the client can really compress with, here (installed libraries). */
  readonly codecs: readonly Codec[];
  readonly idempotent: boolean;
  /** Can it set each record's timestamp? */
  readonly explicitTimestamps: boolean;
  /** Can it create and delete topics (admin API)? */
  readonly admin: boolean;
  /** Can it send a header whose value is null? */
  readonly nullHeaderValues: boolean;
  /** Can it send empty (zero-length, non-null) keys and values? */
  readonly emptyBytes: boolean;
  /** Can header values be arbitrary bytes (not only UTF-8 text)? */
  readonly binaryHeaderValues: boolean;
  /** Bytes it cannot carry in keys and values (kcat's delimiters). */
  readonly forbiddenBytes: readonly number[];
  /** What its ListOffsets-by-timestamp returns when no record is that late: Kafka's -1, or the latest offset. */
  readonly timestampPastEnd: 'none' | 'latest';
}

export interface InteropClient {
  readonly name: string;
  readonly capabilities: ClientCapabilities;
  createTopic(topic: string, partitions: number): Promise<void>;
  /** Partition count as the client's metadata request sees it; undefined if the topic does not exist. */
  partitionCount(topic: string): Promise<number | undefined>;
  produce(spec: ProduceSpec): Promise<ProduceOutcome>;
  /** Reads `count` records of one partition starting at `offset` (fewer only if the log ends first). */
  consume(topic: string, partition: number, offset: number, count: number): Promise<InRecord[]>;
  listOffset(topic: string, partition: number, query: OffsetQuery): Promise<number>;
  deleteTopic(topic: string): Promise<void>;
  close(): Promise<void>;
}

/** JSON form of a record for the child-process drivers: bytes as base64. */
export interface WireRecord {
  partition: number;
  offset?: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
  timestamp?: number;
}

const b64 = (b: Buffer | null): string | null => (b === null ? null : b.toString('base64'));
const unb64 = (s: string | null): Buffer | null => (s === null ? null : Buffer.from(s, 'base64'));

export function toWire(r: OutRecord): WireRecord {
  const w: WireRecord = { partition: r.partition, key: b64(r.key), value: b64(r.value), headers: r.headers.map(([k, v]) => [k, b64(v)]) };
  if (r.timestamp !== undefined) w.timestamp = r.timestamp;
  return w;
}

export function fromWire(w: WireRecord): InRecord {
  if (w.offset === undefined || w.timestamp === undefined) throw new Error(`driver returned a record without offset or timestamp: ${JSON.stringify(w)}`);
  return { partition: w.partition, offset: w.offset, key: unb64(w.key), value: unb64(w.value), headers: w.headers.map(([k, v]) => [k, unb64(v)] as const), timestamp: w.timestamp };
}
