/**
 * Starts Floe brokers for tests: in this process (fast, for most suites) or as a child process (for restart
 * and kill -9 tests). Each gets a fresh temp data directory and a port picked by the OS, and is stopped by
 * the returned cleanup, which tests register with `t.after`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../broker/config/config.js';
import { Broker } from '../../broker/broker.js';
import { createLogger, type LogLevel } from '../../broker/logger.js';

export interface TestBroker {
  readonly broker: Broker;
  readonly port: number;
  readonly bootstrap: string;
  /** The admin HTTP port's URL (`http://127.0.0.1:<port>`), undefined with --admin.port=-1. */
  readonly adminUrl: string | undefined;
  readonly dataDir: string;
  stop(): Promise<void>;
}

export async function tempDir(prefix = 'floe-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/**
 * Tiered storage is on by default in Floe; tests run without it (no warehouse, no REST catalog on 8181)
 * unless they pass their own `--remote.log.storage.system.enable=...`.
 */
export function withTieringDefault(flags: readonly string[]): string[] {
  const own = flags.some((f) => f.startsWith('--remote.log.storage.system.enable'));
  const withTiering = own ? [...flags] : ['--remote.log.storage.system.enable=false', ...flags];
  // The schema registry is on by default (port 8081); tests that want it pass --schema.registry.port=0.
  const ownRegistry = flags.some((f) => f.startsWith('--schema.registry.port'));
  return ownRegistry ? withTiering : ['--schema.registry.port=-1', ...withTiering];
}

/**
 * The admin HTTP port listens on a free port of 127.0.0.1 in tests (never the default 9644, which parallel
 * tests would share), unless the caller passes its own `--admin.port=...`.
 */
export function withAdminDefault(flags: readonly string[]): string[] {
  const own = flags.some((f) => f.startsWith('--admin.port'));
  return own ? [...flags] : ['--admin.port=0', '--admin.host=127.0.0.1', ...flags];
}

/**
 * Starts a broker in this process. `flags` are CLI-style settings (`--num.partitions=3`). `warnings` receives the broker's warn and error log lines (JSON); `log` receives every line at debug level
 * (for tests that scan all of the broker's output, e.g. for secrets).
 */
export async function startBroker(
  flags: string[] = [],
  options: { dataDir?: string; keepData?: boolean; warnings?: string[]; log?: (line: string) => void } = {},
): Promise<TestBroker> {
  const dataDir = options.dataDir ?? (await tempDir());
  const loaded = loadConfig({
    argv: ['--listeners=PLAINTEXT://127.0.0.1:0', `--log.dirs=${dataDir}`, '--group.initial.rebalance.delay.ms=0', ...withAdminDefault(withTieringDefault(flags))],
    env: {},
  });
  if (loaded.help) throw new Error('unexpected --help');
  const level = (process.env.FLOE_TEST_LOG_LEVEL ?? 'silent') as LogLevel;
  const { warnings, log } = options;
  const logger =
    log !== undefined
      ? createLogger('debug', (line) => {
          log(line);
          if (warnings && /"level":"(warn|error)"/.test(line)) warnings.push(line);
        })
      : warnings
        ? createLogger('warn', (line) => void warnings.push(line))
        : createLogger(level);
  const broker = await Broker.start(loaded.config, logger);
  return {
    broker,
    port: broker.port,
    bootstrap: `127.0.0.1:${broker.port}`,
    adminUrl: broker.adminPort >= 0 ? `http://127.0.0.1:${broker.adminPort}` : undefined,
    dataDir,
    async stop() {
      await broker.stop();
      if (!options.keepData && !options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface BrokerProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly bootstrap: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Resolves with the exit code and the signal that ended the process (SIGKILL for a kill -9). */
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The built-in Iceberg REST catalog's URL (on 127.0.0.1), when tiering runs. */
  readonly restUrl: string | undefined;
  /** The admin HTTP port's URL (on 127.0.0.1), unless admin.port is -1. */
  readonly adminUrl: string | undefined;
  /** The built-in schema registry's URL (on 127.0.0.1), when it runs. */
  readonly registryUrl: string | undefined;
}

const MAIN = resolve('dist/broker/main.js');

/**
 * Starts `node dist/broker/main.js` (the compiled broker, as users run it) and waits for its "broker
 * started" log line to learn the port. Run from the repo root after `npm run build`.
 */
export async function spawnBroker(dataDir: string, flags: string[] = [], port = 0, options: { env?: NodeJS.ProcessEnv; rawFlags?: boolean } = {}): Promise<BrokerProcess> {
  const base = [`--listeners=PLAINTEXT://127.0.0.1:${port}`, `--log.dirs=${dataDir}`, '--log.level=info'];
  // rawFlags: exactly the caller's settings after the listener, log dir and log level (everything else default).
  // The admin port too is on a free port of 127.0.0.1 unless the caller sets it (see withAdminDefault).
  const args = options.rawFlags ? [...base, ...withAdminDefault(flags)] : [...base, '--group.initial.rebalance.delay.ms=0', ...withAdminDefault(withTieringDefault(flags))];
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(options.env ? { env: options.env } : {}) });
  let out = '';
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));
  const exited = ended.then((e) => e.code);
  const started = new Promise<number>((res, rej) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"msg":"broker started"[^\n]*"advertised":"[^"]*:(\d+)"/.exec(out);
      if (m) res(Number(m[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    void exited.then((code) => rej(new Error(`broker exited with ${code} before starting:\n${out}`)));
  });
  const boundPort = await started;
  const rest = /"msg":"iceberg REST catalog started"[^\n]*"url":"http:\/\/[^"]*:(\d+)"/.exec(out);
  const restUrl = rest ? `http://127.0.0.1:${rest[1]}` : undefined;
  const admin = /"msg":"admin HTTP started"[^\n]*"url":"http:\/\/[^"]*:(\d+)"/.exec(out);
  const adminUrl = admin ? `http://127.0.0.1:${admin[1]}` : undefined;
  const registry = /"msg":"schema registry started"[^\n]*"url":"http:\/\/[^"]*:(\d+)"/.exec(out);
  const registryUrl = registry ? `http://127.0.0.1:${registry[1]}` : undefined;
  return { child, port: boundPort, bootstrap: `127.0.0.1:${boundPort}`, output: () => out, exited, ended, restUrl, adminUrl, registryUrl };
}
