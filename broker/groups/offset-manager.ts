/**
 * Committed offsets as the group coordinator serves them: OffsetCommit with Kafka's membership checks,
 * OffsetFetch, DeleteGroups, OffsetDelete and offsets retention. Storage is the durable OffsetStore; this
 * class decides who may write what and when offsets expire.
 *
 * Retention (`offsets.retention.minutes`), as Kafka does since KIP-211: offsets of an Empty group expire
 * once that long has passed since both their last commit and the moment the group became empty (stored with
 * the group's membership, like Kafka's currentStateTimestamp; for a group with offsets only, such as one of
 * admin tools or assign() consumers, a restart counts as that moment, so it can only keep them longer). In
 * a Stable consumer group, offsets of topics no member subscribes to expire that long after their commit.
 * An explicit expiry from OffsetCommit v2-4 `retentionTimeMs` wins. A group left Empty without offsets is
 * forgotten.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Logger } from '../logger.js';
import type { Timer } from './clock.js';
import { CONSUMER_PROTOCOL_TYPE, subscribedTopics } from './consumer-protocol.js';
import type { GroupCoordinator } from './coordinator.js';
import type { Group } from './group.js';
import { groupFromMetadata, type GroupMetadataValue } from './group-metadata.js';
import { OffsetStoreError, type CommittedOffset, type OffsetStore, type OffsetWrite } from './offset-store.js';

export interface OffsetConfig {
  readonly retentionMs: number;
  readonly retentionCheckIntervalMs: number;
  /** Longest metadata string a commit may carry (offset.metadata.max.bytes). */
  readonly metadataMaxBytes: number;
}

export interface CommitPartition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
}

export interface CommitRequest {
  readonly groupId: string;
  /** -1 for a commit from outside group management (admin tools, kcat, assign() consumers). */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** OffsetCommit v2-4 retention override in ms, or -1. */
  readonly retentionTimeMs: number;
  readonly partitions: readonly CommitPartition[];
}

export interface FetchedOffset {
  readonly partition: number;
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
}

export interface FetchedTopic {
  readonly topic: string;
  readonly partitions: readonly FetchedOffset[];
}

export interface OffsetDeleteResult {
  readonly errorCode: number;
  /** Per requested partition, in request order. */
  readonly partitions: readonly number[];
}

export class OffsetManager {
  private retentionTimer: Timer | undefined;
  private expiring: Promise<void> | undefined;

  constructor(
    private readonly coordinator: GroupCoordinator,
    readonly store: OffsetStore,
    readonly config: OffsetConfig,
    private readonly log: Logger,
  ) {
    coordinator.hasOffsets = (groupId) => store.hasOffsets(groupId);
    coordinator.persistGroup = (groupId, value) =>
      store.writeGroupMetadata(groupId, value).then(
        () => ErrorCode.NONE,
        (err: unknown) => this.storeErrorCode(err, { group: groupId, what: 'group membership' }),
      );
    // After a restart, groups with stored membership come back as they were stored (Stable with their members,
    // or Empty); groups with only offsets come back Empty, as Kafka's coordinator loads them.
    for (const groupId of store.metadataGroups()) coordinator.loadGroup(groupFromMetadata(groupId, store.groupMetadata(groupId) as GroupMetadataValue));
    for (const groupId of store.groups()) coordinator.getOrCreateGroup(groupId);
  }

  /** Starts the periodic retention check. */
  start(): void {
    const tick = () => {
      this.retentionTimer = this.coordinator.clock.schedule(this.config.retentionCheckIntervalMs, () => {
        this.expireOffsets().then(tick, (err: unknown) => {
          this.log.error('offsets retention failed; retrying at the next interval', { err });
          tick();
        });
      });
    };
    tick();
  }

  stop(): void {
    this.retentionTimer?.cancel();
    this.retentionTimer = undefined;
  }

  /** Waits for a running retention pass (used on shutdown). */
  async idle(): Promise<void> {
    await this.expiring;
  }

  // ---------------------------------------------------------------- OffsetCommit

