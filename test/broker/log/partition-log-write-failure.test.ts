// A write that fails (here: the file size limit, a short write and then EFBIG, as on a full disk) refuses
// every append of its group and every later one with KAFKA_STORAGE_ERROR, and loses nothing acknowledged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { parseBatches, tempDir } from './batches.js';

const here = fileURLToPath(import.meta.url);
const child = here.replace(/partition-log-write-failure\.test\.(ts|js)$/, `write-failure-child${extname(here)}`);
const APPENDS = 200;
/** `ulimit -f` counts 1024-byte blocks: the log file may grow to 128 KiB, about 80 of the 200 appends. */
const LIMIT_BLOCKS = 128;

function runLimited(dir: string, mode: string): Promise<{ i: number; base?: number; code?: string }[]> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const args = [...process.execArgv.filter((a) => !a.startsWith('--test')), child, dir, mode];
    const proc = spawn('bash', ['-c', `ulimit -f ${LIMIT_BLOCKS} && exec "$0" "$@"`, process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.on('exit', (code) => {
      if (code !== 0) reject(new Error(`child exited with ${code}: ${err}`));
      else resolve(out.trim().split('\n').map((l) => JSON.parse(l) as { i: number; base?: number; code?: string }));
    });
  });
}

for (const mode of ['pool', 'inline']) test(`${mode} writes: a failed write refuses its whole group and every later append with KAFKA_STORAGE_ERROR; what was acknowledged survives`, async (t) => {
  const dir = await tempDir(t);
  const results = await runLimited(dir, mode);
  assert.equal(results.length, APPENDS + 1);
  const acked = results.filter((r) => r.base !== undefined).sort((a, b) => a.i - b.i);
  const refused = results.filter((r) => r.base === undefined);
  assert.ok(acked.length > 10 && refused.length > 10, `${acked.length} acknowledged, ${refused.length} refused`);
  // Appends are written in call order, so what was acknowledged is the first appends made, at offsets 0, 2, 4...
  assert.deepEqual(acked.map((r) => r.i), acked.map((_, k) => k));
  assert.deepEqual(acked.map((r) => r.base), acked.map((_, k) => 2 * k));
  assert.deepEqual([...new Set(refused.map((r) => r.code))], ['KAFKA_STORAGE_ERROR'], 'the failing group and everything after it');
  assert.equal(results.find((r) => r.i === APPENDS)?.code, 'KAFKA_STORAGE_ERROR', 'the log stays offline after the failure');

  const log = await PartitionLog.open({ dir, config: { 'segment.bytes': 16 * 1024 * 1024 } });
  try {
    assert.equal(log.recovery.cleanShutdown, false, 'a log that failed a write is not closed cleanly');
    const stored = parseBatches((await log.read(0, 1 << 30)).records);
    assert.ok(stored.every((b) => b.crcOk), 'recovery keeps whole batches only');
    assert.deepEqual(stored.slice(0, acked.length).map((b) => [b.baseOffset, b.firstValue]), acked.map((_, k) => [2 * k, `w${k}`]));
    // Whole batches of the failed group that reached the file may follow; they were not acknowledged.
    assert.deepEqual(stored.map((b) => b.baseOffset), stored.map((_, k) => 2 * k), 'offsets stay contiguous');
  } finally {
    await log.close();
  }
});
