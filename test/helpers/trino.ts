/**
 * A Trino server for tests: the minimal server and Iceberg plugin that scripts/peers/40-trino.sh installs
 * from Maven Central, run on the Java 25 JDK as one coordinator that also schedules work, on 127.0.0.1, with
 * the catalogs a test passes (each `etc/catalog/<name>.properties`). Queried through Trino's HTTP client
 * protocol (POST /v1/statement, then follow nextUri), so no client library stands between the test and Trino.
 *
 *   const trino = await startTrino({ catalogs: { floe: { 'connector.name': 'iceberg', ... } } });
 *   t.after(() => trino.stop());
 *   const { rows } = await trino.query('SELECT count(*) FROM floe.kafka.orders');
 *
 * Start one per test file: it takes about a minute to start on two cores.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerPath } from './peers.js';

export const TRINO_VERSION = '476';

/** The JDK Trino runs on (Trino 476 needs Java 24+; the machines have 17 by default and 25 beside it). */
export function trinoJavaHome(): string {
  const home = process.env['FLOE_JAVA25_HOME'] ?? '/usr/lib/jvm/temurin-25-jdk-amd64';
  if (!existsSync(join(home, 'bin', 'java'))) throw new Error(`${home}/bin/java is missing: Trino ${TRINO_VERSION} needs a Java 25 JDK (set FLOE_JAVA25_HOME)`);
  return home;
}

export interface TrinoColumn {
  readonly name: string;
  readonly type: string;
}

export interface TrinoResult {
  readonly columns: readonly TrinoColumn[];
  /** Values as the protocol's JSON encodes them: varbinary as base64, rows and arrays as JSON arrays. */
  readonly rows: readonly (readonly unknown[])[];
}

export interface TrinoServer {
  readonly url: string;
  /** Runs one statement to its end; throws Trino's error name and message when it fails. */
  query(sql: string): Promise<TrinoResult>;
  /** The last lines Trino logged (for failure messages). */
  logTail(lines?: number): Promise<string>;
  stop(): Promise<void>;
}

export interface TrinoOptions {
  /** Catalog name -> its properties. */
  readonly catalogs: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** JVM heap (default 2G). */
  readonly heap?: string;
  /** How long to wait for the server to come up (default 240 s). */
  readonly startTimeoutMs?: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const properties = (p: Readonly<Record<string, string>>): string => Object.entries(p).map(([k, v]) => `${k}=${v}\n`).join('');

export async function startTrino(options: TrinoOptions): Promise<TrinoServer> {
  const home = peerPath(`trino-${TRINO_VERSION}`);
  const javaHome = trinoJavaHome();
  const dir = await mkdtemp(join(tmpdir(), 'floe-trino-'));
  const etc = join(dir, 'etc');
  const data = join(dir, 'data');
  await mkdir(join(etc, 'catalog'), { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await writeFile(join(etc, 'node.properties'), properties({ 'node.environment': 'floe_test', 'node.id': 'floe-test-coordinator', 'node.data-dir': data, 'node.bind-ip': '127.0.0.1', 'node.internal-address': '127.0.0.1' }));
  await writeFile(join(etc, 'jvm.config'), [
    '-server',
    `-Xmx${options.heap ?? '2G'}`,
    '-XX:+ExitOnOutOfMemoryError',
    // C1 only and the serial collector: the tables here are small, and on two busy cores this starts Trino
    // in about 40 s instead of two minutes.
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-XX:+EnableDynamicAgentLoading',
    '-Djdk.attach.allowAttachSelf=true',
    '-Dfile.encoding=UTF-8',
  ].join('\n') + '\n');
  await writeFile(join(etc, 'config.properties'), properties({
    coordinator: 'true',
    'node-scheduler.include-coordinator': 'true',
    'http-server.http.port': String(port),
    'discovery.uri': url,
    'query.max-memory': '1GB',
    'query.max-memory-per-node': '512MB',
  }));
  await writeFile(join(etc, 'log.properties'), 'io.trino=INFO\n');
  for (const [name, props] of Object.entries(options.catalogs)) await writeFile(join(etc, 'catalog', `${name}.properties`), properties(props));

  const logFile = join(dir, 'trino.log');
  const log = createWriteStream(logFile);
  // `launcher run` execs the JVM in the foreground, so the child's pid is Trino's and SIGTERM stops it.
  const child = spawn(join(home, 'bin', 'launcher'), ['run', `--etc-dir=${etc}`, `--data-dir=${data}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, JAVA_HOME: javaHome, PATH: `${join(javaHome, 'bin')}:${process.env['PATH'] ?? ''}` },
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null }));
  let alive = true;
  void exited.then(() => (alive = false));

  const logTail = async (lines = 40): Promise<string> => {
    const text = await readFile(logFile, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      if (alive) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      log.end();
      await rm(dir, { recursive: true, force: true });
    })());

  // PARAMETRIC_DATETIME: without it Trino rounds every timestamp it returns to milliseconds (for old clients),
  // which would hide a wrong microsecond in the table's timestamp(6) columns.
  const headers = { 'X-Trino-User': 'floe-test', 'X-Trino-Time-Zone': 'UTC', 'X-Trino-Source': 'floe-test', 'X-Trino-Client-Capabilities': 'PARAMETRIC_DATETIME' };
  // The coordinator can say it has started a moment before it has announced itself as a node that runs work;
  // a query in that window fails with NO_NODES_AVAILABLE before doing anything, so it is safe to send again.
  const query = async (sql: string): Promise<TrinoResult> => {
    const until = Date.now() + 60_000;
    for (;;) {
      try {
        return await queryOnce(sql);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.includes('NO_NODES_AVAILABLE') || Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const queryOnce = async (sql: string): Promise<TrinoResult> => {
    let res = await fetch(`${url}/v1/statement`, { method: 'POST', headers, body: sql });
    let columns: TrinoColumn[] | undefined;
    const rows: unknown[][] = [];
    for (;;) {
      if (!res.ok) throw new Error(`Trino answered HTTP ${res.status} to ${sql}: ${await res.text()}`);
      const body = (await res.json()) as { nextUri?: string; columns?: TrinoColumn[]; data?: unknown[][]; error?: { errorName?: string; message?: string } };
      if (body.error) throw new Error(`Trino failed ${sql}\n${body.error.errorName ?? ''}: ${body.error.message ?? JSON.stringify(body.error)}`);
      columns ??= body.columns;
      if (body.data) rows.push(...body.data);
      if (body.nextUri === undefined) break;
      res = await fetch(body.nextUri, { headers });
    }
    return { columns: columns ?? [], rows };
  };

  // Ready when /v1/info says the server has finished starting (catalogs loaded).
  const deadline = Date.now() + (options.startTimeoutMs ?? 240_000);
  try {
    for (;;) {
      if (!alive) throw new Error(`Trino exited before it started (${JSON.stringify(await exited)}):\n${await logTail()}`);
      const info = await fetch(`${url}/v1/info`).then((r) => (r.ok ? (r.json() as Promise<{ starting?: boolean }>) : undefined), () => undefined);
      if (info?.starting === false) {
        await query('SELECT count(*) FROM system.runtime.nodes');
        break;
      }
      if (Date.now() > deadline) throw new Error(`Trino did not start within ${options.startTimeoutMs ?? 240_000} ms:\n${await logTail()}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, query, logTail, stop };
}
