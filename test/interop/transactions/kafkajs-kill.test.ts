// kafkajs in a consume-transform-produce loop with offsets sent in the transaction and random aborts
// (kafkajs-txn-loop.ts, its own process), while the loop and the compiled broker are each killed with kill -9
// twice, alternately, at random moments (the shared driver, kill-loop.ts). A read_committed kafkajs consumer
// sees each input's result exactly once and no aborted attempt, from the hot log and from the table, and
// pyiceberg, icebird and DuckDB read exactly the committed records from the output topic's table.
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { runKillLoop, spawnLoopProcess } from './kill-loop.js';
import { readToEnd } from './verify.js';

const LOOP = fileURLToPath(new URL('./kafkajs-txn-loop.js', import.meta.url));

test('kafkajs transactional loop with kill -9 of the client and of the broker: read_committed sees every input exactly once, hot and tiered; the table holds exactly the committed records', { timeout: 420_000 }, async (t) => {
  await runKillLoop(t, {
    name: 'kafkajs-kill',
    seed: 77,
    spawnLoop: (a) => spawnLoopProcess(process.execPath, [LOOP, a.bootstrap, a.input, a.output, a.group, a.transactionalId, String(a.abortRate), String(a.seed)]),
    readKeys: (bootstrap, topic, isolation) =>
      readToEnd(new Kafka({ brokers: [bootstrap], clientId: 'kafkajs-kill-verify', logLevel: logLevel.NOTHING }), topic, { readUncommitted: isolation === 'read_uncommitted' }),
  });
});
