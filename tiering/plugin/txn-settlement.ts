/**
 * Settlement of transactions that were open when their rows reached the table (txn-deletes.ts): those rows
 * are hidden by `-open-txns` position deletes until the transaction ends. Once the last stable offset has
 * passed a segment, a commit replaces its undecided delete files by the final ones (the aborted rows only,
 * if any); every commit of the topic does this (iceberg-topic.ts picks the partitions, commit-segments.ts
 * settles them) for every partition that has undecided segments, and for copied segments whose transaction
 * ended before their first commit.
 */
import type { DataFile, PartitionData } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import { TieringError, type PartitionTransactions, type RemoteLogSegmentMetadata } from './api.js';
import type { PartitionManifest, SegmentEntry } from './partition-manifest.js';
import { isUndecidedDeletes, writeTxnDeletes } from './txn-deletes.js';

/** The broker's view of a partition's transactions over [from, to] (see api.ts TransactionSource). */
export type PartitionTxnLookup = (partition: number, fromOffset: number, toOffset: number) => Promise<PartitionTransactions | undefined>;

/** The topic's table settlement works on. */
export interface SettlementContext {
  readonly topic: string;
  readonly io: FileIO;
  readonly tableLocation: string;
  /** The partition tuple of each data file of a committed segment. */
  partitionTuples(partition: number, segment: SegmentEntry): Promise<Map<string, PartitionData>>;
}

/** Partitions with a committed segment whose rows of open transactions are hidden until they end. */
export function undecidedPartitions(manifests: Iterable<PartitionManifest>): number[] {
  return [...manifests].filter((m) => m.segments.some((s) => (s.deleteFiles ?? []).some(isUndecidedDeletes))).map((m) => m.partition);
}

/**
 * Settles the undecided segments of partition `p` (txn-deletes.ts) the last stable offset has passed:
 * into `update`, each one's `-open-txns` delete files are removed and the final ones (aborted rows only,
 * if any) added. Returns the segments as they are after the update and how many files it changes. The
 * removed files stay in storage for the older snapshots that name them (a reader may be planning from one
 * now); snapshot expiry deletes them with those snapshots.
 */
export async function settleSegments(ctx: SettlementContext, p: number, segments: readonly SegmentEntry[], update: SnapshotUpdate, txnsOf: PartitionTxnLookup | undefined): Promise<{ segments: SegmentEntry[]; changed: number }> {
  const out: SegmentEntry[] = [];
  let changed = 0;
  for (const s of segments) {
    const undecided = (s.deleteFiles ?? []).filter(isUndecidedDeletes);
    const txns = undecided.length === 0 || txnsOf === undefined ? undefined : await txnsOf(p, s.baseOffset, s.lastOffset);
    if (txns === undefined || txns.lastStableOffset <= s.lastOffset) {
      out.push(s);
      continue;
    }
    const tuples = await ctx.partitionTuples(p, s);
    const dataFiles = s.dataFiles.map((f) => {
      const partition = tuples.get(f);
      if (partition === undefined) throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${p}: data file ${f} of segment ${s.baseOffset}..${s.lastOffset} is not live in the table; re-tier the partition`);
      return { file_path: f, partition };
    });
    const { deletes } = await writeTxnDeletes(ctx.io, ctx.tableLocation, { lastOffset: s.lastOffset, dataFiles, indexFiles: s.indexFiles }, txns);
    for (const f of undecided) update.deleteFile(f);
    for (const d of deletes) update.addDeleteFile(d);
    changed += undecided.length + deletes.length;
    const { deleteFiles: _old, ...rest } = s;
    const kept = [...(s.deleteFiles ?? []).filter((f) => !isUndecidedDeletes(f)), ...deletes.map((d) => d.file_path)];
    out.push(kept.length > 0 ? { ...rest, deleteFiles: kept } : rest);
  }
  return { segments: out, changed };
}

/**
 * The final transactional deletes of a copied, uncommitted segment whose undecided ones were written while
 * a transaction in it was open, once the last stable offset has passed it; undefined while it has not.
 */
export async function settledDeletes(ctx: SettlementContext, p: number, s: RemoteLogSegmentMetadata, dataFiles: readonly DataFile[], txnsOf: PartitionTxnLookup | undefined): Promise<DataFile[] | undefined> {
  const txns = txnsOf === undefined ? undefined : await txnsOf(p, s.baseOffset, s.lastOffset);
  if (txns === undefined || txns.lastStableOffset <= s.lastOffset) return undefined;
  return (await writeTxnDeletes(ctx.io, ctx.tableLocation, { lastOffset: s.lastOffset, dataFiles, indexFiles: s.indexFiles }, txns)).deletes;
}
