/**
 * What one partition adds to a tiering commit (iceberg-topic.ts commit): its committed segments whose open
 * transactions have ended since get their final deletes (txn-settlement.ts), and its copied segments go in
 * after them, each with its data files and position delete files. A segment's aborted transactional rows
 * are hidden in the snapshot that adds its data files (txn-deletes.ts); delete files written while a
 * transaction in it was open are settled if it has ended since; rows below a log start that DeleteRecords
 * moved into or past it before its commit stay hidden (hide-below.ts). Objects no snapshot will name are
 * handed back, for the caller to delete once the commit lands.
 */
import type { DataFile } from '../../iceberg/data-file.js';
import type { SnapshotUpdate } from '../../iceberg/transaction.js';
import { TieringError, type RemoteLogSegmentMetadata } from './api.js';
import { hideBelow, type RowsContext } from './hide-below.js';
import type { PartitionManifest, SegmentEntry } from './partition-manifest.js';
import { deletesOf } from './topic-runbook.js';
import { isTxnDeletes, isUndecidedDeletes } from './txn-deletes.js';
import { settledDeletes, settleSegments, type PartitionTxnLookup, type SettlementContext } from './txn-settlement.js';

/** What the commit plan needs of the topic. */
export interface CommitSegmentsContext {
  readonly topic: string;
  readonly settlement: SettlementContext;
  readonly rows: RowsContext;
  /** The data files copy() wrote for a segment, until it is committed. */
  pendingFiles(partition: number, baseOffset: number): readonly DataFile[] | undefined;
  /** The position delete files copy() wrote over a segment's transactional rows, until it is committed. */
  pendingDeletes(partition: number, baseOffset: number): readonly DataFile[] | undefined;
  /** Sizes of the table's data files (compaction plans with them): the added ones are set here. */
  readonly fileSizes: Map<string, number>;
}

/** One partition's part of a tiering commit. */
export interface PartitionCommit {
  /** The partition's history once the commit lands. */
  readonly next: PartitionManifest;
  /** How many files the commit adds or removes for it. */
  readonly files: number;
  /** Data files it adds (the upsert table learns their entries once it lands). */
  readonly addedFiles: readonly DataFile[];
  /** Objects no snapshot names: deleted once the commit lands. */
  readonly dropped: readonly string[];
}

/**
 * Adds to `update` what partition `p` (committed history `m`) gets in this commit: the settled deletes of
 * its committed segments and copied segments `list` (offset order, none of them committed). Undefined when
 * neither changes anything.
 */
export async function commitPartition(ctx: CommitSegmentsContext, p: number, m: PartitionManifest, list: readonly RemoteLogSegmentMetadata[], update: SnapshotUpdate, txnsOf: PartitionTxnLookup | undefined): Promise<PartitionCommit | undefined> {
  // Committed segments whose open transactions have ended since get their final deletes in this commit.
  const settled = await settleSegments(ctx.settlement, p, m.segments, update, txnsOf);
  if (list.length === 0) {
    if (settled.changed === 0) return undefined;
    // Only settled: the partition's committed offset stays, its history names the new delete files.
    return { next: { ...m, segments: settled.segments }, files: settled.changed, addedFiles: [], dropped: [] };
  }
  let files = settled.changed;
  let committed = m.committedOffset;
  const added: SegmentEntry[] = [];
  const addedFiles: DataFile[] = [];
  const dropped: string[] = [];
  for (const s of list) {
    const c = await commitSegment(ctx, p, m, committed, s, txnsOf);
    committed = s.lastOffset;
    dropped.push(...c.dropped);
    if (c.entry === undefined) continue;
    for (const f of c.dataFiles) {
      update.addFile(f);
      addedFiles.push(f);
      ctx.fileSizes.set(f.file_path, Number(f.file_size_in_bytes));
      files++;
    }
    for (const d of c.deletes) {
      update.addDeleteFile(d);
      files++;
    }
    added.push(c.entry);
  }
  // The first commit starts the remote log at its first segment, unless DeleteRecords already moved it higher.
  const logStartOffset = m.segments.length === 0 && m.committedOffset < 0 ? Math.max(m.logStartOffset, added[0]?.baseOffset ?? 0) : m.logStartOffset;
  return { next: { partition: p, logStartOffset, committedOffset: committed, segments: [...settled.segments, ...added] }, files, addedFiles, dropped };
}

