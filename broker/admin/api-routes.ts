/**
 * The admin JSON API on the admin port, for the status page and the `floe` CLI. Every error is
 * `{ "error": <stable code>, "message": <what to do> }` with its HTTP status.
 *
 *   GET  /api/topics                          topics, partitions, offsets and freshness lag
 *   GET  /api/tables                          tables of tiered topics: files, snapshots, last commit, lag
 *   GET  /api/tables/{table}                  one table: stats, partitions, snapshots, quality signals
 *   POST /api/tables/{table}/compact          {"partition"?, "targetFileSizeBytes"?, "minInputFiles"?}
 *   POST /api/tables/{table}/expire           snapshot expiry (and orphan removal when due) now
 *   POST /api/tables/{table}/hide             {"partition", "fromOffset", "toOffset"} (runbook)
 *   POST /api/tables/{table}/rollback         {"snapshotId"} (runbook; refused when Kafka would lose data)
 *   POST /api/tables/{table}/rebuild          {"fromOffset", "partition"?} (runbook: rows converted again from
 *                                             the stored Kafka bytes, e.g. after a schema fix)
 *   GET  /api/configs/topics/{topic}          effective topic configs {name: {value, source}}
 *   PUT  /api/configs/topics/{topic}          {"set": {k: v}, "delete": [k], "validateOnly"?} as
 *                                             IncrementalAlterConfigs SET/DELETE (same validation)
 *   GET  /api/status                          what the status page draws (history and quality)
 *
 * `{table}` is `<namespace>.<name>` or the topic's name. Codes: unknown_table, unknown_topic,
 * unknown_partition, unknown_snapshot (404; a path that is no endpoint at all is not_found),
 * bad_request (400: body or parameters), invalid_config (400), would_lose_kafka_data (409),
 * not_tiered (409), out_of_range (400), method_not_allowed (405), body_too_large (413), internal_error (500).
 */
import { KafkaError, ErrorCode } from '../../protocol/error-codes.js';
import { TieringError, type TableStats } from '../../tiering/plugin/api.js';
import type { LogManager } from '../log/log-manager.js';
import { ConfigSource, effectiveConfigs } from '../topics/topic-configs.js';
import type { TopicManager } from '../topics/topic-manager.js';
import type { BrokerTiering } from '../tiering/broker-tiering.js';
import { AdminHttpError, json, type AdminRequest, type AdminRoute } from './admin-server.js';
import type { PartitionReader, PartitionReading } from './partition-metrics.js';
import type { StatusHistory } from './status-history.js';

export interface ApiSources {
  readonly topics: TopicManager;
  readonly logs: LogManager;
  readonly tiering: BrokerTiering | undefined;
  readonly partitions: PartitionReader;
  readonly history: StatusHistory;
}

const SOURCE_NAMES: Readonly<Record<number, string>> = {
  [ConfigSource.TOPIC_CONFIG]: 'topic',
  [ConfigSource.STATIC_BROKER_CONFIG]: 'broker',
  [ConfigSource.DEFAULT_CONFIG]: 'default',
};

