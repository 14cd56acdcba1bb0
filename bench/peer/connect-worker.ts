/**
 * Apache Kafka Connect as a conversion peer: one standalone worker (ConnectStandalone, the JVM settings of
 * connect-standalone.sh) running Apache Iceberg's sink connector from the jars bench/peer/install-connect.sh
 * resolved, writing into a Hadoop catalog on a local folder. The worker starts with no connector, so its
 * start-up (class loading, plugin scanning) can be measured apart from the conversion; the connector is then
 * created through the worker's REST API. Tables are read back from their metadata files, as any reader of
 * a Hadoop catalog does: `version-hint.text` names the current `v<N>.metadata.json`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseParquetFooter } from '../../iceberg/parquet/footer.js';
import { freePort, peersDir, watchJvm } from './kafka-broker.js';

/** The classpath of Kafka Connect with Iceberg's sink; throws with what to run when it is missing. */
export function connectClasspath(): string {
  const file = join(peersDir(), 'kafka-connect', 'classpath');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`${file} is missing: run bash bench/peer/install-connect.sh (or bench/peer/run.sh connect)`);
  }
}

export interface ConnectWorker {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly restUrl: string;
  /** The last lines the worker logged (its log is `dir`/connect.log). */
  tail(): string;
  stop(): Promise<void>;
}

/** Starts a standalone worker against Kafka at `bootstrap`, with its files in `dir`; resolves once its REST API answers. */
export async function startConnectWorker(dir: string, bootstrap: string): Promise<ConnectWorker> {
  const cp = connectClasspath();
  const restPort = await freePort();
  const worker = join(dir, 'worker.properties');
  writeFileSync(
    worker,
    [
      `bootstrap.servers=${bootstrap}`,
      // Records reach the connector as the bytes Kafka stored; the connector's transforms make the rows.
      'key.converter=org.apache.kafka.connect.converters.ByteArrayConverter',
      'value.converter=org.apache.kafka.connect.converters.ByteArrayConverter',
      `offset.storage.file.filename=${join(dir, 'connect.offsets')}`,
      // Also how long the sink task's consumer waits for records (WorkerSinkTask polls until the next offset
      // commit): once the topic is read, the Iceberg sink sees its coordinator's events only in those calls.
      // connect-standalone.properties has 10 s; 1 s lets a commit finish in about a second instead of ten.
      'offset.flush.interval.ms=1000',
      `listeners=http://127.0.0.1:${restPort}`,
      '',
    ].join('\n'),
  );
  const log4j = join(dir, 'log4j2.properties');
  writeFileSync(
    log4j,
    [
      'rootLogger.level=WARN',
      'rootLogger.appenderRef.out.ref=out',
      'appender.out.type=Console',
      'appender.out.name=out',
      'appender.out.layout.type=PatternLayout',
      'appender.out.layout.pattern=[%d] %p %m (%c{1})%n',
      // The connector's commits and the worker's task start-up, to follow a run in connect.log:
      'logger.iceberg.name=org.apache.iceberg.connect',
      'logger.iceberg.level=INFO',
      'logger.worker.name=org.apache.kafka.connect.runtime.Worker',
      'logger.worker.level=INFO',
      '',
    ].join('\n'),
  );
  // connect-standalone.sh: -Xms256M -Xmx2G and kafka-run-class.sh's GC flags.
  const jvmFlags = ['-Xms256M', '-Xmx2G', '-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35', '-XX:+ExplicitGCInvokesConcurrent', '-Djava.awt.headless=true', `-Dlog4j2.configurationFile=${log4j}`];
  const child = spawn('java', [...jvmFlags, '-cp', cp, 'org.apache.kafka.connect.cli.ConnectStandalone', worker], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logFile = createWriteStream(join(dir, 'connect.log'));
  let recent = '';
  const keep = (c: Buffer) => {
    logFile.write(c);
    recent = (recent + c.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const jvm = watchJvm(child, 'Kafka Connect', () => logFile.end());
  const restUrl = `http://127.0.0.1:${restPort}`;
  await jvm.untilReady(async () => (await fetch(`${restUrl}/connectors`)).ok, () => recent, 200);
  return {
    child,
    pid: child.pid!,
    restUrl,
    tail: () => recent.split('\n').slice(-40).join('\n'),
    stop: () => jvm.stop(),
  };
}

export interface IcebergSinkOptions {
  readonly name: string;
  readonly topic: string;
  /** `namespace.table` in the catalog. */
  readonly table: string;
  readonly warehouse: string;
  readonly controlTopic: string;
  readonly tasks: number;
  readonly commitIntervalMs: number;
}

/**
 * The sink's configuration: a Hadoop catalog on `warehouse`, the table created on the first record with
 * zstd Parquet pages, and each record made a row of its value bytes (HoistField) and the Kafka topic,
 * partition, offset and timestamp (Iceberg's own KafkaMetadataTransform, a `_kafka_metadata` struct).
 * Keys and headers are not kept: Connect has no stock transform that puts them into the row.
 */
export function icebergSinkConfig(o: IcebergSinkOptions): Record<string, string> {
  return {
    'connector.class': 'org.apache.iceberg.connect.IcebergSinkConnector',
    'tasks.max': String(o.tasks),
    topics: o.topic,
    'iceberg.tables': o.table,
    'iceberg.tables.auto-create-enabled': 'true',
    'iceberg.tables.auto-create-props.write.parquet.compression-codec': 'zstd',
    'iceberg.catalog.type': 'hadoop',
    'iceberg.catalog.warehouse': `file://${o.warehouse}`,
    'iceberg.control.topic': o.controlTopic,
    'iceberg.control.commit.interval-ms': String(o.commitIntervalMs),
    transforms: 'hoist,meta',
    'transforms.hoist.type': 'org.apache.kafka.connect.transforms.HoistField$Value',
    'transforms.hoist.field': 'value',
    'transforms.meta.type': 'org.apache.iceberg.connect.transforms.KafkaMetadataTransform',
  };
}

/** Creates the connector on the worker. */
export async function createConnector(worker: ConnectWorker, name: string, config: Record<string, string>): Promise<void> {
  const res = await fetch(`${worker.restUrl}/connectors`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, config }) });
  if (!res.ok) throw new Error(`creating connector ${name} failed: ${res.status} ${await res.text()}`);
}

