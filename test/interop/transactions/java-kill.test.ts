// Apache Kafka's Java client in a consume-transform-produce loop with offsets sent in the transaction and
// random aborts (TxnLoop.java), while the loop and the compiled broker are each killed with kill -9 twice,
// alternately, at random moments (the shared driver, kill-loop.ts). A read_committed Java consumer sees each
// input's result exactly once and no aborted attempt, from the hot log and from the table, and pyiceberg,
// icebird and DuckDB read exactly the committed records from the output topic's table.
import { test } from 'node:test';
import { runKillLoop } from './kill-loop.js';
import { compileTxnLoop, javaTxnLoop, spawnTxnLoop } from './txn-loop.js';

test('Java transactional loop with kill -9 of the client and of the broker: read_committed sees every input exactly once, hot and tiered; the table holds exactly the committed records', { timeout: 420_000 }, async (t) => {
  const { classpath, cleanup } = await compileTxnLoop();
  t.after(cleanup);
  await runKillLoop(t, {
    name: 'java-kill',
    seed: 890,
    spawnLoop: (a) => spawnTxnLoop(classpath, ['loop', a.bootstrap, a.input, a.output, a.group, a.transactionalId, String(a.abortRate), String(a.seed)]),
    readKeys: async (bootstrap, topic, isolation) => (await javaTxnLoop(classpath, ['read', bootstrap, topic, isolation])).split('\n').filter((k) => k !== ''),
  });
});