  /** Error code per partition, in request order. */
  async commit(req: CommitRequest): Promise<number[]> {
    const all = (code: number) => req.partitions.map(() => code);
    if (!this.coordinator.isActive) return all(ErrorCode.NOT_COORDINATOR);
    let group = this.coordinator.group(req.groupId);
    if (!group) {
      // No group: only a commit from outside group management may create one; otherwise it is a zombie.
      if (req.generationId >= 0) return all(ErrorCode.ILLEGAL_GENERATION);
      group = this.coordinator.getOrCreateGroup(req.groupId);
    }
    const error = this.validateCommit(group, req);
    if (error !== ErrorCode.NONE) return all(error);
    const member = group.members.get(req.memberId);
    if (member) this.coordinator.scheduleHeartbeat(group, member);

    const now = this.coordinator.clock.now();
    const expireTimestamp = req.retentionTimeMs > 0 ? now + req.retentionTimeMs : -1;
    const codes: number[] = [];
    const writes: OffsetWrite[] = [];
    for (const p of req.partitions) {
      if (p.metadata !== null && Buffer.byteLength(p.metadata, 'utf8') > this.config.metadataMaxBytes) {
        codes.push(ErrorCode.OFFSET_METADATA_TOO_LARGE);
        continue;
      }
      codes.push(ErrorCode.NONE);
      writes.push({
        topic: p.topic,
        partition: p.partition,
        value: { offset: p.offset, leaderEpoch: p.leaderEpoch, metadata: p.metadata, commitTimestamp: now, expireTimestamp },
      });
    }
    try {
      await this.store.write(req.groupId, writes);
    } catch (err) {
      const code = this.storeErrorCode(err, { group: req.groupId });
      return codes.map((c) => (c === ErrorCode.NONE ? code : c));
    }
    return codes;
  }

  /**
   * The membership check of TxnOffsetCommit (KIP-447): a producer that names a member and generation must
   * be that member of the current generation; one that names none (TxnOffsetCommit v0-2) is not checked.
   * Never creates a group. Also checks each partition's metadata length: returns an error per partition.
   */
  checkTxnCommit(groupId: string, generationId: number, memberId: string, groupInstanceId: string | null, metadata: readonly (string | null)[]): number[] {
    const all = (code: number) => metadata.map(() => code);
    if (!this.coordinator.isActive) return all(ErrorCode.NOT_COORDINATOR);
    const group = this.coordinator.group(groupId);
    if (generationId >= 0 || memberId !== '' || groupInstanceId !== null) {
      if (!group) return all(ErrorCode.ILLEGAL_GENERATION);
      const error = this.coordinator.validateMember(group, memberId, groupInstanceId, generationId);
      if (error !== ErrorCode.NONE) return all(error);
    }
    return metadata.map((m) => (m !== null && Buffer.byteLength(m, 'utf8') > this.config.metadataMaxBytes ? ErrorCode.OFFSET_METADATA_TOO_LARGE : ErrorCode.NONE));
  }

