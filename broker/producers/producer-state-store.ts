/**
 * Persistence of a partition's idempotent-producer state, so that dedupe survives a restart and a kill -9.
 *
 * A snapshot file in the partition directory holds the state as of a log offset. Loading reads the snapshot
 * and replays the batch headers from its offset to the log end: every batch header carries producerId,
 * epoch and baseSequence, so the replay is exact. A snapshot whose offset is beyond the log end (the log
 * lost unflushed data in a power loss) or that cannot be parsed is ignored and the whole log is replayed.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ATTR_CONTROL, ATTR_TRANSACTIONAL, BATCH_HEADER_SIZE, BATCH_OFFSETS } from '../../protocol/record-batch/header.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { writeFileAtomic } from '../log/files.js';
import type { PartitionLog } from '../log/partition-log.js';
import { PartitionTxns, type SerializedTxn } from './partition-txns.js';
import { ProducerStateTable, type SerializedProducer } from './producer-state.js';

export const PRODUCER_SNAPSHOT_FILE = 'producer-state.snapshot.json';
/** Version 2 adds the partition's open and aborted transactions; version 1 files (no transactions) still load. */
const SNAPSHOT_VERSION = 2;
/** Bytes read per step when replaying the log. */
const REPLAY_CHUNK = 4 * 1024 * 1024;

interface SnapshotFile {
  version: number;
  /** The log end offset the state corresponds to: replay starts here. */
  offset: number;
  producers: SerializedProducer[];
  txns?: { open: SerializedTxn[]; aborted: SerializedTxn[] };
}

export interface LoadedProducerState {
  table: ProducerStateTable;
  /** Offset of the snapshot used, or undefined if none was usable. */
  snapshotOffset: number | undefined;
  /** Why a snapshot present on disk was not used. */
  discarded?: string;
  replayedBatches: number;
}

export async function writeProducerSnapshot(dir: string, offset: number, producers: SerializedProducer[], txns?: SnapshotFile['txns']): Promise<void> {
  const body: SnapshotFile = { version: SNAPSHOT_VERSION, offset, producers, ...(txns !== undefined ? { txns } : {}) };
  await writeFileAtomic(dir, join(dir, PRODUCER_SNAPSHOT_FILE), Buffer.from(JSON.stringify(body)));
}

/** Reads the snapshot; undefined if there is none, an error message if it is unusable. */
export async function readProducerSnapshot(dir: string): Promise<{ offset: number; table: ProducerStateTable } | string | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, PRODUCER_SNAPSHOT_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<SnapshotFile>;
    if (parsed.version !== SNAPSHOT_VERSION && parsed.version !== 1) return `snapshot version ${String(parsed.version)} is not ${SNAPSHOT_VERSION}`;
    if (!Number.isSafeInteger(parsed.offset) || (parsed.offset as number) < 0) return `snapshot offset ${String(parsed.offset)} is not an offset`;
    return { offset: parsed.offset as number, table: ProducerStateTable.fromJSON(parsed.producers, PartitionTxns.fromJSON(parsed.txns)) };
  } catch (err) {
    return `snapshot cannot be parsed: ${(err as Error).message}`;
  }
}

/**
 * Replays the idempotent data batches and the transaction markers of `log` in [from, log end) into
 * `table`. Returns the number of batches recorded.
 */
export async function replayProducerState(log: PartitionLog, table: ProducerStateTable, from: number, nowMs: number): Promise<number> {
  let offset = Math.max(from, log.logStartOffset);
  let recorded = 0;
  while (offset < log.logEndOffset) {
    const r = await log.read(offset, REPLAY_CHUNK, { minOneBatch: true });
    if (r.records.length === 0) break;
    for (const b of iterateBatches(r.records)) {
      if (b.lastOffset < BigInt(offset) || b.end - b.start < BATCH_HEADER_SIZE) continue;
      const buf = r.records;
      const producerId = buf.readBigInt64BE(b.start + BATCH_OFFSETS.producerId);
      const firstSeq = buf.readInt32BE(b.start + BATCH_OFFSETS.baseSequence);
      const attributes = buf.readInt16BE(b.start + BATCH_OFFSETS.attributes);
      const epoch = buf.readInt16BE(b.start + BATCH_OFFSETS.producerEpoch);
      if (producerId >= 0n && (attributes & ATTR_CONTROL) !== 0) {
        const control = decodeRecordBatch(buf.subarray(b.start, b.end), 0, { verifyCrc: false }).control;
        if (control !== null && control.kind !== 'other') {
          table.recordMarker(producerId, epoch, Number(b.baseOffset), control.kind === 'commit', control.coordinatorEpoch ?? -1, nowMs);
          recorded++;
        }
        continue;
      }
      if (producerId < 0n || firstSeq < 0) continue;
      table.record(
        {
          producerId,
          epoch,
          firstSeq,
          offsetCount: buf.readInt32BE(b.start + BATCH_OFFSETS.lastOffsetDelta) + 1,
          transactional: (attributes & ATTR_TRANSACTIONAL) !== 0,
        },
        Number(b.baseOffset),
        Number(b.lastOffset),
        nowMs,
      );
      recorded++;
    }
    if (r.nextOffset <= offset) break;
    offset = r.nextOffset;
  }
  return recorded;
}

/** The producer state of `log`: its snapshot (if usable) plus a replay of the log after it. */
export async function loadProducerState(log: PartitionLog, nowMs: number): Promise<LoadedProducerState> {
  const snap = await readProducerSnapshot(log.dir);
  let table = new ProducerStateTable();
  let snapshotOffset: number | undefined;
  let discarded: string | undefined;
  if (typeof snap === 'string') {
    discarded = snap;
  } else if (snap !== undefined) {
    if (snap.offset > log.logEndOffset) {
      discarded = `snapshot is at offset ${snap.offset} but the log ends at ${log.logEndOffset} (unflushed data was lost)`;
    } else {
      table = snap.table;
      snapshotOffset = snap.offset;
    }
  }
  const replayedBatches = await replayProducerState(log, table, snapshotOffset ?? log.logStartOffset, nowMs);
  return { table, snapshotOffset, replayedBatches, ...(discarded !== undefined ? { discarded } : {}) };
}
