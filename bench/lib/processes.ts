/**
 * Starts the servers a benchmark measures, each in its own process so the load generator never shares
 * their event loop: Floe (from source through tsx, or the compiled dist/broker/main.js) and the baseline
 * servers of ./baseline-server.ts. Each is stopped with SIGTERM (Floe then shuts down gracefully, which also
 * lets `--cpu-prof` write its profile).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** Which broker to run: the TypeScript sources (through tsx) or the tsc output in dist/. */
export type Build = 'src' | 'dist';

const RUNNING_COMPILED = import.meta.url.endsWith('.js');
/** The repository root (this file is bench/lib/processes.ts or dist/bench/lib/processes.js). */
export const REPO_ROOT = fileURLToPath(new URL(RUNNING_COMPILED ? '../../../' : '../../', import.meta.url));

export interface ChildServer {
  readonly child: ChildProcess;
  readonly port: number;
  /** Everything the process wrote so far. */
  output(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<void>;
}

function nodeArgs(script: string, extra: readonly string[]): string[] {
  return script.endsWith('.ts') ? ['--import', 'tsx', ...extra, script] : [...extra, script];
}

async function startChild(args: string[], portPattern: RegExp, what: string): Promise<ChildServer> {
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      // Keep only the start of the output: a long run must not grow it without bound.
      if (out.length < 1_000_000) out += chunk.toString();
      const m = portPattern.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => reject(new Error(`${what} exited before listening:\n${out}`)));
  });
  return {
    child,
    port,
    output: () => out,
    async stop(timeoutMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface FloeOptions {
  readonly dataDir: string;
  readonly build: Build;
  /** Extra broker settings, CLI style (`--message.max.bytes=8388608`). */
  readonly flags?: readonly string[];
  /** Write a V8 CPU profile of the broker into this directory when it stops. */
  readonly cpuProfDir?: string;
  /** Extra flags for node itself (`--trace-gc`). */
  readonly nodeFlags?: readonly string[];
}

/**
 * Starts a Floe broker process on a free port. Its admin HTTP port (metrics) runs as by default, but on a
 * free port of 127.0.0.1 unless `flags` set admin.port; `adminUrl` finds it in the output.
 */
export async function spawnFloe(o: FloeOptions): Promise<ChildServer> {
  const main = o.build === 'dist' ? join(REPO_ROOT, 'dist/broker/main.js') : join(REPO_ROOT, 'broker/main.ts');
  if (!existsSync(main)) throw new Error(`${main} does not exist${o.build === 'dist' ? '; run `npm run build` first' : ''}`);
  const prof = [...(o.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`]), ...(o.nodeFlags ?? [])];
  return startChild(
    nodeArgs(main, prof).concat([
      '--listeners=PLAINTEXT://127.0.0.1:0',
      `--log.dirs=${o.dataDir}`,
      '--log.level=info',
      ...((o.flags ?? []).some((f) => f.startsWith('--admin.port')) ? [] : ['--admin.port=0', '--admin.host=127.0.0.1']),
      ...(o.flags ?? []),
    ]),
    /"msg":"broker started"[^\n]*"advertised":"[^"]*:(\d+)"/,
    'floe broker',
  );
}

/** The admin HTTP port's URL of a Floe process started by spawnFloe, undefined when it runs none. */
export function adminUrl(server: ChildServer): string | undefined {
  const m = /"msg":"admin HTTP started"[^\n]*"url":"(http:\/\/[^"]+)"/.exec(server.output());
  return m?.[1];
}

/** The REST catalog's URL, from the broker's start-up log line (undefined when it runs none). */
export function restCatalogUrl(server: ChildServer): string | undefined {
  const m = /"msg":"iceberg REST catalog started"[^\n]*"url":"(https?:\/\/[^"]+)"/.exec(server.output());
  return m?.[1];
}

export type BaselineMode = 'sink' | 'ingest' | 'memory';

/** Starts a baseline server process (see baseline-server.ts); `dir` is where `ingest` writes. */
export async function spawnBaseline(mode: BaselineMode, dir = '.'): Promise<ChildServer> {
  const script = fileURLToPath(new URL(RUNNING_COMPILED ? './baseline-server.js' : './baseline-server.ts', import.meta.url));
  return startChild(nodeArgs(script, []).concat([mode, dir]), /listening (\d+)/, `${mode} baseline`);
}
