/**
 * @platformatic/kafka through the same consumer-group scenario as the other clients (scenario.ts): three
 * members consuming with the library's group consumer (platformatic-member.ts, Fetch by topic id now that
 * the broker serves Fetch v13+), one SIGKILLed, the survivors rebalancing within the session timeout,
 * at-least-once delivery with nothing committed read twice, and the library's Admin group APIs (listGroups,
 * describeGroups, listConsumerGroupOffsets, lag) checked against the broker's own answers.
 */
import { test } from 'node:test';
import { platformaticAdmin, platformaticMember } from './js-drivers.js';
import { runGroupScenario, type GroupClientDriver } from './scenario.js';

/** platformatic spells Kafka's group states in capitals (STABLE, EMPTY); the scenario compares Kafka's. */
const KAFKA_STATES: Readonly<Record<string, string>> = { STABLE: 'Stable', EMPTY: 'Empty', DEAD: 'Dead', PREPARING_REBALANCE: 'PreparingRebalance', COMPLETING_REBALANCE: 'CompletingRebalance' };

const platformaticDriver: GroupClientDriver = {
  name: 'platformatic-kafka',
  startMember: platformaticMember,
  admin: async (bootstrap, group, topic, partitions) => {
    const view = await platformaticAdmin(bootstrap, group, topic, partitions);
    const state = KAFKA_STATES[view.state];
    if (state === undefined) throw new Error(`platformatic reported an unknown group state ${view.state}`);
    return { ...view, state };
  },
};

test('platformatic-kafka: 3 members (child node processes), one SIGKILLed, rebalance within the session timeout, at-least-once, nothing committed re-read; Admin lists, describes and shows lag', async (t) => {
  await runGroupScenario(t, platformaticDriver);
});
