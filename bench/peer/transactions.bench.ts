// Transactional produce against plain (idempotent) produce, on Floe and on Apache Kafka 4.4 in the same run:
// Kafka's own ProducerPerformance with acks=all, once without transactions and then with transactions that
// commit every --durations milliseconds (--transaction-duration-ms; shorter transactions are smaller and
// mean more AddPartitionsToTxn, EndTxn and markers per record). Each figure is the median of --runs runs
// alternating which broker goes first; each row gives both brokers' cost of transactions (transactional
// records/s over plain records/s) and Floe/Kafka. The markers column is measured: the log end offsets of the
// topic minus the records, so records/marker is how many records a transaction wrote to each partition.
//
// Run from nothing: bash bench/peer/run.sh transactions [--quick]   (installs Kafka's jars from Maven Central)
// Options: --runs=3 --mb=64 (MiB per run) --partitions=1,8 --durations=1000,100,10 --record-size=1024
//          --batch=16k --build=src|dist --floe-flags="..."
// --quick: 2 runs of 24 MiB, 1 partition, durations 100 and 10 ms (about a minute idle).
import { execSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchArgs } from '../lib/args.js';
import type { Build } from '../lib/processes.js';
import { formatSize, median, MiB } from '../lib/stats.js';
import { formatMarkdownTable, formatTable, progress, type Cell } from '../lib/table.js';
import { producerPerf } from './java-perf.js';
import { ratio, startPeers, stat, withTopicStored, type Name, type Peers } from './peers.js';

const args = new BenchArgs(
  process.argv.slice(2),
  'usage: transactions.bench.ts [--quick] [--runs=n] [--mb=n] [--partitions=1,8] [--durations=1000,100,10] [--record-size=1024] [--batch=16k] [--build=src|dist] [--floe-flags="..."]',
);
const quick = args.flag('quick');
const runs = args.number('runs', quick ? 2 : 3);
const mb = args.number('mb', quick ? 24 : 64);
const partitionsList = args.numbers('partitions', quick ? [1] : [1, 8]);
const durations = args.numbers('durations', quick ? [100, 10] : [1000, 100, 10]);
const recordSize = args.number('record-size', 1024);
const batch = args.numbers('batch', [16 * 1024])[0] ?? 16 * 1024;
const build = args.string('build', 'src') as Build;
const floeFlags = args.string('floe-flags', '').split(' ').filter((f) => f !== '');

/** undefined: no transactions. */
type Mode = number | undefined;
const modeLabel = (m: Mode): string => (m === undefined ? 'none (idempotent)' : `${m} ms`);

interface Cell2 {
  rps: number[];
  markers: number[];
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'floe-txn-bench-'));
  let started: Peers | undefined;
  try {
    started = await startPeers(work, build, floeFlags);
    const { order } = started;
    const records = Math.max(1000, Math.floor((mb * MiB) / recordSize));
    const modes: Mode[] = [undefined, ...durations];
    const results = new Map<string, Record<Name, Cell2>>();
    const key = (partitions: number, m: Mode) => `${partitions}/${modeLabel(m)}`;
    // A warm-up run on each broker (JIT, page cache, first topic), not counted.
    for (const peer of order(0)) await withTopicStored(peer, 1, (t) => producerPerf({ port: peer.port, topic: t, records: Math.ceil(records / 4), recordSize, throughput: -1, acks: 'all', batchSize: batch, compression: 'none' }));
    let k = 0;
    for (let run = 0; run < runs; run++) {
      for (const partitions of partitionsList) {
        // The modes take turns at going first, so that none is always measured on a fresher broker.
        for (const mode of [...modes.slice(run % modes.length), ...modes.slice(0, run % modes.length)]) {
          const cell = results.get(key(partitions, mode)) ?? { floe: { rps: [], markers: [] }, kafka: { rps: [], markers: [] } };
          results.set(key(partitions, mode), cell);
          for (const peer of order(k++)) {
            const { result, stored, topic } = await withTopicStored(peer, partitions, (t) =>
              producerPerf({ port: peer.port, topic: t, records, recordSize, throughput: -1, acks: 'all', batchSize: batch, compression: 'none', ...(mode !== undefined ? { transactionDurationMs: mode } : {}) }),
            );
            const markers = stored - result.records;
            // Kafka writes a commit's markers after EndTxn answers, so the last one or two may be missing.
            if (markers < 0 || (mode === undefined && markers !== 0)) throw new Error(`${peer.name} ${topic}: ${result.records} records acknowledged, ${stored} offsets in the log`);
            cell[peer.name].rps.push(result.recordsPerSec);
            cell[peer.name].markers.push(markers);
          }
          progress(`${partitions}p transactions ${modeLabel(mode)}, run ${run + 1}/${runs}: Floe ${cell.floe.rps.at(-1)} rec/s, Kafka ${cell.kafka.rps.at(-1)} rec/s`);
        }
      }
    }

    const headers = ['partitions', 'transactions of', 'Floe rec/s', 'spread', 'Floe vs plain', 'Floe records/marker', 'Kafka rec/s', 'spread', 'Kafka vs plain', 'Kafka records/marker', 'Floe/Kafka'];
    const rows: Cell[][] = [];
    for (const partitions of partitionsList) {
      const plain = results.get(key(partitions, undefined))!;
      for (const mode of modes) {
        const c = results.get(key(partitions, mode))!;
        const f = stat(c.floe.rps);
        const kf = stat(c.kafka.rps);
        const perMarker = (x: Cell2) => (mode === undefined ? '-' : Math.round((records / Math.max(1, median(x.markers)))));
        rows.push([partitions, modeLabel(mode), Math.round(f.median), f.spread, ratio(f.median, median(plain.floe.rps)), perMarker(c.floe), Math.round(kf.median), kf.spread, ratio(kf.median, median(plain.kafka.rps)), perMarker(c.kafka), ratio(f.median, kf.median)]);
      }
    }
    let commit = 'unknown';
    try {
      commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    } catch {
      // not a checkout
    }
    const setup = `commit ${commit}, ${cpus().length} cores, load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${runs} runs per figure (median; spread = half the range, as a share of the median); ${mb} MiB of ${recordSize}-byte records per run, acks=all, ${formatSize(batch)} batches, linger.ms=5; Floe ${build} with ${floeFlags.length > 0 ? floeFlags.join(' ') : 'its defaults (tables on)'}; Apache Kafka 4.4.0 (KRaft, config/server.properties)`;
    const title = 'Transactional against plain produce, ProducerPerformance --transaction-duration-ms';
    console.log(`\n${title}: ${setup}\n\n${formatTable(headers, rows)}\n`);
    console.log(`Markdown:\n\n${setup}\n\n${formatMarkdownTable(headers, rows)}\n`);
  } finally {
    await started?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