  private validateCommit(group: Group, req: CommitRequest): number {
    if (group.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (req.generationId >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
      const error = this.coordinator.validateMember(group, req.memberId, req.groupInstanceId, req.generationId);
      if (error !== ErrorCode.NONE) return error;
    } else if (group.state !== 'Empty') {
      // While the group has members, only members of the current generation may commit.
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    // The member has the new generation from JoinGroup but no assignment yet: it must finish the rebalance.
    if (group.state === 'CompletingRebalance') return ErrorCode.REBALANCE_IN_PROGRESS;
    return ErrorCode.NONE;
  }

  private storeErrorCode(err: unknown, context: Record<string, unknown>): number {
    if (err instanceof OffsetStoreError && err.code === 'CLOSED') return ErrorCode.NOT_COORDINATOR;
    this.log.error('committed-offsets log write failed', { ...context, err });
    return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  }

  // ---------------------------------------------------------------- OffsetFetch

  /**
   * The group's committed offsets for the given partitions (offset -1 where nothing is committed), or every
   * committed offset when `topics` is null.
   */
  fetch(groupId: string, topics: readonly { topic: string; partitions: readonly number[] }[] | null): { errorCode: number; topics: FetchedTopic[] } {
    if (!this.coordinator.isActive) return { errorCode: ErrorCode.NOT_COORDINATOR, topics: [] };
    const committed = this.store.groupOffsets(groupId);
    const toFetched = (partition: number, v: CommittedOffset | undefined): FetchedOffset =>
      v ? { partition, offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata } : { partition, offset: -1n, leaderEpoch: -1, metadata: '' };
    if (topics === null) {
      return {
        errorCode: ErrorCode.NONE,
        topics: [...committed].map(([topic, parts]) => ({ topic, partitions: [...parts].map(([p, v]) => toFetched(p, v)) })),
      };
    }
    return {
      errorCode: ErrorCode.NONE,
      topics: topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => toFetched(p, committed.get(t.topic)?.get(p))) })),
    };
  }

  // ---------------------------------------------------------------- DeleteGroups / OffsetDelete

  /** Deletes an empty group and its offsets; returns the error code for it. */
  async deleteGroup(groupId: string): Promise<number> {
    if (!this.coordinator.isActive) return ErrorCode.NOT_COORDINATOR;
    const group = this.coordinator.group(groupId);
    if (!group || group.state === 'Dead') return this.store.hasOffsets(groupId) ? this.dropGroup(groupId, undefined) : ErrorCode.GROUP_ID_NOT_FOUND;
    if (group.state !== 'Empty' || group.pendingMembers.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    return this.dropGroup(groupId, group);
  }

  private async dropGroup(groupId: string, group: Group | undefined): Promise<number> {
    try {
      await this.store.deleteGroup(groupId);
    } catch (err) {
      return this.storeErrorCode(err, { group: groupId });
    }
    // A member may have joined while the deletion was being written; then only the offsets go.
    if (group && group.state === 'Empty' && group.members.size === 0) this.coordinator.removeGroup(group);
    this.log.info('group deleted', { group: groupId });
    return ErrorCode.NONE;
  }

  /** Deletes some of a group's offsets, refusing topics the group still subscribes to. */
  async deleteOffsets(groupId: string, partitions: readonly { topic: string; partition: number }[]): Promise<OffsetDeleteResult> {
    const none = (errorCode: number): OffsetDeleteResult => ({ errorCode, partitions: [] });
    if (!this.coordinator.isActive) return none(ErrorCode.NOT_COORDINATOR);
    const group = this.coordinator.group(groupId);
    if (!group || group.state === 'Dead') return none(ErrorCode.GROUP_ID_NOT_FOUND);
    let subscribed: ReadonlySet<string> | undefined;
    if (group.state !== 'Empty') {
      if (group.protocolType !== CONSUMER_PROTOCOL_TYPE) return none(ErrorCode.NON_EMPTY_GROUP);
      subscribed = this.subscribedTopics(group) ?? ALL_TOPICS;
    }
    const codes: number[] = [];
    const writes: OffsetWrite[] = [];
    for (const { topic, partition } of partitions) {
      if (subscribed && (subscribed === ALL_TOPICS || subscribed.has(topic))) {
        codes.push(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
        continue;
      }
      codes.push(ErrorCode.NONE);
      if (this.store.get(groupId, topic, partition)) writes.push({ topic, partition, value: null });
    }
    try {
      await this.store.write(groupId, writes);
    } catch (err) {
      return none(this.storeErrorCode(err, { group: groupId }));
    }
    return { errorCode: ErrorCode.NONE, partitions: codes };
  }

  /** Topics the group's members subscribe to, or undefined if some member's subscription cannot be read. */
  private subscribedTopics(group: Group): Set<string> | undefined {
    const topics = new Set<string>();
    for (const m of group.members.values()) {
      const metadata = group.protocolName !== null ? m.metadataFor(group.protocolName) : m.protocols[0]?.metadata;
      const parsed = metadata ? subscribedTopics(metadata) : undefined;
      if (!parsed) return undefined;
      for (const t of parsed) topics.add(t);
    }
    return topics;
  }

  // ---------------------------------------------------------------- retention

  /** One retention pass; returns when expired offsets are durably deleted. */
  expireOffsets(): Promise<void> {
    this.expiring ??= this.runExpiry().finally(() => (this.expiring = undefined));
    return this.expiring;
  }

  private async runExpiry(): Promise<void> {
    const now = this.coordinator.clock.now();
    const { retentionMs } = this.config;
    let expiredTotal = 0;
    for (const group of [...this.coordinator.allGroups()]) {
      let isExpired: ((topic: string, v: CommittedOffset) => boolean) | undefined;
      if (group.state === 'Empty') {
        isExpired = (_topic, v) => (v.expireTimestamp >= 0 ? now >= v.expireTimestamp : now - Math.max(v.commitTimestamp, group.stateSince) >= retentionMs);
      } else if (group.state === 'Stable' && group.protocolType === CONSUMER_PROTOCOL_TYPE) {
        const subscribed = this.subscribedTopics(group);
        if (subscribed) {
          isExpired = (topic, v) => !subscribed.has(topic) && (v.expireTimestamp >= 0 ? now >= v.expireTimestamp : now - v.commitTimestamp >= retentionMs);
        }
      }
      if (isExpired) {
        const writes: OffsetWrite[] = [];
        for (const [topic, parts] of this.store.groupOffsets(group.groupId)) {
          for (const [partition, v] of parts) if (isExpired(topic, v)) writes.push({ topic, partition, value: null });
        }
        if (writes.length > 0) {
          await this.store.write(group.groupId, writes);
          expiredTotal += writes.length;
        }
      }
      const unused = () => group.state === 'Empty' && group.members.size === 0 && group.pendingMembers.size === 0 && !this.store.hasOffsets(group.groupId);
      if (unused()) {
        // Its stored membership goes too, so it does not come back at the next start.
        await this.store.deleteGroup(group.groupId);
        if (unused()) this.coordinator.removeGroup(group);
      }
    }
    if (expiredTotal > 0) this.log.info('expired committed offsets', { count: expiredTotal });
  }
}

const ALL_TOPICS: ReadonlySet<string> = new Set<string>();

/** What the offset handlers need to know about topics (TopicManager provides it). */
export interface TopicLookup {
  getTopic(name: string): { readonly partitions: number } | undefined;
}

export function partitionExists(topics: TopicLookup, topic: string, partition: number): boolean {
  const t = topics.getTopic(topic);
  return t !== undefined && partition >= 0 && partition < t.partitions;
}
