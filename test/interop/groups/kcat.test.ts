/**
 * kcat's balanced consumer (`-G`, librdkafka 1.7): auto-commit every 500 ms, commit on revoke and on close.
 * kcat has no admin API, so the admin step is skipped for it. Output is unbuffered (`-u`) so a SIGKILL
 * loses no printed record.
 */
import { test } from 'node:test';
import { MemberProcess } from './member-process.js';
import { runGroupScenario, type GroupClientDriver, type MemberOptions } from './scenario.js';

export function kcatMember(o: MemberOptions): MemberProcess {
  return new MemberProcess(o.name, 'kcat', [
    '-b', o.bootstrap,
    '-G', o.group, o.topic,
    '-X', `client.id=${o.name}`,
    '-X', `session.timeout.ms=${o.sessionTimeoutMs}`,
    '-X', `heartbeat.interval.ms=${o.heartbeatIntervalMs}`,
    '-X', 'auto.offset.reset=earliest',
    '-X', 'auto.commit.interval.ms=500',
    '-u',
    '-f', '{"e":"record","p":%p,"o":%o,"k":"%k"}\\n',
  ]);
}

const kcat: GroupClientDriver = { name: 'kcat', startMember: kcatMember, admin: undefined };

test('kcat -G: 3 members, one SIGKILLed, the group rebalances within the session timeout; at-least-once, nothing committed re-read', async (t) => {
  await runGroupScenario(t, kcat);
});
