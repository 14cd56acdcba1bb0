/**
 * Apache Kafka's own load tools (kafka-tools: the classes behind kafka-producer-perf-test.sh and
 * kafka-consumer-perf-test.sh), run against either broker with the same options, and their summary lines
 * parsed. Each run is a fresh JVM; the tools time themselves, so JVM start-up is not in the figures.
 */
import { spawn } from 'node:child_process';
import { kafkaClasspath } from './kafka-broker.js';

function runJava(mainClass: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', ['-Xmx512M', '-cp', kafkaClasspath(), mainClass, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${mainClass} ${args.join(' ')} exited with ${code}:\n${out.slice(-4000)}`));
    });
  });
}

export interface ProducerPerfOptions {
  readonly port: number;
  readonly topic: string;
  readonly records: number;
  readonly recordSize: number;
  /** Records per second; -1 for as fast as possible. */
  readonly throughput: number;
  readonly acks: '1' | 'all';
  readonly batchSize: number;
  readonly compression: 'none' | 'lz4' | 'zstd' | 'snappy' | 'gzip';
  /** Transactions of this many milliseconds each (the tool commits when one has lasted that long); none when absent. */
  readonly transactionDurationMs?: number;
  /** More producer properties (`security.protocol=SSL`, ...). */
  readonly clientProps?: readonly string[];
  /**
   * The first this many records are the warm-up (`--warmup-records`): the tool then also reports the rest
   * alone (`steady`), without the fresh JVM's and connection's start-up in its latencies.
   */
  readonly warmupRecords?: number;
}

/** Latencies of a run's records, or of its records after the warm-up. */
export interface Latencies {
  readonly records: number;
  readonly avgMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
}

export interface ProducerPerfResult extends Latencies {
  readonly recordsPerSec: number;
  readonly mbPerSec: number;
  /** With `warmupRecords`: the records after the warm-up. */
  readonly steady?: Latencies;
}

/** One ProducerPerformance run; throws unless every record was acknowledged. */
export async function producerPerf(o: ProducerPerfOptions): Promise<ProducerPerfResult> {
  const out = await runJava(
    'org.apache.kafka.tools.ProducerPerformance',
    [
      '--topic', o.topic,
      '--num-records', String(o.records),
      '--record-size', String(o.recordSize),
      '--throughput', String(o.throughput),
      '--producer-props',
      `bootstrap.servers=127.0.0.1:${o.port}`,
      `acks=${o.acks}`,
      `batch.size=${o.batchSize}`,
      // A batch of batch.size must fit one request (1 MiB batches would not at the default of 1 MiB).
      `max.request.size=${Math.max(1048576, 2 * o.batchSize)}`,
      `buffer.memory=${Math.max(33554432, 8 * o.batchSize)}`,
      'linger.ms=5',
      `compression.type=${o.compression}`,
      ...(o.clientProps ?? []),
      ...(o.warmupRecords !== undefined ? ['--warmup-records', String(o.warmupRecords)] : []),
      ...(o.transactionDurationMs !== undefined ? ['--transaction-duration-ms', String(o.transactionDurationMs), '--transactional-id', `perf-${o.topic}`] : []),
    ],
    600_000,
  );
  const m = /(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, [\d.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/.exec(out);
  if (!m) throw new Error(`ProducerPerformance printed no summary:\n${out.slice(-4000)}`);
  const records = Number(m[1]);
  if (records !== o.records) throw new Error(`ProducerPerformance sent ${records} of ${o.records} records:\n${out.slice(-4000)}`);
  if (/Exception|error/i.test(out.replace(/SLF4J[^\n]*\n/g, ''))) throw new Error(`ProducerPerformance reported errors:\n${out.slice(-4000)}`);
  const result = { records, recordsPerSec: Number(m[2]), mbPerSec: Number(m[3]), avgMs: Number(m[4]), p50Ms: Number(m[5]), p99Ms: Number(m[6]), p999Ms: Number(m[7]) };
  if (o.warmupRecords === undefined) return result;
  const s = /(\d+) steady state records sent, [\d.]+ records\/sec \([\d.]+ MB\/sec\), ([\d.]+) ms avg latency, [\d.]+ ms max latency, (\d+) ms 50th, \d+ ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th/.exec(out);
  if (!s) throw new Error(`ProducerPerformance printed no steady-state summary after ${o.warmupRecords} warm-up records:\n${out.slice(-4000)}`);
  return { ...result, steady: { records: Number(s[1]), avgMs: Number(s[2]), p50Ms: Number(s[3]), p99Ms: Number(s[4]), p999Ms: Number(s[5]) } };
}

export interface ConsumerPerfResult {
  readonly mb: number;
  readonly records: number;
  /** MB/s over the fetch time (after the group's join), as the tool reports it. */
  readonly fetchMbPerSec: number;
  readonly fetchMs: number;
}

/** One ConsumerPerformance run reading `records` records of `topic` from the start, in group `group`. */
export async function consumerPerf(port: number, topic: string, records: number, group: string, clientProps: readonly string[] = []): Promise<ConsumerPerfResult> {
  const out = await runJava(
    'org.apache.kafka.tools.ConsumerPerformance',
    // From the earliest offset (the tool's default without --from-latest).
    ['--bootstrap-server', `127.0.0.1:${port}`, '--topic', topic, '--num-records', String(records), '--group', group, '--timeout', '60000', ...clientProps.flatMap((p) => ['--command-property', p])],
    600_000,
  );
  // start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
  const line = out.split('\n').find((l) => /^\d{4}-\d\d-\d\d [\d:]+, /.test(l));
  if (line === undefined) throw new Error(`ConsumerPerformance printed no summary:\n${out.slice(-4000)}`);
  const f = line.split(',').map((s) => s.trim());
  const consumed = Number(f[4]);
  if (consumed < records) throw new Error(`ConsumerPerformance read ${consumed} of ${records} records:\n${out.slice(-4000)}`);
  return { mb: Number(f[2]), records: consumed, fetchMs: Number(f[7]), fetchMbPerSec: Number(f[8]) };
}
