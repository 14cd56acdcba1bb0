// Conversion throughput of typed topics (issue 11): the same application events as Avro values and as
// JSON Schema values (Confluent wire-format prefix), each converted twice in the same run: in `key_value`
// mode (the baseline: value kept as bytes) and in `value_schema_id_prefix` mode (decoded into typed
// columns, every record re-encoded and checked byte for byte, raw bytes kept only where the check fails).
// Reports MB/s of log bytes per core (CPU time of the conversion), the typed/key_value ratio, the data file
// sizes and their ratio (what typed columns cost in storage), and the fraction of records kept raw.
// Run: npx tsx bench/tiering/typed-convert.bench.ts [--mb=16] [--runs=3]
import avro from 'avsc';
import { encodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import type { RecordInput } from '../../protocol/record-batch/records.js';
import { convertSegment } from '../../tiering/convert/segment-to-parquet.js';
import { LAST_COLUMN_ID, TOPIC_SCHEMA } from '../../tiering/convert/schema.js';
import { TypedLayout } from '../../tiering/typed/table-layout.js';
import type { RegistryReader, RegistrySchema } from '../../tiering/typed/value-typer.js';
import { RecordTypers } from '../../tiering/typed/record-typers.js';
import { BenchArgs } from '../lib/args.js';
import { median } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, type Cell } from '../lib/table.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: typed-convert.bench.ts [--mb=16] [--runs=3]');
const MB = args.number('mb', 16);
const RUNS = args.number('runs', 3);

const EVENTS = ['page_view', 'click', 'add_to_cart', 'checkout', 'login', 'logout', 'search', 'purchase'];
const PAGES = ['/', '/products', '/products/42', '/cart', '/checkout', '/account', '/search?q=shoes', '/help'];

function event(i: number) {
  const x = (i * 2654435761) >>> 0;
  return {
    id: i,
    event: EVENTS[x % EVENTS.length]!,
    user: { id: `user-${x % 5000}`, plan: x % 7 === 0 ? 'pro' : 'free', country: ['DE', 'FR', 'US', 'JP', 'BR'][x % 5]! },
    page: PAGES[(x >>> 3) % PAGES.length]!,
    ts: 1_700_000_000_000 + i * 13,
    session: `s-${(x >>> 5) % 20000}`,
    items: x % 4,
    total: Math.round((x % 10000) * 1.37) / 100,
    beta: x % 3 === 0,
  };
}

const AVRO_SCHEMA = {
  type: 'record',
  name: 'Event',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'event', type: 'string' },
    { name: 'user', type: { type: 'record', name: 'User', fields: [{ name: 'id', type: 'string' }, { name: 'plan', type: 'string' }, { name: 'country', type: 'string' }] } },
    { name: 'page', type: 'string' },
    { name: 'ts', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'session', type: 'string' },
    { name: 'items', type: 'int' },
    { name: 'total', type: 'double' },
    { name: 'beta', type: 'boolean' },
  ],
};
const JSON_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    event: { type: 'string' },
    user: { type: 'object', properties: { id: { type: 'string' }, plan: { type: 'string' }, country: { type: 'string' } } },
    page: { type: 'string' },
    ts: { type: 'integer' },
    session: { type: 'string' },
    items: { type: 'integer' },
    total: { type: 'number' },
    beta: { type: 'boolean' },
  },
};

const avroType = avro.Type.forSchema(AVRO_SCHEMA as avro.Schema);
const prefix = (id: number) => {
  const b = Buffer.alloc(5);
  b.writeInt32BE(id, 1);
  return b;
};

