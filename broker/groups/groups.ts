/**
 * The group coordinator as the broker runs it: opens the committed-offsets log in
 * `<log.dirs>/__consumer_offsets` (offsets and group membership, as Kafka's __consumer_offsets), builds the
 * membership coordinator and the offset manager from the broker settings (which load the stored groups),
 * runs offsets retention, and shuts down in order (answer waiting joins, finish acknowledged writes, close
 * the log).
 */
import { join } from 'node:path';
import type { BrokerConfig } from '../config/settings.js';
import type { Logger } from '../logger.js';
import { systemClock, type Clock } from './clock.js';
import { GroupCoordinator, type GroupConfig } from './coordinator.js';
import { OffsetManager, type OffsetConfig } from './offset-manager.js';
import { OffsetStore, type OffsetStoreOptions } from './offset-store.js';

export const OFFSETS_DIR = '__consumer_offsets';

/** Kafka's fixed timeout for a new member whose first JoinGroup never completes. */
const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;

export type GroupSettings = Pick<
  BrokerConfig,
  | 'group.min.session.timeout.ms'
  | 'group.max.session.timeout.ms'
  | 'group.initial.rebalance.delay.ms'
  | 'group.max.size'
  | 'offsets.retention.minutes'
  | 'offsets.retention.check.interval.ms'
  | 'offset.metadata.max.bytes'
>;

export function groupConfigFrom(s: GroupSettings): GroupConfig {
  return {
    minSessionTimeoutMs: s['group.min.session.timeout.ms'],
    maxSessionTimeoutMs: s['group.max.session.timeout.ms'],
    initialRebalanceDelayMs: s['group.initial.rebalance.delay.ms'],
    maxSize: s['group.max.size'],
    newMemberJoinTimeoutMs: NEW_MEMBER_JOIN_TIMEOUT_MS,
  };
}

export function offsetConfigFrom(s: GroupSettings): OffsetConfig {
  return {
    retentionMs: s['offsets.retention.minutes'] * 60_000,
    retentionCheckIntervalMs: s['offsets.retention.check.interval.ms'],
    metadataMaxBytes: s['offset.metadata.max.bytes'],
  };
}

export class Groups {
  private closing: Promise<void> | undefined;

  private constructor(
    readonly coordinator: GroupCoordinator,
    readonly offsets: OffsetManager,
  ) {}

  static async open(dataDir: string, settings: GroupSettings, log: Logger, clock: Clock = systemClock, storeOptions: OffsetStoreOptions = {}): Promise<Groups> {
    const store = await OffsetStore.open(join(dataDir, OFFSETS_DIR), storeOptions);
    const coordinator = new GroupCoordinator(groupConfigFrom(settings), clock, log);
    const offsets = new OffsetManager(coordinator, store, offsetConfigFrom(settings), log);
    offsets.start();
    return new Groups(coordinator, offsets);
  }

  /** Stops coordinating: waiting joins and syncs get NOT_COORDINATOR, acknowledged commits reach disk, the log closes. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.coordinator.shutdown();
      this.offsets.stop();
      await this.offsets.idle();
      await this.offsets.store.close();
    })();
    return this.closing;
  }
}
