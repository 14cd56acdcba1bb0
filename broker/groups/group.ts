/**
 * One classic consumer group's membership, as Kafka's GroupMetadata keeps it: state, generation, members
 * with their supported protocols, the leader, and the selected protocol. It holds data and the rules that
 * only read it (protocol selection, compatibility); the coordinator drives the state transitions.
 *
 *   Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance ──leader sync──▶ Stable
 *     ▲                  ▲     │ (no members left)                      │ member change               │
 *     └──────────────────┼─────┘                                        ▼                             │
 *                        └──────────────────────────────── PreparingRebalance ◀── member change ──────┘
 *   Dead: the group was deleted or expired; any request that still holds it answers COORDINATOR_NOT_AVAILABLE.
 */
import type { Timer } from './clock.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export const GROUP_STATES: readonly GroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

export interface Protocol {
  readonly name: string;
  readonly metadata: Buffer;
}

/** What a JoinGroup waiter is answered with. */
export interface JoinResult {
  readonly errorCode: number;
  readonly generationId: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly leader: string;
  readonly skipAssignment: boolean;
  readonly memberId: string;
  readonly members: readonly { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
}

export interface SyncResult {
  readonly errorCode: number;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignment: Buffer;
}

const EMPTY = Buffer.alloc(0);

export class Member {
  assignment: Buffer = EMPTY;
  awaitingJoin: ((r: JoinResult) => void) | undefined;
  awaitingSync: ((r: SyncResult) => void) | undefined;
  /** A member added during this rebalance; it may be dropped if it never completes the join. */
  isNew = false;
  heartbeatTimer: Timer | undefined;

  constructor(
    public memberId: string,
    readonly groupInstanceId: string | null,
    public clientId: string,
    public clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public protocols: readonly Protocol[],
  ) {}

  metadataFor(protocol: string): Buffer {
    return this.protocols.find((p) => p.name === protocol)?.metadata ?? EMPTY;
  }

  /** Whether `protocols` are the same names and metadata bytes, in the same order. */
  sameProtocols(protocols: readonly Protocol[]): boolean {
    return protocols.length === this.protocols.length && protocols.every((p, i) => p.name === this.protocols[i]?.name && p.metadata.equals(this.protocols[i]?.metadata ?? EMPTY));
  }
}

export class Group {
  state: GroupState = 'Empty';
  /** When the group entered its current state (ms), for offsets retention of empty groups. */
  stateSince: number;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | undefined;
  readonly members = new Map<string, Member>();
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet, with their expiry timers. */
  readonly pendingMembers = new Map<string, Timer>();
  /** Members of the current generation that have not sent SyncGroup yet. */
  readonly pendingSync = new Set<string>();
  readonly staticMembers = new Map<string, string>();
  /** Timer completing the join phase (initial delay or rebalance timeout). */
  joinTimer: Timer | undefined;
  /** Timer removing members that do not sync within the rebalance timeout. */
  syncTimer: Timer | undefined;
  /** Set while the initial-rebalance delay of an empty group runs. */
  initialDelay: { remainingMs: number; delayMs: number; newMemberAdded: boolean } | undefined;

  constructor(
    readonly groupId: string,
    now: number,
  ) {
    this.stateSince = now;
  }

  transition(state: GroupState, now: number): void {
    this.state = state;
    this.stateSince = now;
  }

  has(memberId: string): boolean {
    return this.members.has(memberId);
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  /** Whether a static member id claim is stale: the instance id is registered to another member id. */
  isStaticMemberFenced(groupInstanceId: string | null, memberId: string): boolean {
    if (groupInstanceId === null) return false;
    const current = this.staticMembers.get(groupInstanceId);
    return current !== undefined && current !== memberId;
  }

  add(member: Member): void {
    if (this.members.size === 0) this.protocolType = member.protocolType;
    this.members.set(member.memberId, member);
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId);
    this.leaderId ??= member.memberId;
  }

  remove(memberId: string): Member | undefined {
    const member = this.members.get(memberId);
    if (!member) return undefined;
    this.members.delete(memberId);
    this.pendingSync.delete(memberId);
    if (member.groupInstanceId !== null && this.staticMembers.get(member.groupInstanceId) === memberId) this.staticMembers.delete(member.groupInstanceId);
    member.heartbeatTimer?.cancel();
    if (this.leaderId === memberId) this.leaderId = this.members.keys().next().value;
    return member;
  }

  /** Gives a static member a new member id (a restarted static consumer), keeping its place and assignment. */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): Member {
    const member = this.members.get(oldMemberId);
    if (!member) throw new Error(`static member ${groupInstanceId} has no member ${oldMemberId}`);
    this.members.delete(oldMemberId);
    member.memberId = newMemberId;
    this.members.set(newMemberId, member);
    this.staticMembers.set(groupInstanceId, newMemberId);
    if (this.pendingSync.delete(oldMemberId)) this.pendingSync.add(newMemberId);
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId;
    return member;
  }

  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** Every member has rejoined and no MEMBER_ID_REQUIRED member is still expected. */
  allMembersJoined(): boolean {
    if (this.pendingMembers.size > 0) return false;
    for (const m of this.members.values()) if (!m.awaitingJoin) return false;
    return true;
  }

  /** Protocols every member supports (all of a lone member's, none for an empty group). */
  candidateProtocols(): Set<string> {
    let candidates: Set<string> | undefined;
    for (const m of this.members.values()) {
      const names = new Set(m.protocols.map((p) => p.name));
      candidates = candidates ? new Set([...candidates].filter((n) => names.has(n))) : names;
    }
    return candidates ?? new Set();
  }

  /**
   * Whether a member with these protocols may join: any non-empty protocol set for an empty group, else the
   * group's protocol type and at least one protocol every current member supports.
   */
  supportsProtocols(protocolType: string, protocols: readonly Protocol[]): boolean {
    if (protocolType === '' || protocols.length === 0) return false;
    if (this.members.size === 0) return true;
    if (protocolType !== this.protocolType) return false;
    const candidates = this.candidateProtocols();
    return protocols.some((p) => candidates.has(p.name));
  }

  /**
   * Kafka's protocol selection: among protocols every member supports, each member votes for the one it
   * lists first, and the most votes win (ties go to the protocol listed earliest by the first member).
   */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.protocols.find((p) => candidates.has(p.name));
      if (choice) votes.set(choice.name, (votes.get(choice.name) ?? 0) + 1);
    }
    let best: string | undefined;
    let bestVotes = -1;
    const first = this.members.values().next().value;
    for (const p of first?.protocols ?? []) {
      const v = votes.get(p.name);
      if (v !== undefined && v > bestVotes) {
        best = p.name;
        bestVotes = v;
      }
    }
    if (best === undefined) throw new Error(`group ${this.groupId} has no protocol that every member supports`);
    return best;
  }

  /** The member list sent to the leader in its JoinGroup response. */
  memberList(): JoinResult['members'] {
    const protocol = this.protocolName ?? '';
    return [...this.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadataFor(protocol) }));
  }
}
