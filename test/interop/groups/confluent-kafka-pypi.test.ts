import { test } from 'node:test';
import { ChildRunner } from '../clients/process.js';
import { pythonGroupDriver } from './python-drivers.js';
import { runGroupScenario } from './scenario.js';

test('confluent-kafka 2.x (PyPI): 3 members, one SIGKILLed, rebalance within the session timeout, at-least-once, nothing committed re-read; AdminClient.list_groups and the group\'s committed offsets show lag', async (t) => {
  const runner = new ChildRunner();
  t.after(() => runner.killAll());
  await runGroupScenario(t, pythonGroupDriver('confluent-kafka-pypi', runner));
});
