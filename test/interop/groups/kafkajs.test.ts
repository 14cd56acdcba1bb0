import { test } from 'node:test';
import { kafkajsDriver } from './js-drivers.js';
import { runGroupScenario } from './scenario.js';

test('kafkajs: 3 members (child node processes), one SIGKILLed, rebalance within the session timeout, at-least-once, nothing committed re-read; admin lists, describes and shows lag', async (t) => {
  await runGroupScenario(t, kafkajsDriver);
});
