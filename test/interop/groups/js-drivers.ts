/**
 * kafkajs and @platformatic/kafka as group drivers. Their members run in child `node` processes
 * (kafkajs-member / platformatic-member beside this file, with this process's loader flags so the .ts
 * sources run under tsx too) so they can be SIGKILLed like the external clients. Admin calls run in this
 * process with the library's own admin API.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin } from '@platformatic/kafka';
import { AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import { range } from './broker-truth.js';
import { MemberProcess } from './member-process.js';
import type { AdminGroupView, GroupClientDriver, MemberOptions } from './scenario.js';

const here = fileURLToPath(import.meta.url);

function nodeMember(script: string, o: MemberOptions): MemberProcess {
  const file = fileURLToPath(new URL(`./${script}${extname(here)}`, import.meta.url));
  return new MemberProcess(o.name, process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--test')), file, JSON.stringify(o)]);
}

async function kafkajsAdmin(bootstrap: string, group: string, topic: string, partitions: number): Promise<AdminGroupView> {
  const admin = new Kafka({ brokers: [bootstrap], clientId: 'group-suite-admin', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const listed = (await admin.listGroups()).groups.map((g) => g.groupId);
    const described = (await admin.describeGroups([group])).groups[0];
    if (described === undefined) throw new Error(`kafkajs described no group ${group}`);
    const members = described.members.map((m) => {
      const assignment = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      return { clientId: m.clientId, partitions: [...(assignment?.assignment[topic] ?? [])] };
    });
    const fetched = (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]?.partitions ?? [];
    const ends = await admin.fetchTopicOffsets(topic);
    const committed = range(partitions).map((p) => Number(fetched.find((x) => x.partition === p)?.offset ?? -1));
    const lag = range(partitions).map((p) => Number(ends.find((x) => x.partition === p)?.high ?? NaN) - (committed[p] ?? 0));
    return { listed, state: described.state, members, committed, lag };
  } finally {
    await admin.disconnect();
  }
}

export async function platformaticAdmin(bootstrap: string, group: string, topic: string, partitions: number): Promise<AdminGroupView> {
  const admin = new Admin({ clientId: 'group-suite-admin', bootstrapBrokers: [bootstrap] });
  try {
    const listed = [...(await admin.listGroups()).keys()];
    const described = (await admin.describeGroups({ groups: [group] })).get(group);
    if (described === undefined) throw new Error(`platformatic described no group ${group}`);
    const members = [...described.members.values()].map((m) => ({ clientId: m.clientId, partitions: [...(m.assignments?.get(topic)?.partitions ?? [])] }));
    const offsets = await admin.listConsumerGroupOffsets({ groups: [group] });
    const fetched = offsets[0]?.topics.find((t) => t.name === topic)?.partitions ?? [];
    const ends = await admin.listOffsets({ topics: [{ name: topic, partitions: range(partitions).map((partitionIndex) => ({ partitionIndex, timestamp: -1n })) }] });
    const endOf = (p: number) => Number(ends.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === p)?.offset ?? NaN);
    const committed = range(partitions).map((p) => Number(fetched.find((x) => x.partitionIndex === p)?.committedOffset ?? -1n));
    return { listed, state: described.state, members, committed, lag: range(partitions).map((p) => endOf(p) - (committed[p] ?? 0)) };
  } finally {
    await admin.close();
  }
}

export const kafkajsDriver: GroupClientDriver = { name: 'kafkajs', startMember: (o) => nodeMember('kafkajs-member', o), admin: kafkajsAdmin };
/** A @platformatic/kafka group member in its own node process (see platformatic-member.ts). */
export const platformaticMember = (o: MemberOptions): MemberProcess => nodeMember('platformatic-member', o);