/** Deletes the connector (its tasks stop; the worker goes on). */
export async function deleteConnector(worker: ConnectWorker, name: string): Promise<void> {
  const res = await fetch(`${worker.restUrl}/connectors/${name}`, { method: 'DELETE' });
  if (!res.ok) throw new Error(`deleting connector ${name} failed: ${res.status} ${await res.text()}`);
}

/** A failed task or connector, as the worker's REST API reports it (undefined while all run). */
export async function connectorFailure(worker: ConnectWorker, name: string): Promise<string | undefined> {
  const res = await fetch(`${worker.restUrl}/connectors/${name}/status`);
  if (!res.ok) return undefined; // not created yet
  const s = (await res.json()) as { connector: { state: string; trace?: string }; tasks: { id: number; state: string; trace?: string }[] };
  if (s.connector.state === 'FAILED') return `connector: ${s.connector.trace ?? ''}`;
  const t = s.tasks.find((x) => x.state === 'FAILED');
  return t === undefined ? undefined : `task ${t.id}: ${t.trace ?? ''}`;
}

export interface TableState {
  readonly totalRecords: number;
  readonly totalFilesBytes: number;
  readonly dataFiles: number;
  readonly snapshots: number;
}

interface Metadata {
  'current-snapshot-id'?: number | null;
  snapshots?: { 'snapshot-id': number; summary: Record<string, string> }[];
}

/** The current snapshot of a table given its metadata JSON; zeros when it has none. */
export function tableState(md: Metadata): TableState {
  const cur = (md.snapshots ?? []).find((s) => s['snapshot-id'] === md['current-snapshot-id']);
  const n = (k: string) => Number(cur?.summary[k] ?? 0);
  return { totalRecords: n('total-records'), totalFilesBytes: n('total-files-size'), dataFiles: n('total-data-files'), snapshots: md.snapshots?.length ?? 0 };
}

/** The current state of a Hadoop-catalog table at `location` (undefined until its first metadata file). */
export async function hadoopTableState(location: string): Promise<TableState | undefined> {
  let version: string;
  try {
    version = (await readFile(join(location, 'metadata', 'version-hint.text'), 'utf8')).trim();
  } catch {
    return undefined;
  }
  return tableState(JSON.parse(await readFile(join(location, 'metadata', `v${version}.metadata.json`), 'utf8')) as Metadata);
}

/**
 * The current state of a table in Floe's built-in catalog on a local `warehouse`, read from its files (its
 * pointer names the current metadata file) so that watching costs the broker nothing.
 */
export async function floeTableState(warehouse: string, namespace: string, table: string): Promise<TableState | undefined> {
  let location: string;
  try {
    const pointer = JSON.parse(await readFile(join(warehouse, '_floe_catalog', 'tables', namespace, `${table}.json`), 'utf8')) as { 'metadata-location': string };
    location = pointer['metadata-location'].replace(/^file:\/\//, '');
  } catch {
    return undefined; // no table yet, or the pointer is being replaced
  }
  return tableState(JSON.parse(await readFile(location, 'utf8')) as Metadata);
}

/** Every Parquet file under `dir` with the codecs of its column chunks (Parquet's enum names). */
export async function parquetCodecs(dir: string): Promise<{ files: number; codecs: Set<string> }> {
  const names = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];
  const codecs = new Set<string>();
  let files = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith('.parquet')) continue;
    files++;
    const footer = parseParquetFooter(await readFile(join(e.parentPath, e.name)));
    for (const g of footer.rowGroups) for (const c of g.columns) codecs.add(names[c.codec] ?? String(c.codec));
  }
  return { files, codecs };
}
