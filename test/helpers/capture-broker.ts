/**
 * A tiny logging Kafka broker for interoperability tests and fixture capture. It speaks through OUR protocol
 * layer only (decodeRequest / encodeResponse), records every request frame it receives, and answers just
 * enough for real clients to get as far as producing, consuming and joining a group:
 *
 *   ApiVersions, Metadata (one broker: itself; topics auto-created with `defaultPartitions`), Produce (acks
 *   0/1/-1, base offsets assigned per partition, batches kept in memory), InitProducerId, ListOffsets,
 *   Fetch (serves the produced batches; waits up to min(maxWaitMs, 100) ms when there is nothing new),
 *   FindCoordinator, JoinGroup (every member is the leader of its own generation; v4+ first answers
 *   MEMBER_ID_REQUIRED), SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and OffsetFetch.
 *
 * ApiVersions advertises only these APIs, at the versions our declarations support, so clients never send
 * something the broker cannot answer. Responses on one connection are written in request order, even when
 * a Fetch waits.
 *
 *   const broker = await startCaptureBroker({ topics: { orders: 3 } });
 *   t.after(() => broker.close());
 *   // point a client at 127.0.0.1:broker.port, then:
 *   await broker.waitFor((r) => r.apiKey === 0);
 *   broker.requests; // every frame, in arrival order
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { decodeRequest, encodeResponse, isProtocolError, supportedVersions, type ApiVersionRange, type DecodedRequest } from '../../protocol/index.js';
import { iterateBatches } from '../../protocol/record-batch/batches.js';
import { BATCH_OFFSETS, setBaseOffset } from '../../protocol/record-batch/header.js';

export interface CapturedRequest {
  /** Connection number, from 0, in accept order. */
  readonly connection: number;
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  /** The request frame as received, without its 4-byte size prefix. */
  readonly frame: Buffer;
}

export interface CaptureBrokerOptions {
  /** Topics that exist from the start, with their partition counts. */
  readonly topics?: Readonly<Record<string, number>>;
  /** Partitions of a topic created on first mention (Metadata, Produce). Default 1. */
  readonly defaultPartitions?: number;
  /** Address to listen on and to advertise. Default 127.0.0.1. */
  readonly host?: string;
}

export interface CaptureBroker {
  readonly host: string;
  readonly port: number;
  /** `host:port`, for client bootstrap settings. */
  readonly bootstrap: string;
  /** Every request frame received, in arrival order. */
  readonly requests: readonly CapturedRequest[];
  /** Requests the broker could not decode or answer (it closed the connection); tests assert none. */
  readonly errors: readonly Error[];
  /** Batches appended to a partition (each a copy, base offset assigned), in offset order. */
  batches(topic: string, partition: number): readonly Buffer[];
  /** Resolves with the first request (already received or future) that matches; rejects after timeoutMs. */
  waitFor(match: (r: CapturedRequest) => boolean, timeoutMs?: number): Promise<CapturedRequest>;
  close(): Promise<void>;
}

const NODE_ID = 1;
const CLUSTER_ID = 'floe-capture';
const MAX_FETCH_WAIT_MS = 100;
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** The APIs this broker answers (ApiVersions advertises exactly these). */
const HANDLED_APIS = [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 22] as const;

const ERROR_NONE = 0;
const ERROR_UNKNOWN_TOPIC_OR_PARTITION = 3;
const ERROR_UNSUPPORTED_VERSION = 35;
const ERROR_MEMBER_ID_REQUIRED = 79;

type Body = Record<string, unknown>;

interface PartitionLog {
  readonly batches: Buffer[];
  nextOffset: bigint;
}

interface Topic {
  readonly name: string;
  readonly id: Buffer;
  readonly partitions: PartitionLog[];
}

/** Property of a decoded body, typed by the caller's knowledge of our declarations. */
function get<T>(body: unknown, key: string): T {
  return (body as Body)[key] as T;
}

function topicIdOf(name: string): Buffer {
  const id = createHash('sha256').update(name).digest().subarray(0, 16);
  id[6] = (id[6]! & 0x0f) | 0x40;
  id[8] = (id[8]! & 0x3f) | 0x80;
  return Buffer.from(id);
}

