/**
 * Runs Apache Kafka's command-line tools from their Maven Central jars (kafka-tools, installed by
 * scripts/peers/20-kafka-java.sh): a command line written as an operator types it (`kafka-topics.sh
 * --bootstrap-server localhost:9092 ...`, as in the README) runs the class behind that script in its own JVM,
 * with `localhost:9092` replaced by the broker under test and `< file` read from the working directory.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { javaCommand } from './java.js';

/** The class each of Kafka's scripts runs (bin/kafka-*.sh in Kafka 4.4). */
export const KAFKA_SCRIPTS: Readonly<Record<string, string>> = {
  'kafka-topics.sh': 'org.apache.kafka.tools.TopicCommand',
  'kafka-configs.sh': 'org.apache.kafka.tools.ConfigCommand',
  'kafka-consumer-groups.sh': 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  'kafka-get-offsets.sh': 'org.apache.kafka.tools.GetOffsetShell',
  'kafka-delete-records.sh': 'org.apache.kafka.tools.DeleteRecordsCommand',
  'kafka-console-producer.sh': 'org.apache.kafka.tools.ConsoleProducer',
  'kafka-console-consumer.sh': 'org.apache.kafka.tools.consumer.ConsoleConsumer',
  'kafka-log-dirs.sh': 'org.apache.kafka.tools.LogDirsCommand',
  'kafka-transactions.sh': 'org.apache.kafka.tools.TransactionsCommand',
  'kafka-acls.sh': 'org.apache.kafka.tools.AclCommand',
  'kafka-verifiable-producer.sh': 'org.apache.kafka.tools.VerifiableProducer',
  'kafka-producer-perf-test.sh': 'org.apache.kafka.tools.ProducerPerformance',
};

export const README_BOOTSTRAP = 'localhost:9092';
const TIMEOUT_MS = 90_000;

export interface ToolRun {
  readonly code: number | null;
  readonly stdout: string;
  /** Without slf4j's notice that it has no logger binding (the tools then log nothing). */
  readonly stderr: string;
}

export async function runKafkaScript(line: string, options: { bootstrap: string; cwd: string }): Promise<ToolRun> {
  const tokens = line.trim().split(/\s+/);
  const [script, ...rest] = tokens;
  const mainClass = script === undefined ? undefined : KAFKA_SCRIPTS[script];
  if (mainClass === undefined) throw new Error(`'${script}' is not one of the supported scripts: ${Object.keys(KAFKA_SCRIPTS).join(', ')}`);
  const redirect = rest.indexOf('<');
  const stdinFile = redirect >= 0 ? rest[redirect + 1] : undefined;
  const args = (redirect >= 0 ? rest.slice(0, redirect) : rest).map((a) => a.replaceAll(README_BOOTSTRAP, options.bootstrap));
  const input = stdinFile === undefined ? '' : await readFile(join(options.cwd, stdinFile));
  const { cmd, args: javaArgs } = javaCommand(mainClass, args);
  const child = spawn(cmd, javaArgs, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise<ToolRun>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${line} did not finish within ${TIMEOUT_MS} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: stderr.split('\n').filter((l) => !l.startsWith('SLF4J:')).join('\n').trim() });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
