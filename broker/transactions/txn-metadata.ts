/**
 * What the transaction coordinator knows about one transactional id, as Kafka's TransactionMetadata: the
 * producer id and epoch it handed out (and the previous ones, for KIP-360 retries), the timeout, the state,
 * and the partitions and consumer groups of the open transaction. Pure data and its JSON form.
 *
 * States (Kafka's names, as ListTransactions and DescribeTransactions report them):
 *   Empty → Ongoing (AddPartitionsToTxn / AddOffsetsToTxn) → PrepareCommit | PrepareAbort (EndTxn, timeout,
 *   fencing) → CompleteCommit | CompleteAbort (markers written) → Ongoing (next transaction) ...
 * A Prepare* state is durable before any marker is written: after a crash the coordinator writes the
 * markers again and completes, so every partition ends the same way.
 */

export const TXN_STATES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'] as const;
export type TxnState = (typeof TXN_STATES)[number];

/** An offset commit made inside a transaction (TxnOffsetCommit): visible to OffsetFetch only after commit. */
export interface PendingOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
}

export interface TxnMetadata {
  readonly transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  /** The producer id/epoch before the last bump (-1 if none): a retried InitProducerId presents them. */
  lastProducerId: bigint;
  lastProducerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  /** "topic\u0000partition" keys of the partitions in the open (or completing) transaction. */
  partitions: Set<string>;
  /** Consumer groups whose offsets the transaction commits. */
  groups: Set<string>;
  /** Offsets sent with TxnOffsetCommit, by group; made durable with PrepareCommit. */
  pendingOffsets: Map<string, Map<string, PendingOffset>>;
  /** When the open transaction started (first partition added), or -1. */
  txnStartMs: number;
  lastUpdateMs: number;
}

export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function splitPartitionKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

/** The transaction's partitions grouped by topic, topics and partitions sorted. */
export function partitionsByTopic(partitions: Iterable<string>): { name: string; partitionIndexes: number[] }[] {
  const byTopic = new Map<string, number[]>();
  for (const key of partitions) {
    const { topic, partition } = splitPartitionKey(key);
    let list = byTopic.get(topic);
    if (list === undefined) byTopic.set(topic, (list = []));
    list.push(partition);
  }
  return [...byTopic.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, ps]) => ({ name, partitionIndexes: ps.sort((x, y) => x - y) }));
}

export interface StoredTxn {
  id: string;
  pid: string;
  epoch: number;
  lastPid: string;
  lastEpoch: number;
  timeoutMs: number;
  state: TxnState;
  partitions: string[];
  groups: string[];
  /** [group, topic, partition, offset, leaderEpoch, metadata] */
  offsets: [string, string, number, string, number, string | null][];
  startMs: number;
  updateMs: number;
}

export function toStored(m: TxnMetadata): StoredTxn {
  const offsets: StoredTxn['offsets'] = [];
  for (const [group, parts] of m.pendingOffsets) {
    for (const o of parts.values()) offsets.push([group, o.topic, o.partition, String(o.offset), o.leaderEpoch, o.metadata]);
  }
  return {
    id: m.transactionalId,
    pid: String(m.producerId),
    epoch: m.producerEpoch,
    lastPid: String(m.lastProducerId),
    lastEpoch: m.lastProducerEpoch,
    timeoutMs: m.timeoutMs,
    state: m.state,
    partitions: [...m.partitions],
    groups: [...m.groups],
    offsets,
    startMs: m.txnStartMs,
    updateMs: m.lastUpdateMs,
  };
}

export function fromStored(s: StoredTxn): TxnMetadata {
  if (typeof s.id !== 'string' || !TXN_STATES.includes(s.state) || !Array.isArray(s.partitions) || !Array.isArray(s.groups) || !Array.isArray(s.offsets)) {
    throw new TypeError(`malformed transaction record ${JSON.stringify(s).slice(0, 200)}`);
  }
  const pendingOffsets = new Map<string, Map<string, PendingOffset>>();
  for (const [group, topic, partition, offset, leaderEpoch, metadata] of s.offsets) {
    let parts = pendingOffsets.get(group);
    if (parts === undefined) pendingOffsets.set(group, (parts = new Map()));
    parts.set(partitionKey(topic, partition), { topic, partition, offset: BigInt(offset), leaderEpoch, metadata });
  }
  return {
    transactionalId: s.id,
    producerId: BigInt(s.pid),
    producerEpoch: s.epoch,
    lastProducerId: BigInt(s.lastPid),
    lastProducerEpoch: s.lastEpoch,
    timeoutMs: s.timeoutMs,
    state: s.state,
    partitions: new Set(s.partitions),
    groups: new Set(s.groups),
    pendingOffsets,
    txnStartMs: s.startMs,
    lastUpdateMs: s.updateMs,
  };
}

/** A deep copy, so a transition can be prepared, persisted, and only then applied. */
export function cloneMetadata(m: TxnMetadata): TxnMetadata {
  return fromStored(toStored(m));
}
