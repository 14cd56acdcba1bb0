/**
 * One Spark SQL session for a test file: pyspark from the peers' venv (scripts/peers/10-python.sh) running
 * spark_driver.py, with Iceberg's jars from $FLOE_PEERS/spark-jars (scripts/peers/30-spark.sh) as spark.jars,
 * so nothing is downloaded at test time. One JVM serves every catalog the file adds (`setConf`), one
 * statement at a time.
 *
 *   const spark = await SparkSql.start({ 'spark.jars': jars.join(',') });
 *   t.after(() => spark.close());
 *   await spark.setConf({ 'spark.sql.catalog.floe': 'org.apache.iceberg.spark.SparkCatalog', ... });
 *   const { rows } = await spark.sql('SELECT count(*) FROM floe.kafka.orders');
 *
 * Values come back decoded: binary as Buffer, timestamps as bigint microseconds since the epoch, integers
 * beyond 2^53 (snapshot ids) as bigint, structs as objects, arrays as arrays, maps as [key, value] lists.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface, type Interface } from 'node:readline';
import { parseJson } from '../../../iceberg/json.js';
import { venvPython } from '../../helpers/peers.js';
import { decodeValue, type EngineValue } from './rows.js';

export type SparkValue = EngineValue;

export interface SparkResult {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly SparkValue[])[];
}

const DRIVER = fileURLToPath(new URL('./spark_driver.py', import.meta.url));
const START_TIMEOUT_MS = 180_000;
const STATEMENT_TIMEOUT_MS = 180_000;
/** Settings of the test harness itself, not of Floe's catalog: one local JVM, quiet, on 127.0.0.1 only. */
const HARNESS_CONF: Readonly<Record<string, string>> = {
  'spark.ui.enabled': 'false',
  'spark.driver.host': '127.0.0.1',
  'spark.driver.bindAddress': '127.0.0.1',
  'spark.sql.session.timeZone': 'UTC',
  'spark.sql.shuffle.partitions': '2',
  'spark.driver.memory': '1g',
  'spark.ui.showConsoleProgress': 'false',
};

export class SparkSql {
  private queue: Promise<unknown> = Promise.resolve();
  private stderrTail = '';
  /** The driver's exit, awaited by every statement (one listener for all, not one per statement). */
  private readonly exited: Promise<unknown>;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly lines: Interface,
    readonly version: string,
  ) {
    child.stderr.on('data', (d: Buffer) => (this.stderrTail = (this.stderrTail + d.toString()).slice(-8000)));
    this.exited = once(child, 'exit');
    this.exited.catch(() => undefined);
  }

  /** Starts the JVM with `conf` (spark.jars and session settings) on top of the harness's settings. */
  static async start(conf: Readonly<Record<string, string>>): Promise<SparkSql> {
    const python = venvPython();
    const child = spawn(python, [DRIVER, JSON.stringify({ conf: { ...HARNESS_CONF, ...conf } })], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYSPARK_PYTHON: python, SPARK_LOCAL_IP: '127.0.0.1', TZ: 'UTC' },
    });
    let stderr = '';
    const onErr = (d: Buffer): void => void (stderr = (stderr + d.toString()).slice(-8000));
    child.stderr.on('data', onErr);
    const lines = createInterface({ input: child.stdout });
    const exited = once(child, 'exit');
    let timer: NodeJS.Timeout | undefined;
    try {
      const first = await Promise.race([
        once(lines, 'line').then(([l]) => String(l)),
        exited.then(([code]) => Promise.reject(new Error(`the Spark driver exited with ${String(code)} before its session started:\n${stderr}`))),
        new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`the Spark session did not start within ${START_TIMEOUT_MS} ms:\n${stderr}`)), START_TIMEOUT_MS))),
      ]);
      const ready = parseJson(first) as { ready?: boolean; spark?: string };
      if (ready.ready !== true) throw new Error(`unexpected first line from the Spark driver: ${first}`);
      child.stderr.off('data', onErr);
      return new SparkSql(child, lines, String(ready.spark));
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private command(cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
    const run = async (): Promise<Record<string, unknown>> => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`the Spark driver has exited:\n${this.stderrTail}`);
      const answer = once(this.lines, 'line');
      this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
      let timer: NodeJS.Timeout | undefined;
      try {
        const [line] = await Promise.race([
          answer,
          this.exited.then(() => Promise.reject(new Error(`the Spark driver exited during ${JSON.stringify(cmd)}:\n${this.stderrTail}`))),
          new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`Spark did not answer ${JSON.stringify(cmd)} within ${STATEMENT_TIMEOUT_MS} ms`)), STATEMENT_TIMEOUT_MS))),
        ]);
        return parseJson(String(line)) as Record<string, unknown>;
      } finally {
        clearTimeout(timer);
      }
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Sets runtime settings, e.g. a catalog's spark.sql.catalog.* (read when the catalog is first used). */
  async setConf(conf: Readonly<Record<string, string>>): Promise<void> {
    const res = await this.command({ op: 'conf', conf });
    if (typeof res['error'] === 'string') throw new Error(`Spark refused settings ${JSON.stringify(conf)}: ${res['error']}`);
  }

  /** Runs one statement; rejects with Spark's error message (the statement in it) when it fails. */
  async sql(query: string): Promise<SparkResult> {
    const res = await this.command({ op: 'sql', query });
    if (typeof res['error'] === 'string') throw new Error(`Spark failed on ${query}\n${res['error'].slice(0, 4000)}`);
    return { columns: res['columns'] as string[], rows: (res['rows'] as unknown[][]).map((r) => r.map(decodeValue)) };
  }

  /** The rows of `query` as objects keyed by column name. */
  async objects(query: string): Promise<Record<string, SparkValue>[]> {
    const { columns, rows } = await this.sql(query);
    return rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? null])));
  }

  /** Stops the session and the JVM (killed if it has not exited within 30 s). */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}
