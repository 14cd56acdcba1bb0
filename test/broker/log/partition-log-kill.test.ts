// kill -9 while appending: every acknowledged append must be in the log exactly once after recovery.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { parseBatches, tempDir } from './batches.js';

const here = fileURLToPath(import.meta.url);
const child = here.replace(/partition-log-kill\.test\.(ts|js)$/, `append-child${extname(here)}`);

/** Runs the child until it has acknowledged `acks` appends, then SIGKILLs it. Returns the acknowledged lines. */
function runAndKill(dir: string, cycle: number, acks: number): Promise<Map<number, string>> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const proc = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith('--test')), child, dir, String(cycle)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Map<number, string>();
    let buffered = '';
    let stderr = '';
    let killed = false;
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [offset, id] = line.split(' ');
        if (offset !== 'ready' && id !== undefined) acked.set(Number(offset), id);
      }
      if (!killed && acked.size >= acks) {
        killed = true;
        proc.kill('SIGKILL');
      }
    });
    proc.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`child exited with ${code}: ${stderr}`));
    });
  });
}

test('kill -9 during appends: every acknowledged offset survives exactly once, across several crash cycles', async (t) => {
  const dir = await tempDir(t);
  const acked = new Map<number, string>();
  for (let cycle = 0; cycle < 4; cycle++) {
    const got = await runAndKill(dir, cycle, 300 + cycle * 137);
    for (const [offset, id] of got) {
      assert.equal(acked.has(offset), false, `offset ${offset} acknowledged twice`);
      acked.set(offset, id);
    }
  }
  const log = await PartitionLog.open({ dir, config: { 'segment.bytes': 1024 * 1024, 'index.interval.bytes': 512 } });
  try {
    assert.equal(log.recovery.cleanShutdown, false);
    const stored = new Map<number, string>();
    const ids = new Set<string>();
    for (let o = 0; o < log.logEndOffset; ) {
      const r = await log.read(o, 256 * 1024);
      for (const b of parseBatches(r.records)) {
        assert.ok(b.crcOk);
        assert.equal(b.baseOffset, o, 'offsets are contiguous');
        assert.equal(ids.has(b.firstValue), false, `${b.firstValue} stored twice`);
        ids.add(b.firstValue);
        stored.set(b.baseOffset, b.firstValue);
        o = b.lastOffset + 1;
      }
    }
    assert.ok(acked.size >= 300 * 4);
    for (const [offset, id] of acked) assert.equal(stored.get(offset), id, `acknowledged offset ${offset}`);
  } finally {
    await log.close();
  }
});
