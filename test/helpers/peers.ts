/**
 * Where the interoperability peers installed by scripts/install-peers.sh live: $FLOE_PEERS, by default
 * ~/.cache/floe-peers (outside the repository). `npm test` installs them first (pretest), so a missing one is
 * an install failure, reported with what to run, never a silent skip.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

export const PEERS_DIR = process.env['FLOE_PEERS'] ?? join(homedir(), '.cache', 'floe-peers');

/** An installed peer's path under PEERS_DIR; throws, naming the install command, when it is not there. */
export function peerPath(...parts: string[]): string {
  const p = join(PEERS_DIR, ...parts);
  if (!existsSync(p)) throw new Error(`${p} is missing: run scripts/install-peers.sh (npm test does, before the tests)`);
  return p;
}

/** The Python of the peers' venv (confluent-kafka 2.x from PyPI, pyiceberg, pyarrow, pyspark). */
export function venvPython(): string {
  return peerPath('venv', 'bin', 'python');
}

/** The Python of moto's venv (scripts/peers/55-moto.sh), for startMotoS3Server. */
export function motoPython(): string {
  return peerPath('moto-venv', 'bin', 'python');
}

/** Runs `script` with the peers' venv Python, `input` on its stdin; resolves with its stdout, rejects with its stderr. */
export function runVenvPython(script: string, input: string, args: readonly string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(venvPython(), [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`${script} exited ${code}: ${Buffer.concat(err).toString()}`))));
    child.stdin.end(input);
  });
}