export function apiRoutes(s: ApiSources): AdminRoute[] {
  return [
    { method: 'GET', path: '/api/topics', handler: async () => json(200, { topics: await topicsView(s) }) },
    { method: 'GET', path: '/api/tables', handler: async () => json(200, { tables: await tablesView(s) }) },
    { method: 'GET', path: '/api/tables/{table}', handler: async (req) => json(200, await tableDetail(s, tableTopic(s, req))) },
    { method: 'GET', path: '/api/tables/{table}/backlog', handler: async (req) => json(200, backlogView(s, tableTopic(s, req))) },
    {
      method: 'POST',
      path: '/api/tables/{table}/compact',
      handler: async (req) => {
        const topic = tableTopic(s, req);
        const body = jsonBody(req);
        const partition = optionalInt(body, 'partition');
        const overrides: { targetFileSizeBytes?: number; minInputFiles?: number } = {};
        const target = optionalInt(body, 'targetFileSizeBytes');
        const minInput = optionalInt(body, 'minInputFiles');
        if (target !== undefined) overrides.targetFileSizeBytes = target;
        if (minInput !== undefined) overrides.minInputFiles = minInput;
        const tiering = requireTiering(s);
        const all = tiering.tablePartitions(topic);
        if (partition !== undefined && !all.includes(partition)) throw new AdminHttpError(404, 'unknown_partition', `table of ${topic} has no partition ${partition}; it holds ${all.join(', ') || 'none yet'}`);
        const results = [];
        for (const p of partition === undefined ? all : [partition]) results.push({ partition: p, ...(await runbookCall(() => tiering.compact(topic, p, overrides))) });
        return json(200, { topic, results });
      },
    },
    {
      method: 'POST',
      path: '/api/tables/{table}/rebuild',
      handler: async (req) => {
        const topic = tableTopic(s, req);
        const body = jsonBody(req);
        const partition = optionalInt(body, 'partition');
        const fromOffset = requiredInt(body, 'fromOffset');
        const tiering = requireTiering(s);
        const all = tiering.tablePartitions(topic);
        if (partition !== undefined && !all.includes(partition)) throw new AdminHttpError(404, 'unknown_partition', `table of ${topic} has no partition ${partition}; it holds ${all.join(', ') || 'none yet'}`);
        const results = [];
        for (const p of partition === undefined ? all : [partition]) results.push({ partition: p, ...(await runbookCall(() => tiering.rebuild(topic, p, fromOffset))) });
        return json(200, { topic, results });
      },
    },
    {
      method: 'POST',
      path: '/api/tables/{table}/expire',
      handler: async (req) => {
        const topic = tableTopic(s, req);
        jsonBody(req);
        const result = await runbookCall(() => requireTiering(s).maintain(topic));
        return json(200, { topic, ...result });
      },
    },
    {
      method: 'POST',
      path: '/api/tables/{table}/hide',
      handler: async (req) => {
        const topic = tableTopic(s, req);
        const body = jsonBody(req);
        const partition = requiredInt(body, 'partition');
        const from = requiredInt(body, 'fromOffset');
        const to = requiredInt(body, 'toOffset');
        const result = await runbookCall(() => requireTiering(s).hideRows(topic, partition, from, to));
        return json(200, { topic, partition, fromOffset: from, toOffset: to, ...result });
      },
    },
    {
      method: 'POST',
      path: '/api/tables/{table}/rollback',
      handler: async (req) => {
        const topic = tableTopic(s, req);
        const body = jsonBody(req);
        const snapshotId = body.snapshotId;
        if (typeof snapshotId !== 'string' || !/^-?\d+$/.test(snapshotId)) throw new AdminHttpError(400, 'bad_request', 'give "snapshotId" as a decimal string (floe table status lists the snapshots)');
        const result = await runbookCall(() => requireTiering(s).rollbackTo(topic, snapshotId));
        return json(200, { topic, snapshotId, ...result });
      },
    },
    {
      method: 'GET',
      path: '/api/configs/topics/{topic}',
      handler: (req) => {
        const record = requireTopic(s, req.params.topic ?? '');
        return json(200, { topic: record.name, configs: configsView(s, record.configs) });
      },
    },
    {
      method: 'PUT',
      path: '/api/configs/topics/{topic}',
      handler: async (req) => {
        const record = requireTopic(s, req.params.topic ?? '');
        const body = jsonBody(req);
        const changes: Record<string, string | null> = {};
        const set = body.set ?? {};
        if (typeof set !== 'object' || set === null || Array.isArray(set)) throw new AdminHttpError(400, 'bad_request', '"set" must be an object of config names to string values');
        for (const [k, v] of Object.entries(set as Record<string, unknown>)) {
          if (typeof v !== 'string') throw new AdminHttpError(400, 'bad_request', `"set.${k}" must be a string (config values are strings, as in Kafka)`);
          changes[k] = v;
        }
        const del = body.delete ?? [];
        if (!Array.isArray(del) || !del.every((k) => typeof k === 'string')) throw new AdminHttpError(400, 'bad_request', '"delete" must be a list of config names');
        for (const k of del as string[]) {
          if (k in changes) throw new AdminHttpError(400, 'bad_request', `config ${k} is both set and deleted; give it once`);
          changes[k] = null;
        }
        if (Object.keys(changes).length === 0) throw new AdminHttpError(400, 'bad_request', 'nothing to change: give "set" and/or "delete"');
        const validateOnly = body.validateOnly === true;
        try {
          await s.topics.alterConfigs(record.name, changes, validateOnly);
        } catch (err) {
          if (err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw new AdminHttpError(404, 'unknown_topic', err.message);
          if (err instanceof KafkaError) throw new AdminHttpError(400, 'invalid_config', err.message);
          throw err;
        }
        const after = requireTopic(s, record.name);
        return json(200, { topic: record.name, validateOnly, configs: configsView(s, after.configs) });
      },
    },
    {
      method: 'GET',
      path: '/api/status',
      handler: async () => {
        const tables = new Map((await tablesView(s)).map((t) => [t.topic, t]));
        const topics = s.history.topics().map((topic) => ({ topic, table: tables.get(topic) ?? null, points: s.history.points(topic), quality: s.history.quality(topic) }));
        return json(200, { now: Date.now(), topics });
      },
    },
  ];
}

interface TopicView {
  readonly name: string;
  readonly tiered: boolean;
  readonly partitions: readonly PartitionView[];
  readonly lagRecords: number;
  readonly lagMs: number;
}

type PartitionView = Omit<PartitionReading, 'topic' | 'lagSeconds'> & { readonly lagMs: number | undefined };

async function topicsView(s: ApiSources): Promise<TopicView[]> {
  const readings = await s.partitions.read();
  return s.topics.metadata
    .listTopics()
    .map((t) => t.name)
    .sort()
    .map((name) => {
      const parts: PartitionView[] = readings
        .filter((r) => r.topic === name)
        .sort((a, b) => a.partition - b.partition)
        .map(({ topic: _t, lagSeconds, ...r }) => ({ ...r, lagMs: lagSeconds === undefined ? undefined : Math.round(lagSeconds * 1000) }));
      return {
        name,
        tiered: s.tiering?.isTiered(name) ?? false,
        partitions: parts,
        lagRecords: parts.reduce((m, p) => Math.max(m, p.lagRecords ?? 0), 0),
        lagMs: parts.reduce((m, p) => Math.max(m, p.lagMs ?? 0), 0),
      };
    });
}

interface TableView extends TableStats {
  readonly topic: string;
  readonly lagRecords: number;
  readonly lagMs: number;
}

async function tablesView(s: ApiSources): Promise<TableView[]> {
  if (s.tiering === undefined) return [];
  const out: TableView[] = [];
  for (const t of await topicsView(s)) {
    if (!t.tiered) continue;
    const stats = await s.tiering.tableStats(t.name);
    if (stats !== undefined) out.push({ topic: t.name, ...stats, lagRecords: t.lagRecords, lagMs: t.lagMs });
  }
  return out;
}

async function tableDetail(s: ApiSources, topic: string): Promise<unknown> {
  const tiering = requireTiering(s);
  const view = (await tablesView(s)).find((t) => t.topic === topic);
  const partitions = (await topicsView(s)).find((t) => t.name === topic)?.partitions ?? [];
  return { ...view, topic, partitions, snapshots: (await tiering.snapshots(topic)) ?? [], quality: s.history.quality(topic) };
}

/**
 * The closed segments of the topic its table does not hold yet (a backfill after tables were turned on, a
 * catch-up): how many and how many bytes, and while it is large enough to report, the share done, the rate
 * and the time left.
 */
function backlogView(s: ApiSources, topic: string): unknown {
  const b = requireTiering(s).backlogs().find((x) => x.topic === topic);
  const p = b?.progress;
  return {
    topic,
    table: s.tiering?.tableName(topic),
    segments: b?.backlog.segments ?? 0,
    bytes: b?.backlog.bytes ?? 0,
    ...(p !== undefined
      ? { progress: { percent: p.percent, doneBytes: p.doneBytes, totalBytes: p.totalBytes, bytesPerSecond: p.bytesPerSecond, etaSeconds: p.etaSeconds ?? null, elapsedSeconds: p.elapsedSeconds } }
      : {}),
  };
}

/** The topic whose table `{table}` names (`namespace.name` or the topic), or 404. */
function tableTopic(s: ApiSources, req: AdminRequest): string {
  const name = req.params.table ?? '';
  const tiering = s.tiering;
  const tiered = tiering === undefined ? [] : s.topics.metadata.listTopics().filter((t) => tiering.isTiered(t.name));
  const byTopic = tiered.find((t) => t.name === name);
  if (byTopic !== undefined) return byTopic.name;
  const byTable = tiered.find((t) => `${tiering?.tableName(t.name) ?? ''}` === name);
  if (byTable !== undefined) return byTable.name;
  const known = tiered.map((t) => tiering?.tableName(t.name) ?? t.name);
  throw new AdminHttpError(404, 'unknown_table', `no table '${name}'${tiering === undefined ? ' (tiered storage is off: remote.log.storage.system.enable=false)' : ''}; tables: ${known.join(', ') || 'none'} (floe tables lists them)`);
}

function requireTopic(s: ApiSources, name: string): { name: string; configs: Readonly<Record<string, string>> } {
  const record = s.topics.getTopic(name);
  if (record === undefined) throw new AdminHttpError(404, 'unknown_topic', `topic '${name}' does not exist; floe topics lists the topics`);
  return record;
}

function requireTiering(s: ApiSources): BrokerTiering {
  if (s.tiering === undefined) throw new AdminHttpError(409, 'not_tiered', 'tiered storage is off on this broker (remote.log.storage.system.enable=false); there are no tables');
  return s.tiering;
}

function configsView(s: ApiSources, overrides: Readonly<Record<string, string>>): Record<string, { value: string; source: string }> {
  const out: Record<string, { value: string; source: string }> = {};
  const eff = effectiveConfigs(overrides, s.topics.config);
  for (const name of [...eff.keys()].sort()) {
    const e = eff.get(name);
    if (e !== undefined) out[name] = { value: e.value, source: SOURCE_NAMES[e.source] ?? String(e.source) };
  }
  return out;
}

/** Tiering errors as HTTP errors. */
async function runbookCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof TieringError) {
      const map: Partial<Record<TieringError['code'], [number, string]>> = {
        NOT_FOUND: [404, 'unknown_snapshot'],
        WOULD_LOSE_KAFKA_DATA: [409, 'would_lose_kafka_data'],
        NOT_TIERED: [409, 'not_tiered'],
        OFFSET_OUT_OF_RANGE: [400, 'out_of_range'],
        HISTORY_CHANGED: [409, 'conflict'],
      };
      const [status, code] = map[err.code] ?? [500, 'internal_error'];
      throw new AdminHttpError(status, code, err.message);
    }
    throw err;
  }
}

function jsonBody(req: AdminRequest): Record<string, unknown> {
  if (req.body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new AdminHttpError(400, 'bad_request', 'the request body is not JSON; send a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AdminHttpError(400, 'bad_request', 'the request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

function optionalInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new AdminHttpError(400, 'bad_request', `"${key}" must be a non-negative integer`);
  return v;
}

function requiredInt(body: Record<string, unknown>, key: string): number {
  const v = optionalInt(body, key);
  if (v === undefined) throw new AdminHttpError(400, 'bad_request', `"${key}" is required (a non-negative integer)`);
  return v;
}
