/**
 * The Python clients, each driven by a script under test/interop/python/: one JSON command on stdin, one JSON
 * result on stdout, bytes as base64.
 * - `confluent-kafka-python`: Debian's python3-confluent-kafka (librdkafka 2.0), run with /usr/bin/python3;
 * - `confluent-kafka-pypi`: confluent-kafka 2.x from PyPI, which bundles the current librdkafka (2.16 here), run
 *   with the peers' venv (scripts/peers/10-python.sh); the same driver script;
 * - `kafka-python`: Debian's python3-kafka, run with /usr/bin/python3.
 */
import { fileURLToPath } from 'node:url';
import { venvPython } from '../../helpers/peers.js';
import { ChildRunner } from './process.js';
import { fromWire, toWire, type ClientCapabilities, type Codec, type InRecord, type InteropClient, type OffsetQuery, type ProduceOutcome, type ProduceSpec, type WireRecord } from './types.js';

const DEBIAN_PYTHON = '/usr/bin/python3';
const TIMEOUT_MS = 30_000;

export type PythonClientKind = 'confluent-kafka-python' | 'confluent-kafka-pypi' | 'kafka-python';

const SCRIPTS: Record<PythonClientKind, string> = {
  'confluent-kafka-python': 'confluent_driver.py',
  'confluent-kafka-pypi': 'confluent_driver.py',
  'kafka-python': 'kafka_python_driver.py',
};

/** The interpreter that has the client `kind` installed. */
export function pythonFor(kind: PythonClientKind): string {
  return kind === 'confluent-kafka-pypi' ? venvPython() : DEBIAN_PYTHON;
}

export class PythonClient implements InteropClient {
  private readonly runner = new ChildRunner();

  private constructor(
    readonly name: PythonClientKind,
    private readonly python: string,
    private readonly script: string,
    private readonly bootstrap: string,
    readonly capabilities: ClientCapabilities,
  ) {}

  /** Asks the driver which codecs this machine's installation really supports. */
  static async create(kind: PythonClientKind, bootstrap: string): Promise<PythonClient> {
    const script = fileURLToPath(new URL(`../python/${SCRIPTS[kind]}`, import.meta.url));
    const python = pythonFor(kind);
    const probe = new PythonClient(kind, python, script, bootstrap, {
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
    const librdkafka = kind !== 'kafka-python';
    return new PythonClient(kind, python, script, bootstrap, { ...probe.capabilities, codecs, idempotent: librdkafka, nullHeaderValues: librdkafka });
  }

  private async call(command: Record<string, unknown>): Promise<unknown> {
    const { stdout } = await this.runner.run(this.python, [this.script], JSON.stringify({ bootstrap: this.bootstrap, ...command }), TIMEOUT_MS);
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
