/**
 * What the broker itself says about a group, read over the wire with our own client: the reference that every
 * client's view (its consumers' output, its admin API) is checked against. Assignments are decoded from the
 * embedded consumer protocol (ConsumerProtocolAssignment: int16 version, [topic string, [int32 partition]]),
 * which every client here uses.
 */
import { WireClient } from '../../broker/handlers/wire-client.js';

type Obj = Record<string, unknown>;

export interface MemberView {
  readonly memberId: string;
  readonly clientId: string;
  /** Partitions of `topic` assigned to the member in the current generation. */
  readonly partitions: readonly number[];
}

export interface GroupView {
  readonly state: string;
  readonly protocolType: string;
  readonly protocol: string;
  readonly members: readonly MemberView[];
}

/** The partitions of `topic` in a ConsumerProtocolAssignment (empty for empty bytes). */
export function assignedPartitions(assignment: Buffer, topic: string): number[] {
  if (assignment.length < 6) return [];
  let pos = 2;
  const topics = assignment.readInt32BE(pos);
  pos += 4;
  const out: number[] = [];
  for (let i = 0; i < topics; i++) {
    const len = assignment.readInt16BE(pos);
    pos += 2;
    const name = assignment.toString('utf8', pos, pos + len);
    pos += len;
    const n = assignment.readInt32BE(pos);
    pos += 4;
    for (let j = 0; j < n; j++, pos += 4) if (name === topic) out.push(assignment.readInt32BE(pos));
  }
  return out.sort((a, b) => a - b);
}

export class BrokerTruth {
  private constructor(private readonly c: WireClient) {}

  static async open(port: number): Promise<BrokerTruth> {
    return new BrokerTruth(await WireClient.connect(port));
  }

  close(): void {
    this.c.close();
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    const r = await this.c.request(19, 4, { topics: [{ name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    const code = (r.topics as Obj[])[0]?.errorCode;
    if (code !== 0) throw new Error(`CreateTopics ${topic} failed with error ${String(code)}`);
  }

  async describe(group: string, topic: string): Promise<GroupView> {
    const r = await this.c.request(15, 5, { groups: [group], includeAuthorizedOperations: false });
    const g = (r.groups as Obj[])[0];
    if (g === undefined) throw new Error('DescribeGroups returned no group');
    return {
      state: g.groupState as string,
      protocolType: g.protocolType as string,
      protocol: g.protocolData as string,
      members: (g.members as Obj[]).map((m) => ({ memberId: m.memberId as string, clientId: m.clientId as string, partitions: assignedPartitions(m.memberAssignment as Buffer, topic) })),
    };
  }

  /** Committed offset per partition (-1 where none). */
  async committed(group: string, topic: string, partitions: number): Promise<number[]> {
    const r = await this.c.request(9, 7, { groupId: group, topics: [{ name: topic, partitionIndexes: range(partitions) }], requireStable: false });
    const parts = ((r.topics as Obj[])[0]?.partitions ?? []) as Obj[];
    return range(partitions).map((p) => Number(parts.find((x) => x.partitionIndex === p)?.committedOffset ?? -1n));
  }

  /** Log end offset (high watermark) per partition. */
  async endOffsets(topic: string, partitions: number): Promise<number[]> {
    const r = await this.c.request(2, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: range(partitions).map((p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n })) }] });
    const parts = ((r.topics as Obj[])[0]?.partitions ?? []) as Obj[];
    return range(partitions).map((p) => {
      const found = parts.find((x) => x.partitionIndex === p);
      if (found === undefined || found.errorCode !== 0) throw new Error(`ListOffsets ${topic}[${p}] failed: ${String(found?.errorCode)}`);
      return Number(found.offset);
    });
  }
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
