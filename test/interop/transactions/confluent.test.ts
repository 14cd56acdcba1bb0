// confluent-kafka 2.x from PyPI (current librdkafka) transactions against Floe: a transactional producer
// commits and aborts (seeded random); librdkafka read_committed consumers see exactly the committed
// records, read_uncommitted ones the aborted ones too; a kafkajs read_committed consumer agrees.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { startBroker } from '../../helpers/broker.js';
import { venvPython } from '../../helpers/peers.js';
import { consumeKeys } from './verify.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./confluent_txn.py', import.meta.url));

async function py<T>(args: string[]): Promise<T> {
  const { stdout } = await run(venvPython(), [SCRIPT, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as T;
}

test('confluent-kafka (librdkafka) transactions: read_committed consumers of both clients see exactly the committed records', async (t) => {
  const b = await startBroker();
  t.after(() => b.stop());
  await b.broker.services.topics.createTopic('txn-rdkafka', 3);
  const { committed, aborted } = await py<{ committed: string[]; aborted: string[] }>(['produce', b.bootstrap, 'txn-rdkafka', 'rdkafka-tx', '14', '25']);
  assert.ok(committed.length > 0 && aborted.length > 0);

  const rc = await py<string[]>(['read', b.bootstrap, 'txn-rdkafka', 'read_committed']);
  assert.deepEqual([...rc].sort(), [...committed].sort());
  const ru = await py<string[]>(['read', b.bootstrap, 'txn-rdkafka', 'read_uncommitted']);
  assert.deepEqual([...ru].sort(), [...committed, ...aborted].sort());

  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'txn-rdkafka-verify', logLevel: logLevel.NOTHING });
  const js = await consumeKeys(kafka, 'txn-rdkafka', { readUncommitted: false, until: new Set(committed) });
  assert.deepEqual([...js.seen].sort(), [...committed].sort());
});
