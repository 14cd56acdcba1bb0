// Orphan removal with the broker as users run it: kill -9 mid-upload, before and inside table commits leaves
// objects no snapshot will ever name (offset-index manifests of commits that never landed, a table metadata
// file the catalog pointer was never swapped to). Once they are older than iceberg.orphan.files.older.than.ms,
// the restarted broker deletes them, and nothing referenced goes: every acknowledged record is still read
// from Parquet (the crash harness checks Kafka reads and the table).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../../helpers/broker.js';
import { crashCycle, restartAndVerify, TOPIC, type Acked, type CrashSetup } from '../../helpers/crash-harness.js';
import { tableRows, waitFor } from '../../helpers/tiered-table.js';
import { WarehouseCatalog } from '../../../iceberg/catalog/warehouse.js';
import { LocalFileIO } from '../../../iceberg/io/local.js';

const WINDOW_MS = 8000;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

interface Referenced {
  readonly history: Set<string>;
  readonly metadata: Set<string>;
}

/** The offset-index manifests the table's snapshots name and the metadata files it keeps (current and log), as file paths. */
function referenced(load: Record<string, unknown>): Referenced {
  const md = load['metadata'] as { snapshots?: { summary: Record<string, string> }[]; 'metadata-log'?: { 'metadata-file': string }[] };
  const path = (l: string): string => (l.startsWith('file:') ? new URL(l).pathname : l);
  const history = new Set((md.snapshots ?? []).flatMap((s) => Object.entries(s.summary).filter(([k]) => k.startsWith('floe.kafka.segments.')).map(([, v]) => path(v))));
  const metadata = new Set([...(md['metadata-log'] ?? []).map((e) => path(e['metadata-file'])), path(load['metadata-location'] as string)]);
  return { history, metadata };
}

test('objects that kills before and inside commits left behind are deleted once older than the window, and nothing referenced is', { timeout: 300_000 }, async (t) => {
  const root = await tempDir('floe-orphans-');
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  const logDir = join(root, 'log');
  const warehouse = join(root, 'warehouse');
  const setup: CrashSetup = {
    warehouseFlags: [`--iceberg.warehouse=${warehouse}`, `--iceberg.orphan.files.older.than.ms=${WINDOW_MS}`, '--iceberg.maintenance.interval.ms=500'],
    readRows: (restUrl) => tableRows(restUrl, TOPIC, warehouse),
  };
  const points = ['mid-upload', 'before-commit', 'mid-commit', 'before-commit:2', 'mid-commit:2'];
  const acked: Acked[] = [];
  for (const [i, point] of points.entries()) acked.push(...(await crashCycle(setup, logDir, point, `o${i}`, i === 0)));
  const leftovers = (await filesUnder(warehouse)).filter((f) => /\/kafka-index\/.*segments-.*\.json$|\/metadata\/.*\.metadata\.json$/.test(f));
  // Older than the window before the broker that cleans up starts.
  await new Promise((r) => setTimeout(r, WINDOW_MS + 500));

  const { rows } = await restartAndVerify(setup, logDir, acked, cleanups);
  assert.ok(rows.length > 0);

  // What the table references now, read from the warehouse as a second reader would.
  const io = new LocalFileIO({ root: pathToFileURL(warehouse).href, fsync: false });
  const catalog = new WarehouseCatalog({ io, warehouse: pathToFileURL(warehouse).href });
  const current = async (): Promise<Referenced> => {
    const { metadata, metadataLocation } = await catalog.loadTable({ namespace: ['kafka'], name: TOPIC });
    return referenced({ metadata, 'metadata-location': metadataLocation });
  };
  const ref = await current();
  const orphans = leftovers.filter((f) => !ref.history.has(f) && !ref.metadata.has(f));
  assert.ok(orphans.length > 0, `the kills left objects no snapshot names (of ${leftovers.length} history and metadata files)`);
  let remaining = orphans;
  await waitFor('the orphans to be deleted', async () => {
    const left = new Set(await filesUnder(warehouse));
    remaining = orphans.filter((f) => left.has(f));
    return remaining.length === 0 ? true : undefined;
  }, 60_000, 250).catch(() => undefined);
  assert.deepEqual(remaining, []);
  // Nothing the table references went: every history object and metadata file it names is there.
  const after = await current();
  const present = new Set(await filesUnder(warehouse));
  for (const f of after.history) assert.ok(present.has(f), `${f} is named by a snapshot and kept`);
  assert.ok(present.has([...after.metadata].at(-1) as string), 'the current metadata file is kept');
  t.diagnostic(`${points.length} kills left ${orphans.length} orphaned history and metadata objects; all deleted after the ${WINDOW_MS} ms window`);
});
