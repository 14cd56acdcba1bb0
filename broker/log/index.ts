/** The partition log on local disk: segments of record batches v2, their indexes, recovery and retention. */
export { LogError, LOG_ERRORS, isLogError, type LogErrorCode } from './errors.js';
export { LOG_DEFAULTS, resolveLogConfig, type LogConfig, type LogTopicConfig } from './config.js';
export {
  PartitionLog,
  type AppendResult,
  type CanDeleteSegment,
  type ClosedSegment,
  type LogAppendTimeRewriter,
  type LogReadResult,
  type PartitionLogOptions,
  type ReadOptions,
  type RecordLocator,
  type SegmentInfo,
  type TimestampOffset,
} from './partition-log.js';
export { InlineWrites, type InlineWritesClock, type InlineWritesOptions } from './inline-writes.js';
export type { LogObserver } from './log-observer.js';
export type { RecoveryReport } from './log-recovery.js';
export { LogManager, partitionDirName, parsePartitionDirName, type ClosedSegmentEvent, type LogManagerOptions, type TopicPartition } from './log-manager.js';