export async function startCaptureBroker(options: CaptureBrokerOptions = {}): Promise<CaptureBroker> {
  const host = options.host ?? '127.0.0.1';
  const defaultPartitions = options.defaultPartitions ?? 1;
  const topics = new Map<string, Topic>();
  const topicsById = new Map<string, Topic>();
  const requests: CapturedRequest[] = [];
  const errors: Error[] = [];
  const waiters = new Set<{ match: (r: CapturedRequest) => boolean; resolve: (r: CapturedRequest) => void }>();
  const sockets = new Set<Socket>();
  let connections = 0;
  let nextProducerId = 1000n;
  let nextMemberId = 0;
  let closed = false;
  let port = 0;

  function ensureTopic(name: string, partitions = defaultPartitions): Topic {
    let topic = topics.get(name);
    if (topic === undefined) {
      topic = { name, id: topicIdOf(name), partitions: Array.from({ length: partitions }, () => ({ batches: [], nextOffset: 0n })) };
      topics.set(name, topic);
      topicsById.set(topic.id.toString('hex'), topic);
    }
    return topic;
  }
  for (const [name, partitions] of Object.entries(options.topics ?? {})) ensureTopic(name, partitions);

  function record(request: CapturedRequest): void {
    requests.push(request);
    for (const w of waiters) {
      if (w.match(request)) {
        waiters.delete(w);
        w.resolve(request);
      }
    }
  }

  function advertised(): ApiVersionRange[] {
    return HANDLED_APIS.map((key) => supportedVersions(key)).filter((r): r is ApiVersionRange => r !== undefined);
  }

  function apiVersions(): Body {
    return { errorCode: ERROR_NONE, apiKeys: advertised().map((r) => ({ apiKey: r.apiKey, minVersion: r.minVersion, maxVersion: r.maxVersion })) };
  }

  function metadata(req: DecodedRequest): Body {
    const requested = get<{ name: string | null; topicId?: Buffer }[] | null>(req.body, 'topics');
    // v0: an empty list means all topics; v1+: null means all topics.
    const all = requested === null || (req.apiVersion === 0 && requested.length === 0);
    const selected: Topic[] = [];
    if (all) selected.push(...topics.values());
    else {
      for (const t of requested) {
        if (t.name !== null) selected.push(ensureTopic(t.name));
        else if (t.topicId !== undefined) {
          const byId = topicsById.get(t.topicId.toString('hex'));
          if (byId !== undefined) selected.push(byId);
        }
      }
    }
    return {
      brokers: [{ nodeId: NODE_ID, host, port, rack: null }],
      clusterId: CLUSTER_ID,
      controllerId: NODE_ID,
      topics: selected.map((t) => ({
        errorCode: ERROR_NONE,
        name: t.name,
        topicId: t.id,
        isInternal: false,
        partitions: t.partitions.map((_, i) => ({
          errorCode: ERROR_NONE,
          partitionIndex: i,
          leaderId: NODE_ID,
          leaderEpoch: 0,
          replicaNodes: [NODE_ID],
          isrNodes: [NODE_ID],
          offlineReplicas: [],
        })),
      })),
    };
  }

  function produce(req: DecodedRequest): Body {
    const topicData = get<{ name: string; partitionData: { index: number; records: Buffer | null }[] }[]>(req.body, 'topicData');
    return {
      responses: topicData.map((td) => {
        const topic = ensureTopic(td.name);
        return {
          name: td.name,
          partitionResponses: td.partitionData.map((pd) => {
            const log = topic.partitions[pd.index];
            if (log === undefined) return { index: pd.index, errorCode: ERROR_UNKNOWN_TOPIC_OR_PARTITION, baseOffset: -1n };
            const baseOffset = log.nextOffset;
            for (const b of iterateBatches(pd.records ?? Buffer.alloc(0))) {
              const copy = Buffer.from(pd.records!.subarray(b.start, b.end));
              setBaseOffset(copy, log.nextOffset);
              log.batches.push(copy);
              log.nextOffset += b.lastOffset - b.baseOffset + 1n;
            }
            return { index: pd.index, errorCode: ERROR_NONE, baseOffset, logAppendTimeMs: -1n, logStartOffset: 0n };
          }),
        };
      }),
    };
  }

  function listOffsets(req: DecodedRequest): Body {
    const reqTopics = get<{ name: string; partitions: { partitionIndex: number; timestamp: bigint }[] }[]>(req.body, 'topics');
    return {
      topics: reqTopics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const log = topics.get(t.name)?.partitions[p.partitionIndex];
          if (log === undefined) return { partitionIndex: p.partitionIndex, errorCode: ERROR_UNKNOWN_TOPIC_OR_PARTITION };
          const offset = p.timestamp === -2n ? 0n : log.nextOffset;
          const answer = { partitionIndex: p.partitionIndex, errorCode: ERROR_NONE, timestamp: -1n, offset, leaderEpoch: -1 };
          return req.apiVersion === 0 ? { ...answer, oldStyleOffsets: [offset] } : answer;
        }),
      })),
    };
  }

  function fetchBody(req: DecodedRequest): { body: Body; hasData: boolean } {
    const reqTopics = get<{ topic?: string; topicId?: Buffer; partitions: { partition: number; fetchOffset: bigint }[] }[]>(req.body, 'topics');
    let hasData = false;
    const responses = reqTopics.map((t) => {
      const topic = req.apiVersion >= 13 ? topicsById.get(t.topicId?.toString('hex') ?? '') : topics.get(t.topic ?? '');
      return {
        topic: t.topic,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => {
          const log = topic?.partitions[p.partition];
          if (log === undefined) return { partitionIndex: p.partition, errorCode: ERROR_UNKNOWN_TOPIC_OR_PARTITION, highWatermark: -1n, records: null };
          const batches = log.batches.filter((b) => b.readBigInt64BE(BATCH_OFFSETS.baseOffset) + BigInt(b.readInt32BE(BATCH_OFFSETS.lastOffsetDelta)) >= p.fetchOffset);
          if (batches.length > 0) hasData = true;
          return {
            partitionIndex: p.partition,
            errorCode: ERROR_NONE,
            highWatermark: log.nextOffset,
            lastStableOffset: log.nextOffset,
            logStartOffset: 0n,
            abortedTransactions: [],
            records: Buffer.concat(batches),
          };
        }),
      };
    });
    return { body: { errorCode: ERROR_NONE, sessionId: 0, responses }, hasData };
  }

  function findCoordinator(req: DecodedRequest): Body {
    if (req.apiVersion >= 4) {
      const keys = get<string[]>(req.body, 'coordinatorKeys');
      return { coordinators: keys.map((key) => ({ key, nodeId: NODE_ID, host, port, errorCode: ERROR_NONE, errorMessage: null })) };
    }
    return { errorCode: ERROR_NONE, errorMessage: null, nodeId: NODE_ID, host, port };
  }

  function joinGroup(req: DecodedRequest): Body {
    const memberId = get<string>(req.body, 'memberId');
    const protocols = get<{ name: string; metadata: Buffer }[]>(req.body, 'protocols');
    if (memberId === '' && req.apiVersion >= 4) {
      return { errorCode: ERROR_MEMBER_ID_REQUIRED, generationId: -1, protocolName: req.apiVersion >= 7 ? null : '', leader: '', memberId: `member-${nextMemberId++}`, members: [] };
    }
    const id = memberId === '' ? `member-${nextMemberId++}` : memberId;
    const chosen = protocols[0];
    return {
      errorCode: ERROR_NONE,
      generationId: 1,
      protocolType: get<string>(req.body, 'protocolType'),
      protocolName: chosen?.name ?? '',
      leader: id,
      memberId: id,
      members: [{ memberId: id, groupInstanceId: null, metadata: chosen?.metadata ?? Buffer.alloc(0) }],
    };
  }

  function syncGroup(req: DecodedRequest): Body {
    const memberId = get<string>(req.body, 'memberId');
    const mine = get<{ memberId: string; assignment: Buffer }[]>(req.body, 'assignments').find((a) => a.memberId === memberId);
    return {
      errorCode: ERROR_NONE,
      protocolType: get<string | null>(req.body, 'protocolType'),
      protocolName: get<string | null>(req.body, 'protocolName'),
      assignment: mine?.assignment ?? Buffer.alloc(0),
    };
  }

  function offsetFetchTopics(reqTopics: { name: string; partitionIndexes: number[] }[] | null): Body[] {
    return (reqTopics ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ERROR_NONE })),
    }));
  }

  function offsetFetch(req: DecodedRequest): Body {
    if (req.apiVersion >= 8) {
      const groups = get<{ groupId: string; topics: { name: string; partitionIndexes: number[] }[] | null }[]>(req.body, 'groups');
      return { groups: groups.map((g) => ({ groupId: g.groupId, topics: offsetFetchTopics(g.topics), errorCode: ERROR_NONE })) };
    }
    return { topics: offsetFetchTopics(get<{ name: string; partitionIndexes: number[] }[] | null>(req.body, 'topics')), errorCode: ERROR_NONE };
  }

  function offsetCommit(req: DecodedRequest): Body {
    const reqTopics = get<{ name: string; partitions: { partitionIndex: number }[] }[]>(req.body, 'topics');
    return { topics: reqTopics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ERROR_NONE })) })) };
  }

  function leaveGroup(req: DecodedRequest): Body {
    const members = req.apiVersion >= 3 ? get<{ memberId: string; groupInstanceId: string | null }[]>(req.body, 'members') : [];
    return { errorCode: ERROR_NONE, members: members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: ERROR_NONE })) };
  }

  /** The response body for a request, or null when none is sent (Produce with acks=0). */
  async function respond(req: DecodedRequest): Promise<Body | null> {
    switch (req.apiKey) {
      case 18:
        return apiVersions();
      case 3:
        return metadata(req);
      case 0: {
        const body = produce(req);
        return get<number>(req.body, 'acks') === 0 ? null : body;
      }
      case 22:
        return { errorCode: ERROR_NONE, producerId: nextProducerId++, producerEpoch: 0 };
      case 2:
        return listOffsets(req);
      case 1: {
        let result = fetchBody(req);
        if (!result.hasData) {
          const waitMs = Math.min(Math.max(get<number>(req.body, 'maxWaitMs'), 0), MAX_FETCH_WAIT_MS);
          await new Promise((resolve) => setTimeout(resolve, waitMs));
          result = fetchBody(req);
        }
        return result.body;
      }
      case 10:
        return findCoordinator(req);
      case 11:
        return joinGroup(req);
      case 14:
        return syncGroup(req);
      case 12:
        return { errorCode: ERROR_NONE };
      case 13:
        return leaveGroup(req);
      case 8:
        return offsetCommit(req);
      case 9:
        return offsetFetch(req);
      default:
        throw new Error(`capture broker: ${req.apiKey} v${req.apiVersion} is declared but not handled; remove it from HANDLED_APIS or handle it`);
    }
  }

  /** Decodes one frame and produces the bytes to send back (null: nothing, close: drop the connection). */
  async function handleFrame(connection: number, frame: Buffer): Promise<Buffer | null | 'close'> {
    let req: DecodedRequest;
    try {
      req = decodeRequest(frame);
    } catch (e) {
      if (isProtocolError(e) && e.header !== undefined) {
        const h = e.header;
        record({ connection, apiKey: h.apiKey, apiVersion: h.apiVersion, correlationId: h.correlationId, clientId: h.clientId, frame });
        if (h.apiKey === 18 && e.code === 'UNSUPPORTED_VERSION') {
          // Answer in the v0 format so the client can fall back to a version we support.
          return encodeResponse({ correlationId: h.correlationId }, 18, 0, { ...apiVersions(), errorCode: ERROR_UNSUPPORTED_VERSION });
        }
      }
      errors.push(e instanceof Error ? e : new Error(String(e)));
      return 'close';
    }
    const { header } = req;
    record({ connection, apiKey: req.apiKey, apiVersion: req.apiVersion, correlationId: header.correlationId, clientId: header.clientId, frame });
    if (!(HANDLED_APIS as readonly number[]).includes(req.apiKey)) {
      errors.push(new Error(`capture broker: API ${req.apiKey} v${req.apiVersion} is not handled (not advertised either)`));
      return 'close';
    }
    const body = await respond(req);
    return body === null ? null : encodeResponse({ correlationId: header.correlationId }, req.apiKey, req.apiVersion, body);
  }

  function serve(socket: Socket): void {
    const connection = connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending: Buffer = Buffer.alloc(0);
    // Responses are chained so they leave in request order even when one of them waits.
    let chain: Promise<void> = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readInt32BE(0);
        if (size < 0 || size > MAX_FRAME_BYTES) {
          socket.destroy();
          return;
        }
        if (pending.length < 4 + size) break;
        const frame = Buffer.from(pending.subarray(4, 4 + size));
        pending = pending.subarray(4 + size);
        const answer = handleFrame(connection, frame);
        chain = chain.then(async () => {
          const out = await answer;
          if (socket.destroyed) return;
          if (out === 'close') socket.destroy();
          else if (out !== null) socket.write(out);
        }).catch((e: unknown) => {
          errors.push(e instanceof Error ? e : new Error(String(e)));
          socket.destroy();
        });
      }
    });
  }

  const server: Server = createServer(serve);
  server.listen(0, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('capture broker: no TCP address');
  port = address.port;

  return {
    host,
    port,
    bootstrap: `${host}:${port}`,
    requests,
    errors,
    batches(topic, partition) {
      return topics.get(topic)?.partitions[partition]?.batches ?? [];
    },
    waitFor(match, timeoutMs = 10_000) {
      const seen = requests.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (r: CapturedRequest) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`capture broker: no matching request within ${timeoutMs} ms; saw ${requests.map((r) => `${r.apiKey}v${r.apiVersion}`).join(' ')}`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
