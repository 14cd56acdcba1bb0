/**
 * One Kafka topic as an Iceberg table: `<namespace>.<topic>`, created on first use and owned by Floe (the
 * `floe.owner` property makes the REST catalog refuse outside commits). Holds the committed remote history of
 * every partition (see partition-manifest.ts) and implements, for this topic, the three table operations:
 *
 * - copy: convert a closed segment into data files and index objects (deterministic names; not visible yet);
 * - commit: make many copied segments, of many partitions, visible in ONE snapshot whose summary records each
 *   partition's highest committed offset and manifest. `SnapshotUpdate.validate` refuses a commit whose base
 *   already holds those offsets, and an ambiguous failure is settled by reloading the table: the summary says
 *   whether it landed. So a retry after a crash neither duplicates nor loses rows;
 * - remove: total retention, data files and manifest entries in one overwrite snapshot, objects deleted after;
 *   DeleteRecords moves the remote log start the same way (truncateBefore); a deleted topic's table is dropped
 *   with its files (drop).
 *
 * Operations that change the table run one at a time (a promise chain); reads use the in-memory manifests.
 */
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import { decodeRecordBatch } from '../../protocol/record-batch/record-batch.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { CatalogError } from '../../iceberg/catalog/catalog.js';
import type { DataFile } from '../../iceberg/data-file.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { FLOE_OWNER_PROPERTY } from '../../iceberg/rest/server.js';
import { Table } from '../../iceberg/table.js';
import { TieringError, type LogSegmentData, type RemoteFetchResult, type RemoteLogSegmentMetadata } from './api.js';
import { crashPoint } from './crash-points.js';
import {
  COMMITTED_OFFSET_PREFIX,
  SEGMENTS_PREFIX,
  committedOffsetIn,
  emptyManifest,
  loadManifests,
  manifestLocation,
  segmentFor,
  serializeManifest,
  toMetadata,
  type PartitionManifest,
  type SegmentEntry,
} from './partition-manifest.js';
import type { SegmentCodec } from './segment-codec.js';

export const FLOE_OWNER = 'floe-tiering';
export const TOPIC_PROPERTY = 'floe.kafka.topic';

const EMPTY = Buffer.alloc(0);

