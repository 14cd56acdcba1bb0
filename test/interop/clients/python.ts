/**
 * The two Python clients (Debian python3-confluent-kafka, i.e. librdkafka, and python3-kafka, i.e. kafka-python),
 * each driven by a script under test/interop/python/ run with /usr/bin/python3: one JSON command on stdin, one
 * JSON result on stdout, bytes as base64.
 */
import { fileURLToPath } from 'node:url';
import { ChildRunner } from './process.js';
import { fromWire, toWire, type ClientCapabilities, type Codec, type InRecord, type InteropClient, type OffsetQuery, type ProduceOutcome, type ProduceSpec, type WireRecord } from './types.js';

const PYTHON = '/usr/bin/python3';
const TIMEOUT_MS = 30_000;

export type PythonClientKind = 'confluent-kafka-python' | 'kafka-python';

const SCRIPTS: Record<PythonClientKind, string> = {
  'confluent-kafka-python': 'confluent_driver.py',
  'kafka-python': 'kafka_python_driver.py',
};

export class PythonClient implements InteropClient {
  private readonly runner = new ChildRunner();

  private constructor(
    readonly name: PythonClientKind,
    private readonly script: string,
    private readonly bootstrap: string,
    readonly capabilities: ClientCapabilities,
  ) {}

  /** Asks the driver which codecs this machine's installation really supports. */
  static async create(kind: PythonClientKind, bootstrap: string): Promise<PythonClient> {
    const script = fileURLToPath(new URL(`../python/${SCRIPTS[kind]}`, import.meta.url));
    const probe = new PythonClient(kind, script, bootstrap, {
      codecs: [],
      idempotent: false,
      explicitTimestamps: true,
      admin: true,
      nullHeaderValues: true,
      emptyBytes: true,
      binaryHeaderValues: true,
      forbiddenBytes: [],
      timestampPastEnd: 'none',
    });
    const { codecs } = (await probe.call({ op: 'capabilities' })) as { codecs: Codec[] };
    // kafka-python 2.0 has no idempotent producer and asserts that every header value is bytes (no null).
    const librdkafka = kind === 'confluent-kafka-python';
    return new PythonClient(kind, script, bootstrap, { ...probe.capabilities, codecs, idempotent: librdkafka, nullHeaderValues: librdkafka });
  }

  private async call(command: Record<string, unknown>): Promise<unknown> {
    const { stdout } = await this.runner.run(PYTHON, [this.script], JSON.stringify({ bootstrap: this.bootstrap, ...command }), TIMEOUT_MS);
    const lines = stdout.toString().trim().split('\n');
    return JSON.parse(lines.at(-1) ?? 'null') as unknown;
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    await this.call({ op: 'create_topic', topic, partitions });
  }

  async partitionCount(topic: string): Promise<number | undefined> {
    const { count } = (await this.call({ op: 'partition_count', topic })) as { count: number | null };
    return count ?? undefined;
  }

  async produce(spec: ProduceSpec): Promise<ProduceOutcome> {
    const res = (await this.call({ op: 'produce', topic: spec.topic, acks: spec.acks, codec: spec.codec, idempotent: spec.idempotent, records: spec.records.map(toWire) })) as { offsets: (number | null)[] };
    return { offsets: res.offsets };
  }

  async consume(topic: string, partition: number, offset: number, count: number): Promise<InRecord[]> {
    const res = (await this.call({ op: 'consume', topic, partition, offset, count })) as { records: WireRecord[] };
    return res.records.map(fromWire);
  }

  async listOffset(topic: string, partition: number, query: OffsetQuery): Promise<number> {
    const res = (await this.call({ op: 'list_offset', topic, partition, query })) as { offset: number };
    return res.offset;
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.call({ op: 'delete_topic', topic });
  }

  async close(): Promise<void> {
    this.runner.killAll();
  }
}
