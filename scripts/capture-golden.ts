/**
 * Re-captures the golden request frames under test/protocol/fixtures/<client>/ from real Kafka clients.
 *
 *   npx tsx scripts/capture-golden.ts            # every client
 *   npx tsx scripts/capture-golden.ts kcat       # only scenarios whose name starts with "kcat"
 *
 * Needs the Debian packages kcat, python3-kafka and python3-confluent-kafka, plus python3-snappy,
 * python3-lz4 and python3-zstandard for kafka-python's codecs (capture time only: the tests read the
 * committed fixtures). Each scenario starts a fresh capture broker (test/helpers/capture-broker.ts), runs
 * one client against it with the inputs from test/protocol/fixtures/golden-clients.ts, and writes one JSON
 * file: the client, what it was asked to do, and the request frames (hex, without the size prefix). Every
 * Produce frame is kept; of other requests up to three distinct frames of each API version per scenario
 * (that keeps each file to a few KB). Review the diff before committing: a new client version may legitimately change bytes.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCaptureBroker, type CaptureBroker, type CapturedRequest } from '../test/helpers/capture-broker.js';
import {
  confluentRun,
  kafkaPythonRun,
  kafkajsRun,
  kcatConsume,
  kcatGroupConsume,
  kcatMetadata,
  kcatProduce,
  type Codec,
} from '../test/protocol/fixtures/golden-clients.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'protocol', 'fixtures');

export interface GoldenFrame {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly hex: string;
}

export interface GoldenFixture {
  readonly client: string;
  readonly scenario: string;
  readonly description: string;
  readonly frames: readonly GoldenFrame[];
}

interface Scenario {
  readonly client: 'kcat' | 'kafka-python' | 'confluent-kafka-python' | 'kafkajs';
  readonly name: string;
  readonly description: string;
  run(broker: CaptureBroker): Promise<unknown>;
}

const CODECS: readonly Codec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

const scenarios: Scenario[] = [
  ...CODECS.map((codec): Scenario => ({
    client: 'kcat',
    name: `produce-${codec}`,
    description: `kcat -P -z ${codec} -K : -Z with three headers (KCAT_LINES)`,
    run: (b) => kcatProduce(b.bootstrap, codec).done,
  })),
  {
    client: 'kcat',
    name: 'produce-idempotent',
    description: 'kcat -P -z zstd -X enable.idempotence=true (KCAT_LINES)',
    run: (b) => kcatProduce(b.bootstrap, 'zstd', 15_000, ['-X', 'enable.idempotence=true']).done,
  },
  { client: 'kcat', name: 'metadata', description: 'kcat -L', run: (b) => kcatMetadata(b.bootstrap).done },
  {
    client: 'kcat',
    name: 'consume',
    description: 'kcat -P (gzip) then kcat -C -o beginning -e: ListOffsets and Fetch',
    run: async (b) => {
      await kcatProduce(b.bootstrap, 'gzip').done;
      await kcatConsume(b.bootstrap).done;
    },
  },
  {
    client: 'kcat',
    name: 'group',
    description: 'kcat -P (none) then kcat -G golden-group: the group protocol',
    run: async (b) => {
      await kcatProduce(b.bootstrap, 'none').done;
      await kcatGroupConsume(b.bootstrap).done;
    },
  },
  ...(['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const).map((codec): Scenario => ({
    client: 'kafka-python',
    name: `produce-${codec}`,
    description: `KafkaProducer(compression_type=${codec}) sending GOLDEN_RECORDS`,
    run: (b) => kafkaPythonRun(b.bootstrap, { codec }).done,
  })),
  {
    client: 'kafka-python',
    name: 'group',
    description: 'KafkaProducer (gzip) then KafkaConsumer(group_id=golden-group) until every record is read, commit',
    run: (b) => kafkaPythonRun(b.bootstrap, { codec: 'gzip', consume: true }).done,
  },
  ...CODECS.map((codec): Scenario => ({
    client: 'confluent-kafka-python',
    name: `produce-${codec}`,
    description: `Producer(compression.type=${codec}) sending GOLDEN_RECORDS`,
    run: (b) => confluentRun(b.bootstrap, { codec }).done,
  })),
  {
    client: 'confluent-kafka-python',
    name: 'produce-idempotent',
    description: 'Producer(enable.idempotence=True, compression.type=lz4) sending GOLDEN_RECORDS',
    run: (b) => confluentRun(b.bootstrap, { codec: 'lz4', idempotent: true }).done,
  },
  {
    client: 'confluent-kafka-python',
    name: 'group',
    description: 'Producer (snappy) then Consumer(group.id=golden-group) until every record is read, commit',
    run: (b) => confluentRun(b.bootstrap, { codec: 'snappy', consume: true }).done,
  },
  ...(['none', 'gzip'] as const).map((codec): Scenario => ({
    client: 'kafkajs',
    name: `produce-${codec}`,
    description: `producer.send({ compression: ${codec}, acks: -1 }) of GOLDEN_RECORDS`,
    run: (b) => kafkajsRun(b.bootstrap, { codec }),
  })),
  {
    client: 'kafkajs',
    name: 'produce-idempotent',
    description: 'producer({ idempotent: true }).send({ compression: gzip }) of GOLDEN_RECORDS',
    run: (b) => kafkajsRun(b.bootstrap, { codec: 'gzip', idempotent: true }),
  },
  {
    client: 'kafkajs',
    name: 'group',
    description: 'producer (none) then consumer({ groupId: golden-group }) until every record is read',
    run: (b) => kafkajsRun(b.bootstrap, { codec: 'none', consume: true }),
  },
];

/** How many distinct frames of one API version a fixture keeps (Produce: all). */
const MAX_PER_VERSION = 3;

/**
 * Every Produce frame; of the others, frames that differ in more than the correlation id (for example
 * librdkafka's brokers-only Metadata before the all-topics one), up to MAX_PER_VERSION per API version.
 */
function select(requests: readonly CapturedRequest[]): GoldenFrame[] {
  const distinct = new Set<string>();
  const perVersion = new Map<string, number>();
  const out: GoldenFrame[] = [];
  for (const r of requests) {
    const version = `${r.apiKey}/${r.apiVersion}`;
    const body = Buffer.concat([r.frame.subarray(0, 4), r.frame.subarray(8)]).toString('hex');
    if (r.apiKey !== 0) {
      if (distinct.has(body) || (perVersion.get(version) ?? 0) >= MAX_PER_VERSION) continue;
      distinct.add(body);
      perVersion.set(version, (perVersion.get(version) ?? 0) + 1);
    }
    out.push({ apiKey: r.apiKey, apiVersion: r.apiVersion, hex: r.frame.toString('hex') });
  }
  return out;
}

const only = process.argv.slice(2);
for (const s of scenarios) {
  const id = `${s.client}/${s.name}`;
  if (only.length > 0 && !only.some((o) => id.startsWith(o))) continue;
  const broker = await startCaptureBroker({ topics: { golden: 1 } });
  try {
    await s.run(broker);
    if (broker.errors.length > 0) throw new Error(`${id}: the capture broker failed: ${broker.errors.map((e) => e.message).join('; ')}`);
    const fixture: GoldenFixture = { client: s.client, scenario: s.name, description: s.description, frames: select(broker.requests) };
    const file = join(FIXTURES, s.client, `${s.name}.json`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(fixture, null, 1)}\n`);
    console.log(`${id}: ${fixture.frames.length} frames (${fixture.frames.map((f) => `${f.apiKey}v${f.apiVersion}`).join(' ')})`);
  } catch (e) {
    console.error(`${id}: FAILED: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  } finally {
    await broker.close();
  }
}
