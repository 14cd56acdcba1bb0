/**
 * Builds the Iceberg-topic tiering stack from plain settings: the warehouse's FileIO (a folder or s3://), the
 * catalog (the built-in warehouse catalog, or a client of an external Iceberg REST catalog wrapped so that the
 * Kafka path never depends on it: last-known-catalog.ts), the plugin, and the Iceberg REST catalog server
 * over that catalog (in front of the external one, when there is one). The broker hands in configuration
 * and gets back the plugin and one `close()`; it never sees a catalog or a FileIO.
 */
import { mkdir, rm } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Catalog, TableIdentifier } from '../../iceberg/catalog/catalog.js';
import { parseCredential } from '../../iceberg/catalog/oauth2.js';
import { RestCatalogClient } from '../../iceberg/catalog/rest-client.js';
import type { SigV4Options } from '../../iceberg/catalog/sigv4.js';
import { WarehouseCatalog } from '../../iceberg/catalog/warehouse.js';
import type { FileIO } from '../../iceberg/io/file-io.js';
import { createFileIO, schemeOf } from '../../iceberg/io/registry.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../iceberg/rest/server.js';
import type { BacklogReport, TieringObserver, TieringPlugin } from './api.js';
import { crashAfterCatalogCommit, crashInsideCommit } from './crash-points.js';
import { LastKnownCatalog } from './last-known-catalog.js';
import { isMaintenanceProperty } from './table-maintenance.js';
import { IcebergTieringPlugin, type PluginCompactionOptions } from './iceberg-tiering.js';
import type { SegmentCodec } from './segment-codec.js';

export interface IcebergTieringSettings {
  /** A folder (relative to the working directory or absolute) or a URL such as s3://bucket/prefix. */
  readonly warehouse: string;
  /** Empty strings mean "not set": the AWS SDK's own defaults then apply. */
  readonly s3: {
    readonly endpoint: string;
    readonly region: string;
    readonly pathStyleAccess: boolean;
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
  };
  /** Where tables are registered: the built-in catalog (default) or an external REST catalog. */
  readonly catalog?: ExternalCatalogSettings | { readonly type: 'builtin' };
  /**
   * The REST catalog server; port -1 runs none, 0 picks a free port. Token '' means no authentication
   * unless `auth` is given (which then decides, token included); `createServer` builds an HTTPS server.
   */
  readonly rest: {
    readonly port: number;
    readonly host: string;
    readonly token: string;
    readonly createServer?: RestCatalogServerOptions['createServer'];
    readonly auth?: RestCatalogServerOptions['auth'];
  };
  readonly maxConcurrentCopies: number;
  readonly codec: SegmentCodec;
  /** A tiering step failed and will be retried. */
  readonly onError: (err: unknown, context: Record<string, unknown>) => void;
  /** Background compaction (rate limit, scratch folder: emptied here when given); see iceberg-tiering.ts. */
  readonly compaction?: PluginCompactionOptions;
  /** Informational lines (compactions). */
  readonly onInfo?: (message: string, context: Record<string, unknown>) => void;
  readonly onWarn?: (message: string, context: Record<string, unknown>) => void;
  /** Told about each copy and commit (metrics). */
  readonly observer?: TieringObserver;
  /** Table maintenance: how often it runs (0: never) and how old an unreferenced file must be to go. */
  readonly maintenance?: { readonly intervalMs: number; readonly orphanWindowMs: number };
  /** Copy no segment until the broker attaches its transaction state (plugin.attachTransactions). */
  readonly waitForTransactions?: boolean;
  /** Bytes of local segments copied per second at most; unlimited when absent. */
  readonly copyBytesPerSecond?: number;
  /** A topic's large backlog (a backfill, a catch-up): started, progressing, done. */
  readonly onBacklog?: (report: BacklogReport) => void;
}

/** An external Iceberg REST catalog (the broker's iceberg.catalog.* settings; '' means not set). */
export interface ExternalCatalogSettings {
  readonly type: 'rest';
  readonly uri: string;
  readonly warehouse: string;
  readonly prefix: string;
  readonly token: string;
  /** `client_id:client_secret` for OAuth2 client credentials. */
  readonly credential: string;
  readonly oauth2ServerUri: string;
  readonly scope: string;
  /** AWS SigV4 signing of every request (Glue, S3 Tables); absent: none. Empty keys: the default chain. */
  readonly sigv4?: {
    readonly region: string;
    readonly signingName: string;
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken: string;
  };
}

