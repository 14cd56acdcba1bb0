/**
 * TxnLoop.java (beside this file: Apache Kafka's Java client in a consume-transform-produce loop, a reader
 * and a zombie) compiled with javac against the peers' kafka-clients, and run.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { peerPath } from '../../helpers/peers.js';

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

/** TxnLoop as a child process that can be killed; `output()` is what it printed so far (stdout and stderr). */
export function spawnTxnLoop(classpath: string, args: string[]): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const child = spawn('java', [...JAVA_FLAGS, '-cp', classpath, 'floe.txn.TxnLoop', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}
