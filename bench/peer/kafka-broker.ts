/**
 * Apache Kafka as the benchmark's peer: one KRaft node (broker and controller in one JVM, one log dir), with
 * the settings of Kafka's own config/server.properties apart from the ports and the data dir, started
 * from the jars bench/peer/install.sh resolved. The JVM gets the heap kafka-server-start.sh gives it
 * (-Xmx1G -Xms1G) and Kafka's default GC flags.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LoadClient } from '../lib/load-client.js';
import { createTopic, deleteTopic } from '../lib/admin.js';

export function peersDir(): string {
  return process.env['FLOE_PEERS'] ?? join(homedir(), '.cache', 'floe-peers');
}

/** The classpath of Kafka's broker and tools; throws with what to run when it is missing. */
export function kafkaClasspath(): string {
  const file = join(peersDir(), 'kafka-server', 'classpath');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`${file} is missing: run bash bench/peer/install.sh (or bench/peer/run.sh)`);
  }
}

/** A port that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

export interface KafkaPeer {
  readonly child: ChildProcess;
  readonly port: number;
  /** The SSL listener's port, when started with `ssl`. */
  readonly sslPort: number | undefined;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Formats `dir` and starts Kafka on free ports; resolves once it creates and deletes a topic. */
export async function startKafka(dir: string, options: { ssl?: { keystore: string; password: string }; /** More `key=value` broker settings. */ extraProps?: readonly string[] } = {}): Promise<KafkaPeer> {
  const cp = kafkaClasspath();
  const port = await freePort();
  const controller = await freePort();
  const ssl = options.ssl;
  const sslPort = ssl === undefined ? undefined : await freePort();
  const sslListener = sslPort === undefined ? '' : `,SSL://127.0.0.1:${sslPort}`;
  const props = join(dir, 'server.properties');
  writeFileSync(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.bootstrap.servers=127.0.0.1:${controller}`,
      `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}${sslListener}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}${sslListener}`,
      ...(ssl === undefined ? [] : ['ssl.keystore.type=PKCS12', `ssl.keystore.location=${ssl.keystore}`, `ssl.keystore.password=${ssl.password}`]),
      'inter.broker.listener.name=PLAINTEXT',
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
      // config/server.properties of the Kafka distribution:
      'num.network.threads=3',
      'num.io.threads=8',
      'socket.send.buffer.bytes=102400',
      'socket.receive.buffer.bytes=102400',
      'socket.request.max.bytes=104857600',
      `log.dirs=${join(dir, 'data')}`,
      'num.partitions=1',
      'num.recovery.threads.per.data.dir=1',
      'offsets.topic.replication.factor=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'log.retention.hours=168',
      'log.segment.bytes=1073741824',
      'log.retention.check.interval.ms=300000',
      ...(options.extraProps ?? []),
      '',
    ].join('\n'),
  );
  const tool = (args: string[]) => {
    const r = spawnSync('java', ['-cp', cp, 'kafka.tools.StorageTool', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`kafka-storage ${args[0]} failed:\n${r.stdout}${r.stderr}`);
    return r.stdout.trim();
  };
  const clusterId = tool(['random-uuid']).split('\n').at(-1)!.trim();
  tool(['format', '--standalone', '-t', clusterId, '-c', props]);
  const child = spawn('java', ['-Xmx1G', '-Xms1G', '-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35', '-XX:+ExplicitGCInvokesConcurrent', '-Djava.awt.headless=true', '-cp', cp, 'kafka.Kafka', props], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (c: Buffer) => {
    if (out.length < 200_000) out += c.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const jvm = watchJvm(child, 'Apache Kafka');
  await jvm.untilReady(
    async () => {
      const c = await LoadClient.connect(port, 1);
      try {
        await createTopic(c, 'floe-bench-ready', 1);
        await deleteTopic(c, 'floe-bench-ready');
        return true;
      } finally {
        await c.close();
      }
    },
    () => out,
    500,
  );
  return {
    child,
    port,
    sslPort,
    pid: child.pid!,
    stop: () => jvm.stop(),
  };
}

/** A started JVM peer (Kafka, Kafka Connect): waits for it to be ready, and stops it. */
export interface WatchedJvm {
  /**
   * Calls `probe` every `pollMs` until it resolves true; a throw counts as not ready yet. Fails, with what
   * `output()` holds, if the process exits first or is not ready within 120 s (then it is killed).
   */
  untilReady(probe: () => Promise<boolean>, output: () => string, pollMs: number): Promise<void>;
  /** SIGTERM, SIGKILL after 30 s; resolves once the process exited. */
  stop(): Promise<void>;
}

export function watchJvm(child: ChildProcess, name: string, onExit?: () => void): WatchedJvm {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let dead = false;
  void exited.then(() => {
    dead = true;
    onExit?.();
  });
  return {
    async untilReady(probe, output, pollMs) {
      const deadline = Date.now() + 120_000;
      for (;;) {
        if (dead) throw new Error(`${name} exited while starting:\n${output()}`);
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`${name} did not start within 120 s:\n${output()}`);
        }
        if (await probe().catch(() => false)) return;
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
    async stop() {
      if (dead) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
