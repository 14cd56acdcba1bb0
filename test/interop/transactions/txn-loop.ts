/**
 * TxnLoop.java (beside this file: Apache Kafka's Java client in a consume-transform-produce loop, a reader
 * and a zombie) compiled with javac against the peers' kafka-clients, and run.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { peerPath } from '../../helpers/peers.js';
import { spawnLoopProcess, type LoopRun } from './kill-loop.js';

const run = promisify(execFile);
const JAVA_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/** Compiles TxnLoop.java into a temp dir; returns the classpath to run it with. */
export async function compileTxnLoop(): Promise<{ classpath: string; cleanup: () => Promise<void> }> {
  const kafkaClasspath = readFileSync(peerPath('kafka-java', 'classpath'), 'utf8').trim();
  const out = await mkdtemp(join(tmpdir(), 'floe-txnloop-'));
  const source = fileURLToPath(new URL('./TxnLoop.java', import.meta.url));
  await run('javac', ['-Xlint:all', '-Werror', '-d', out, '-cp', kafkaClasspath, source]);
  return { classpath: `${out}:${kafkaClasspath}`, cleanup: () => rm(out, { recursive: true, force: true }) };
}

export async function javaTxnLoop(classpath: string, args: string[]): Promise<string> {
  const { stdout } = await run('java', [...JAVA_FLAGS, '-cp', classpath, 'floe.txn.TxnLoop', ...args], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** TxnLoop as a child process that can be killed. */
export function spawnTxnLoop(classpath: string, args: string[]): LoopRun {
  return spawnLoopProcess('java', [...JAVA_FLAGS, '-cp', classpath, 'floe.txn.TxnLoop', ...args]);
}
