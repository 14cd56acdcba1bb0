/**
 * Apache Kafka's Java client (kafka-clients 4.x from Maven Central) as an interop client: one long-lived JVM
 * per instance runs test/interop/java/src (compiled into driver.jar by scripts/peers/20-kafka-java.sh) and answers JSON
 * commands, one per line on stdin, with one JSON line on stdout each; bytes are base64. A JVM start costs
 * about a second, so the process serves every call of a suite.
 *
 * The client has every codec, idempotence (its default: the driver turns it off for non-idempotent cases),
 * explicit timestamps, null header values and arbitrary bytes, and its offsetsForTimes answers null (-1 here)
 * past the last record, as Kafka does.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { peerPath } from '../../helpers/peers.js';
import { ALL_CODECS, fromWire, toWire, type ClientCapabilities, type InRecord, type InteropClient, type OffsetQuery, type ProduceOutcome, type ProduceSpec, type WireRecord } from './types.js';

const CALL_TIMEOUT_MS = 60_000;

/** The java command line that runs `mainClass` with Kafka's client and tools (and the driver) on the classpath. */
export function javaCommand(mainClass: string, args: readonly string[]): { cmd: string; args: string[] } {
  // Exactly the classpath the install step archived the classes of (kafka.jsa), or the archive is not used.
  const classpath = `${peerPath('kafka-java', 'driver.jar')}:${readFileSync(peerPath('kafka-java', 'classpath'), 'utf8').trim()}`;
  const archive = peerPath('kafka-java', 'kafka.jsa');
  // Short-lived tools and tests: tiered JIT at C1 and the serial collector start fastest on two shared cores.
  return { cmd: 'java', args: ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', `-XX:SharedArchiveFile=${archive}`, '-Xlog:cds=off', '-cp', classpath, mainClass, ...args] };
}

/** A driver answer that reports a failure: the Java exception's class and message. */
export class JavaClientError extends Error {
  constructor(
    readonly op: string,
    readonly errorClass: string,
    message: string,
  ) {
    super(`kafka-java ${op} failed: ${errorClass}: ${message}`);
    this.name = 'JavaClientError';
  }
}

interface Answer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
  message?: string;
}

export class JavaClient implements InteropClient {
  readonly name = 'kafka-java';
  readonly capabilities: ClientCapabilities = {
    codecs: ALL_CODECS,
    idempotent: true,
    explicitTimestamps: true,
    admin: true,
    nullHeaderValues: true,
    emptyBytes: true,
    binaryHeaderValues: true,
    forbiddenBytes: [],
    timestampPastEnd: 'none',
  };
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private nextId = 1;
  private stderr = '';
  private exited = false;

  /** `configFile`: a properties file of client settings (security.protocol, sasl.*, ssl.*) for every client the driver makes. */
  constructor(bootstrap: string, configFile?: string) {
    const { cmd, args } = javaCommand('floe.interop.Driver', configFile === undefined ? [bootstrap] : [bootstrap, configFile]);
    this.child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-20_000);
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const a = JSON.parse(line) as Answer;
      const p = this.pending.get(a.id);
      if (p === undefined) return;
      this.pending.delete(a.id);
      clearTimeout(p.timer);
      p.resolve(a);
    });
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(`the kafka-java driver exited (${code ?? signal}); stderr:\n${this.stderr}`));
      }
      this.pending.clear();
    });
    this.child.stdin.on('error', () => undefined); // reported by 'exit'
  }

  /** Sends one command and resolves with its result; a Java exception rejects with a JavaClientError. */
  async call(op: string, command: Record<string, unknown> = {}): Promise<unknown> {
    if (this.exited) throw new Error(`the kafka-java driver is not running; stderr:\n${this.stderr}`);
    const id = this.nextId++;
    const answer = await new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`kafka-java ${op} did not answer within ${CALL_TIMEOUT_MS} ms; stderr:\n${this.stderr}`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.child.stdin.write(`${JSON.stringify({ id, op, ...command })}\n`);
    });
    if (!answer.ok) throw new JavaClientError(op, answer.error ?? 'unknown', answer.message ?? '');
    return answer.result;
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    await this.call('create_topic', { topic, partitions });
  }

  async partitionCount(topic: string): Promise<number | undefined> {
    const { count } = (await this.call('partition_count', { topic })) as { count: number | null };
    return count ?? undefined;
  }

  async produce(spec: ProduceSpec): Promise<ProduceOutcome> {
    const res = (await this.call('produce', { topic: spec.topic, acks: spec.acks, codec: spec.codec, idempotent: spec.idempotent, records: spec.records.map(toWire) })) as { offsets: number[] };
    return { offsets: res.offsets };
  }

  async consume(topic: string, partition: number, offset: number, count: number): Promise<InRecord[]> {
    const res = (await this.call('consume', { topic, partition, offset, count })) as { records: WireRecord[] };
    return res.records.map(fromWire);
  }

  async listOffset(topic: string, partition: number, query: OffsetQuery): Promise<number> {
    const res = (await this.call('list_offset', { topic, partition, query })) as { offset: number };
    return res.offset;
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.call('delete_topic', { topic });
  }

  /** Closes stdin so the driver closes its clients and exits; kills it if it does not within 10 s. */
  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  }
}
