// confluent-kafka 2.x from PyPI (current librdkafka) in a consume-transform-produce loop with offsets sent in
// the transaction and random aborts (confluent_txn.py loop), while the loop and the compiled broker are each
// killed with kill -9 twice, alternately, at random moments (the shared driver, kill-loop.ts). A
// read_committed librdkafka consumer sees each input's result exactly once and no aborted attempt, from the
// hot log and from the table, and pyiceberg, icebird and DuckDB read exactly the committed records from the
// output topic's table.
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { venvPython } from '../../helpers/peers.js';
import { runKillLoop, spawnLoopProcess } from './kill-loop.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./confluent_txn.py', import.meta.url));

test('confluent-kafka (librdkafka) transactional loop with kill -9 of the client and of the broker: read_committed sees every input exactly once, hot and tiered; the table holds exactly the committed records', { timeout: 420_000 }, async (t) => {
  await runKillLoop(t, {
    name: 'rdkafka-kill',
    seed: 514,
    spawnLoop: (a) => spawnLoopProcess(venvPython(), ['-u', SCRIPT, 'loop', a.bootstrap, a.input, a.output, a.group, a.transactionalId, String(a.abortRate), String(a.seed)]),
    readKeys: async (bootstrap, topic, isolation) => {
      const { stdout } = await run(venvPython(), [SCRIPT, 'read', bootstrap, topic, isolation], { maxBuffer: 64 * 1024 * 1024 });
      return JSON.parse(stdout) as string[];
    },
  });
});
