/**
 * Runs a client as a child process without blocking the event loop (the broker under test may share it).
 * Children are tracked so a driver's close() can kill whatever is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface RunResult {
  readonly stdout: Buffer;
  readonly stderr: string;
}

export class ChildRunner {
  private readonly live = new Set<ChildProcess>();

  /** Runs `cmd args`, feeding `input` on stdin; resolves on exit 0, rejects on another code or after timeoutMs. */
  run(cmd: string, args: readonly string[], input: Buffer | string | null, timeoutMs: number): Promise<RunResult> {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.live.add(child);
    return new Promise<RunResult>((resolve, reject) => {
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${cmd} ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr:\n${err}`));
      }, timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        this.live.delete(child);
        reject(e);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        this.live.delete(child);
        if (code === 0) resolve({ stdout: Buffer.concat(out), stderr: err });
        else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}; stderr:\n${err}\nstdout:\n${Buffer.concat(out).toString()}`));
      });
      child.stdin.on('error', () => undefined); // the child may exit before reading all of it; 'close' reports why
      child.stdin.end(input ?? undefined);
    });
  }

  /** Kills every child still running. */
  killAll(): void {
    for (const c of this.live) c.kill('SIGKILL');
    this.live.clear();
  }
}