export class IcebergTopic {
  private manifests = new Map<number, PartitionManifest>();
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly topic: string,
    readonly id: TableIdentifier,
    private table: Table,
    private readonly io: FileIO,
    private readonly codec: SegmentCodec,
  ) {}

  /** Loads the topic's table (creating the namespace and table if missing) and its committed history. */
  static async open(options: { catalog: Catalog; io: FileIO; codec: SegmentCodec; topic: string; namespace: readonly string[] }): Promise<IcebergTopic> {
    const { catalog, io, codec, topic, namespace } = options;
    const id: TableIdentifier = { namespace, name: topic };
    if (!(await catalog.namespaceExists(namespace))) {
      await catalog.createNamespace(namespace).catch((err: unknown) => {
        if (!(err instanceof CatalogError && err.code === 'ALREADY_EXISTS')) throw err;
      });
    }
    if (!(await catalog.tableExists(id))) {
      const schema = codec.tableSchema();
      await catalog
        .createTable(id, {
          schema,
          partitionSpec: codec.partitionSpec(schema),
          properties: { [FLOE_OWNER_PROPERTY]: FLOE_OWNER, [TOPIC_PROPERTY]: topic, 'write.parquet.compression-codec': 'zstd' },
          formatVersion: 2,
        })
        .catch((err: unknown) => {
          if (!(err instanceof CatalogError && err.code === 'ALREADY_EXISTS')) throw err;
        });
    }
    const t = new IcebergTopic(topic, id, await Table.load(catalog, id, io), io, codec);
    t.manifests = await loadManifests(io, t.table.metadata);
    return t;
  }

  get tableLocation(): string {
    return this.table.location;
  }

  manifest(partition: number): PartitionManifest {
    return this.manifests.get(partition) ?? emptyManifest(partition);
  }

  partitions(): number[] {
    return [...this.manifests.keys()].sort((a, b) => a - b);
  }

  /** Converts and uploads one closed segment. Throws ALREADY_COMMITTED when the table holds it already. */
  async copy(segment: LogSegmentData): Promise<RemoteLogSegmentMetadata> {
    const committed = this.manifest(segment.partition).committedOffset;
    if (segment.lastOffset <= committed) {
      throw new TieringError('ALREADY_COMMITTED', `${this.topic}-${segment.partition} segment ${segment.baseOffset}..${segment.lastOffset} is already in the table (committed up to ${committed}); nothing to do`);
    }
    const converted = await this.codec.convertSegment({
      io: crashAfterFirstPut(this.io),
      tableLocation: this.table.location,
      schema: this.table.schema(),
      specId: this.table.specId(),
      partition: segment.partition,
      baseOffset: segment.baseOffset,
      lastOffset: segment.lastOffset,
      segmentPath: segment.path,
    });
    this.pendingFiles.set(key(segment.partition, segment.baseOffset), converted.dataFiles);
    return {
      topic: this.topic,
      partition: segment.partition,
      baseOffset: segment.baseOffset,
      lastOffset: segment.lastOffset,
      maxTimestamp: segment.maxTimestamp,
      sizeInBytes: segment.sizeInBytes,
      dataFiles: converted.dataFiles.map((f) => f.file_path),
      indexFiles: [...converted.indexFiles],
    };
  }

  /** DataFiles of copied, uncommitted segments (the commit needs their metrics, not just their paths). */
  private readonly pendingFiles = new Map<string, readonly DataFile[]>();

  /**
   * Commits copied segments (any partitions, offset order within each) in one snapshot. Segments the table
   * already holds are dropped silently (a retry after a crash); a segment that would leave the committed
   * history out of order throws OUT_OF_ORDER. A batch of control-only segments (no data files) commits a
   * snapshot without file changes. Resolves true once committed.
   */
  commit(segments: readonly RemoteLogSegmentMetadata[]): Promise<boolean> {
    return this.serial(() => this.doCommit(segments));
  }

  private async doCommit(segments: readonly RemoteLogSegmentMetadata[]): Promise<boolean> {
    const byPartition = new Map<number, RemoteLogSegmentMetadata[]>();
    for (const s of [...segments].sort((a, b) => a.partition - b.partition || a.baseOffset - b.baseOffset)) {
      if (s.lastOffset <= this.manifest(s.partition).committedOffset) continue;
      const list = byPartition.get(s.partition) ?? [];
      list.push(s);
      byPartition.set(s.partition, list);
    }
    if (byPartition.size === 0) return true;
    const update = this.table.newAppend();
    let files = 0;
    const next = new Map<number, PartitionManifest>();
    const expected = new Map<number, number>();
    for (const [p, list] of byPartition) {
      const m = this.manifest(p);
      expected.set(p, m.committedOffset);
      let committed = m.committedOffset;
      const added: SegmentEntry[] = [];
      for (const s of list) {
        if (s.baseOffset <= committed) {
          throw new TieringError('OUT_OF_ORDER', `${this.topic}-${p} segment ${s.baseOffset}..${s.lastOffset} overlaps the committed history (up to ${committed}); re-copy it from the next uncommitted offset`);
        }
        for (const f of this.pendingFiles.get(key(p, s.baseOffset)) ?? []) {
          update.addFile(f);
          files++;
        }
        added.push({ baseOffset: s.baseOffset, lastOffset: s.lastOffset, maxTimestamp: s.maxTimestamp, sizeInBytes: s.sizeInBytes, dataFiles: s.dataFiles, indexFiles: s.indexFiles });
        committed = s.lastOffset;
      }
      // The first commit starts the remote log at its first segment, unless DeleteRecords already moved it higher.
      const logStartOffset = m.segments.length === 0 && m.committedOffset < 0 ? Math.max(m.logStartOffset, added[0]?.baseOffset ?? 0) : m.logStartOffset;
      next.set(p, { partition: p, logStartOffset, committedOffset: committed, segments: [...m.segments, ...added] });
    }
    // Segments holding only control batches add no rows: the snapshot then only moves the committed offsets
    // and the segment lists, so those segments are in the remote history and their local copies can go.
    if (files === 0) update.allowNoFileChanges();
    for (const [p, m] of next) {
      const loc = manifestLocation(this.table.location, p);
      await this.io.put(loc, serializeManifest(m));
      update.set(COMMITTED_OFFSET_PREFIX + p, String(m.committedOffset)).set(SEGMENTS_PREFIX + p, loc);
    }
    update.validate((base) => {
      for (const [p, before] of expected) {
        const now = committedOffsetIn(base, p);
        if (now !== before) {
          throw new TieringError('ALREADY_COMMITTED', `${this.topic}-${p}: the table is committed up to ${now}, not ${before} as this commit assumed; reload and retry`);
        }
      }
    });
    crashPoint('before-commit');
    try {
      await this.table.commit(update);
    } catch (err) {
      // Ambiguous or refused: the table's summary says what is committed.
      await this.reload();
      const landed = [...next].every(([p, m]) => this.manifest(p).committedOffset >= m.committedOffset);
      if (!landed) throw err;
      this.forget(byPartition);
      return true;
    }
    for (const [p, m] of next) this.manifests.set(p, m);
    this.forget(byPartition);
    crashPoint('after-commit');
    return true;
  }

  private forget(byPartition: Map<number, RemoteLogSegmentMetadata[]>): void {
    for (const [p, list] of byPartition) for (const s of list) this.pendingFiles.delete(key(p, s.baseOffset));
  }

  /** Re-reads the table and the committed history (after a failed or ambiguous commit). */
  reload(): Promise<void> {
    return (async () => {
      await this.table.refresh();
      this.manifests = await loadManifests(this.io, this.table.metadata);
    })();
  }

  /**
   * Total retention for one partition: removes the oldest committed segments that `expired` picks (in order,
   * stopping at the first it keeps), their rows and files in one snapshot, then deletes their objects.
   */
  removeOldest(partition: number, expired: (s: SegmentEntry, remainingBytes: number) => boolean): Promise<number> {
    return this.serial(async () => {
      const m = this.manifest(partition);
      let bytes = m.segments.reduce((n, s) => n + s.sizeInBytes, 0);
      const doomed: SegmentEntry[] = [];
      for (const s of m.segments) {
        if (!expired(s, bytes)) break;
        doomed.push(s);
        bytes -= s.sizeInBytes;
      }
      if (doomed.length === 0) return 0;
      const last = doomed[doomed.length - 1] as SegmentEntry;
      const kept = m.segments.slice(doomed.length);
      const next: PartitionManifest = { ...m, logStartOffset: kept[0]?.baseOffset ?? last.lastOffset + 1, segments: kept };
      const update = this.table.newOverwrite();
      for (const s of doomed) for (const f of s.dataFiles) update.deleteFile(f);
      const loc = manifestLocation(this.table.location, partition);
      await this.io.put(loc, serializeManifest(next));
      update.set(COMMITTED_OFFSET_PREFIX + partition, String(next.committedOffset)).set(SEGMENTS_PREFIX + partition, loc);
      // Only control batches: no rows to remove, the snapshot only moves the manifest and log start.
      if (update.isEmpty) update.allowNoFileChanges();
      await this.table.commit(update);
      this.manifests.set(partition, next);
      for (const s of doomed) for (const f of [...s.dataFiles, ...s.indexFiles]) await this.io.delete(f).catch(() => undefined);
      return doomed.length;
    });
  }

  /**
   * DeleteRecords below (or across) the remote history: the remote log start moves up to `offset`, segments
   * wholly below it are removed in the same commit as the new start, then their objects are deleted. Rows of
   * the segment holding `offset` stay (Kafka reads start at the log start). No-op when the start is already
   * at or past `offset`.
   */
  truncateBefore(partition: number, offset: number): Promise<void> {
    return this.serial(async () => {
      const m = this.manifest(partition);
      if (offset <= m.logStartOffset) return;
      const doomed = m.segments.filter((s) => s.lastOffset < offset);
      const next: PartitionManifest = { ...m, logStartOffset: offset, segments: m.segments.slice(doomed.length) };
      const update = this.table.newOverwrite();
      for (const s of doomed) for (const f of s.dataFiles) update.deleteFile(f);
      if (update.isEmpty) update.allowNoFileChanges();
      const loc = manifestLocation(this.table.location, partition);
      await this.io.put(loc, serializeManifest(next));
      update.set(COMMITTED_OFFSET_PREFIX + partition, String(next.committedOffset)).set(SEGMENTS_PREFIX + partition, loc);
      await this.table.commit(update);
      this.manifests.set(partition, next);
      for (const s of doomed) for (const f of [...s.dataFiles, ...s.indexFiles]) await this.io.delete(f).catch(() => undefined);
    });
  }

  /**
   * ListOffsets by timestamp over the remote history: the first data record (from the remote log start) whose
   * timestamp is >= `timestamp`. Segments whose max timestamp is below it are skipped without reading; the
   * first candidate segment is read batch by batch from the table. LogAppendTime batches count every record
   * at the batch's max timestamp, as Kafka does.
   */
  async offsetForTimestamp(partition: number, timestamp: number): Promise<{ offset: number; timestamp: number } | undefined> {
    const m = this.manifest(partition);
    for (const s of m.segments) {
      if (s.lastOffset < m.logStartOffset || (s.maxTimestamp >= 0 && s.maxTimestamp < timestamp)) continue;
      let from = Math.max(s.baseOffset, m.logStartOffset);
      while (from <= s.lastOffset) {
        const r = await this.read(partition, from, 1 << 20, true);
        if (r.records.length === 0 || r.nextOffset <= from) break;
        const found = firstAtOrAfter(r.records, timestamp, m.logStartOffset);
        if (found !== undefined) return found;
        from = r.nextOffset;
      }
    }
    return undefined;
  }

  /**
   * Drops the topic's table with its files (metadata, data, offset index), when it is this topic's table
   * (owned by Floe's tiering and naming this topic). Waits for the table's running operations first.
   */
  static async drop(options: { catalog: Catalog; topic: string; namespace: readonly string[]; table?: IcebergTopic | undefined }): Promise<boolean> {
    const { catalog, topic, namespace, table } = options;
    const id: TableIdentifier = { namespace, name: topic };
    await table?.tail;
    if (!(await catalog.tableExists(id))) return false;
    const props = (await catalog.loadTable(id)).metadata.properties;
    if (props[FLOE_OWNER_PROPERTY] !== FLOE_OWNER || props[TOPIC_PROPERTY] !== topic) return false;
    await catalog.dropTable(id, { purge: true });
    return true;
  }

  /** Committed batches from `fetchOffset`, crossing into later segments when one has nothing at or after it. */
  async read(partition: number, fetchOffset: number, maxBytes: number, minOneBatch: boolean): Promise<RemoteFetchResult> {
    const m = this.manifest(partition);
    if (m.segments.length === 0 || fetchOffset < m.logStartOffset || fetchOffset > m.committedOffset) {
      throw new TieringError('OFFSET_OUT_OF_RANGE', `${this.topic}-${partition}: offset ${fetchOffset} is not in the remote log [${m.logStartOffset}, ${m.committedOffset}]; reset to the earliest or latest offset`);
    }
    for (let s = segmentFor(m, fetchOffset); s !== undefined; s = segmentFor(m, s.lastOffset + 1)) {
      const r = await this.codec.readSegment({
        io: this.io,
        partition,
        baseOffset: s.baseOffset,
        lastOffset: s.lastOffset,
        dataFiles: s.dataFiles,
        indexFiles: s.indexFiles,
        fetchOffset: Math.max(fetchOffset, s.baseOffset),
        maxBytes,
        minOneBatch,
      });
      if (r.records.length > 0) return r;
      // Empty without minOneBatch may mean "the next batch is over maxBytes": moving on to a later segment
      // would skip it. Only an empty answer with minOneBatch says this segment has nothing at or after the offset.
      if (!minOneBatch) break;
    }
    return { records: EMPTY, nextOffset: fetchOffset };
  }

  segments(partition: number): RemoteLogSegmentMetadata[] {
    return this.manifest(partition).segments.map((s) => toMetadata(this.topic, partition, s));
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/** The first data record in `batches` at or after `minOffset` whose timestamp is >= `timestamp`. */
function firstAtOrAfter(batches: Buffer, timestamp: number, minOffset: number): { offset: number; timestamp: number } | undefined {
  for (const b of iterateBatches(batches)) {
    const batch = decodeRecordBatch(batches, b.start, { verifyCrc: false });
    if (batch.isControl || Number(batch.maxTimestamp) < timestamp) continue;
    const base = Number(batch.baseOffset);
    for (const r of batch.records) {
      const offset = base + r.offsetDelta;
      const ts = batch.timestampType === 'log-append' ? Number(batch.maxTimestamp) : Number(batch.baseTimestamp) + r.timestampDelta;
      if (offset >= minOffset && ts >= timestamp) return { offset, timestamp: ts };
    }
  }
  return undefined;
}

function key(partition: number, baseOffset: number): string {
  return `${partition}:${baseOffset}`;
}

/** A FileIO that reaches the 'mid-upload' crash point after its first completed put. */
function crashAfterFirstPut(io: FileIO): FileIO {
  let puts = 0;
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'put') {
        return async (location: string, data: Buffer) => {
          const info = await target.put(location, data);
          if (++puts === 1) crashPoint('mid-upload');
          return info;
        };
      }
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
}
