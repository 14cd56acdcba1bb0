import { LogError } from './errors.js';

/**
 * The topic-config values the partition log uses, under Kafka's own names. Every key is optional; missing
 * keys take Kafka's defaults. The broker-wide configuration resolves strings to these types before calling.
 * Values above Number.MAX_SAFE_INTEGER (Kafka's Long.MAX_VALUE) mean "never".
 */
export interface LogTopicConfig {
  'segment.bytes'?: number;
  'segment.ms'?: number;
  /** -1 keeps data forever. */
  'retention.ms'?: number;
  /** -1 means no size limit. */
  'retention.bytes'?: number;
  'flush.messages'?: number;
  'flush.ms'?: number;
  'index.interval.bytes'?: number;
  'message.timestamp.type'?: 'CreateTime' | 'LogAppendTime';
  /** cleanup.policy includes compact: the log cleaner keeps the latest record per key. */
  compact?: boolean;
  'delete.retention.ms'?: number;
  'min.compaction.lag.ms'?: number;
  'max.compaction.lag.ms'?: number;
  'min.cleanable.dirty.ratio'?: number;
}

/** The resolved, validated and frozen form. `Infinity` stands for "never" / "unlimited". */
export interface LogConfig {
  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly retentionMs: number;
  readonly retentionBytes: number;
  readonly flushMessages: number;
  readonly flushMs: number;
  readonly indexIntervalBytes: number;
  readonly messageTimestampType: 'CreateTime' | 'LogAppendTime';
  readonly compact: boolean;
  /** How long tombstones and emptied transaction markers survive after the cleaner first saw them. */
  readonly deleteRetentionMs: number;
  readonly minCompactionLagMs: number;
  readonly maxCompactionLagMs: number;
  readonly minCleanableDirtyRatio: number;
}

/** Kafka's defaults: 1 GiB segments, 7-day segments and retention, no explicit fsync, 4 KiB index interval. */
export const LOG_DEFAULTS: LogConfig = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: Infinity,
  flushMessages: Infinity,
  flushMs: Infinity,
  indexIntervalBytes: 4096,
  messageTimestampType: 'CreateTime',
  compact: false,
  deleteRetentionMs: 24 * 60 * 60 * 1000,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Infinity,
  minCleanableDirtyRatio: 0.5,
});

/** Smallest segment Kafka accepts (log.segment.bytes has at least 14 bytes; we need room for one header). */
const MIN_SEGMENT_BYTES = 14;
/** Positions in the offset index are int32, so a segment can't exceed 2 GiB - 1. */
const MAX_SEGMENT_BYTES = 0x7fffffff;

function count(name: string, value: number | undefined, fallback: number, min: number, negativeIsUnlimited: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new LogError('INVALID_CONFIG', `${name} must be a number, got ${String(value)}`);
  }
  if (negativeIsUnlimited && value < 0) {
    if (value !== -1) throw new LogError('INVALID_CONFIG', `${name} must be -1 (unlimited) or >= 0, got ${value}`);
    return Infinity;
  }
  if (value < min) throw new LogError('INVALID_CONFIG', `${name} must be >= ${min}, got ${value}`);
  return value > Number.MAX_SAFE_INTEGER ? Infinity : Math.floor(value);
}

function ratio(value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw new LogError('INVALID_CONFIG', `min.cleanable.dirty.ratio must be a number in [0, 1], got ${String(value)}`);
  }
  return value;
}

/** Resolves topic configs into a LogConfig, validating ranges the way Kafka's LogConfig does. */
export function resolveLogConfig(topic: LogTopicConfig = {}, defaults: LogConfig = LOG_DEFAULTS): LogConfig {
  const segmentBytes = count('segment.bytes', topic['segment.bytes'], defaults.segmentBytes, MIN_SEGMENT_BYTES, false);
  if (segmentBytes > MAX_SEGMENT_BYTES) {
    throw new LogError('INVALID_CONFIG', `segment.bytes must be <= ${MAX_SEGMENT_BYTES} (int32 file positions), got ${segmentBytes}`);
  }
  const type = topic['message.timestamp.type'] ?? defaults.messageTimestampType;
  if (type !== 'CreateTime' && type !== 'LogAppendTime') {
    throw new LogError('INVALID_CONFIG', `message.timestamp.type must be CreateTime or LogAppendTime, got ${String(type)}`);
  }
  return Object.freeze({
    segmentBytes,
    segmentMs: count('segment.ms', topic['segment.ms'], defaults.segmentMs, 1, false),
    retentionMs: count('retention.ms', topic['retention.ms'], defaults.retentionMs, 0, true),
    retentionBytes: count('retention.bytes', topic['retention.bytes'], defaults.retentionBytes, 0, true),
    flushMessages: count('flush.messages', topic['flush.messages'], defaults.flushMessages, 1, false),
    flushMs: count('flush.ms', topic['flush.ms'], defaults.flushMs, 0, false),
    indexIntervalBytes: count('index.interval.bytes', topic['index.interval.bytes'], defaults.indexIntervalBytes, 0, false),
    messageTimestampType: type,
    compact: topic.compact ?? defaults.compact,
    deleteRetentionMs: count('delete.retention.ms', topic['delete.retention.ms'], defaults.deleteRetentionMs, 0, false),
    minCompactionLagMs: count('min.compaction.lag.ms', topic['min.compaction.lag.ms'], defaults.minCompactionLagMs, 0, false),
    maxCompactionLagMs: count('max.compaction.lag.ms', topic['max.compaction.lag.ms'], defaults.maxCompactionLagMs, 1, false),
    minCleanableDirtyRatio: ratio(topic['min.cleanable.dirty.ratio'], defaults.minCleanableDirtyRatio),
  });
}
