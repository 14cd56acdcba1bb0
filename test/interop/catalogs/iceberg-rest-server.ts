/**
 * Apache Iceberg's own REST catalog server (org.apache.iceberg.rest.RESTCatalogServer from the
 * iceberg-open-api test-fixtures jar, installed by scripts/peers/50-iceberg-rest.sh) as an external catalog
 * for the tests: a JVM on 127.0.0.1 and a free port, configured the way its docker image is, with CATALOG_*
 * environment variables (CATALOG_IO__IMPL becomes io-impl, CATALOG_S3_ENDPOINT s3.endpoint, ...). Behind it
 * is a JdbcCatalog on a SQLite file, so `stop()` then `start()` again keeps every table (the "catalog down for
 * a while" test); its warehouse is a bucket of a test S3 server, written with Iceberg's S3FileIO. That server
 * must decode aws-chunked uploads (streaming SigV4, which Iceberg 1.10's AWS SDK uses over http): moto does,
 * s3rver keeps the chunk framing in the object. It issues OAuth2 tokens at /v1/oauth/tokens for client
 * credentials (its RESTCatalogAdapter does) and checks none on the other requests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { S3TestServer } from '../../helpers/s3-server.js';

const PEERS = process.env['FLOE_PEERS'] ?? join(homedir(), '.cache', 'floe-peers');

/** An external Iceberg REST catalog server run by a test. */
export interface ExternalCatalogServer {
  /** The catalog's base URI, for iceberg.catalog.uri (the same across restarts). */
  readonly uri: string;
  /** `<uri>/v1` plus the catalog's prefix: `<tablesBase>/namespaces/...` are its namespace and table endpoints. */
  readonly tablesBase: string;
  /** The catalog's warehouse, `s3://<bucket>/<prefix>`. */
  readonly warehouse: string;
  /** Starts it again on the same port and database (after stop). */
  start(): Promise<void>;
  /** Stops it (SIGKILL: the catalog is simply gone, as in an outage); its database file stays. */
  stop(): Promise<void>;
  output(): string;
}

/** A port free on 127.0.0.1 right now (for a server that needs its port before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts the server over `s3` (bucket `bucket`, which must exist) with its SQLite database in `dir`. */
export async function startIcebergRestServer(s3: S3TestServer, options: { dir: string; bucket: string; prefix?: string }): Promise<ExternalCatalogServer> {
  const classpath = (await readFile(join(PEERS, 'iceberg-rest', 'classpath'), 'utf8').catch(() => {
    throw new Error(`no ${join(PEERS, 'iceberg-rest', 'classpath')}: run bash scripts/install-peers.sh (scripts/peers/50-iceberg-rest.sh) first`);
  })).trim();
  const port = await freePort();
  const uri = `http://127.0.0.1:${port}`;
  const warehouse = `s3://${options.bucket}/${options.prefix ?? 'catalog'}`;
  const env = {
    ...process.env,
    CATALOG_REST_PORT: String(port),
    CATALOG_URI: `jdbc:sqlite:${join(options.dir, 'catalog.db')}`,
    CATALOG_JDBC_SCHEMA__VERSION: 'V1',
    // One connection: SQLite takes one writer at a time, and two pooled connections committing to different
    // tables at once leave one SQLITE_BUSY for good.
    CATALOG_CLIENTS: '1',
    CATALOG_WAREHOUSE: warehouse,
    CATALOG_IO__IMPL: 'org.apache.iceberg.aws.s3.S3FileIO',
    CATALOG_S3_ENDPOINT: s3.endpoint,
    CATALOG_S3_PATH__STYLE__ACCESS: 'true',
    CATALOG_S3_ACCESS__KEY__ID: s3.credentials.accessKeyId,
    CATALOG_S3_SECRET__ACCESS__KEY: s3.credentials.secretAccessKey,
    CATALOG_CLIENT_REGION: s3.region,
    AWS_REGION: s3.region,
    // Plain checksums, as most S3-compatible stores expect (not the SDK's newer trailing ones).
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  };
  let child: ChildProcess | undefined;
  let out = '';
  const start = async (): Promise<void> => {
    out = '';
    const c = spawn('java', ['-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Daws.requestChecksumCalculation=WHEN_REQUIRED', '-Daws.responseChecksumValidation=WHEN_REQUIRED', '-cp', classpath, 'org.apache.iceberg.rest.RESTCatalogServer'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(c, 'exit');
    // Ready when /v1/config answers (the JVM takes a second or two).
    for (const deadline = Date.now() + 60_000; ; ) {
      if (c.exitCode !== null) throw new Error(`the Iceberg REST catalog server exited with ${String(c.exitCode)}:\n${out}`);
      const ok = await fetch(`${uri}/v1/config`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline) {
        c.kill('SIGKILL');
        await exited;
        throw new Error(`the Iceberg REST catalog server did not answer within 60 s:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const exited = once(c, 'exit');
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return { uri, tablesBase: `${uri}/v1`, warehouse, start, stop, output: () => out };
}