/** One copied segment's part of a tiering commit. */
interface SegmentCommit {
  /** The segment in the partition's next history; undefined when DeleteRecords removed all of it before its commit. */
  readonly entry: SegmentEntry | undefined;
  /** Data files and position delete files the snapshot adds for it. */
  readonly dataFiles: readonly DataFile[];
  readonly deletes: readonly DataFile[];
  /** Objects of the segment no snapshot names: deleted once the commit lands. */
  readonly dropped: readonly string[];
}

/**
 * Plans copied segment `s` of partition `p` (committed history `m`) into the commit; `committed` is the
 * partition's committed offset with this commit's earlier segments. A segment that would leave the history
 * out of order throws OUT_OF_ORDER; one copied with delete files this table did not write (or without the
 * ones it wrote) throws CORRUPT_MANIFEST. Writes the settled and below-the-start delete files (not committed).
 */
async function commitSegment(ctx: CommitSegmentsContext, p: number, m: PartitionManifest, committed: number, s: RemoteLogSegmentMetadata, txnsOf: PartitionTxnLookup | undefined): Promise<SegmentCommit> {
  if (s.baseOffset <= committed) {
    throw new TieringError('OUT_OF_ORDER', `${ctx.topic}-${p} segment ${s.baseOffset}..${s.lastOffset} overlaps the committed history (up to ${committed}); re-copy it from the next uncommitted offset`);
  }
  // Objects of a segment deleted (DeleteRecords) before it was committed, and undecided delete files of a
  // segment settled before its first commit (no snapshot names them).
  const dropped: string[] = [];
  if (s.lastOffset < m.logStartOffset) {
    dropped.push(...s.dataFiles, ...s.indexFiles);
    return { entry: undefined, dataFiles: [], deletes: [], dropped };
  }
  let dataFiles = ctx.pendingFiles(p, s.baseOffset) ?? [];
  let entry: SegmentEntry = { baseOffset: s.baseOffset, lastOffset: s.lastOffset, maxTimestamp: s.maxTimestamp, sizeInBytes: s.sizeInBytes, dataFiles: s.dataFiles, indexFiles: s.indexFiles };
  // Aborted transactional rows are hidden in the same snapshot that adds their data files.
  let aborted = ctx.pendingDeletes(p, s.baseOffset) ?? [];
  if (aborted.length !== (s.deleteFiles ?? []).filter(isTxnDeletes).length) {
    throw new TieringError('CORRUPT_MANIFEST', `${ctx.topic}-${p} segment ${s.baseOffset}..${s.lastOffset} was copied with delete files this table did not write (or lost them); copy it again`);
  }
  if (aborted.some((d) => isUndecidedDeletes(d.file_path))) {
    // Copied while a transaction in it was open: if it has ended since (its marker may be in a segment of
    // this very commit), the segment goes in with its final deletes; the undecided ones were never
    // committed and are deleted once this commit lands.
    const final = await settledDeletes(ctx.settlement, p, s, dataFiles, txnsOf);
    if (final !== undefined) {
      dropped.push(...aborted.map((d) => d.file_path));
      aborted = final;
    }
  }
  const deletes: DataFile[] = [];
  if (s.baseOffset < m.logStartOffset) {
    // DeleteRecords moved the start into this segment before it was committed: its rows below stay hidden,
    // and its files wholly below are not added at all.
    const partitions = new Map(dataFiles.map((f) => [f.file_path, f.partition]));
    const hidden = await hideBelow(ctx.rows, p, entry, m.logStartOffset, partitions);
    deletes.push(...hidden.deletes);
    entry = hidden.entry;
    dataFiles = dataFiles.filter((f) => !hidden.removedData.includes(f.file_path));
    // The aborted rows of data files wholly below the start leave with them.
    const gone = aborted.filter((d) => hidden.removedData.some((f) => deletesOf(f, d.file_path)));
    aborted = aborted.filter((d) => !gone.includes(d));
    dropped.push(...hidden.removedData, ...hidden.removedIndexes, ...gone.map((d) => d.file_path));
  }
  deletes.push(...aborted);
  if (deletes.length > 0) entry = { ...entry, deleteFiles: deletes.map((d) => d.file_path) };
  return { entry, dataFiles, deletes, dropped };
}
