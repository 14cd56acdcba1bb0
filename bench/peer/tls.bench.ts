// Produce and fetch over TLS against plaintext, in the same run, on Floe and on Apache Kafka 4.4: each
// broker listens on a PLAINTEXT and an SSL listener (one server certificate made with openssl for the run),
// and Kafka's own ProducerPerformance and ConsumerPerformance run against each listener in turn, the
// listener that goes first alternating. Each row gives a broker's TLS/plaintext ratio, and the last one
// Floe/Kafka over TLS. Every produce run is checked against the topic's log end offsets.
//
// Run from nothing: bash bench/peer/run.sh tls [--quick]   (installs Kafka's jars from Maven Central)
// Options: --runs=3 --mb=128 (MiB per run) --partitions=8 --batch=16k --record-size=1024 --build=src|dist
// --quick: 2 runs of 32 MiB.
import { execSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCerts } from '../../test/helpers/certs.js';
import { BenchArgs } from '../lib/args.js';
import { createTopic, deleteTopic, logEndOffsets } from '../lib/admin.js';
import { LoadClient } from '../lib/load-client.js';
import { spawnFloe, type Build, type ChildServer } from '../lib/processes.js';
import { MiB } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { consumerPerf, producerPerf } from './java-perf.js';
import { startKafka, type KafkaPeer } from './kafka-broker.js';
import { ratio, stat } from './peers.js';

const args = new BenchArgs(process.argv.slice(2), 'usage: tls.bench.ts [--quick] [--runs=3] [--mb=128] [--partitions=8] [--batch=16k] [--record-size=1024] [--build=src|dist]');
const quick = args.flag('quick');
const runs = args.number('runs', quick ? 2 : 3);
const mb = args.number('mb', quick ? 32 : 128);
const partitions = args.number('partitions', 8);
const batch = args.numbers('batch', [16 * 1024])[0] ?? 16 * 1024;
const recordSize = args.number('record-size', 1024);
const build = args.string('build', 'src') as Build;

type Protocol = 'plaintext' | 'tls';
interface Side {
  readonly name: 'Floe' | 'Kafka';
  readonly ports: Record<Protocol, number>;
  readonly admin: LoadClient;
  readonly produce: Record<Protocol, number[]>;
  readonly fetch: Record<Protocol, number[]>;
}

