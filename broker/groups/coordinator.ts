/**
 * The classic group coordinator, after Kafka's GroupCoordinator: JoinGroup / SyncGroup / Heartbeat /
 * LeaveGroup, rebalances with their timeouts, static membership and generation fencing. Membership is kept
 * durably as Kafka keeps it (group-metadata.ts says when it is written and how it loads), so after a restart
 * a Stable group's members carry on with their member ids and generation. The coordinator only relays
 * assignments, so any assignor works.
 *
 * Timeouts, all driven by the injected clock:
 * - initial rebalance delay: an Empty group waits `group.initial.rebalance.delay.ms` for more members, again
 *   after each new arrival, up to the rebalance timeout;
 * - rebalance timeout: members that do not rejoin in time are removed and the join completes without them;
 *   members that do not SyncGroup within it after the join are removed and the group rebalances again;
 * - session timeout: a member that sends no heartbeat for that long is removed and the group rebalances;
 * - a MEMBER_ID_REQUIRED member id is forgotten if the member does not rejoin within its session timeout.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import type { Clock } from './clock.js';
import { Group, Member, type JoinResult, type Protocol, type SyncResult } from './group.js';
import { groupMetadataOf, type GroupMetadataValue } from './group-metadata.js';

export interface GroupConfig {
  readonly minSessionTimeoutMs: number;
  readonly maxSessionTimeoutMs: number;
  readonly initialRebalanceDelayMs: number;
  /** Most members (joined plus awaiting a member id) a group may have. */
  readonly maxSize: number;
  /** A new member whose first join never completes is dropped after this long (Kafka: 5 minutes). */
  readonly newMemberJoinTimeoutMs: number;
}

export interface JoinRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocolType: string;
  readonly protocols: readonly Protocol[];
  readonly clientId: string;
  readonly clientHost: string;
  /** JoinGroup v4+: a member without an id first gets MEMBER_ID_REQUIRED and must rejoin with it. */
  readonly requireKnownMemberId: boolean;
  /** JoinGroup v9+: a rejoining static leader in a stable group is told to skip the assignment. */
  readonly supportsSkipAssignment: boolean;
}

export interface SyncRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignments: readonly { memberId: string; assignment: Buffer }[];
}

export interface MemberIdentity {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface LeaveResult {
  readonly errorCode: number;
  readonly members: readonly (MemberIdentity & { errorCode: number })[];
}

/** What a rejoin may change about a member. */
type MemberSettings = Pick<Member, 'protocols' | 'rebalanceTimeoutMs' | 'sessionTimeoutMs' | 'clientId' | 'clientHost'>;

const EMPTY = Buffer.alloc(0);

export function joinError(memberId: string, errorCode: number): JoinResult {
  return { errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId, members: [] };
}

export function syncError(errorCode: number): SyncResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY };
}

