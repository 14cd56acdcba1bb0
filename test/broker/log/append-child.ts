// Child process for partition-log-kill.test.ts: opens the log (recovering it), then appends forever (small
// batches, and every 16th one large),
// printing "<offset> <id>" after each acknowledged append, until the parent kills it with SIGKILL.
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { ASYNC_WRITE_BYTES } from '../../../broker/log/segment.js';
import { makeBatch } from './batches.js';

const [dir, cycle] = process.argv.slice(2);
if (dir === undefined || cycle === undefined) throw new Error('usage: append-child <dir> <cycle>');
const log = await PartitionLog.open({ dir, config: { 'segment.bytes': 1024 * 1024, 'index.interval.bytes': 512 } });
process.stdout.write(`ready ${log.logEndOffset}\n`);
for (let i = 0; ; i++) {
  const id = `${cycle}:${i}`;
  // Every 16th batch is large enough to be written on the thread pool (Segment.append), the rest at once.
  const res = await log.append(makeBatch({ values: [id, `${id}:b`, 'x'.repeat(i % 16 === 15 ? ASYNC_WRITE_BYTES : i % 700)] }));
  process.stdout.write(`${res.baseOffset} ${id}\n`);
}