/** The signer's settings: the region falls back to AWS_REGION / AWS_DEFAULT_REGION, as the AWS SDKs do. */
function sigv4Options(s: NonNullable<ExternalCatalogSettings['sigv4']>): SigV4Options {
  const region = s.region !== '' ? s.region : process.env['AWS_REGION'] || process.env['AWS_DEFAULT_REGION'] || '';
  if (region === '') throw new Error('iceberg.catalog.sigv4.enabled needs a region: set iceberg.catalog.signing.region (or AWS_REGION)');
  const credentials = s.accessKeyId === '' ? undefined : { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey, ...(s.sessionToken !== '' ? { sessionToken: s.sessionToken } : {}) };
  return { region, service: s.signingName, ...(credentials !== undefined ? { credentials } : {}) };
}

const S3_SCHEMES = new Set(['s3', 's3a', 's3n']);

/**
 * An external catalog chooses table locations; Floe writes there with the FileIO of iceberg.warehouse. Says
 * why that FileIO cannot (another kind of storage, or a folder outside the warehouse), else undefined.
 */
export function storageMismatch(warehouse: string, location: string): string | undefined {
  const want = schemeOf(warehouse) ?? 'file';
  const got = schemeOf(location) ?? 'file';
  const fix = 'set iceberg.warehouse (and iceberg.s3.*) to the storage of the external catalog\'s warehouse';
  if (S3_SCHEMES.has(want) && S3_SCHEMES.has(got)) return undefined;
  if (want !== got) return `Floe's warehouse is ${warehouse}, whose storage cannot write ${got}:// locations; ${fix}`;
  if (want === 'file' && !`${location}/`.startsWith(`${warehouse}/`)) return `the folder is outside Floe's warehouse ${warehouse}; ${fix}`;
  return undefined;
}

/** The catalog tiering commits through. */
function openCatalog(settings: IcebergTieringSettings, io: FileIO, warehouse: string, tableConfig: Record<string, string>): Catalog {
  const c = settings.catalog;
  if (c === undefined || c.type === 'builtin') return new WarehouseCatalog({ io: crashInsideCommit(io), warehouse, tableConfig });
  const credential = c.credential === '' ? undefined : parseCredential(c.credential);
  if (c.credential !== '' && credential === undefined) throw new Error('iceberg.catalog.credential must be client_id:client_secret');
  const client = new RestCatalogClient({
    uri: c.uri,
    name: c.uri,
    ...(c.warehouse !== '' ? { warehouse: c.warehouse } : {}),
    ...(c.prefix !== '' ? { prefix: c.prefix } : {}),
    ...(c.token !== '' ? { token: c.token } : {}),
    ...(credential !== undefined ? { credential: { ...credential, scope: c.scope, ...(c.oauth2ServerUri !== '' ? { oauth2ServerUri: c.oauth2ServerUri } : {}) } } : {}),
    ...(c.sigv4 !== undefined ? { sigv4: sigv4Options(c.sigv4) } : {}),
    fetch: crashAfterCatalogCommit((input, init) => globalThis.fetch(input, init)),
  });
  const fallback = (id: TableIdentifier, err: unknown) =>
    settings.onWarn?.('the external catalog is unreachable: table loaded from its last known metadata file, commits wait for the catalog', { table: `${id.namespace.join('.')}.${id.name}`, catalog: c.uri, err });
  return new LastKnownCatalog(client, io, warehouse, fallback);
}

export interface OpenedIcebergTiering {
  readonly plugin: TieringPlugin;
  /** The warehouse as a URL (`file:///abs/path` for a folder). */
  readonly warehouse: string;
  /** The REST catalog's URL, when it runs. */
  readonly restUrl: string | undefined;
  /** Stops the REST server, then the plugin (which commits what it copied), then the FileIO. */
  close(): Promise<void>;
}

/** `./data/warehouse` -> `file:///abs/data/warehouse`; URLs pass through. */
export function warehouseLocation(setting: string): string {
  if (schemeOf(setting) !== undefined && !/^[A-Za-z]:[\\/]/.test(setting)) return setting.replace(/\/+$/, '');
  const abs = isAbsolute(setting) ? setting : resolve(setting);
  return pathToFileURL(abs).href.replace(/\/+$/, '');
}

