// Child process for partition-log-write-failure.test.ts, run under a file size limit (`ulimit -f`): appends
// from four lanes at once until the writes fail (a short write, then EFBIG), then once more, and prints one
// JSON line per append: {"i":n,"base":offset} when acknowledged, {"i":n,"code":"..."} when refused.
// A second argument `inline` makes the writes of up to 64 KiB on the thread itself (InlineWrites).
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { isLogError } from '../../../broker/log/errors.js';
import { alwaysInline, makeBatch } from './batches.js';

const APPENDS = 200;
const [dir, mode] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: write-failure-child <dir> [inline]');
const inlineWrites = mode === 'inline' ? { inlineWrites: alwaysInline() } : {};
const log = await PartitionLog.open({ dir, config: { 'segment.bytes': 16 * 1024 * 1024 }, ...inlineWrites });
const settle = async (i: number, append: Promise<{ baseOffset: number }>): Promise<void> => {
  try {
    process.stdout.write(`${JSON.stringify({ i, base: (await append).baseOffset })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ i, code: isLogError(err) ? err.code : String(err) })}\n`);
  }
};
let next = 0;
const lane = async (): Promise<void> => {
  while (next < APPENDS) {
    const i = next++;
    await settle(i, log.append(makeBatch({ values: [`w${i}`, 'x'.repeat(1500)] })));
  }
};
await Promise.all([lane(), lane(), lane(), lane()]);
await settle(APPENDS, log.append(makeBatch({ values: ['after'] })));
await log.close();
