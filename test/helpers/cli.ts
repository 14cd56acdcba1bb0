/**
 * Runs the `floe` command as users do: `node dist/broker/cli/floe.js ...` (the package's bin), as a child
 * process, and hands back its exit code and output. Run from the repo root after `npm run build`.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

export const FLOE_BIN = resolve('dist/broker/cli/floe.js');

export interface FloeRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runFloe(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<FloeRun> {
  return new Promise((res, rej) => {
    const child = execFile(process.execPath, [FLOE_BIN, ...args], { env: { PATH: process.env.PATH, ...env }, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1;
      if (code === -1) rej(err ?? new Error('floe did not exit'));
      else res({ code, stdout, stderr });
    });
    child.stdin?.end();
  });
}