/**
 * The storage settings every loaded table's `config` carries for engines (REST LoadTableResult), so that an
 * engine configured with the catalog URI (and its own credentials) finds an S3-compatible warehouse. Both
 * spellings of the region: `client.region` is Iceberg Java's (S3FileIO in Spark, Flink), `s3.region`
 * pyiceberg's; Java ignores `s3.region` and fails to build its S3 client without a region. The broker's own
 * keys are never handed out.
 */
export function readerTableConfig(s3: IcebergTieringSettings['s3']): Record<string, string> {
  const config: Record<string, string> = {};
  if (s3.endpoint !== '') {
    config['s3.endpoint'] = s3.endpoint;
    config['s3.path-style-access'] = String(s3.pathStyleAccess);
  }
  if (s3.region !== '') {
    config['s3.region'] = s3.region;
    config['client.region'] = s3.region;
  }
  return config;
}

export async function openIcebergTiering(settings: IcebergTieringSettings): Promise<OpenedIcebergTiering> {
  const warehouse = warehouseLocation(settings.warehouse);
  if (warehouse.startsWith('file:')) await mkdir(new URL(warehouse), { recursive: true });
  // The scratch folder is this broker's alone: what a crash left in it is garbage.
  const scratch = settings.compaction?.tmpDir;
  if (scratch !== undefined) {
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
  }
  const { endpoint, region, accessKeyId, secretAccessKey, pathStyleAccess } = settings.s3;
  const io = createFileIO(warehouse, {
    s3: {
      ...(endpoint !== '' ? { endpoint, forcePathStyle: pathStyleAccess } : {}),
      ...(region !== '' ? { region } : {}),
      ...(accessKeyId !== '' ? { credentials: { accessKeyId, secretAccessKey } } : {}),
    },
  });
  const tableConfig = readerTableConfig(settings.s3);
  const catalog = openCatalog(settings, io, warehouse, tableConfig);
  const plugin = new IcebergTieringPlugin({
    catalog,
    io,
    ...(settings.catalog?.type === 'rest' ? { checkLocation: (location: string) => storageMismatch(warehouse, location) } : {}),
    codec: settings.codec,
    maxConcurrentCopies: settings.maxConcurrentCopies,
    onError: settings.onError,
    ...(settings.compaction !== undefined ? { compaction: settings.compaction } : {}),
    ...(settings.onInfo !== undefined ? { onInfo: settings.onInfo } : {}),
    ...(settings.onWarn !== undefined ? { onWarn: settings.onWarn } : {}),
    ...(settings.observer ? { observer: settings.observer } : {}),
    ...(settings.waitForTransactions === true ? { waitForTransactions: true } : {}),
    ...(settings.copyBytesPerSecond !== undefined ? { copyBytesPerSecond: settings.copyBytesPerSecond } : {}),
    ...(settings.onBacklog !== undefined ? { onBacklog: settings.onBacklog } : {}),
    ...(settings.maintenance ? { maintenanceIntervalMs: settings.maintenance.intervalMs, maintenance: { orphanWindowMs: settings.maintenance.orphanWindowMs } } : {}),
  });
  const { port, host, token, createServer, auth } = settings.rest;
  let rest: RestCatalogServer | undefined;
  let restUrl: string | undefined;
  if (port >= 0) {
    rest = new RestCatalogServer({ catalog, port, host, warehouse, tableConfig, settableWhenReadOnly: isMaintenanceProperty,
      ...(token !== '' ? { token } : {}),
      ...(createServer ? { createServer } : {}),
      ...(auth ? { auth } : {}),
    });
    try {
      restUrl = (await rest.start()).url;
    } catch (err) {
      await plugin.close();
      await io.close();
      throw new Error(`cannot start the Iceberg REST catalog on ${host}:${port} (${(err as Error).message}); free the port, pick another with iceberg.rest.port, or set it to -1`, { cause: err });
    }
  }
  return {
    plugin,
    warehouse,
    restUrl,
    async close() {
      await rest?.close();
      await plugin.close();
      await io.close();
    },
  };
}