export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private active = true;

  constructor(
    readonly config: GroupConfig,
    readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** False once shutdown began: requests are answered NOT_COORDINATOR so clients look for the coordinator again. */
  get isActive(): boolean {
    return this.active;
  }

  group(groupId: string): Group | undefined {
    return this.groups.get(groupId);
  }

  allGroups(): IterableIterator<Group> {
    return this.groups.values();
  }

  getOrCreateGroup(groupId: string): Group {
    let group = this.groups.get(groupId);
    if (!group) this.groups.set(groupId, (group = new Group(groupId, this.clock.now())));
    return group;
  }

  /** Marks an Empty group Dead and forgets it (after DeleteGroups or once its offsets expired). */
  removeGroup(group: Group): void {
    group.transition('Dead', this.clock.now());
    this.cancelTimers(group);
    if (this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
  }

  /** Stops serving: every waiting JoinGroup/SyncGroup is answered NOT_COORDINATOR and all timers stop. */
  shutdown(): void {
    this.active = false;
    for (const group of this.groups.values()) {
      for (const m of group.members.values()) {
        this.answerJoin(m, joinError(m.memberId, ErrorCode.NOT_COORDINATOR));
        this.answerSync(m, syncError(ErrorCode.NOT_COORDINATOR));
      }
      this.cancelTimers(group);
    }
  }

  // ---------------------------------------------------------------- JoinGroup

  joinGroup(req: JoinRequest): Promise<JoinResult> {
    if (!this.active) return Promise.resolve(joinError(req.memberId, ErrorCode.NOT_COORDINATOR));
    if (req.groupId === '') return Promise.resolve(joinError(req.memberId, ErrorCode.INVALID_GROUP_ID));
    if (req.sessionTimeoutMs < this.config.minSessionTimeoutMs || req.sessionTimeoutMs > this.config.maxSessionTimeoutMs) {
      return Promise.resolve(joinError(req.memberId, ErrorCode.INVALID_SESSION_TIMEOUT));
    }
    if (req.memberId === '') {
      const group = this.getOrCreateGroup(req.groupId);
      const result = this.joinUnknownMember(group, req);
      this.dropIfUnused(group);
      return result;
    }
    const group = this.groups.get(req.groupId);
    if (!group) return Promise.resolve(joinError(req.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    return this.joinKnownMember(group, req);
  }

  /** Overridden by the offsets side: whether the group has committed offsets (keeps it listed). */
  hasOffsets: (groupId: string) => boolean = () => false;

  /** Overridden by the offsets side: durably stores a group's membership; resolves with an error code. */
  persistGroup: (groupId: string, value: GroupMetadataValue) => Promise<number> = () => Promise.resolve(ErrorCode.NONE);

  /** Takes over a group loaded from storage: every member's session timer starts now, as in Kafka. */
  loadGroup(group: Group): void {
    this.groups.set(group.groupId, group);
    for (const m of group.members.values()) this.scheduleHeartbeat(group, m);
    if (group.members.size > this.config.maxSize) this.prepareRebalance(group, `loaded with ${group.members.size} members, over group.max.size`);
  }

  private joinUnknownMember(group: Group, req: JoinRequest): Promise<JoinResult> {
    if (group.state === 'Dead') return Promise.resolve(joinError('', ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols)) return Promise.resolve(joinError('', ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    const known = req.groupInstanceId !== null && group.staticMembers.has(req.groupInstanceId);
    if (!known && group.members.size + group.pendingMembers.size >= this.config.maxSize) {
      return Promise.resolve(joinError('', ErrorCode.GROUP_MAX_SIZE_REACHED));
    }
    const newMemberId = `${req.groupInstanceId ?? req.clientId}-${randomUUID()}`;
    if (req.groupInstanceId !== null) return this.joinStaticMember(group, req, newMemberId);
    if (req.requireKnownMemberId) {
      const timer = this.clock.schedule(req.sessionTimeoutMs, () => this.expirePendingMember(group, newMemberId));
      group.pendingMembers.set(newMemberId, timer);
      return Promise.resolve(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
    }
    return this.addMemberAndRebalance(group, newMemberId, req);
  }

  private joinStaticMember(group: Group, req: JoinRequest, newMemberId: string): Promise<JoinResult> {
    const instanceId = req.groupInstanceId as string;
    const oldMemberId = group.staticMembers.get(instanceId);
    if (oldMemberId === undefined) return this.addMemberAndRebalance(group, newMemberId, req);
    const old = group.members.get(oldMemberId);
    if (!old) return this.addMemberAndRebalance(group, newMemberId, req);
    // The old incarnation of this instance is fenced: its in-flight join or sync ends now.
    this.answerJoin(old, joinError(oldMemberId, ErrorCode.FENCED_INSTANCE_ID));
    this.answerSync(old, syncError(ErrorCode.FENCED_INSTANCE_ID));
    const oldLeader = group.leaderId;
    const member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
    const previous: MemberSettings = { protocols: member.protocols, rebalanceTimeoutMs: member.rebalanceTimeoutMs, sessionTimeoutMs: member.sessionTimeoutMs, clientId: member.clientId, clientHost: member.clientHost };
    this.log.info('static member rejoined with a new member id', { group: group.groupId, instanceId, oldMemberId, newMemberId });
    switch (group.state) {
      case 'Stable': {
        this.updateMember(member, req);
        if (group.selectProtocol() === group.protocolName) {
          // Nothing the assignment depends on changed: no rebalance, the member keeps its assignment.
          this.scheduleHeartbeat(group, member);
          const leaderRejoined = oldLeader === oldMemberId;
          const skip = leaderRejoined && req.supportsSkipAssignment;
          return this.persistStaticMember(group, instanceId, oldMemberId, member, previous, {
            errorCode: ErrorCode.NONE,
            generationId: group.generationId,
            protocolType: group.protocolType,
            protocolName: group.protocolName,
            // Before v9 a rejoining leader is given the old leader id so it does not run a futile assignment.
            leader: skip ? newMemberId : (oldLeader ?? ''),
            skipAssignment: skip,
            memberId: newMemberId,
            members: skip ? group.memberList() : [],
          });
        }
        return this.updateMemberAndRebalance(group, member, req);
      }
      case 'CompletingRebalance':
      case 'PreparingRebalance':
        // The leader may already be assigning to the old member id: rebalance so the new id gets partitions.
        return this.updateMemberAndRebalance(group, member, req);
      default:
        return Promise.resolve(joinError(newMemberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  private joinKnownMember(group: Group, req: JoinRequest): Promise<JoinResult> {
    const { memberId } = req;
    if (group.state === 'Dead') return Promise.resolve(joinError(memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
    if (!group.supportsProtocols(req.protocolType, req.protocols)) return Promise.resolve(joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    const pending = group.pendingMembers.get(memberId);
    if (pending) {
      pending.cancel();
      group.pendingMembers.delete(memberId);
      return this.addMemberAndRebalance(group, memberId, req);
    }
    if (group.isStaticMemberFenced(req.groupInstanceId, memberId)) return Promise.resolve(joinError(memberId, ErrorCode.FENCED_INSTANCE_ID));
    const member = group.members.get(memberId);
    if (!member || (req.groupInstanceId !== null && !group.staticMembers.has(req.groupInstanceId))) {
      return Promise.resolve(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
    switch (group.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(group, member, req);
      case 'CompletingRebalance':
        if (member.sameProtocols(req.protocols)) return Promise.resolve(this.currentJoinResult(group, member, group.isLeader(memberId)));
        return this.updateMemberAndRebalance(group, member, req);
      case 'Stable':
        if (group.isLeader(memberId) || !member.sameProtocols(req.protocols)) return this.updateMemberAndRebalance(group, member, req);
        this.scheduleHeartbeat(group, member);
        return Promise.resolve(this.currentJoinResult(group, member, false));
      default:
        return Promise.resolve(joinError(memberId, ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  /**
   * Stores the static member's new member id before answering, so a restart does not fence it; if that
   * fails, the old member id comes back (as Kafka reverts it) and the join gets the error.
   */
  private async persistStaticMember(group: Group, instanceId: string, oldMemberId: string, member: Member, previous: MemberSettings, result: JoinResult): Promise<JoinResult> {
    const code = await this.persistGroup(group.groupId, groupMetadataOf(group, group.stateSince));
    if (code === ErrorCode.NONE) return result;
    if (group.members.get(member.memberId) === member && group.staticMembers.get(instanceId) === member.memberId) {
      Object.assign(member, previous);
      group.replaceStaticMember(instanceId, member.memberId, oldMemberId);
    }
    return joinError(result.memberId, code);
  }

  private currentJoinResult(group: Group, member: Member, withMembers: boolean): JoinResult {
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? '',
      skipAssignment: false,
      memberId: member.memberId,
      members: withMembers ? group.memberList() : [],
    };
  }

  private addMemberAndRebalance(group: Group, memberId: string, req: JoinRequest): Promise<JoinResult> {
    const member = new Member(memberId, req.groupInstanceId, req.clientId, req.clientHost, req.rebalanceTimeoutMs, req.sessionTimeoutMs, req.protocolType, req.protocols);
    member.isNew = true;
    const result = new Promise<JoinResult>((resolve) => (member.awaitingJoin = resolve));
    group.add(member);
    if (group.initialDelay) group.initialDelay.newMemberAdded = true;
    this.scheduleHeartbeat(group, member);
    this.log.debug('member joined', { group: group.groupId, memberId, groupInstanceId: req.groupInstanceId });
    this.maybePrepareRebalance(group, `member ${memberId} joined`);
    return result;
  }

  private updateMember(member: Member, req: JoinRequest): void {
    member.protocols = req.protocols;
    member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    member.sessionTimeoutMs = req.sessionTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
  }

  private updateMemberAndRebalance(group: Group, member: Member, req: JoinRequest): Promise<JoinResult> {
    this.updateMember(member, req);
    // A retried JoinGroup replaces the one still waiting; the older request is told to rejoin.
    this.answerJoin(member, joinError(member.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
    const result = new Promise<JoinResult>((resolve) => (member.awaitingJoin = resolve));
    this.maybePrepareRebalance(group, `member ${member.memberId} rejoined`);
    return result;
  }

  private maybePrepareRebalance(group: Group, reason: string): void {
    if (group.state === 'Stable' || group.state === 'CompletingRebalance' || group.state === 'Empty') this.prepareRebalance(group, reason);
    else if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
  }

  private prepareRebalance(group: Group, reason: string): void {
    if (group.state === 'CompletingRebalance') {
      for (const m of group.members.values()) {
        m.assignment = EMPTY;
        this.answerSync(m, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      }
    }
    group.syncTimer?.cancel();
    group.syncTimer = undefined;
    group.pendingSync.clear();
    group.joinTimer?.cancel();
    const wasEmpty = group.state === 'Empty';
    group.transition('PreparingRebalance', this.clock.now());
    this.log.info('preparing to rebalance group', { group: group.groupId, generation: group.generationId, reason });
    const delay = this.config.initialRebalanceDelayMs;
    if (wasEmpty && delay > 0) {
      group.initialDelay = { delayMs: delay, remainingMs: Math.max(group.rebalanceTimeoutMs() - delay, 0), newMemberAdded: false };
      group.joinTimer = this.clock.schedule(delay, () => this.onInitialDelay(group));
    } else {
      group.initialDelay = undefined;
      group.joinTimer = this.clock.schedule(group.rebalanceTimeoutMs(), () => this.completeJoin(group));
      this.tryCompleteJoin(group);
    }
  }

  private onInitialDelay(group: Group): void {
    const d = group.initialDelay;
    if (!d || group.state !== 'PreparingRebalance') return;
    if (d.newMemberAdded && d.remainingMs > 0) {
      const next = Math.min(d.delayMs, d.remainingMs);
      group.initialDelay = { delayMs: d.delayMs, remainingMs: Math.max(d.remainingMs - next, 0), newMemberAdded: false };
      group.joinTimer = this.clock.schedule(next, () => this.onInitialDelay(group));
      return;
    }
    this.completeJoin(group);
  }

  private tryCompleteJoin(group: Group): void {
    if (group.state === 'PreparingRebalance' && !group.initialDelay && group.allMembersJoined()) this.completeJoin(group);
  }

  /** Ends the join phase: drops dynamic members that did not rejoin and starts the next generation. */
  private completeJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance') return;
    group.joinTimer?.cancel();
    group.joinTimer = undefined;
    group.initialDelay = undefined;
    for (const m of [...group.members.values()]) {
      if (!m.awaitingJoin && m.groupInstanceId === null) {
        this.log.info('removing member that did not rejoin in time', { group: group.groupId, memberId: m.memberId });
        group.remove(m.memberId);
      }
    }
    const joined = [...group.members.values()].filter((m) => m.awaitingJoin);
    if (group.members.size > 0 && joined.length === 0) {
      // Only static members that have not rejoined are left: wait for them or for their session timeouts.
      group.joinTimer = this.clock.schedule(group.rebalanceTimeoutMs(), () => this.completeJoin(group));
      return;
    }
    if (group.leaderId === undefined || !group.members.get(group.leaderId)?.awaitingJoin) group.leaderId = joined[0]?.memberId;
    group.generationId++;
    const now = this.clock.now();
    if (group.members.size === 0) {
      group.protocolName = null;
      group.transition('Empty', now);
      this.log.info('group is empty', { group: group.groupId, generation: group.generationId });
      void this.persistGroup(group.groupId, groupMetadataOf(group, now));
      return;
    }
    group.protocolName = group.selectProtocol();
    group.transition('CompletingRebalance', now);
    this.log.info('group completed its join phase', { group: group.groupId, generation: group.generationId, members: group.members.size, protocol: group.protocolName, leader: group.leaderId });
    for (const m of joined) {
      m.isNew = false;
      this.scheduleHeartbeat(group, m);
      this.answerJoin(m, this.currentJoinResult(group, m, group.isLeader(m.memberId)));
    }
    for (const id of group.members.keys()) group.pendingSync.add(id);
    const generation = group.generationId;
    group.syncTimer = this.clock.schedule(group.rebalanceTimeoutMs(), () => this.onSyncTimeout(group, generation));
  }

  private onSyncTimeout(group: Group, generation: number): void {
    group.syncTimer = undefined;
    if (group.generationId !== generation || (group.state !== 'CompletingRebalance' && group.state !== 'Stable')) return;
    if (group.pendingSync.size === 0) return;
    for (const id of [...group.pendingSync]) {
      this.log.info('removing member that did not sync in time', { group: group.groupId, memberId: id });
      const m = group.members.get(id);
      if (m) this.removeMember(group, m, false);
    }
    this.prepareRebalance(group, 'members did not sync within the rebalance timeout');
  }

  // ---------------------------------------------------------------- SyncGroup

  syncGroup(req: SyncRequest): Promise<SyncResult> {
    if (!this.active) return Promise.resolve(syncError(ErrorCode.NOT_COORDINATOR));
    if (req.groupId === '') return Promise.resolve(syncError(ErrorCode.INVALID_GROUP_ID));
    const group = this.groups.get(req.groupId);
    if (!group) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    const error = this.validateMember(group, req.memberId, req.groupInstanceId, req.generationId);
    if (error !== ErrorCode.NONE) return Promise.resolve(syncError(error));
    if ((req.protocolType !== null && req.protocolType !== group.protocolType) || (req.protocolName !== null && req.protocolName !== group.protocolName)) {
      return Promise.resolve(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
    }
    const member = group.members.get(req.memberId) as Member;
    switch (group.state) {
      case 'PreparingRebalance':
        return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
      case 'CompletingRebalance': {
        this.markSynced(group, member);
        this.answerSync(member, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
        const result = new Promise<SyncResult>((resolve) => (member.awaitingSync = resolve));
        this.scheduleHeartbeat(group, member);
        if (group.isLeader(member.memberId)) void this.storeAssignment(group, new Map(req.assignments.map((a) => [a.memberId, a.assignment])));
        return result;
      }
      case 'Stable':
        this.markSynced(group, member);
        this.scheduleHeartbeat(group, member);
        return Promise.resolve({ errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment });
      default:
        return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    }
  }

  /**
   * The leader's assignment is stored with the group's membership first (Kafka's GroupMetadata record), then
   * the group becomes Stable and every waiting member gets its part. If the group moved on meanwhile (a
   * member left, a new rebalance began) the result is dropped; if storing failed, the members get the error
   * and the group rebalances, as in Kafka.
   */
  private async storeAssignment(group: Group, given: ReadonlyMap<string, Buffer>): Promise<void> {
    const generation = group.generationId;
    const code = await this.persistGroup(group.groupId, groupMetadataOf(group, this.clock.now(), (m) => given.get(m.memberId) ?? EMPTY));
    if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
    if (code !== ErrorCode.NONE) {
      for (const m of group.members.values()) this.answerSync(m, syncError(code));
      if (this.active) this.prepareRebalance(group, `storing the assignment failed with error ${code}`);
      return;
    }
    for (const m of group.members.values()) m.assignment = given.get(m.memberId) ?? EMPTY;
    group.transition('Stable', this.clock.now());
    this.log.info('group is stable', { group: group.groupId, generation: group.generationId, members: group.members.size });
    for (const m of group.members.values()) {
      this.answerSync(m, { errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: m.assignment });
    }
  }

  private markSynced(group: Group, member: Member): void {
    group.pendingSync.delete(member.memberId);
    if (group.pendingSync.size === 0) {
      group.syncTimer?.cancel();
      group.syncTimer = undefined;
    }
  }

  /**
   * Kafka's checks for a request from a group member, in Kafka's order: dead group, fenced static instance,
   * unknown member, wrong generation. Empty groups have no members, so they answer UNKNOWN_MEMBER_ID.
   */
  validateMember(group: Group, memberId: string, groupInstanceId: string | null, generationId: number): number {
    if (group.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (group.isStaticMemberFenced(groupInstanceId, memberId)) return ErrorCode.FENCED_INSTANCE_ID;
    if (!group.has(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    return ErrorCode.NONE;
  }

  // ---------------------------------------------------------------- Heartbeat

  heartbeat(groupId: string, memberId: string, groupInstanceId: string | null, generationId: number): number {
    if (!this.active) return ErrorCode.NOT_COORDINATOR;
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID;
    const group = this.groups.get(groupId);
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID;
    const error = this.validateMember(group, memberId, groupInstanceId, generationId);
    if (error !== ErrorCode.NONE) return error;
    const member = group.members.get(memberId) as Member;
    switch (group.state) {
      case 'PreparingRebalance':
        this.scheduleHeartbeat(group, member);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      case 'CompletingRebalance':
      case 'Stable':
        this.scheduleHeartbeat(group, member);
        return ErrorCode.NONE;
      default:
        return ErrorCode.UNKNOWN_MEMBER_ID;
    }
  }

  /** Restarts a member's session timer (a heartbeat, or any request proving the member is alive). */
  scheduleHeartbeat(group: Group, member: Member): void {
    member.heartbeatTimer?.cancel();
    const timeout = member.isNew && member.awaitingJoin ? this.config.newMemberJoinTimeoutMs : member.sessionTimeoutMs;
    member.heartbeatTimer = this.clock.schedule(timeout, () => this.onSessionExpired(group, member));
  }

  private onSessionExpired(group: Group, member: Member): void {
    if (group.members.get(member.memberId) !== member) return;
    // A member waiting in a join (bounded by the rebalance timeout) stays, unless it is new and never got through.
    if (member.awaitingJoin && !member.isNew) return this.scheduleHeartbeat(group, member);
    if (member.awaitingSync) return this.scheduleHeartbeat(group, member);
    this.log.info('member session expired', { group: group.groupId, memberId: member.memberId, sessionTimeoutMs: member.sessionTimeoutMs });
    this.removeMemberAndUpdateGroup(group, member, `member ${member.memberId} session expired`);
  }

  private expirePendingMember(group: Group, memberId: string): void {
    if (!group.pendingMembers.delete(memberId)) return;
    this.tryCompleteJoin(group);
    this.dropIfUnused(group);
  }

  /** Forgets a group that never formed (a failed first join, an abandoned MEMBER_ID_REQUIRED) and has no offsets. */
  private dropIfUnused(group: Group): void {
    if (group.state !== 'Empty' || group.members.size > 0 || group.pendingMembers.size > 0 || group.generationId !== 0) return;
    if (!this.hasOffsets(group.groupId) && this.groups.get(group.groupId) === group) this.groups.delete(group.groupId);
  }

  // ---------------------------------------------------------------- LeaveGroup

  leaveGroup(groupId: string, leaving: readonly MemberIdentity[]): LeaveResult {
    if (!this.active) return { errorCode: ErrorCode.NOT_COORDINATOR, members: [] };
    if (groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, members: [] };
    const group = this.groups.get(groupId);
    if (!group) return { errorCode: ErrorCode.NONE, members: leaving.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })) };
    if (group.state === 'Dead') return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const members = leaving.map((m) => ({ ...m, errorCode: this.leaveOne(group, m) }));
    return { errorCode: ErrorCode.NONE, members };
  }

  private leaveOne(group: Group, leaving: MemberIdentity): number {
    let memberId = leaving.memberId;
    if (memberId === '' && leaving.groupInstanceId !== null) {
      const found = group.staticMembers.get(leaving.groupInstanceId);
      if (found === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      memberId = found;
    } else if (group.isStaticMemberFenced(leaving.groupInstanceId, memberId)) {
      return ErrorCode.FENCED_INSTANCE_ID;
    }
    const pending = group.pendingMembers.get(memberId);
    if (pending) {
      pending.cancel();
      group.pendingMembers.delete(memberId);
      this.tryCompleteJoin(group);
      return ErrorCode.NONE;
    }
    const member = group.members.get(memberId);
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.log.info('member left the group', { group: group.groupId, memberId, groupInstanceId: member.groupInstanceId });
    this.removeMemberAndUpdateGroup(group, member, `member ${memberId} left`);
    return ErrorCode.NONE;
  }

  // ---------------------------------------------------------------- shared

  private removeMember(group: Group, member: Member, answer: boolean): void {
    if (answer) {
      this.answerJoin(member, joinError(member.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
      this.answerSync(member, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    }
    group.remove(member.memberId);
  }

  private removeMemberAndUpdateGroup(group: Group, member: Member, reason: string): void {
    this.removeMember(group, member, true);
    if (group.state === 'Stable' || group.state === 'CompletingRebalance') this.prepareRebalance(group, reason);
    else if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
  }

  private answerJoin(member: Member, result: JoinResult): void {
    const cb = member.awaitingJoin;
    member.awaitingJoin = undefined;
    cb?.(result);
  }

  private answerSync(member: Member, result: SyncResult): void {
    const cb = member.awaitingSync;
    member.awaitingSync = undefined;
    cb?.(result);
  }

  private cancelTimers(group: Group): void {
    group.joinTimer?.cancel();
    group.syncTimer?.cancel();
    group.joinTimer = group.syncTimer = undefined;
    for (const t of group.pendingMembers.values()) t.cancel();
    for (const m of group.members.values()) m.heartbeatTimer?.cancel();
  }
}