function segment(encode: (i: number) => Buffer): Buffer {
  const out: Buffer[] = [];
  let total = 0;
  let offset = 0n;
  let i = 0;
  while (total < MB * 1024 * 1024) {
    const records: RecordInput[] = [];
    let size = 0;
    while (size < 64 * 1024) {
      const value = encode(i);
      records.push({ key: Buffer.from(`key-${i % 5000}`), value, timestampDelta: records.length, headers: [] });
      size += value.length + 20;
      i++;
    }
    const b = encodeRecordBatch({ baseOffset: offset, baseTimestamp: 1_700_000_000_000n, compression: 'zstd', compressionLevel: 1, producerId: -1n, producerEpoch: -1, baseSequence: -1, records });
    offset += BigInt(records.length);
    total += b.length;
    out.push(b);
  }
  return Buffer.concat(out);
}

const schemas = new Map<number, RegistrySchema>([
  [1, { schemaType: 'AVRO', schema: JSON.stringify(AVRO_SCHEMA), references: [] }],
  [2, { schemaType: 'JSON', schema: JSON.stringify(JSON_SCHEMA), references: [] }],
]);
/** The registry as tiering reads it: two schemas, held in memory for the bench. */
const registry: RegistryReader = {
  schemaById: (id) => schemas.get(id),
  latestVersion: () => undefined,
  subjectVersion: () => undefined,
};

interface Run {
  cpu: number;
  bytes: number;
  rawKept: number;
  typed: number;
}

async function convertOnce(seg: Buffer, typed: boolean): Promise<Run> {
  const typer = typed ? new RecordTypers(TypedLayout.of(TOPIC_SCHEMA, LAST_COLUMN_ID), { value: { mode: 'value_schema_id_prefix', subject: 'bench-value' }, invalidRecordAction: 'dlq_table' }, () => registry) : undefined;
  const c0 = process.cpuUsage();
  let bytes = 0;
  let rawKept = 0;
  let count = 0;
  for await (const f of convertSegment(seg, { partition: 0, targetFileBytes: 1 << 30, ...(typer ? { typed: typer } : {}) })) {
    bytes += f.parquet?.bytes.length ?? 0;
    rawKept += f.typed?.counts.rawKept ?? 0;
    count += (f.typed?.counts.exact ?? 0) + (f.typed?.counts.rawKept ?? 0);
    f.parquet?.release();
  }
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, bytes, rawKept, typed: count };
}

async function main(): Promise<void> {
  const inputs: [string, Buffer][] = [
    ['Avro', segment((i) => Buffer.concat([prefix(1), avroType.toBuffer(event(i))]))],
    ['JSON Schema', segment((i) => Buffer.concat([prefix(2), Buffer.from(JSON.stringify(event(i)))]))],
  ];
  const headers = ['values', 'log MB', 'key_value MB/s/core', 'typed MB/s/core', 'typed / key_value', 'key_value file MB', 'typed file MB', 'size typed / key_value', 'kept raw'];
  const rows: Cell[][] = [];
  for (const [name, seg] of inputs) {
    const logMB = seg.length / 1e6;
    await convertOnce(seg, true); // warm-up: codec compilation and JIT
    await convertOnce(seg, false);
    const kv: Run[] = [];
    const ty: Run[] = [];
    for (let r = 0; r < RUNS; r++) {
      process.stderr.write(`${name}: run ${r + 1}/${RUNS}\n`);
      kv.push(await convertOnce(seg, false));
      ty.push(await convertOnce(seg, true));
    }
    const kvRate = median(kv.map((x) => logMB / x.cpu));
    const tyRate = median(ty.map((x) => logMB / x.cpu));
    const last = ty.at(-1)!;
    rows.push([name, logMB, kvRate, tyRate, `${(tyRate / kvRate).toFixed(2)}x`, kv.at(-1)!.bytes / 1e6, last.bytes / 1e6, `${(last.bytes / kv.at(-1)!.bytes).toFixed(2)}x`, `${((100 * last.rawKept) / Math.max(1, last.typed)).toFixed(1)} %`]);
  }
  console.log(`conversion of ${MB} MiB zstd segments, medians of ${RUNS} runs (MB of log bytes per CPU second):`);
  console.log(formatTable(headers, rows));
  console.log('\n' + formatMarkdownTable(headers, rows));
}

await main();