let seq = 0;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-tls-bench-'));
  let kafka: KafkaPeer | undefined;
  let floe: ChildServer | undefined;
  const admins: LoadClient[] = [];
  try {
    await mkdir(join(work, 'certs'));
    const certs = makeCerts(join(work, 'certs'));
    const tlsProps = ['security.protocol=SSL', 'ssl.truststore.type=PEM', `ssl.truststore.location=${certs.caPem}`];
    await mkdir(join(work, 'kafka'));
    progress('starting Apache Kafka with PLAINTEXT and SSL listeners');
    kafka = await startKafka(join(work, 'kafka'), { ssl: { keystore: certs.serverP12, password: certs.keystorePassword } });
    progress(`starting Floe (${build}) with PLAINTEXT and SSL listeners`);
    floe = await spawnFloe({
      dataDir: join(work, 'floe', 'log'),
      build,
      flags: ['--listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0', `--ssl.keystore.location=${certs.serverP12}`, `--ssl.keystore.password=${certs.keystorePassword}`, `--iceberg.warehouse=${join(work, 'floe', 'warehouse')}`, '--iceberg.rest.port=0', '--iceberg.rest.host=127.0.0.1', '--schema.registry.port=-1'],
    });
    // spawnFloe's port is the last advertised listener's; read both from the start line.
    const listeners = /"msg":"broker started"[^\n]*"listeners":"([^"]*)"/.exec(floe.output())?.[1] ?? '';
    const portOf = (name: string) => Number(new RegExp(`(?:^|,)${name}://[^,]*:(\\d+)`).exec(listeners)?.[1] ?? NaN);
    const floePlain = portOf('PLAINTEXT');
    const floeSsl = portOf('SSL');
    if (!Number.isInteger(floePlain) || !Number.isInteger(floeSsl) || kafka.sslPort === undefined) throw new Error(`no PLAINTEXT and SSL listener ports in '${listeners}'`);
    const side = async (name: Side['name'], plain: number, tls: number): Promise<Side> => {
      const admin = await LoadClient.connect(plain, 1);
      admins.push(admin);
      return { name, ports: { plaintext: plain, tls }, admin, produce: { plaintext: [], tls: [] }, fetch: { plaintext: [], tls: [] } };
    };
    const sides = [await side('Floe', floePlain, floeSsl), await side('Kafka', kafka.port, kafka.sslPort)];
    const records = Math.max(1000, Math.floor((mb * MiB) / recordSize));
    for (let run = 0; run < runs; run++) {
      for (const s of run % 2 === 0 ? sides : [...sides].reverse()) {
        for (const protocol of (run % 2 === 0 ? ['plaintext', 'tls'] : ['tls', 'plaintext']) as Protocol[]) {
          const topic = `tls-bench-${seq++}`;
          await createTopic(s.admin, topic, partitions);
          const props = protocol === 'tls' ? tlsProps : [];
          const p = await producerPerf({ port: s.ports[protocol], topic, records, recordSize, throughput: -1, acks: '1', batchSize: batch, compression: 'none', clientProps: props });
          const stored = (await logEndOffsets(s.admin, topic, partitions)).reduce((a, b) => a + Number(b), 0);
          if (stored !== p.records) throw new Error(`${s.name} ${topic}: ${p.records} records acknowledged, ${stored} in the log`);
          const c = await consumerPerf(s.ports[protocol], topic, records, `g-${topic}`, props);
          s.produce[protocol].push(p.mbPerSec);
          s.fetch[protocol].push(c.fetchMbPerSec);
          await deleteTopic(s.admin, topic);
          progress(`${s.name} ${protocol}, run ${run + 1}/${runs}: produce ${p.mbPerSec} MB/s, fetch ${c.fetchMbPerSec.toFixed(1)} MB/s`);
        }
      }
    }
    const headers = ['broker', 'produce plaintext MB/s', 'produce TLS MB/s', 'TLS/plaintext', 'fetch plaintext MB/s', 'fetch TLS MB/s', 'TLS/plaintext'];
    const rows: Cell[][] = sides.map((s) => {
      const pp = stat(s.produce.plaintext);
      const pt = stat(s.produce.tls);
      const fp = stat(s.fetch.plaintext);
      const ft = stat(s.fetch.tls);
      return [s.name, `${pp.median.toFixed(1)} ${pp.spread}`, `${pt.median.toFixed(1)} ${pt.spread}`, ratio(pt.median, pp.median), `${fp.median.toFixed(1)} ${fp.spread}`, `${ft.median.toFixed(1)} ${ft.spread}`, ratio(ft.median, fp.median)];
    });
    const [f, k] = sides as [Side, Side];
    const med = (xs: number[]) => stat(xs).median;
    rows.push(['Floe/Kafka', ratio(med(f.produce.plaintext), med(k.produce.plaintext)), ratio(med(f.produce.tls), med(k.produce.tls)), '', ratio(med(f.fetch.plaintext), med(k.fetch.plaintext)), ratio(med(f.fetch.tls), med(k.fetch.tls)), '']);
    let commit = 'unknown';
    try {
      commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    } catch {
      // not a checkout
    }
    const setup = `commit ${commit}, ${cpus().length} cores, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${runs} runs per figure (median and spread); ${mb} MiB of ${recordSize}-byte records per run, ${partitions} partitions, acks=1, uncompressed ${batch / 1024} KiB batches; fetch = ConsumerPerformance fetch MB/s of the same topic; TLS (the version Node and the JVM negotiate) with an EC P-256 server certificate; Floe ${build}; Apache Kafka 4.4.0`;
    console.log(`\nTLS against plaintext: ${setup}\n\n${formatTable(headers, rows)}\n`);
    console.log(`Markdown:\n\n${setup}\n\n${formatMarkdownTable(headers, rows)}\n`);
  } finally {
    await Promise.allSettled(admins.map((a) => a.close()));
    await Promise.allSettled([kafka?.stop(), floe?.stop()]);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
