/**
 * kcat (Debian package, librdkafka inside) as an interop client.
 *
 * What kcat cannot do, and how the driver copes:
 * - no admin API: createTopic asks for the topic's metadata (`-L -t`), which auto-creates it with the broker's
 *   `num.partitions` (the test starts the broker with that set), and checks the partition count; deleteTopic
 *   is not possible (the test deletes with another client and checks with kcat that it is gone);
 * - no per-record timestamps or headers: each run of consecutive records with the same partition and headers
 *   is one kcat process (`-H` applies to every record it sends); timestamps are kcat's clock;
 * - records are split on delimiter bytes (0x1e between records, 0x1f between key and value), so those bytes
 *   cannot appear in keys or values, empty keys/values are sent as null (-Z), and header values travel as
 *   command-line arguments (UTF-8 text).
 *
 * Consuming runs kcat twice over the same range: `-f` with key and value lengths (%K, %S) for the exact bytes,
 * offsets and timestamps, and `-J` for the headers (a JSON array that keeps order, duplicates and nulls).
 */
import { ChildRunner } from './process.js';
import type { ClientCapabilities, Codec, InRecord, InteropClient, OffsetQuery, OutRecord, ProduceOutcome, ProduceSpec } from './types.js';

const RECORD_DELIM = 0x1e;
const KEY_DELIM = 0x1f;
const TIMEOUT_MS = 20_000;

export class KcatClient implements InteropClient {
  readonly name = 'kcat';
  readonly capabilities: ClientCapabilities = {
    codecs: ['none', 'gzip', 'snappy', 'lz4', 'zstd'] satisfies Codec[],
    idempotent: true,
    explicitTimestamps: false,
    admin: false,
    nullHeaderValues: true,
    emptyBytes: false,
    binaryHeaderValues: false,
    forbiddenBytes: [RECORD_DELIM, KEY_DELIM],
    timestampPastEnd: 'none',
  };
  private readonly runner = new ChildRunner();

  constructor(private readonly bootstrap: string) {}

  private kcat(args: readonly string[], input: Buffer | null = null): Promise<Buffer> {
    return this.runner.run('kcat', ['-b', this.bootstrap, '-q', ...args], input, TIMEOUT_MS).then((r) => r.stdout);
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    // A producer-side metadata request for one topic auto-creates it (auto.create.topics.enable).
    await this.kcat(['-L', '-J', '-t', topic]);
    const n = await this.partitionCount(topic);
    if (n !== partitions) {
      throw new Error(`kcat cannot create topics; auto-creation gave '${topic}' ${n} partitions, not ${partitions}: start the broker with --num.partitions=${partitions}`);
    }
  }

  async partitionCount(topic: string): Promise<number | undefined> {
    // All topics (no -t), so the request does not auto-create the topic it asks about.
    const md = JSON.parse((await this.kcat(['-L', '-J'])).toString()) as { topics: { topic: string; partitions: unknown[] }[] };
    return md.topics.find((t) => t.topic === topic)?.partitions.length;
  }

  async produce(spec: ProduceSpec): Promise<ProduceOutcome> {
    const runs: OutRecord[][] = [];
    for (const r of spec.records) {
      const last = runs.at(-1);
      const first = last?.[0];
      if (last && first && first.partition === r.partition && sameHeaders(first.headers, r.headers)) last.push(r);
      else runs.push([r]);
    }
    for (const run of runs) {
      const first = run[0];
      if (first === undefined) continue;
      const input: Buffer[] = [];
      for (const r of run) {
        if (r.timestamp !== undefined) throw new Error('kcat cannot set record timestamps');
        for (const b of [r.key, r.value]) if (b && (b.length === 0 || b.includes(RECORD_DELIM) || b.includes(KEY_DELIM))) throw new Error('kcat cannot send empty bytes or its delimiter bytes');
        if (r.key !== null) input.push(r.key, Buffer.from([KEY_DELIM]));
        if (r.value !== null) input.push(r.value);
        input.push(Buffer.from([RECORD_DELIM]));
      }
      const headers = first.headers.flatMap(([k, v]) => ['-H', v === null ? k : `${k}=${v.toString('utf8')}`]);
      const args = ['-P', '-t', spec.topic, '-p', String(first.partition), '-D', '\\x1e', '-K', '\\x1f', '-Z', '-z', spec.codec];
      args.push('-X', `acks=${spec.acks === -1 ? 'all' : '1'}`, '-X', `enable.idempotence=${spec.idempotent}`, '-X', 'linger.ms=5', ...headers);
      await this.kcat(args, Buffer.concat(input));
    }
    // kcat -P reports no offsets.
    return { offsets: spec.records.map(() => null) };
  }

