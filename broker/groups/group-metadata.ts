/**
 * A classic group's membership as it is stored, after Kafka's GroupMetadata record in __consumer_offsets:
 * protocol type, generation, selected protocol, leader, when the group entered its state, and per member its
 * id, group instance id, client id and host, timeouts, protocols and assignment. The coordinator writes it
 * when a generation's assignment is complete (the leader's SyncGroup), when a group becomes Empty, and when
 * a static member rejoins a Stable group with a new member id; DeleteGroups and offsets expiry remove it.
 *
 * Loading follows Kafka's coordinator: a group with members comes back Stable at the stored generation with
 * the stored assignment (a group that was mid-rebalance when the broker stopped comes back as its last
 * completed generation, so members that had rejoined must rejoin again), a group without members comes
 * back Empty. The coordinator restarts every member's session timer at load.
 *
 * Kafka stores only the selected protocol's metadata per member; all of a member's protocols are kept here,
 * so a member that rejoins after a restart with the same protocols does not trigger a rebalance.
 */
import { Group, Member } from './group.js';

export interface StoredMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  /** [protocol name, metadata in base64], in the member's order of preference. */
  readonly protocols: readonly (readonly [string, string])[];
  /** Base64. */
  readonly assignment: string;
}

export interface GroupMetadataValue {
  readonly protocolType: string | null;
  readonly generationId: number;
  readonly protocolName: string | null;
  readonly leaderId: string | null;
  /** When the group entered its state (ms since the epoch); offsets retention of Empty groups counts from it. */
  readonly stateTimestamp: number;
  readonly members: readonly StoredMember[];
}

/** The record for `group` now, with each member's assignment from `assignmentOf` (default: its current one). */
export function groupMetadataOf(group: Group, stateTimestamp: number, assignmentOf: (m: Member) => Buffer = (m) => m.assignment): GroupMetadataValue {
  return {
    protocolType: group.protocolType,
    generationId: group.generationId,
    protocolName: group.protocolName,
    leaderId: group.leaderId ?? null,
    stateTimestamp,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      sessionTimeoutMs: m.sessionTimeoutMs,
      protocols: m.protocols.map((p) => [p.name, p.metadata.toString('base64')] as const),
      assignment: assignmentOf(m).toString('base64'),
    })),
  };
}

/** The group a stored record describes: Stable with its members and assignments, or Empty without members. */
export function groupFromMetadata(groupId: string, v: GroupMetadataValue): Group {
  const group = new Group(groupId, v.stateTimestamp);
  group.generationId = v.generationId;
  group.protocolType = v.protocolType;
  for (const s of v.members) {
    const protocols = s.protocols.map(([name, metadata]) => ({ name, metadata: Buffer.from(metadata, 'base64') }));
    const member = new Member(s.memberId, s.groupInstanceId, s.clientId, s.clientHost, s.rebalanceTimeoutMs, s.sessionTimeoutMs, v.protocolType ?? '', protocols);
    member.assignment = Buffer.from(s.assignment, 'base64');
    group.add(member);
  }
  if (group.members.size > 0) {
    group.state = 'Stable';
    group.protocolName = v.protocolName;
    if (v.leaderId !== null && group.has(v.leaderId)) group.leaderId = v.leaderId;
  } else {
    group.protocolType = v.protocolType;
  }
  return group;
}
