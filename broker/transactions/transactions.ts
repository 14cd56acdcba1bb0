/**
 * The transaction coordinator as the broker runs it: opens `<log.dirs>/__transaction_state`, connects the
 * coordinator to the partition logs (markers go through the PartitionAppender, in order with data), to the
 * producer id source and to the committed-offsets store, finishes what a crash left behind, and runs the
 * timeout check.
 */
import { join } from 'node:path';
import type { BrokerConfig } from '../config/settings.js';
import type { OffsetStore } from '../groups/offset-store.js';
import type { Logger } from '../logger.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { PartitionAppender } from '../producers/partition-appender.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { TxnCoordinator } from './txn-coordinator.js';
import { TXN_STATE_DIR, TxnStateStore } from './txn-state-store.js';

export type TxnSettings = Pick<BrokerConfig, 'transaction.max.timeout.ms' | 'transaction.abort.timed.out.transaction.cleanup.interval.ms' | 'transactional.id.expiration.ms'>;

export interface TransactionsOptions {
  readonly dataDir: string;
  readonly settings: TxnSettings;
  readonly metadata: MetadataStore;
  readonly topics: TopicManager;
  readonly appender: PartitionAppender;
  readonly offsets: OffsetStore;
  readonly log: Logger;
}

export class Transactions {
  private closing: Promise<void> | undefined;

  private constructor(
    readonly coordinator: TxnCoordinator,
    private readonly store: TxnStateStore,
  ) {}

  static async open(o: TransactionsOptions): Promise<Transactions> {
    const store = await TxnStateStore.open(join(o.dataDir, TXN_STATE_DIR));
    const coordinator = new TxnCoordinator(
      {
        store,
        allocateProducerId: () => o.metadata.allocateProducerId(),
        partitionExists: (topic, partition) => {
          const t = o.topics.getTopic(topic);
          return t !== undefined && partition >= 0 && partition < t.partitions;
        },
        writeMarker: async (topic, partition, marker) => {
          const t = o.topics.getTopic(topic);
          if (t === undefined || partition >= t.partitions) return false;
          const log = o.topics.partitionLog(topic, partition) ?? (await o.topics.logs.getOrCreate(topic, partition, o.topics.logConfigFor(t.configs)));
          await o.appender.appendMarker(log, marker);
          return true;
        },
        commitOffsets: (group, offsets, nowMs) =>
          o.offsets.write(
            group,
            offsets.map((p) => ({ topic: p.topic, partition: p.partition, value: { offset: p.offset, leaderEpoch: p.leaderEpoch, metadata: p.metadata, commitTimestamp: nowMs, expireTimestamp: -1 } })),
          ),
      },
      {
        maxTimeoutMs: o.settings['transaction.max.timeout.ms'],
        abortCheckIntervalMs: o.settings['transaction.abort.timed.out.transaction.cleanup.interval.ms'],
        idExpirationMs: o.settings['transactional.id.expiration.ms'],
      },
      o.log,
    );
    await coordinator.recover();
    coordinator.start();
    return new Transactions(coordinator, store);
  }

  /** Stops the timeout check, waits for running operations, closes the state log. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.coordinator.stop();
      await this.store.close();
    })();
    return this.closing;
  }
}
