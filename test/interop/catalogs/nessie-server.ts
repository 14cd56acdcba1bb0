/**
 * Project Nessie's server (the nessie-quarkus 0.99.0 runner jar from Maven Central, installed by
 * scripts/peers/52-nessie.sh with the JDK 21+ it needs) as an external catalog for the tests: its Iceberg REST
 * API is under <http://127.0.0.1:port>/iceberg. A JVM on 127.0.0.1 and a free port, configured with -D system
 * properties (Nessie's application.properties keys). Its version store is RocksDB in a directory of the test,
 * so `stop()` then `start()` again keeps every table (the "catalog down for a while" test); Nessie's default
 * in-memory store would lose them. Its one warehouse is a bucket of moto's S3 server, which Nessie itself
 * writes table metadata to (with its own AWS SDK client), with the S3 access key given through Nessie's
 * secrets indirection (urn:nessie-secret:quarkus:<name>, resolved from the properties <name>.name and
 * <name>.secret). Authentication is off: Nessie issues no OAuth2 tokens of its own (its /v1/oauth/tokens
 * answers 501 and points at an OpenID Connect server's, oauth2-server-uri), so the broker sends no credential.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { S3TestServer } from '../../helpers/s3-server.js';
import { freePort, type ExternalCatalogServer } from './iceberg-rest-server.js';

const PEERS = process.env['FLOE_PEERS'] ?? join(homedir(), '.cache', 'floe-peers');
const NESSIE = join(PEERS, 'nessie');

/** The runner jar and the java to run it with, as scripts/peers/52-nessie.sh recorded them. */
async function installed(): Promise<{ jar: string; java: string }> {
  const read = (name: string) => readFile(join(NESSIE, name), 'utf8').then((s) => s.trim(), () => {
    throw new Error(`no ${join(NESSIE, name)}: run bash scripts/install-peers.sh (scripts/peers/52-nessie.sh) first`);
  });
  return { jar: await read('jar'), java: await read('java') };
}

/** Starts Nessie over `s3` (bucket `bucket`, which must exist) with its RocksDB version store in `dir`. */
export async function startNessieServer(s3: S3TestServer, options: { dir: string; bucket: string; prefix?: string }): Promise<ExternalCatalogServer> {
  const { jar, java } = await installed();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const uri = `${base}/iceberg`;
  const warehouse = `s3://${options.bucket}/${options.prefix ?? 'catalog'}`;
  const props: Record<string, string> = {
    'quarkus.http.host': '127.0.0.1',
    'quarkus.http.port': String(port),
    // The management port (health, metrics) is not used; its default 9000 may be taken.
    'quarkus.management.enabled': 'false',
    'quarkus.log.console.level': process.env['NESSIE_LOG'] ?? 'WARN',
    'quarkus.log.category."io.quarkus.http.access-log".level': 'WARN',
    'quarkus.otel.sdk.disabled': 'true',
    'nessie.version.store.type': 'ROCKSDB',
    'nessie.version.store.persist.rocks.database-path': join(options.dir, 'nessie-rocksdb'),
    'nessie.catalog.default-warehouse': 'warehouse',
    'nessie.catalog.warehouses.warehouse.location': warehouse,
    'nessie.catalog.service.s3.default-options.endpoint': s3.endpoint,
    'nessie.catalog.service.s3.default-options.path-style-access': 'true',
    'nessie.catalog.service.s3.default-options.region': s3.region,
    'nessie.catalog.service.s3.default-options.access-key': 'urn:nessie-secret:quarkus:floe-test-s3',
    'floe-test-s3.name': s3.credentials.accessKeyId,
    'floe-test-s3.secret': s3.credentials.secretAccessKey,
  };
  const args = ['-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`), '-jar', jar];
  let child: ChildProcess | undefined;
  let out = '';
  let prefix = '';
  const start = async (): Promise<void> => {
    out = '';
    const c = spawn(java, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.dir });
    child = c;
    c.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(c, 'exit');
    // Ready when /iceberg/v1/config answers (Quarkus starts in a few seconds); its prefix names the branch.
    for (const deadline = Date.now() + 90_000; ; ) {
      if (c.exitCode !== null) throw new Error(`Nessie exited with ${String(c.exitCode)}:\n${out}`);
      const config = await fetch(`${uri}/v1/config`).then(async (r) => (r.ok ? ((await r.json()) as { overrides?: Record<string, string>; defaults?: Record<string, string> }) : undefined), () => undefined);
      // (This Nessie, not whatever else may have taken the port meanwhile.)
      if (config?.overrides?.['nessie.is-nessie-catalog'] === 'true' && c.exitCode === null) {
        prefix = config.overrides?.['prefix'] ?? config.defaults?.['prefix'] ?? '';
        break;
      }
      if (Date.now() > deadline) {
        c.kill('SIGKILL');
        await exited;
        throw new Error(`Nessie did not answer within 90 s:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 250));
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
  const tablesBase = prefix === '' ? `${uri}/v1` : `${uri}/v1/${encodeURIComponent(prefix)}`;
  return { uri, tablesBase, warehouse, start, stop, output: () => out };
}
