/**
 * What the external catalog tests share: an s3rver bucket with Apache Iceberg's REST catalog server over it
 * (iceberg-rest-server.ts), the broker flags that make Floe register its tables there, a wait for a table to
 * hold every offset of its partitions (read from the external catalog itself, not through Floe), and
 * pyiceberg reading the table through the external catalog (test/interop/engines/pyiceberg_driver.py).
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJson } from '../../../iceberg/json.js';
import { venvPython } from '../../helpers/peers.js';
import type { BrokerProcess } from '../../helpers/broker.js';
import type { S3TestServer } from '../../helpers/s3-server.js';
import { latestProperty, waitFor } from '../../helpers/tiered-table.js';
import { ChildRunner } from '../clients/process.js';
import type { ExternalCatalogServer } from './iceberg-rest-server.js';

const DRIVER = fileURLToPath(new URL('../engines/pyiceberg_driver.py', import.meta.url));

/**
 * Broker flags: data files in `s3://<bucket>/wh`, tables registered in the catalog at `catalog` (its uri, or a
 * proxy's), authenticated by `auth` (default: OAuth2 client credentials).
 */
export function externalCatalogFlags(s3: S3TestServer, catalog: { readonly uri: string }, bucket: string, auth: readonly string[] = ['--iceberg.catalog.credential=floe:floe-secret']): string[] {
  return [
    `--iceberg.warehouse=s3://${bucket}/wh`,
    `--iceberg.s3.endpoint=${s3.endpoint}`,
    `--iceberg.s3.region=${s3.region}`,
    '--iceberg.s3.path.style.access=true',
    `--iceberg.s3.access.key.id=${s3.credentials.accessKeyId}`,
    `--iceberg.s3.secret.access.key=${s3.credentials.secretAccessKey}`,
    '--iceberg.catalog.type=rest',
    `--iceberg.catalog.uri=${catalog.uri}`,
    ...auth,
  ];
}

/** Stops a broker process with SIGTERM, unless it has ended already. */
export async function stopBroker(b: BrokerProcess): Promise<void> {
  if (b.child.exitCode !== null || b.child.signalCode !== null) return;
  b.child.kill('SIGTERM');
  await b.exited;
}

/** The base offset of a partition's oldest local segment: above 0 once segments were handed off to the table. */
export async function localStart(logDir: string, topic: string, partition: number): Promise<number> {
  const names = (await readdir(join(logDir, `${topic}-${partition}`))).filter((n) => n.endsWith('.log'));
  return Math.min(...names.map((n) => Number(n.slice(0, -4))));
}

/** The table's LoadTableResult from the external catalog itself, undefined when it has no such table. */
export async function loadExternal(catalog: ExternalCatalogServer, table: string, namespace = 'kafka'): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${catalog.tablesBase}/namespaces/${encodeURIComponent(namespace)}/tables/${encodeURIComponent(table)}`);
  if (res.status === 404) return undefined;
  if (!res.ok) throw new Error(`load table ${namespace}.${table} from ${catalog.uri}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The committed offset of each partition in the table's latest snapshot, as the external catalog has it. */
export async function committedOffsets(catalog: ExternalCatalogServer, table: string, partitions: number, namespace = 'kafka'): Promise<number[] | undefined> {
  const load = await loadExternal(catalog, table, namespace);
  if (load === undefined) return undefined;
  return Array.from({ length: partitions }, (_, p) => Number(latestProperty(load, `floe.kafka.committed-offset.${p}`) ?? -1));
}

/** Waits until the external catalog's table holds every partition up to `ends` (exclusive log ends). */
export async function waitForTable(catalog: ExternalCatalogServer, table: string, ends: readonly number[], deadlineMs = 90_000): Promise<void> {
  await waitFor(`table ${table} in the external catalog to hold offsets up to ${JSON.stringify(ends)}`, async () => {
    const c = await committedOffsets(catalog, table, ends.length);
    return c !== undefined && c.every((o, p) => o === (ends[p] ?? 0) - 1) ? true : undefined;
  }, deadlineMs, 200);
}

export interface PyRow {
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  readonly value: string;
}

/** Every row of `kafka.<table>` as pyiceberg reads it through the external catalog (S3 settings given to it). */
export async function pyicebergRows(runner: ChildRunner, s3: S3TestServer, catalog: ExternalCatalogServer, table: string): Promise<PyRow[]> {
  const props = {
    type: 'rest',
    uri: catalog.uri,
    's3.endpoint': s3.endpoint,
    's3.path-style-access': 'true',
    's3.region': s3.region,
    's3.access-key-id': s3.credentials.accessKeyId,
    's3.secret-access-key': s3.credentials.secretAccessKey,
  };
  const input = JSON.stringify({ catalog: props, table: `kafka.${table}`, scans: [{ filter: null }] });
  const { stdout } = await runner.run(venvPython(), [DRIVER], input, 120_000);
  const res = parseJson(stdout.toString()) as unknown as { scans: { rows: [Record<string, unknown>, { b64: string } | null][] }[] };
  const rows = res.scans[0]?.rows ?? [];
  const text = (v: unknown) => (v === null || v === undefined ? '' : Buffer.from((v as { b64: string }).b64, 'base64').toString());
  return rows.map(([k, v]) => ({ partition: Number(k['partition']), offset: Number(k['offset']), key: text(k['key']), value: text(v) }));
}

/** Asserts the table rows of one partition are exactly what kcat read from Kafka (offsets, keys, values). */
export function assertSameRows(rows: readonly PyRow[], partition: number, kafka: readonly { offset: number; key: string; value: string }[]): void {
  const mine = rows.filter((r) => r.partition === partition).map((r) => ({ offset: r.offset, key: r.key, value: r.value }));
  assert.equal(mine.length, kafka.length, `partition ${partition}: as many table rows as Kafka records`);
  assert.deepEqual(mine, kafka.map((r) => ({ offset: r.offset, key: r.key, value: r.value })), `partition ${partition}: table rows are the Kafka records`);
}

export { ChildRunner };