  async consume(topic: string, partition: number, offset: number, count: number): Promise<InRecord[]> {
    const range = ['-C', '-t', topic, '-p', String(partition), '-o', String(offset), '-c', String(count), '-e'];
    const [raw, json] = await Promise.all([this.kcat([...range, '-f', '%o %T %K %S %k%s\\n']), this.kcat([...range, '-J'])]);
    const headersByOffset = new Map<number, InRecord['headers']>();
    for (const line of json.toString().split('\n')) {
      if (line.trim() === '') continue;
      const m = JSON.parse(line) as { offset: number; headers?: (string | null)[] };
      const flat = m.headers ?? [];
      const hs: [string, Buffer | null][] = [];
      for (let i = 0; i < flat.length; i += 2) {
        const v = flat[i + 1];
        hs.push([String(flat[i]), v === null || v === undefined ? null : Buffer.from(v, 'utf8')]);
      }
      headersByOffset.set(m.offset, hs);
    }
    const out: InRecord[] = [];
    let pos = 0;
    const token = (): number => {
      const end = raw.indexOf(0x20, pos);
      if (end < 0) throw new Error(`kcat output is cut short at byte ${pos}`);
      const n = Number(raw.subarray(pos, end).toString());
      pos = end + 1;
      return n;
    };
    const bytes = (len: number): Buffer | null => {
      if (len < 0) return null;
      const b = Buffer.from(raw.subarray(pos, pos + len));
      pos += len;
      return b;
    };
    while (pos < raw.length) {
      const off = token();
      const timestamp = token();
      const klen = token();
      const vlen = token();
      const key = bytes(klen);
      const value = bytes(vlen);
      if (raw[pos] !== 0x0a) throw new Error(`kcat output is not in the expected format at byte ${pos}`);
      pos++;
      const headers = headersByOffset.get(off);
      if (headers === undefined) throw new Error(`kcat -J did not print offset ${off}`);
      out.push({ partition, offset: off, key, value, headers, timestamp });
    }
    return out;
  }

  async listOffset(topic: string, partition: number, query: OffsetQuery): Promise<number> {
    // -Q passes the timestamp to ListOffsets as is: -1 asks for the latest offset, -2 for the earliest.
    const ts = query === 'latest' ? -1 : query === 'earliest' ? -2 : query.timestamp;
    const res = JSON.parse((await this.kcat(['-Q', '-J', '-t', `${topic}:${partition}:${ts}`])).toString()) as Record<string, Record<string, { offset?: number; error?: string }>>;
    const p = res[topic]?.[String(partition)];
    if (p?.offset === undefined) throw new Error(`kcat -Q gave no offset: ${JSON.stringify(res)}`);
    return p.offset;
  }

  async deleteTopic(): Promise<void> {
    throw new Error('kcat has no admin API: delete the topic with another client');
  }

  async close(): Promise<void> {
    this.runner.killAll();
  }
}

function sameHeaders(a: OutRecord['headers'], b: OutRecord['headers']): boolean {
  return a.length === b.length && a.every(([k, v], i) => {
    const o = b[i];
    return o !== undefined && o[0] === k && (v === null ? o[1] === null : o[1] !== null && v.equals(o[1]));
  });
}
